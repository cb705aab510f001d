#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The image builds from the real Dockerfile (test/docker/build-image.sh; the base image is made with
# debootstrap when the engine has none) and is what docs/deploy.md promises: scratch-based and small,
# non-root, no shell, `--help` works. The Docker tests use the image this test builds.
# Skipped (exit 77) without a Docker engine, unless REQUIRE_DOCKER=1.
# ctest: may-skip
# ctest: provides docker_image
# A cold build (base image by debootstrap, apt in the build stage, the compile) shares 2 cores
# with the other e2e tests.
# ctest: timeout 3000
source "$(dirname "$0")/lib/common.sh"
cd "${ASOP_SOURCE_DIR:?}"
require_docker
image=${ASOP_IMAGE:-appservice-operator:dev}
name=asop-e2e-image-$$
trap 'docker rm -f "$name" >/dev/null 2>&1 || true' EXIT

# A clone of a local path has no web address for the source label; the test then names one, so
# the label's way from the build to the image is checked on every machine.
IMAGE_SOURCE=$(bash test/docker/image-source.sh)
export IMAGE_SOURCE=${IMAGE_SOURCE:-https://example.invalid/appservice-operator}
IMAGE=$image bash test/docker/build-image.sh
size=$(docker image inspect -f '{{.Size}}' "$image")
echo "image $image: $(( size / 1000000 )) MB"
[ "$size" -lt 30000000 ] || fail "image is $size bytes, over 30 MB"
[ "$(docker image inspect -f '{{.Config.User}}' "$image")" = 65532:65532 ] || fail "image user is not 65532:65532"
help=$(docker run --rm --network none "$image" --help 2>&1) || fail "--help exited non-zero: $help"
grep -q -- '--kubeconfig' <<<"$help" || fail "--help does not list --kubeconfig"
# scratch: nothing to exec but the operator.
if docker run --name "$name" --network none --entrypoint /bin/sh "$image" -c true >/dev/null 2>&1; then
  fail "the image has a shell"
fi
# The OCI labels: the version is the binary's own, and the license is named.
label() { docker image inspect -f "{{index .Config.Labels \"org.opencontainers.image.$1\"}}" "$image"; }
version=$(docker run --rm --network none "$image" --version) || fail "--version failed"
[ "appservice-operator $(label version)" = "$version" ] || fail "label version $(label version), binary says $version"
[ "$(label licenses)" = Apache-2.0 ] || fail "licenses label: $(label licenses)"
[ "$(label revision)" = "$(git rev-parse HEAD)" ] || fail "revision label: $(label revision)"
[ "$(label source)" = "$IMAGE_SOURCE" ] || fail "source label: '$(label source)', want $IMAGE_SOURCE"
echo "labels: version $(label version), revision $(label revision), licenses $(label licenses), source $(label source)"
echo "PASS: docker_image"
