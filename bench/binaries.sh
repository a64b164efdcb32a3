# Sourced by the load scripts that take a build to measure: BIN and RECEIVER as given (an A/B
# against another build), or built from this checkout.
if [ -z "${BIN:-}" ]; then
  BIN=target/release/holdfast
  cargo build --release --locked --quiet -p holdfast --bin holdfast
fi
RECEIVER="${RECEIVER:-target/release/examples/webhook_receiver}"
[ -x "$RECEIVER" ] || cargo build --release --locked --quiet -p holdfast-e2e --example webhook_receiver
