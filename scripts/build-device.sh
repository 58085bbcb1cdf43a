#!/usr/bin/env bash
# Builds the CUDA binaries for the device check here (sm_90, Release) into build/device, and copies the
# shared libraries kvplan needs that a bare GPU host may lack (yaml-cpp) into build/device/lib, so the
# folder can travel to a machine without a package registry (carry build/device).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
export PATH="$PATH:/usr/local/cuda/bin"
cmake -S . -B build/device -G Ninja -DCMAKE_BUILD_TYPE=Release -DKVPLAN_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 >&2
cmake --build build/device --target kvplan kvplan_gpu_tests >&2
mkdir -p build/device/lib
for lib in $(ldd build/device/kvplan | awk '/yaml-cpp|libcudart/ {print $3}'); do cp -L "$lib" build/device/lib/; done
du -sh build/device/kvplan build/device/tests/kvplan_gpu_tests build/device/lib
