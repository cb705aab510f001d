# SPDX-License-Identifier: Apache-2.0
# appservice-operator image.
#
# Stage 1 builds the operator on Debian 12 with the same Debian packages as the README (test/deps.sh
# build dependencies), Release (C++ dependencies linked statically), stripped. Stage 2 is `scratch`
# holding only the binary, the shared libraries `ldd` lists (glibc, libunwind, liblzma), CA
# certificates and a passwd entry for the non-root UID 65532: about 13 MB, where a
# debian:bookworm-slim final stage would be 75 MB before anything is added.
#
# Build: test/docker/build-image.sh (makes debian:bookworm-slim first when the engine lacks it), or
#   docker build --network host -t appservice-operator:dev .
# Works with the classic builder and BuildKit alike (no BuildKit-only syntax).

# CMake reads the rooms table (one library per row) from docs/architecture.md. Only its rows go on
# to the build stage, so an edit elsewhere in that page keeps the compile layer cached (the copy
# below is cached by content).
FROM debian:bookworm-slim AS rooms
COPY docs/architecture.md /architecture.md
RUN grep '^| `src/' /architecture.md > /rooms.md

FROM debian:bookworm-slim AS build
# CCACHE_REMOTE (optional): a ccache remote storage the compile reads, e.g. the test suite's Release
# objects served on loopback (test/docker/build-image.sh, `--network host`): the same compiler,
# flags and relative paths make the build stage's compile a cache hit instead of a second one.
# Unset, the build is a plain one and ccache is not installed.
ARG CCACHE_REMOTE=
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      cmake ninja-build g++ pkg-config libboost1.81-dev libssl-dev zlib1g-dev rapidjson-dev \
      libgoogle-glog-dev libyaml-cpp-dev catch2 ca-certificates binutils \
      ${CCACHE_REMOTE:+ccache} \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
# Only what the operator target needs, so edits to tests or docs keep the compile layer cached.
COPY CMakeLists.txt ./
COPY cmake/ cmake/
COPY --from=rooms /rooms.md docs/architecture.md
COPY src/ src/
# The build tree is /src/build, as the suite's is build/ in its checkout: ccache hashes paths
# relative to the base directory, so both compile with the same arguments; and it hashes the
# locale, which both pin to LANG=C.UTF-8.
RUN set -eu; launcher=""; \
    if [ -n "$CCACHE_REMOTE" ]; then \
      unset LC_ALL LC_CTYPE LC_MESSAGES; \
      export LANG=C.UTF-8 CCACHE_DIR=/tmp/ccache CCACHE_REMOTE_STORAGE="$CCACHE_REMOTE" \
             CCACHE_BASEDIR=/src CCACHE_NOHASHDIR=true \
             CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime; \
      launcher=-DCMAKE_CXX_COMPILER_LAUNCHER=ccache; \
    fi; \
    cmake -S . -B /src/build -G Ninja -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF $launcher >/dev/null; \
    cmake --build /src/build --target appservice-operator; \
    if [ -n "$CCACHE_REMOTE" ]; then ccache --show-stats | grep -E 'Hits|Misses' || true; rm -rf /tmp/ccache; fi; \
    mkdir -p /build; mv /src/build/appservice-operator /build/; rm -rf /src/build; \
    strip --strip-all /build/appservice-operator
# The final filesystem: the binary, each library ldd resolves (copied at the path ldd shows, so the
# loader's default search finds them without an ld.so.cache), the dynamic loader, CA roots, and the
# non-root user. glibc >= 2.34 has the files/dns NSS modules built in, so no libnss_* is needed.
RUN set -eu; \
    mkdir -p /rootfs/etc/ssl/certs /rootfs/tmp /rootfs/home/nonroot; \
    chmod 1777 /rootfs/tmp; chown 65532:65532 /rootfs/home/nonroot; \
    cp /build/appservice-operator /rootfs/appservice-operator; \
    for lib in $(ldd /build/appservice-operator | awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}'); do \
      mkdir -p "/rootfs$(dirname "$lib")"; cp -L "$lib" "/rootfs$lib"; \
    done; \
    cp /etc/ssl/certs/ca-certificates.crt /rootfs/etc/ssl/certs/; \
    printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' > /rootfs/etc/passwd; \
    printf 'root:x:0:\nnonroot:x:65532:\n' > /rootfs/etc/group; \
    printf 'hosts: files dns\n' > /rootfs/etc/nsswitch.conf; \
    chroot /rootfs /appservice-operator --help >/dev/null
# The classic builder keeps this stage as an untagged image (the next build's cache);
# build-image.sh finds the stale ones by this label.
LABEL io.appservice-operator.stage=build

FROM scratch
# test/docker/build-image.sh passes the version from CMakeLists.txt and the git revision.
ARG VERSION=unknown
ARG REVISION=unknown
LABEL io.appservice-operator.stage=final \
      org.opencontainers.image.title=appservice-operator \
      org.opencontainers.image.description="Keeps an owned Deployment and Service for each AppService" \
      org.opencontainers.image.version=$VERSION \
      org.opencontainers.image.revision=$REVISION \
      org.opencontainers.image.licenses=Apache-2.0
COPY --from=build /rootfs/ /
ENV HOME=/home/nonroot SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt
USER 65532:65532
EXPOSE 8080 8081
ENTRYPOINT ["/appservice-operator"]
