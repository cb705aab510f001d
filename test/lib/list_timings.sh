#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# test/run-all.sh --list: where the minutes go. Prints the sections of the last run of this build
# tree (build/timings.tsv), or of the committed test/timings.tsv before a first run, then each
# ctest run's tests, longest first. Lines: "KIND<TAB>NAME<TAB>SECONDS"; KIND is "section" or the
# ctest run ("unit (Release)", "e2e").
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
file=$root/build/timings.tsv
[ -s "$file" ] || file=$root/test/timings.tsv
[ -s "$file" ] || { echo "no timings yet: run test/run-all.sh once" >&2; exit 1; }
echo "from ${file#"$root"/}: $(sed -n 's/^# //p' "$file" | sed -n 1p)"
echo
echo "sections"
awk -F'\t' '$1 == "section" { printf "  %-50s %5ds  %2dm%02ds\n", $2, $3, $3 / 60, $3 % 60 }' "$file"
awk -F'\t' '!/^#/ && $1 != "section" { print $1 }' "$file" | awk '!seen[$0]++' |
  while IFS= read -r run; do
    echo
    awk -F'\t' -v run="$run" '$1 == run { n++; s += $3 } END {
      printf "%s: %d tests, %d s of test time\n", run, n, s }' "$file"
    awk -F'\t' -v run="$run" '$1 == run { printf "%6d s  %s\n", $3, $2 }' "$file" | sort -rn
  done
