#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Scale curves from run.sh results: RSS and convergence time against N, ours and the peer, as SVG
# (gnuplot, installed from Debian when missing). Prints the slopes (least squares over N): memory
# per cached AppService with its two children, and convergence time per AppService.
#
#   test/bench/plot.sh OUT_DIR RESULTS.txt...      e.g. test/bench/plot.sh docs/bench build/bench/*/results.txt
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
[ $# -ge 2 ] || { sed -n '2,6p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
out=$1; shift
if ! command -v gnuplot >/dev/null; then
  [ "$(id -u)" = 0 ] || { echo "plot.sh: gnuplot is missing (apt-get install gnuplot-nox)" >&2; exit 1; }
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends gnuplot-nox >/dev/null
fi
benchctl=$(bash "$here/build.sh")/benchctl
mkdir -p "$out"
data=$(mktemp); trap 'rm -f "$data" "$data".*' EXIT
"$benchctl" table -tsv "$@" > "$data"
# column numbers by name
col() { head -1 "$data" | tr '\t' '\n' | grep -nx "$1" | cut -d: -f1; }
n=$(col n) size=$(col size) op=$(col op)

# slope KEY OP SIZE: least-squares slope of KEY against N.
slope() {
  awk -F'\t' -v k="$(col "$1")" -v o="$2" -v s="$3" -v n="$n" -v op="$op" -v sz="$size" '
    NR > 1 && $op == o && $sz == s {x = $n; y = $k; c++; sx += x; sy += y; sxx += x*x; sxy += x*y}
    END {d = c*sxx - sx*sx; if (c < 2 || d == 0) print "n/a"; else printf "%.4f", (c*sxy - sx*sy)/d}' "$data"
}
for s in $(awk -F'\t' -v sz="$size" 'NR > 1 {print $sz}' "$data" | sort -un); do
  for o in ours peer; do
    rss=$(slope rss_settled_mib "$o" "$s") peak=$(slope rss_peak_mib "$o" "$s") conv=$(slope converge_s "$o" "$s")
    [ "$rss" != n/a ] || continue  # one N only: no slope
    kib() { [ "$1" = n/a ] && echo n/a || awk -v m="$1" 'BEGIN {printf "%.1f", m * 1024}'; }
    echo "size $s $o: settled RSS $(kib "$rss") KiB per AppService, peak RSS $(kib "$peak") KiB per AppService, convergence $conv s per AppService"
  done
done | tee "$out/slopes.txt"

# One file per series (operator, size), sorted by N, so linespoints join the points of a series.
series=()
for s in $(awk -F'\t' -v sz="$size" 'NR > 1 {print $sz}' "$data" | sort -un); do
  for o in ours peer; do
    f=$data.$o.$s
    awk -F'\t' -v o="$o" -v s="$s" -v op="$op" -v sz="$size" \
      'NR > 1 && $op == o && $sz == s' "$data" | sort -t$'\t' -k"$n","$n"n > "$f"
    [ -s "$f" ] && series+=("$f:$o, size $s")
  done
done
terminal=${PLOT_TERMINAL:-'svg size 640,400 dynamic font "sans,11"'}
plot() { # FILE KEY YLABEL TITLE
  local file=$1 key=$2 ylabel=$3 title=$4 c cmd="" entry
  c=$(col "$key")
  for entry in "${series[@]}"; do
    cmd+="${cmd:+, }\"${entry%%:*}\" using $n:$c with linespoints title \"${entry#*:}\""
  done
  gnuplot <<GP
set terminal $terminal
set output "$out/$file"
set title "$title"
set xlabel "AppServices (N)"
set ylabel "$ylabel"
set logscale x
set key top left
set grid
set datafile separator "\t"
plot $cmd
GP
}
plot rss.svg rss_peak_mib "peak RSS (MiB)" "Peak RSS against N"
plot rss-settled.svg rss_settled_mib "settled RSS (MiB)" "Settled RSS against N"
plot convergence.svg converge_s "seconds" "First create to all Available, against N"
plot cpu.svg cpu_converge_s "CPU seconds" "Operator CPU to converge, against N"
echo "plot.sh: wrote $out/{rss,rss-settled,convergence,cpu}.svg" >&2
