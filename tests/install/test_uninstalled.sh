#!/usr/bin/env bash
# A program built against the build folder itself, as a new user would try
# it with meson's uninstalled pkg-config file:
#   PKG_CONFIG_PATH=build/meson-uninstalled cc examples/embed.c $(pkg-config --cflags --libs txlm)
# txlm-uninstalled.pc's Cflags must name include/ (where txlm.h is), its
# Libs the build folder; the program runs on the demo model with the build
# folder on LD_LIBRARY_PATH.
# usage: test_uninstalled.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$(cd "$1" && pwd) src=$(cd "$2" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export PKG_CONFIG_PATH="$build/meson-uninstalled"
unset PKG_CONFIG_SYSROOT_DIR
[ -f "$PKG_CONFIG_PATH/txlm-uninstalled.pc" ] || { echo "FAIL: no $PKG_CONFIG_PATH/txlm-uninstalled.pc"; exit 1; }
cflags=$(pkg-config --cflags txlm)
echo "pkg-config --cflags --libs txlm: $cflags $(pkg-config --libs txlm)"
# In a sanitizer build the library needs the sanitizer runtimes in the program too.
san=$(meson introspect "$build" --buildoptions | python3 -c 'import json,sys; print([o["value"] for o in json.load(sys.stdin) if o["name"]=="b_sanitize"][0])')
sanflags=()
[ "$san" = none ] || sanflags=(-fsanitize="$san")
cc "$src/examples/embed.c" "${sanflags[@]}" -Wall -Wextra -Werror $cflags $(pkg-config --libs txlm) -o "$tmp/embed" 2> "$tmp/cc.err" ||
    { echo "FAIL: examples/embed.c does not build with txlm-uninstalled.pc:"; cat "$tmp/cc.err"; exit 1; }
out=$(printf 'The secret of life is\nLove\n' | LD_LIBRARY_PATH="$build" "$tmp/embed" "$src/models/demo.txlm" 3)
printf '%s\n' "$out"
[ "$(printf '%s\n' "$out" | grep -c '^> ')" -ge 2 ] || { echo "FAIL: two prompts, not two answers"; exit 1; }
linked=$(LD_LIBRARY_PATH="$build" ldd "$tmp/embed" | grep libtxlm)
[[ $linked == *"libtxlm.so.0 => $build/libtxlm.so.0 "* ]] ||
    { echo "FAIL: the program did not take this build's libtxlm: $linked"; exit 1; }
echo "a program built with build/meson-uninstalled/txlm-uninstalled.pc runs"
