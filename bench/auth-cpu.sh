#!/usr/bin/env bash
# One wrk level of POST /v1/transactions (auths, bench/post-auth.lua) against a given holdfast
# binary on a fresh PostgreSQL database, with the CPU time PostgreSQL and the server spent per
# auth (read from /proc before and after): for A/B runs of two builds, alternated in one sitting.
#
#   bench/auth-cpu.sh target/release/holdfast            # 8 s at 32 connections
#   SECONDS_=20 CONNECTIONS=8 bench/auth-cpu.sh /tmp/holdfast-old
#
# Needs wrk and psql. Traffic goes to 127.0.0.1 only.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/wrk.sh
source bench/wrk.sh
BIN=$(realpath "${1:?usage: bench/auth-cpu.sh BINARY}")
DURATION="${SECONDS_:-8}"
CONNECTIONS="${CONNECTIONS:-32}"
PG_ADMIN="${HOLDFAST_BENCH_PG:-postgres://postgres@127.0.0.1:5432/postgres}"
PORT=18190
# shellcheck source=bench/lib.sh
source bench/lib.sh

# Clock ticks (utime + stime) of every process whose command line matches $1.
ticks() {
  local total=0 pid
  for pid in $(pgrep -f "$1"); do
    read -r u s < <(awk '{print $14, $15}' "/proc/$pid/stat" 2>/dev/null || echo "0 0")
    total=$((total + u + s))
  done
  echo "$total"
}
pg0=$(ticks postgres); hf0=$(ticks "$BIN serve")
out=$(HOLDFAST_KEY="$key" HOLDFAST_MERCHANT="$merchant" HOLDFAST_RUN=1 wrk -t2 -c"$CONNECTIONS" \
      -d"${DURATION}s" --latency -s bench/post-auth.lua "http://127.0.0.1:$PORT/v1/transactions")
pg1=$(ticks postgres); hf1=$(ticks "$BIN serve")
wrk_figures "$out"
hz=$(getconf CLK_TCK)
python3 - "$rps" "$DURATION" "$hz" "$((pg1 - pg0))" "$((hf1 - hf0))" "$p50" "$p99" "$errors" <<'PY'
import sys
rps, secs, hz, pg, hf = float(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
auths = rps * secs
print(f"auths/s {rps:.0f}  p50 {sys.argv[6]}  p99 {sys.argv[7]}  non-2xx {sys.argv[8]}  "
      f"CPU per auth: PostgreSQL {pg / hz / auths * 1000:.2f} ms, server {hf / hz / auths * 1000:.2f} ms")
PY
