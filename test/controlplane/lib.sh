# SPDX-License-Identifier: Apache-2.0
# Helpers for up.sh and down.sh.

source "$(dirname "${BASH_SOURCE[0]}")/../lib/free_port.sh"

# alive NAME DIR: the component's recorded process is still running (and is ours: its command line
# names DIR, so a recycled pid is not mistaken for it).
alive() {
  local pidfile=$2/run/$1.pid pid cmdline
  [ -f "$pidfile" ] || return 1
  pid=$(cat "$pidfile")
  # No pipe into grep -q here: under pipefail its early exit would fail the pipeline at random.
  cmdline=$(tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null) || return 1
  [[ $cmdline == *"$2"* ]]
}

# start NAME DIR CMD...: runs CMD in its own session with output in DIR/logs/NAME.log, unless the
# component is already running.
start() {
  local name=$1 dir=$2; shift 2
  alive "$name" "$dir" && return 0
  setsid "$@" >> "$dir/logs/$name.log" 2>&1 < /dev/null &
  echo $! > "$dir/run/$name.pid"
}

# wait_for WHAT SECONDS CMD...: retries CMD until it succeeds or the deadline passes.
wait_for() {
  local what=$1 deadline=$(( $(date +%s) + $2 )); shift 2
  until "$@" >/dev/null 2>&1; do
    if [ "$(date +%s)" -ge "$deadline" ]; then
      echo "up.sh: timed out waiting for $what; last lines of the logs in $dir/logs:" >&2
      tail -n 5 "$dir"/logs/*.log >&2 || true
      return 1
    fi
    sleep 0.5
  done
}
