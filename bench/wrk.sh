# Sourced by the load scripts: `wrk_figures "$out"` sets rps, p50, p99 and errors (the non-2xx
# count, 0 when wrk prints none) from the output of one `wrk --latency` run.
wrk_figures() {
  read -r rps p50 p99 errors < <(awk '
    /Requests\/sec/ {r = $2}
    $1 == "50%" {a = $2}
    $1 == "99%" {b = $2}
    /Non-2xx/ {e = $5}
    END {print r, a, b, (e == "" ? 0 : e)}' <<<"$1")
}
