#!/usr/bin/env bash
# meson install into a temporary prefix, build examples/embed.c and
# examples/chat.c against the installed pkg-config file, and run them on a
# packed golden model; a program with its own Vulkan device (bench/frame_gap.c)
# on txlm_vulkan.h; embed.c again against the installed static library
# (no libtxlm.so at run time); where txlm-glib is built, its installed
# files and examples/glib/generate.c against txlm-glib-1.0.pc; the installed bin/txlm run from the staged
# prefix with no LD_LIBRARY_PATH (its run path finds lib/); then README.md's
# "Installing" commands exactly as written, with a home folder of its own,
# on this build folder (its prefix set back afterwards): the install, the
# installed txlm, and a program built against the installed txlm.pc that
# starts without LD_LIBRARY_PATH; the installed txlm-write (where it is
# built) finds its libraries and the installed demo model.
# usage: test_install.sh BUILD_DIR SOURCE_DIR TXLM_PACK GOLDEN_CASE_DIR
set -euo pipefail
build=$1 src=$2 pack=$3 case_dir=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
DESTDIR="$tmp/root" meson install -C "$build" --no-rebuild --quiet > /dev/null
prefix=$(meson introspect "$build" --buildoptions | python3 -c 'import json,sys; print([o["value"] for o in json.load(sys.stdin) if o["name"]=="prefix"][0])')
root="$tmp/root$prefix"
pc=$(dirname "$(find "$root" -name txlm.pc | head -n 1)")
[ -n "$pc" ] || { echo "FAIL: txlm.pc not installed"; exit 1; }
[ -f "$root/include/txlm.h" ] || { echo "FAIL: txlm.h not installed"; exit 1; }
export PKG_CONFIG_PATH="$pc" PKG_CONFIG_SYSROOT_DIR="$tmp/root"
libdir=$(dirname "$(find "$root" -name libtxlm.so | head -n 1)")
# In a sanitizer build the library needs the sanitizer runtimes in the program too.
san=$(meson introspect "$build" --buildoptions | python3 -c 'import json,sys; print([o["value"] for o in json.load(sys.stdin) if o["name"]=="b_sanitize"][0])')
sanflags=()
[ "$san" = none ] || sanflags=(-fsanitize="$san")
cc "$src/examples/embed.c" "${sanflags[@]}" $(pkg-config --cflags --libs txlm) -Wl,-rpath,"$libdir" -o "$tmp/embed"
"$pack" "$case_dir" -o "$tmp/model.txlm"
out=$(printf 'w5 w9 w12\nw7\n' | "$tmp/embed" "$tmp/model.txlm" 7)
echo "$out"
# two prompts answered: two lines beginning with the prompt marker
[ "$(printf '%s\n' "$out" | grep -c '^> ')" -ge 2 ] || { echo "FAIL: unexpected output"; exit 1; }
# words spaced as the vocabulary's text is (not run together token by token)
printf '%s\n' "$out" | grep -Eq '^> w[0-9]+ w[0-9]+' || { echo "FAIL: embed prints words run together"; exit 1; }
# the streaming chat loop: every line answered on its own line, the library's version told
cc "$src/examples/chat.c" "${sanflags[@]}" -Wall -Wextra -Werror $(pkg-config --cflags --libs txlm) -Wl,-rpath,"$libdir" -o "$tmp/chat"
out=$(printf 'w5 w9 w12\nw7\n' | "$tmp/chat" "$tmp/model.txlm" 3 2> "$tmp/chat.err")
echo "$out"
[ "$(printf '%s\n' "$out" | grep -c '^> ')" -eq 3 ] || { echo "FAIL: the chat example did not answer two lines"; exit 1; }
grep -q "^txlm $(pkg-config --modversion txlm), session: " "$tmp/chat.err" || { echo "FAIL: chat example: $(cat "$tmp/chat.err")"; exit 1; }
again=$(printf 'w5 w9 w12\nw7\n' | "$tmp/chat" "$tmp/model.txlm" 3 2> /dev/null)
[ "$out" = "$again" ] || { echo "FAIL: the chat example's seeded replies differ between runs"; exit 1; }
# a program with its own Vulkan device (txlm_vulkan.h, which includes vulkan.h): bench/frame_gap.c and
# tests/common/host_device.c built against the installed headers and library alone, run briefly
[ -f "$root/include/txlm_vulkan.h" ] || { echo "FAIL: txlm_vulkan.h not installed"; exit 1; }
cc "$src/bench/frame_gap.c" "$src/tests/common/host_device.c" -I"$src/tests/common" "${sanflags[@]}" -std=c11 \
    -D_DEFAULT_SOURCE -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Werror $(pkg-config --cflags --libs txlm) -lpthread -ldl -lm \
    -Wl,-rpath,"$libdir" -o "$tmp/frame_gap"
"$tmp/frame_gap" -m "$tmp/model.txlm" --tgt-len 4 --seconds 0.3 --rounds 1 --configs alone,shared:3 > "$tmp/gap.txt" ||
    { echo "FAIL: a program on its own device: $(cat "$tmp/gap.txt")"; exit 1; }
grep -q "^shared:3 " "$tmp/gap.txt" || { echo "FAIL: frame_gap: $(cat "$tmp/gap.txt")"; exit 1; }
# the static library: the same program, with no libtxlm.so in it
static=$(find "$root" -name libtxlm.a | head -n 1)
[ -n "$static" ] || { echo "FAIL: libtxlm.a not installed"; exit 1; }
cc "$src/examples/embed.c" "${sanflags[@]}" $(pkg-config --cflags txlm) "$static" \
    $(pkg-config --static --libs txlm | sed 's/-ltxlm//') -o "$tmp/embed_static"
! env -u LD_LIBRARY_PATH ldd "$tmp/embed_static" | grep -q libtxlm || { echo "FAIL: the static build still needs libtxlm.so"; exit 1; }
again=$(printf 'w5 w9 w12\nw7\n' | "$tmp/embed_static" "$tmp/model.txlm" 7)
first=$(printf 'w5 w9 w12\nw7\n' | "$tmp/embed" "$tmp/model.txlm" 7)
[ "$again" = "$first" ] || { echo "FAIL: the static build answers differently"; exit 1; }
# txlm-glib, where it is built: its headers, txlm-glib-1.0.pc (with txlm.pc,
# their prefix set to the staged one: a sysroot would move glib's own paths
# too), and where introspection is built its GIR and typelib; the program of
# docs/embedding.md built against the installed pc file runs
if [ -f "$build/glib/libtxlm-glib-1.0.so" ]; then
    [ -f "$root/include/txlm-glib-1.0/txlm-glib.h" ] || { echo "FAIL: txlm-glib.h not installed"; exit 1; }
    if [ -f "$build/glib/Txlm-1.0.typelib" ]; then
        find "$root" -path '*girepository-1.0/Txlm-1.0.typelib' | grep -q . && find "$root" -path '*gir-1.0/Txlm-1.0.gir' | grep -q . ||
            { echo "FAIL: the Txlm-1.0 typelib or GIR not installed"; exit 1; }
    fi
    mkdir "$tmp/pc"
    for f in "$pc/txlm.pc" "$pc/txlm-glib-1.0.pc"; do sed "s|^prefix=.*|prefix=$root|" "$f" > "$tmp/pc/$(basename "$f")"; done
    glib_flags=$(env -u PKG_CONFIG_SYSROOT_DIR PKG_CONFIG_PATH="$tmp/pc" pkg-config --cflags --libs txlm-glib-1.0)
    cc "$src/examples/glib/generate.c" "${sanflags[@]}" $glib_flags -Wl,-rpath,"$libdir" -o "$tmp/generate"
    out=$("$tmp/generate" "$src/models/demo.txlm" 2> "$tmp/generate.err") || { echo "FAIL: examples/glib/generate.c: $(cat "$tmp/generate.err")"; exit 1; }
    grep -q '^\[stopped after [0-9]* tokens; the memory holds [0-9]* tokens\]$' <<< "$out" ||
        { echo "FAIL: examples/glib/generate.c built against the installed txlm-glib-1.0.pc printed: $out"; exit 1; }
    echo "txlm-glib installed: header, txlm-glib-1.0.pc, typelib; examples/glib/generate.c built against it runs"
fi

# the installed command, from a prefix the loader does not search
txlm="$root/bin/txlm"
[ -x "$txlm" ] || { echo "FAIL: bin/txlm not installed"; exit 1; }
env -u LD_LIBRARY_PATH "$txlm" --version > "$tmp/version.txt" 2> "$tmp/version.err" ||
    { echo "FAIL: the installed txlm does not start: $(cat "$tmp/version.err")"; exit 1; }
env -u LD_LIBRARY_PATH ldd "$txlm" | grep libtxlm | grep -q "$root" ||
    { echo "FAIL: bin/txlm does not find the installed libtxlm: $(env -u LD_LIBRARY_PATH ldd "$txlm" | grep libtxlm)"; exit 1; }
env -u LD_LIBRARY_PATH "$txlm" info -m "$tmp/model.txlm" > /dev/null || { echo "FAIL: the installed txlm info"; exit 1; }

# txlm-write (where it is built), from the staged prefix: it starts with no
# LD_LIBRARY_PATH (its run path) and finds the demo model installed beside it
if [ -e "$root/bin/txlm-write" ]; then
    out=$(env -u LD_LIBRARY_PATH -u DISPLAY -u WAYLAND_DISPLAY "$root/bin/txlm-write" --version 2>&1) ||
        { echo "FAIL: the installed txlm-write does not start: $out"; exit 1; }
    [[ "$out" == *"demo model: $root/share/txlm/demo.txlm" ]] ||
        { echo "FAIL: the installed txlm-write does not find the installed demo model: $out"; exit 1; }
    echo "installed $out"
fi

# README.md's lines, as written, in a folder where build/, examples/ and
# models/ are this build's and the source's; the compiler gets the
# sanitizer flags of a sanitizer build (its library needs their runtimes)
block=$(python3 - "$src/README.md" <<'PY'
import sys
text = open(sys.argv[1]).read()
sec = text[text.index("## Installing\n"):]
start = sec.index("```sh\n") + 6
print(sec[start:sec.index("```", start)], end="")
PY
)
work="$tmp/readme"
mkdir -p "$work/home"
ln -s "$(cd "$build" && pwd)" "$work/build" && ln -s "$src/examples" "$work/examples" && ln -s "$src/models" "$work/models"
trap 'meson configure "$build" --prefix "$prefix" > /dev/null; rm -rf "$tmp"' EXIT
export SANFLAGS="${sanflags[*]}"
cc() { command cc $SANFLAGS "$@"; }
export -f cc
(cd "$work" && env -u LD_LIBRARY_PATH -u PKG_CONFIG_PATH -u PKG_CONFIG_SYSROOT_DIR HOME="$work/home" \
    bash -euo pipefail -c "$block") > "$work/out.txt" 2> "$work/err.txt" ||
    { echo "FAIL: README.md's install lines:"; printf '%s\n' "$block"; cat "$work/out.txt" "$work/err.txt"; exit 1; }
grep -q "^txlm $(pkg-config --modversion txlm)" "$work/out.txt" && grep -q '^> ' "$work/out.txt" ||
    { echo "FAIL: README.md's install lines printed:"; cat "$work/out.txt" "$work/err.txt"; exit 1; }
[ -x "$work/home/.local/bin/txlm" ] && env -u LD_LIBRARY_PATH ldd "$work/embed" | grep libtxlm | grep -q "$work/home/.local" ||
    { echo "FAIL: README.md's install: not in \$HOME/.local, or the program does not find its libtxlm there"; exit 1; }
echo "README.md's install lines: $(grep "^txlm " "$work/out.txt"); the program built against txlm.pc starts"
echo "installed library (shared and static), header, txlm.pc and bin/txlm work"
