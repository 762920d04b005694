#!/bin/sh
# Install what noplab needs from Debian 12, then configure and build it.
#   scripts/setup.sh              release build in build/
#   scripts/setup.sh --sanitize   AddressSanitizer + UBSan, -Werror, in build-asan/
set -eu
cd "$(dirname "$0")/.."

SUDO=
[ "$(id -u)" = 0 ] || SUDO=sudo

PACKAGES="build-essential cmake pkg-config binutils valgrind linux-perf \
  libcapstone-dev libelf-dev libpfm4-dev libjansson-dev libgsl-dev \
  liblzma-dev libzstd-dev zlib1g-dev libcairo2-dev libcmocka-dev \
  libxml2-utils chromium \
  xz-utils zstd python3"

missing=
for p in $PACKAGES; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing
fi

if [ "${1:-}" = "--sanitize" ]; then
  cmake -S . -B build-asan -DNOPLAB_SANITIZE=ON -DNOPLAB_WERROR=ON -DCMAKE_BUILD_TYPE=Debug
  cmake --build build-asan -j"$(nproc)"
else
  cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
  cmake --build build -j"$(nproc)"
fi
