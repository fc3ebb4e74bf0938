#!/usr/bin/env python3
"""The kernel manifest (kernels.manifest) turned into what the build needs.

kernels.py variants MANIFEST
    one line per variant for shaders/meson.build: VARIANT SOURCE cm|- -DNAME=VALUE ...
    (cm: it needs cooperative matrices, a glslang that compiles them or its
    kept SPIR-V, shaders/spirv/)
kernels.py c MANIFEST IDS_H TABLE_C [--no-coopmat]
    IDS_H: the enum of kernel ids and of families; TABLE_C: the embedded
    SPIR-V's includes, the table of every variant (engine/vk/kernels.h,
    txlm_kernel_desc) and the families' [family][dtype] ids. --no-coopmat:
    the build has no SPIR-V for the variants that need cooperative
    matrices; their rows have none (the device never runs them).
kernels.py header SPV HEADER NAME
    a SPIR-V file as a C array named NAME (the kept SPIR-V's headers).
"""
import os
import re
import sys

DTYPES = ["f32", "f16", "q8_0", "q4_0"]  # the order of txlm_kernel_of's column (engine/vk/kernels.h)
NEEDS = ["int64", "subgroup", "shuffle", "shuffle8", "sg8", "smem", "wg256", "coopmat"]
COLUMNS = 8  # variant id source bindings texel step needs tile, then the defines
# TXLM_STREAM_SLOTS: the streams one dispatch of an _x8 variant serves, as contract.h declares it for C and GLSL
STREAM_SLOTS = int(re.search(r"^#define TXLM_STREAM_SLOTS (\d+)$",
                             open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "contract.h")).read(), re.M)[1])


def fail(path, n, msg):
    sys.exit(f"{path}:{n}: {msg}")


def parse(path):
    rows = []
    for n, line in enumerate(open(path), 1):
        line = line.split("#", 1)[0].split()
        if not line:
            continue
        if len(line) < COLUMNS:
            fail(path, n, f"{len(line)} columns, expected at least {COLUMNS}")
        variant, ident, source, bindings, texel, step, needs, tile = line[:COLUMNS]
        m = re.fullmatch(r"(\d+)(?:/(\d+))?", bindings)
        if not m:
            fail(path, n, "bindings is N or N/S")
        bindings, slots = int(m[1]), int(m[2] or 1)
        if slots not in (1, STREAM_SLOTS) or (slots > 1 and bindings < 2):
            fail(path, n, f"a variant of several streams has {STREAM_SLOTS} slots and binding 1")
        family, _, dtype = ident.partition(":")
        if dtype and dtype not in DTYPES:
            fail(path, n, f"unknown dtype {dtype}")
        if not re.fullmatch(r"[a-z0-9_]+", variant) or not re.fullmatch(r"[A-Z0-9_]+", family):
            fail(path, n, "bad variant or id")
        need = [] if needs == "-" else needs.split(",")
        for x in need:
            if x not in NEEDS:
                fail(path, n, f"unknown need {x} (one of {', '.join(NEEDS)})")
        if step not in ("step", "-"):
            fail(path, n, "step is 'step' or '-'")
        if slots > 1 and not variant.endswith(f"_x{slots}"):
            fail(path, n, f"a variant of {slots} streams is named BASE_x{slots}")
        m = re.fullmatch(r"(\d+)x(\d+)", tile)
        if not m and tile != "-":
            fail(path, n, "tile is NxM or -")
        for d in line[COLUMNS:]:
            if not re.fullmatch(r"[A-Z0-9_]+=[A-Za-z0-9_]+", d):
                fail(path, n, f"bad define {d}")
        rows.append({
            "variant": variant, "source": source, "family": family if dtype else None, "dtype": dtype,
            "id": family + ("" if dtype in ("", "f32") else "_" + dtype.upper()),
            "bindings": bindings, "slots": slots, "texel": 0 if texel == "-" else int(texel, 0), "step": step == "step",
            "needs": need, "tile": (int(m[1]), int(m[2])) if m else (0, 0),
            "defines": line[COLUMNS:] + ([f"STREAMS={slots}"] if slots > 1 else []),
        })
    seen = {}
    for r in rows:
        for key in ("variant", "id"):
            if r[key] in seen.setdefault(key, set()):
                sys.exit(f"{path}: {key} {r[key]} declared twice")
            seen[key].add(r[key])
    by_name = {r["variant"]: r for r in rows}
    for r in rows:
        r["twin"] = None
        if r["slots"] == 1:
            continue
        base = by_name.get(r["variant"][: -len(f"_x{r['slots']}")])
        if not base or base["slots"] != 1 or base["source"] != r["source"] or base["bindings"] != r["bindings"]:
            sys.exit(f"{path}: {r['variant']}: no one-stream variant of the same source and bindings")
        base["twin"] = r["id"]
    return rows


def same_code(rows):
    """Variants whose source and defines are those of an earlier one share its
    SPIR-V (they differ in how the engine dispatches them): variant -> first."""
    first, out = {}, {}
    for r in rows:
        key = (r["source"], tuple(r["defines"]))
        out[r["variant"]] = first.setdefault(key, r["variant"])
    return out


def families(rows):
    fams = {}
    for r in rows:
        if r["family"]:
            fams.setdefault(r["family"], {})[r["dtype"]] = r["id"]
    return fams


def write_c(rows, ids_h, table_c, coopmat=True):
    fams = families(rows)
    h = ["/* Generated by shaders/kernels.py from shaders/kernels.manifest: do not edit. */",
         "#ifndef TXLM_KERNEL_IDS_H", "#define TXLM_KERNEL_IDS_H", "",
         "typedef enum txlm_kernel_id {"]
    h += [f"    TXLM_K_{r['id']}, /* {r['variant']} */" for r in rows]
    h += ["    TXLM_K_COUNT", "} txlm_kernel_id;", "", "/* Kernels that read weights: one variant per dtype (txlm_kernel_of). */",
          "typedef enum txlm_kernel_family {"]
    h += [f"    TXLM_KF_{f}," for f in fams]
    h += ["    TXLM_KF_COUNT", "} txlm_kernel_family;", "", "#endif", ""]
    open(ids_h, "w").write("\n".join(h))
    c = ["/* Generated by shaders/kernels.py from shaders/kernels.manifest: do not edit. */",
         "#include \"kernels.h\"", ""]
    code = same_code(rows)
    built = {r["variant"] for r in rows if coopmat or "coopmat" not in r["needs"]}
    c += [f"#include \"{r['variant']}.spv.h\"" for r in rows if code[r["variant"]] == r["variant"] and r["variant"] in built]
    c += ["", "const txlm_kernel_desc txlm_kernel_descs[TXLM_K_COUNT] = {"]
    for r in rows:
        needs = " | ".join(f"TXLM_NEED_{x.upper()}" for x in r["needs"]) or "0"
        v, spv = r["variant"], "txlm_spv_" + code[r["variant"]]
        spv, size = (spv, f"sizeof {spv}") if v in built else ("NULL", "0")
        c.append(f"    [TXLM_K_{r['id']}] = {{\"{v}\", {spv}, {size}, {r['bindings']}, "
                 f"{r['texel']:#x}, {int(r['step'])}, {needs}, {r['tile'][0]}, {r['tile'][1]}, {r['slots']}, "
                 f"TXLM_K_{r['twin'] or 'COUNT'}}},")
    c += ["};", "", "const txlm_kernel_id txlm_kernel_families[TXLM_KF_COUNT][TXLM_KERNEL_DTYPES] = {"]
    for f, by in fams.items():
        c.append(f"    [TXLM_KF_{f}] = {{" + ", ".join(f"TXLM_K_{by[d]}" if d in by else "TXLM_K_COUNT" for d in DTYPES) + "},")
    c += ["};", ""]
    open(table_c, "w").write("\n".join(c))


def write_header(spv, header, name):
    data = open(spv, "rb").read()
    if len(data) % 4 or data[:4] != bytes.fromhex("03022307"):
        sys.exit(f"{spv}: not a SPIR-V module")
    words = [int.from_bytes(data[i:i + 4], "little") for i in range(0, len(data), 4)]
    lines = [", ".join(f"0x{w:08x}" for w in words[i:i + 8]) for i in range(0, len(words), 8)]
    open(header, "w").write(f"/* {spv.rsplit('/', 1)[-1]}: do not edit. */\n"
                            f"static const uint32_t {name}[] = {{\n    " + ",\n    ".join(lines) + "\n};\n")


def main():
    if sys.argv[1] == "header":
        write_header(sys.argv[2], sys.argv[3], sys.argv[4])
        return
    rows = parse(sys.argv[2])
    if sys.argv[1] == "variants":
        code = same_code(rows)
        for r in (r for r in rows if code[r["variant"]] == r["variant"]):
            cm = "cm" if "coopmat" in r["needs"] else "-"
            print(" ".join([r["variant"], r["source"], cm] + ["-D" + d for d in r["defines"]]))
    else:
        write_c(rows, sys.argv[3], sys.argv[4], "--no-coopmat" not in sys.argv[5:])


if __name__ == "__main__":
    main()
