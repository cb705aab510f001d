# SPDX-License-Identifier: Apache-2.0
# Building against the installed runtime, for unit.install_consumer and e2e.configmap_sync_test.
# Callers define fail().

# install_runtime BUILD_DIR PREFIX: `cmake --install` of the build tree to PREFIX.
install_runtime() {
  cmake --install "$1" --prefix "$2" >"$2.install.log" 2>&1 || {
    cat "$2.install.log"; fail "cmake --install $1 --prefix $2"; }
}

# build_against PREFIX SOURCE_DIR BUILD_DIR: configures SOURCE_DIR with find_package(AsopRuntime)
# finding PREFIX only, and builds it (Release; Ninja and ccache when present). With ccache, paths
# are hashed relative to BUILD_DIR's parent, a temporary directory, so the next run hits the cache.
build_against() {
  local prefix=$1 source=$2 build=$3
  local args=(-DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix")
  if command -v ninja >/dev/null; then args+=(-G Ninja); fi
  if command -v ccache >/dev/null; then
    args+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
    export CCACHE_BASEDIR CCACHE_NOHASHDIR=true
    CCACHE_BASEDIR=$(dirname "$build")
  fi
  cmake -S "$source" -B "$build" "${args[@]}" >"$build.configure.log" 2>&1 || {
    cat "$build.configure.log"; fail "configuring $source against the install in $prefix"; }
  cmake --build "$build" >"$build.build.log" 2>&1 || {
    cat "$build.build.log"; fail "building $source against the install in $prefix"; }
}
