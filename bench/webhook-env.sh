# Sourced by the webhook load scripts on PostgreSQL (webhooks.sh, soak.sh, replicas.sh): the
# release binaries (bench/binaries.sh), a fresh database named
# after the script, the environment every holdfast process of the run shares, and a platform's
# private key. Sets BIN, RECEIVER, work, db, url, key and pids (processes killed on exit, the
# database dropped). Needs PG_ADMIN. Load merchants with bench/post-merchant.lua (HOLDFAST_KEY).
# shellcheck source=bench/binaries.sh
source bench/binaries.sh

work=$(mktemp -d)
db="holdfast_bench_$(basename "$0" .sh)_$$"
db="${db//-/_}"
url="${PG_ADMIN%/*}/$db"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  psql "$PG_ADMIN" -qc "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
psql "$PG_ADMIN" -qc "CREATE DATABASE $db" >/dev/null
export HOLDFAST_DATABASE_URL="$url" HOLDFAST_LOG=warn HOLDFAST_VAULT_KEY_FILE="$work/vault.key" \
  HOLDFAST_WEBHOOK_ALLOW_NETWORKS=127.0.0.0/8 HOLDFAST_MAIL_DIR="$work/mail" \
  HOLDFAST_RATE_LIMIT_PRIVATE_PER_S=0 HOLDFAST_RATE_LIMIT_PUBLIC_PER_S=0 HOLDFAST_BOOTSTRAP_DEMO=false
key=$("$BIN" --json platforms create --name Bench --owner-email bench@example.com \
      | python3 -c 'import json,sys; print(json.load(sys.stdin)["keys"][0]["value"])')
export HOLDFAST_KEY="$key"
