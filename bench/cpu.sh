# Sourced by the load scripts: CPU time used by processes, split by process name, read from
# /proc (utime + stime of every live process whose command name is given). `cpu_ms NAME...`
# prints milliseconds; take it before and after a run and divide the difference by the work
# done. A process that exits during the run takes its time with it: measure long-lived ones.
cpu_ms() {
  local tick
  tick=$(getconf CLK_TCK)
  local total=0 pid comm fields
  for stat in /proc/[0-9]*/stat; do
    read -r fields 2>/dev/null <"$stat" || continue
    pid=${fields%% *}
    comm=${fields#*(}; comm=${comm%%)*}
    for name in "$@"; do
      if [ "$comm" = "$name" ]; then
        # Fields after the command name: state is 3rd overall, utime 14th, stime 15th.
        rest=${fields##*) }
        read -r _ _ _ _ _ _ _ _ _ _ _ utime stime _ <<<"$rest"
        total=$(( total + utime + stime ))
      fi
    done
  done
  echo $(( total * 1000 / tick ))
}
