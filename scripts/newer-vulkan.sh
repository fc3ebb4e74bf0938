#!/usr/bin/env bash
# A newer GLSL compiler and a newer lavapipe on Debian 12, without touching
# the system: Debian 13's glslang (15.x, which compiles GL_KHR_cooperative_matrix;
# Debian 12's 12.0 refuses it) and Debian unstable's Mesa lavapipe (which
# exposes VK_KHR_cooperative_matrix), each with the C/C++ runtime of its
# release, run through that release's own dynamic loader.
#
#   scripts/newer-vulkan.sh fetch [--again] download and lay out both (once: kept in the cache; --again: afresh)
#   scripts/newer-vulkan.sh glslang         print the path of a glslangValidator wrapper
#   scripts/newer-vulkan.sh run CMD ARGS    run CMD on the newer lavapipe (and its validation layer)
#   scripts/newer-vulkan.sh info            print what the cache holds
#
# The cache is $TXLM_TOOLS_CACHE, else ${XDG_CACHE_HOME:-~/.cache}/txlm/newer-vulkan.
# Packages come from the Debian mirror the machine already uses (the first
# URI of /etc/apt/sources.list.d/debian.sources or /etc/apt/sources.list;
# TXLM_DEBIAN_MIRROR overrides), through a sources list and package lists
# of the cache's own: apt's system state is read, never written.
set -euo pipefail

CACHE=${TXLM_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/txlm/newer-vulkan}
GLSLANG_DIR=$CACHE/glslang   # trixie: glslang 15.x
MESA_DIR=$CACHE/mesa         # sid: Mesa lavapipe with cooperative matrices

GLSLANG_SUITE=trixie
GLSLANG_PKGS="glslang-tools spirv-tools libc6 libstdc++6 libgcc-s1"
MESA_SUITE=sid
# the driver, its libraries, and the loader and validation layer of the
# same release (Debian 12's layer predates VK_KHR_cooperative_matrix)
MESA_PKGS="mesa-vulkan-drivers libllvm22 libc6 libstdc++6 libgcc-s1 libelf1t64 libz3-4 libzstd1 libxml2-16
 libedit2 libffi8 libdrm2 libdrm-amdgpu1 libvulkan1 libwayland-client0 libxcb1 libxcb-dri3-0 libxcb-present0
 libdisplay-info3 libpng16-16t64 libexpat1 zlib1g libicu78 liblzma5 libbsd0 libmd0 libtinfo6 libxau6 libxdmcp6
 vulkan-validationlayers"

die() { echo "newer-vulkan: $*" >&2; exit 1; }

mirror() {
    if [ -n "${TXLM_DEBIAN_MIRROR:-}" ]; then echo "$TXLM_DEBIAN_MIRROR"; return; fi
    local uri=""
    if [ -f /etc/apt/sources.list.d/debian.sources ]; then
        uri=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources)
    fi
    if [ -z "$uri" ] && [ -f /etc/apt/sources.list ]; then
        uri=$(awk '$1 == "deb" {for (i = 2; i <= NF; i++) if ($i ~ /^https?:/) {print $i; exit}}' /etc/apt/sources.list)
    fi
    [ -n "$uri" ] || die "no Debian mirror found in /etc/apt (set TXLM_DEBIAN_MIRROR)"
    # a security mirror has no trixie or sid
    case $uri in *security*) uri=http://deb.debian.org/debian ;; esac
    echo "$uri"
}

# apt-get with the cache's own sources list, package lists and archives
apt_suite() {
    local suite=$1; shift
    local dir=$CACHE/apt/$suite
    mkdir -p "$dir/lists/partial" "$dir/cache/archives/partial"
    # as root, apt would hand the downloads to its _apt user, who cannot write the cache
    local sandbox=""
    [ "$(id -u)" != 0 ] || sandbox="-o APT::Sandbox::User=root"
    echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $(mirror) $suite main" > "$dir/sources.list"
    apt-get -q -o Dir::Etc::SourceList="$dir/sources.list" -o Dir::Etc::SourceParts=/dev/null \
        -o Dir::State::Lists="$dir/lists" -o Dir::Cache="$dir/cache" -o APT::Architecture=amd64 \
        -o Debug::NoLocking=1 $sandbox "$@"
}

# suite, folder, packages: download the packages and extract them into folder
lay_out() {
    local suite=$1 dest=$2; shift 2
    local debs=$CACHE/debs/$suite
    apt_suite "$suite" update > /dev/null || die "apt-get update of $suite failed"
    rm -rf "$debs" "$dest.tmp"
    mkdir -p "$debs" "$dest.tmp"
    # shellcheck disable=SC2068
    (cd "$debs" && apt_suite "$suite" download $@ > /dev/null) || die "downloading $* from $suite failed"
    for d in "$debs"/*.deb; do dpkg-deb -x "$d" "$dest.tmp"; done
    (cd "$debs" && ls ./*.deb | sed 's|^\./||') > "$dest.tmp/PACKAGES"
    rm -rf "$dest"
    mv "$dest.tmp" "$dest"
}

loader() { echo "$1/usr/lib64/ld-linux-x86-64.so.2"; }

fetch_glslang() {
    lay_out "$GLSLANG_SUITE" "$GLSLANG_DIR" $GLSLANG_PKGS
    mkdir -p "$GLSLANG_DIR/bin"
    cat > "$GLSLANG_DIR/bin/glslangValidator" <<EOF
#!/bin/sh
# Debian $GLSLANG_SUITE's glslangValidator through its own loader and libraries (scripts/newer-vulkan.sh)
exec "$(loader "$GLSLANG_DIR")" --library-path "$GLSLANG_DIR/usr/lib/x86_64-linux-gnu" "$GLSLANG_DIR/usr/bin/glslangValidator" "\$@"
EOF
    chmod +x "$GLSLANG_DIR/bin/glslangValidator"
    "$GLSLANG_DIR/bin/glslangValidator" --version | head -1
}

fetch_mesa() {
    lay_out "$MESA_SUITE" "$MESA_DIR" $MESA_PKGS
    local icd=$MESA_DIR/usr/share/vulkan/icd.d/lvp_icd.json
    local lib
    lib=$(find "$MESA_DIR/usr/lib" -name libvulkan_lvp.so | head -1)
    [ -f "$icd" ] && [ -n "$lib" ] || die "no lavapipe in the $MESA_SUITE packages"
    sed -i "s|\"library_path\": *\"[^\"]*\"|\"library_path\": \"$lib\"|" "$icd"
    local layer=$MESA_DIR/usr/share/vulkan/explicit_layer.d/VkLayer_khronos_validation.json
    lib=$(find "$MESA_DIR/usr/lib" -name libVkLayer_khronos_validation.so | head -1)
    [ -f "$layer" ] && [ -n "$lib" ] || die "no validation layer in the $MESA_SUITE packages"
    sed -i "s|\"library_path\": *\"[^\"]*\"|\"library_path\": \"$lib\"|" "$layer"
    grep -o 'mesa-vulkan-drivers_[^_]*' "$MESA_DIR/PACKAGES"
}

run_mesa() {
    [ -f "$MESA_DIR/PACKAGES" ] || die "no newer lavapipe in $MESA_DIR: run 'scripts/newer-vulkan.sh fetch' first"
    [ $# -gt 0 ] || die "run: no command"
    local prog=$1; shift
    # the loader takes a path; a command found on PATH is resolved first
    case $prog in */*) ;; *) prog=$(command -v "$prog") || die "run: $1: not found" ;; esac
    # --library-path: only the newer libraries' folder. It comes before a
    # program's run path, so naming the system's folders there would let an
    # installed libtxlm0 shadow the build's libtxlm.so.0 (the system's
    # libraries are found after the run path, by the loader's own search).
    # (No comment inside the command below: a line-continued command ends
    # at one.)
    VK_ICD_FILENAMES=$MESA_DIR/usr/share/vulkan/icd.d/lvp_icd.json \
    VK_DRIVER_FILES=$MESA_DIR/usr/share/vulkan/icd.d/lvp_icd.json \
    VK_LAYER_PATH=$MESA_DIR/usr/share/vulkan/explicit_layer.d \
    exec "$(loader "$MESA_DIR")" \
        --library-path "$MESA_DIR/usr/lib/x86_64-linux-gnu" \
        "$prog" "$@"
}

case ${1:-} in
fetch)
    command -v apt-get > /dev/null && command -v dpkg-deb > /dev/null || die "fetch needs apt-get and dpkg-deb (Debian)"
    again=${2:-}
    if [ "$again" = --again ] || [ ! -f "$GLSLANG_DIR/PACKAGES" ]; then fetch_glslang; fi
    if [ "$again" = --again ] || [ ! -f "$MESA_DIR/PACKAGES" ]; then fetch_mesa; fi
    ;;
glslang)
    [ -x "$GLSLANG_DIR/bin/glslangValidator" ] || die "no newer glslang in $GLSLANG_DIR: run 'scripts/newer-vulkan.sh fetch' first"
    echo "$GLSLANG_DIR/bin/glslangValidator"
    ;;
run)
    shift
    run_mesa "$@"
    ;;
info)
    for d in "$GLSLANG_DIR" "$MESA_DIR"; do
        echo "$d:"
        if [ -f "$d/PACKAGES" ]; then sed 's/^/  /' "$d/PACKAGES"; else echo "  (not fetched)"; fi
    done
    ;;
*)
    sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
    ;;
esac
