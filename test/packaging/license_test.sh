#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The license is stated once (LICENSE, Apache-2.0) and named in every source file: each C++, Go
# and shell file, CMakeLists.txt and the Dockerfile carries an SPDX-License-Identifier line, as
# the image's org.opencontainers.image.licenses label and the chart do.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
fail() { echo "FAIL: $*" >&2; exit 1; }
grep -q 'Apache License' LICENSE && grep -q 'Version 2.0, January 2004' LICENSE || fail "LICENSE is not Apache-2.0"
grep -q 'org.opencontainers.image.licenses=Apache-2.0' Dockerfile || fail "the image's licenses label"
# Tracked files and new ones not yet committed (a contributor runs this before committing).
mapfile -t files < <(git ls-files --cached --others --exclude-standard -- '*.cpp' '*.h' '*.go' '*.sh' \
  CMakeLists.txt '*/CMakeLists.txt' Dockerfile .ci/run)
[ "${#files[@]}" -ge 300 ] || fail "only ${#files[@]} source files found"
missing=()
for f in "${files[@]}"; do
  sed -n 1,3p "$f" | grep 'SPDX-License-Identifier: Apache-2.0' >/dev/null || missing+=("$f")
done
[ ${#missing[@]} -eq 0 ] || fail "no SPDX-License-Identifier in the first 3 lines of: ${missing[*]}"
echo "LICENSE is Apache-2.0; all ${#files[@]} source files say so"
