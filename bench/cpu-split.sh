#!/usr/bin/env bash
# CPU per unit of work, split by process, at 8 connections: the minimal ceiling's transaction,
# an auth, a merchant with delivery off and a merchant with its delivery. Each run lasts 20 s;
# the CPU time of every process (bench/cpu.sh) and the machine's idle time are read over its ten
# steady middle seconds and divided by the work done in them (the run's rate times 10 s).
#
#   bench/cpu-split.sh
#   BIN=/tmp/base/holdfast bench/cpu-split.sh
#
# Needs wrk, pgbench and the local PostgreSQL (trust auth). Traffic stays on 127.0.0.1.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/binaries.sh
source bench/binaries.sh
# shellcheck source=bench/cpu.sh
source bench/cpu.sh
# Command names as /proc shows them (at most 15 characters).
names=(postgres pgbench holdfast webhook_receive wrk)
out=$(mktemp)
trap 'rm -f "$out"' EXIT
idle_ms() { awk -v hz="$(getconf CLK_TCK)" '/^cpu / {print int(($5 + $6) * 1000 / hz)}' /proc/stat; }
sample() { for n in "${names[@]}"; do cpu_ms "$n"; done; idle_ms; }

# measure LABEL RATE_PATTERN COMMAND...: RATE_PATTERN is an awk program printing the run's rate.
measure() {
  local label=$1 rate_of=$2; shift 2
  "$@" >"$out" 2>&1 &
  local run=$!
  sleep 5; local before; mapfile -t before < <(sample)
  sleep 10; local after; mapfile -t after < <(sample)
  wait "$run"
  local rate; rate=$(awk "$rate_of" "$out")
  local units; units=$(awk -v r="$rate" 'BEGIN {print r * 10}')
  local row="| $label | $rate"
  for i in "${!names[@]}"; do
    row+=$(awk -v d=$(( after[i] - before[i] )) -v u="$units" 'BEGIN {printf " | %d µs", d * 1000 / u}')
  done
  row+=$(awk -v d=$(( after[${#names[@]}] - before[${#names[@]}] )) -v cpus="$(nproc)" \
    'BEGIN {printf " | %d %% |", d / (100 * cpus)}')
  echo "$row"
}

echo "| work at 8 connections | rate /s | postgres | pgbench | holdfast | receiver | wrk | idle |"
echo "|---|---|---|---|---|---|---|---|"
measure "minimal ceiling's transaction" '$1 == 8 {print $2}' \
  env SECS=20 ../shared/bench/auth-ceiling-minimal.sh 8
measure "auth" '/^\| POST/ {print $8}' \
  env BIN="$BIN" CLIENTS=8 DURATION=20s bench/transactions.sh
measure "merchant, API only" '/^api-only/ {print substr($2, 1, index($2, "/") - 1)}' \
  env API_ONLY=1 ../shared/bench/webhooks-e2e.sh "$BIN" "$RECEIVER" 8 20
measure "merchant with its delivery" '/^api / {print substr($2, 1, index($2, "/") - 1)}' \
  ../shared/bench/webhooks-e2e.sh "$BIN" "$RECEIVER" 8 20
