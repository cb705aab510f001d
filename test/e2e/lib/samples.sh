# SPDX-License-Identifier: Apache-2.0
# Sampling a count through a disruption (a drain), for tests that source common.sh. A sample is
# taken only when its command answered (a slow API server is not a replica down), and the samples
# cover the disruption: one before it starts and one that surely started after it ended. (A count
# of samples would depend on how fast the API server answers.)

# sample_start FILE CMD...: CMD's answer now (it must answer) as FILE's first line, then one line
# every 0.2 s in the background ($sampler is its pid: kill it in the test's exit trap).
sample_start() {
  local file=$1; shift
  "$@" >"$file" || fail "the first sample failed: $*"
  ( while :; do "$@" >>"$file" || true; sleep 0.2; done ) &
  sampler=$!
}
# sample_stop FILE: waits for two more samples (the second started after this call), stops the
# sampler, and sets sample_min and sample_last.
sample_stop() {
  local file=$1 taken
  taken=$(wc -l <"$file")
  eventually 60 sh -c "[ \$(wc -l <'$file') -ge $(( taken + 2 )) ]"
  kill "$sampler"; wait "$sampler" 2>/dev/null || true
  sample_min=$(sort -n "$file" | sed -n 1p)
  sample_last=$(tail -n 1 "$file")
}
