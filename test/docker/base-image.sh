#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Makes sure the Docker engine has debian:bookworm-slim, the base image of the Dockerfile, so the
# Dockerfile builds unchanged on a machine without a registry. When the image is missing it is made
# from Debian's own packages: debootstrap --variant=minbase, trimmed the way the official slim image
# is (no docs, man pages or locales, apt lists dropped), and `docker import`ed. The rootfs tarball
# is cached in ~/.cache/appservice-operator/ so a second machine state (image removed) re-imports
# in seconds. Idempotent: does nothing when the image is there. Needs root (debootstrap, chroot).
#
# Environment: BASE_IMAGE (default debian:bookworm-slim), DEBIAN_MIRROR (default
# http://deb.debian.org/debian), ASOP_CACHE (default ~/.cache/appservice-operator).
set -euo pipefail
image=${BASE_IMAGE:-debian:bookworm-slim}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
cache=${ASOP_CACHE:-$HOME/.cache/appservice-operator}
tarball=$cache/debian-bookworm-slim-rootfs.tar

log() { echo "base-image.sh: $*" >&2; }

if docker image inspect "$image" >/dev/null 2>&1; then
  log "$image is present"
  exit 0
fi

if [ ! -s "$tarball" ]; then
  [ "$(id -u)" = 0 ] || { log "need root to debootstrap $image"; exit 1; }
  if ! command -v debootstrap >/dev/null; then
    log "installing debootstrap"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap >/dev/null
  fi
  mkdir -p "$cache"
  rootfs=$(mktemp -d "$cache/rootfs.XXXXXX")
  trap 'rm -rf "$rootfs" "$tarball.tmp"' EXIT
  log "debootstrap --variant=minbase bookworm from $mirror (a few minutes)"
  debootstrap --variant=minbase bookworm "$rootfs" "$mirror" >"$cache/debootstrap.log" 2>&1 ||
    { tail -n 20 "$cache/debootstrap.log" >&2; log "debootstrap failed (log: $cache/debootstrap.log)"; exit 1; }

  # What the official slim image configures: later apt installs skip docs, man pages and locales,
  # and leave no package cache or lists behind.
  cat >"$rootfs/etc/dpkg/dpkg.cfg.d/docker" <<'CFG'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/groff/*
path-exclude /usr/share/info/*
path-exclude /usr/share/lintian/*
path-exclude /usr/share/linda/*
path-exclude /usr/share/locale/*
path-include /usr/share/locale/locale.alias
CFG
  cat >"$rootfs/etc/apt/apt.conf.d/docker-clean" <<'CFG'
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
CFG
  echo 'Acquire::Languages "none";' >"$rootfs/etc/apt/apt.conf.d/docker-no-languages"
  echo 'APT::AutoRemove::SuggestsImportant "false";' >"$rootfs/etc/apt/apt.conf.d/docker-autoremove-suggests"
  # The same suites as the official image: updates and security fixes too.
  rm -f "$rootfs/etc/apt/sources.list"
  cat >"$rootfs/etc/apt/sources.list.d/debian.sources" <<CFG
Types: deb
URIs: $mirror
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
CFG
  # Trim: package caches and lists, docs, man pages, locales, logs.
  rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/cache/apt/*.bin \
    "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/log/* "$rootfs"/tmp/* \
    "$rootfs"/usr/share/man/* "$rootfs"/usr/share/info/* "$rootfs"/usr/share/groff/* \
    "$rootfs"/usr/share/lintian/* "$rootfs"/usr/share/linda/*
  find "$rootfs/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete
  find "$rootfs/usr/share/doc" -mindepth 1 -type d -empty -delete
  find "$rootfs/usr/share/locale" -mindepth 1 -maxdepth 1 -not -name locale.alias -exec rm -rf {} +
  : >"$rootfs/etc/hostname"; : >"$rootfs/etc/resolv.conf"
  rm -f "$rootfs/etc/machine-id"; : >"$rootfs/etc/machine-id"
  tar --numeric-owner -C "$rootfs" -cf "$tarball.tmp" .
  mv "$tarball.tmp" "$tarball"
fi

log "importing $image from $tarball"
docker import -c 'CMD ["bash"]' -c 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  "$tarball" "$image" >/dev/null
docker image inspect -f "{{.Size}}" "$image" | awk -v i="$image" '{printf "base-image.sh: %s is %.1f MB\n", i, $1/1e6}' >&2
