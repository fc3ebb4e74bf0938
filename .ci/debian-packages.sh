#!/usr/bin/env bash
# CI: txlm's Debian packages (docs/packaging.md). Built with
# dpkg-buildpackage from a copy of this checkout (the build writes into
# its source folder and beside it: the checkout stays as it was), checked
# by lintian (no error allowed), installed with apt-get, tested by
# debian/tests under autopkgtest's null runner (on this machine, as root),
# then purged, so that later steps see the system as it was.
# Each step is one line of LOG_JSON, as meson test writes its log
# ({"name", "result", "duration"}), which .ci/run counts; each step's
# output is under the folder the script prints, kept when a step fails.
# usage: .ci/debian-packages.sh LOG_JSON
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
log=$(realpath -m "$1")
mkdir -p "$(dirname "$log")"
: > "$log"
SUDO=""
[ "$(id -u)" = 0 ] || SUDO="sudo"
work=$(mktemp -d "${TMPDIR:-/tmp}/txlm-deb.XXXXXX")
echo "Debian packages: in $work"
failed=0
# $1: the step's name, $2: OK, FAIL or SKIP, $3: its seconds, $4: the
# processor seconds it took (user + system, its processes together)
record() {
    printf '{"name": "%s", "result": "%s", "duration": %s, "cpu": %s}\n' "debian/$1" "$2" "$3" "$4" >> "$log"
    echo "debian/$1: $2 (${3} s, ${4} s of processor time)"
    [ "$2" != FAIL ] || failed=1
}
# Runs its arguments; TIMES then holds "WALL CPU" seconds.
timed() {
    local TIMEFORMAT='%R %U %S' st out
    out=$( { time "$@" > /dev/null 2>&1; } 2>&1 ) && st=0 || st=$?
    TIMES=$(awk '{printf "%d %d", $1 + 0.5, $2 + $3 + 0.5}' <<< "$out")
    return $st
}
# $1: the step's name; the rest: its command, output to $work/NAME.log
step() {
    local name=$1; shift
    if timed run_logged "$work/$name.log" "$@"; then
        record "$name" OK $TIMES
    else
        record "$name" FAIL $TIMES
        tail -n 60 "$work/$name.log"
        return 1
    fi
}
run_logged() { local out=$1; shift; "$@" > "$out" 2>&1; }
total0=$SECONDS

# The copy: the files of a clean checkout (tracked, and untracked that git
# does not ignore), none of the build folders.
mkdir "$work/src"
git ls-files -z --cached --others --exclude-standard | xargs -0 cp -P --parents -t "$work/src"

# The source package too (before the build writes into the folder), so
# that lintian checks debian/ itself: copyright, control, rules, tests.
source_package() { (cd "$work" && dpkg-source -Zgzip -z1 -b src); }
step source source_package || true

# With the system's PATH only: Debian 12's tools build the packages, not a
# Python or compiler a user put first on PATH (pybuild runs "python3.11").
build() { (cd "$work/src" && PATH=/usr/sbin:/usr/bin:/sbin:/bin dpkg-buildpackage -us -uc -b); }
if ! step build build; then
    echo "Debian packages: the build failed; $work kept"
    exit 1
fi
debs=("$work"/*.deb)
mapfile -t packages < <(for d in "${debs[@]}"; do dpkg-deb --field "$d" Package; done)
echo "built: ${debs[*]##*/}"

# lintian on the binary packages and the source package: every tag down
# to info shown; errors fail (docs/packaging.md lists any warning kept,
# with why)
lint() { lintian --fail-on error --display-info "$work"/txlm_*.changes "$work"/txlm_*.dsc; }
step lintian lint || true
grep -E '^[EW]: ' "$work/lintian.log" || true

install() { $SUDO apt-get install -y --no-install-recommends "${debs[@]}"; }
if step install install; then
    # debian/tests against the installed packages: autopkgtest's null runner
    # runs them on this machine; --no-built-binaries: what is installed is
    # tested, nothing is built again
    # (each test's line carries the time of the whole run, which
    # installs each test's Depends with apt before it: most of it)
    timed run_logged "$work/autopkgtest.log" $SUDO autopkgtest --no-built-binaries \
        --summary-file="$work/summary" --output-dir="$work/autopkgtest" "$work/src" -- null
    ap_status=$?
    if [ -s "$work/summary" ]; then
        # one line a test: "NAME PASS|FAIL|SKIP ..."
        while read -r name result _; do
            case $result in PASS) r=OK ;; SKIP) r=SKIP ;; *) r=FAIL ;; esac
            record "autopkgtest/$name" "$r" $TIMES
            [ "$r" != FAIL ] || grep -A40 "^$name " "$work/autopkgtest.log" | tail -n 40
        done < "$work/summary"
    fi
    if [ ! -s "$work/summary" ] || { [ $ap_status -ne 0 ] && [ $ap_status -ne 2 ] && [ $ap_status -ne 4 ]; }; then
        record autopkgtest FAIL $TIMES   # autopkgtest itself failed (exit $ap_status)
        tail -n 40 "$work/autopkgtest.log"
    fi
    # where the time went: autopkgtest's own time stamps
    grep -E "test [a-z-]+: (preparing testbed|\[-)|@@@@ summary" "$work/autopkgtest/log" || true
fi

# purged whatever happened, and checked gone
purge() {
    $SUDO apt-get purge -y "${packages[@]}" &&
        ! dpkg-query -W -f '${db:Status-Status} ${Package}\n' "${packages[@]}" 2> /dev/null | grep -v '^not-installed' &&
        [ ! -e /usr/share/txlm ]
}
step purge purge || true

echo "Debian packages: $((SECONDS - total0)) s in all"
[ $failed -ne 0 ] || rm -rf "$work"
exit $failed
