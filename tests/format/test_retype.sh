#!/bin/sh
# bench/retype_model, the accuracy measurements' tool: a model stored in
# another dtype is what txlm-pack makes of the same weights, byte for byte,
# and f32 holds the smaller types' values exactly.
#   test_retype.sh RETYPE TXLM_PACK DEMO.txlm GOLDEN_CASE_DIR WORK
set -eu
retype=$1 pack=$2 demo=$3 golden=$4 work=$5
mkdir -p "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }
# the demo model is f16 as packed: f16 again, and through f32 and back, are the same file
"$retype" "$demo" "$work/demo-f16.txlm" f16
cmp -s "$demo" "$work/demo-f16.txlm" || fail "the demo model retyped to f16 differs from itself"
"$retype" "$demo" "$work/demo-f32.txlm" f32
"$retype" "$work/demo-f32.txlm" "$work/demo-back.txlm" f16
cmp -s "$demo" "$work/demo-back.txlm" || fail "the demo model through f32 and back differs"
[ "$(stat -c %s "$work/demo-f32.txlm")" -gt "$(stat -c %s "$demo")" ] || fail "f32 is not wider"
# an f32 packing retyped to q8_0 and q4_0: txlm-pack's own packings of the checkpoint
"$pack" "$golden" -o "$work/g-f32.txlm" > /dev/null
for dt in q8_0 q4_0 f16; do
  "$pack" "$golden" -o "$work/g-$dt.txlm" --dtype $dt > /dev/null
  "$retype" "$work/g-f32.txlm" "$work/g-re-$dt.txlm" $dt
  cmp -s "$work/g-$dt.txlm" "$work/g-re-$dt.txlm" || fail "$dt: retyped differs from txlm-pack --dtype $dt"
done
"$retype" "$demo" "$work/x.txlm" bf16 2> /dev/null && fail "bf16 accepted"
"$retype" "$work/missing.txlm" "$work/x.txlm" f32 2> /dev/null && fail "a missing file accepted"
[ ! -e "$work/x.txlm" ] || fail "a failed run left its output"
rm -rf "$work"
echo "retype_model: the packer's files, byte for byte"
