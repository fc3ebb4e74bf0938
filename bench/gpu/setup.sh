# Sourced by the GPU scripts (run.sh, matrix_units.sh) from the repository
# root: the packed build unpacked, the runtime libraries' .debs of .gl/
# installed, the driver's manifest found, and the working folder moved to
# the build's absolute path; sets txlm, models and py.
root=$(pwd)
# the build travels packed (bench/gpu/pack.sh)
[ -f .gpurun/build-gpu.tar.xz ] && tar -xJf .gpurun/build-gpu.tar.xz
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
# the driver's manifest, where the loader looks or where this image keeps it
if ! ls /usr/share/vulkan/icd.d/nvidia* /etc/vulkan/icd.d/nvidia* >/dev/null 2>&1; then
  for j in /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json /usr/local/nvidia/icd.d/nvidia_icd.json; do
    [ -e "$j" ] && export VK_DRIVER_FILES=$j VK_ICD_FILENAMES=$j && break
  done
fi
# the build's absolute paths
conf=$(python3 -c "import json;print(json.load(open('build-gpu/tests.json'))[0]['cmd'][0].split('/build-gpu/')[0])")
if [ "$conf" != "$root" ]; then mkdir -p "$(dirname "$conf")"; ln -sfn "$root" "$conf"; fi
cd "$conf" || exit 1
txlm=build-gpu/tools/txlm
models=build-gpu/bench-models
py=python3
