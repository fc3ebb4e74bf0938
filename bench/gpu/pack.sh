#!/bin/bash
# Packs a release build for bench/gpu/run.sh: configured here as build-gpu,
# its test list beside it, objects and static libraries left out, binaries
# stripped, into .gpurun/build-gpu.tar.xz (a few MB: the SPIR-V compresses).
set -eu
[ -d build-gpu ] || meson setup build-gpu --buildtype=release -Dvalidation=enabled
ninja -C build-gpu
meson introspect build-gpu --tests > build-gpu/tests.json
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
(cd build-gpu && find . -type f ! -name '*.o' ! -name '*.a' ! -path '*.p/*' ! -path './meson-*/*' \
   ! -path './shaders/*' ! -path './bench-*/*' ! -path './tests/*/work/*' ! -name '*.d' | tar -cf - -T -) |
  (mkdir -p "$tmp/build-gpu" && cd "$tmp/build-gpu" && tar -xf -)
find "$tmp" -type f -perm -u+x -exec sh -c 'file "$1" | grep -q ELF && strip --strip-unneeded "$1"' _ {} \;
mkdir -p .gpurun && tar -C "$tmp" -cJf .gpurun/build-gpu.tar.xz build-gpu
du -h .gpurun/build-gpu.tar.xz
