#!/usr/bin/env bash
# txlm-write's desktop entry and AppStream metainfo validate offline
# (desktop-file-validate, appstreamcli validate --no-net --strict: any
# issue but a pedantic hint fails), name each other, the program and the
# icon, and meson install puts them, the icon, the program and the demo
# model where a desktop finds them.
# usage: test_write_data_files.sh SOURCE_DIR BUILD_DIR
set -uo pipefail
src=$1 build=$2
data=$src/apps/write/data
id=org.txlm.Write
missing=()
command -v desktop-file-validate > /dev/null || missing+=("desktop-file-validate (Debian: desktop-file-utils)")
command -v appstreamcli > /dev/null || missing+=("appstreamcli (Debian: appstream)")
if [ ${#missing[@]} -gt 0 ]; then
    echo "SKIP: needs ${missing[*]}"
    exit 77
fi
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

out=$(desktop-file-validate "$data/$id.desktop" 2>&1) || fail "desktop-file-validate: $out"
[ -z "$out" ] || fail "desktop-file-validate says: $out"
out=$(appstreamcli validate --no-net --strict "$data/$id.metainfo.xml" 2>&1) || fail "appstreamcli validate: $out"
echo "ok: $id.desktop and $id.metainfo.xml validate"

grep -qx "Exec=txlm-write" "$data/$id.desktop" || fail "the desktop entry does not start txlm-write"
grep -qx "Icon=$id" "$data/$id.desktop" && [ -f "$data/$id.svg" ] || fail "the desktop entry's icon is not $id.svg"
grep -q "<launchable type=\"desktop-id\">$id.desktop</launchable>" "$data/$id.metainfo.xml" ||
    fail "the metainfo does not launch $id.desktop"
grep -q "<id>$id</id>" "$data/$id.metainfo.xml" || fail "the metainfo's id is not $id"

# where meson install puts them, under the prefix: compared by their ends,
# since meson's list of installed files keeps the prefix of the build's
# last regeneration (the install test sets another prefix and back)
installed=$(meson introspect "$build" --installed | python3 -c '
import json, sys
for path in json.load(sys.stdin).values():
    print(path)')
for want in share/applications/$id.desktop share/metainfo/$id.metainfo.xml \
    share/icons/hicolor/scalable/apps/$id.svg share/txlm/demo.txlm bin/txlm-write; do
    grep -q "/$want\$" <<< "$installed" || fail "meson install does not install $want"
done
[ $fails -eq 0 ] && echo "ok: meson install puts the program, the demo model, the entry, the metainfo and the icon in place"
exit $((fails > 0))
