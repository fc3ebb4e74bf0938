#!/usr/bin/env python3
"""The kept SPIR-V of the cooperative-matrix kernels (shaders/spirv/).

Debian 12's glslang cannot compile them, so their SPIR-V, made by a newer
glslang (scripts/newer-vulkan.sh fetches one), is kept in the repository
and embedded by builds whose glslang cannot (docs/architecture.md).

kept_spirv.py check KEPT_DIR GLSLANG_VERSION SPV...
    the SPIR-V this build compiled against the kept files, byte for byte,
    and the kept set against the compiled one (no file missing or stale).
    Exit 77 (skipped) when this build's glslang is not the one that made
    the kept files: other versions write other bytes.
kept_spirv.py update KEPT_DIR GLSLANG_VERSION SPV...
    makes the kept files those SPIR-V files (ninja -C build kept-spirv).
"""
import os
import shutil
import sys

VERSION_FILE = "GLSLANG_VERSION"


def kept_names(kept):
    return {f for f in os.listdir(kept) if f.endswith(".spv")}


def check(kept, version, spvs):
    made_by = open(os.path.join(kept, VERSION_FILE)).read().strip()
    if made_by != version:
        print(f"kept SPIR-V made by {made_by!r}, this build's glslang is {version!r}: not comparable")
        return 77
    built = {os.path.basename(s): s for s in spvs}
    bad = []
    for name in sorted(set(built) | kept_names(kept)):
        if name not in built:
            bad.append(f"{name}: kept, but no manifest variant makes it (stale)")
        elif not os.path.exists(os.path.join(kept, name)):
            bad.append(f"{name}: not kept")
        elif open(built[name], "rb").read() != open(os.path.join(kept, name), "rb").read():
            bad.append(f"{name}: the kept bytes differ from the shader's")
    for b in bad:
        print(f"shaders/spirv/{b}")
    if bad:
        print("regenerate them: ninja -C BUILD kept-spirv (a build configured with a glslang that compiles them)")
        return 1
    print(f"{len(built)} kept SPIR-V files are what {version} makes of the shaders")
    return 0


def update(kept, version, spvs):
    for name in kept_names(kept) - {os.path.basename(s) for s in spvs}:
        os.remove(os.path.join(kept, name))
    for s in spvs:
        shutil.copyfile(s, os.path.join(kept, os.path.basename(s)))
    with open(os.path.join(kept, VERSION_FILE), "w") as f:
        f.write(version + "\n")
    print(f"kept {len(spvs)} SPIR-V files made by {version} in {kept}")
    return 0


def main():
    cmd, kept, version, spvs = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    os.makedirs(kept, exist_ok=True)
    sys.exit(check(kept, version, spvs) if cmd == "check" else update(kept, version, spvs))


if __name__ == "__main__":
    main()
