# SPDX-License-Identifier: Apache-2.0
# free_port [TAKEN...]: a TCP port that no socket uses now and that is not one of TAKEN.
# It is picked below the kernel's ephemeral range, so an outgoing connection cannot take it between
# now and the bind (that happened in CI: a port from inside the range was in use a second later).
free_port() {
  local low p
  low=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
  [ "$low" -gt 12000 ] || low=12000
  for _ in $(seq 100); do
    p=$(( 10000 + RANDOM % (low - 10000) ))
    case " $* " in *" $p "*) continue ;; esac
    if [ -z "$(ss -Htan "sport = :$p")" ]; then echo "$p"; return 0; fi
  done
  echo "no free port found" >&2
  return 1
}
