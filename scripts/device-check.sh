#!/usr/bin/env bash
# The device check: on a machine with an NVIDIA GPU, run the GPU tests and a fixed probe sweep in
# under 8 minutes and write the JSON into OUTDIR.
#   scripts/device-check.sh OUTDIR
# Uses build/device when it exists (made by scripts/build-device.sh and carried: a GPU host may have
# no package registry), else builds there with CUDA for sm_90.
set -uo pipefail
out=${1:?usage: scripts/device-check.sh OUTDIR}
mkdir -p "$out"
cd "$(dirname "$0")/.."
build=${KVPLAN_DEVICE_BUILD:-build/device}
export PATH="$PATH:/usr/local/cuda/bin"
[ -d "$build/lib" ] && export LD_LIBRARY_PATH="$PWD/$build/lib:${LD_LIBRARY_PATH:-}"
if [ ! -x "$build/kvplan" ]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DKVPLAN_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 || exit 3
  cmake --build "$build" --target kvplan kvplan_gpu_tests || exit 3
fi
stamp=$(date -u +%Y-%m-%d)
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 | tr ' ' '-' | tr -cd 'A-Za-z0-9_.-')
gpu=${gpu:-unknown-gpu}
nvidia-smi > "$out/nvidia-smi.txt" 2>&1
rc=0
# 1. GPU tests: CUDA against the CPU backend, memory ledger against cudaMemGetInfo (about 1 minute)
timeout 120 "$build/tests/kvplan_gpu_tests" "[gpu]" -r junit -o "$out/gpu-tests.xml" || rc=1
# 2. the fixed probe sweep: Llama-3.1-8B geometry (32 q / 8 KV heads, head_dim 128), pages of 16,
#    bf16 and fp8, 1 and 64 sequences x 8k and 64k tokens, plus the contiguous-page control
timeout 330 "$build/kvplan" probe llama-3.1-8b --gpu h200 --backend cuda --seqs 1,64 --contexts 8k,64k \
  --dtypes bf16,fp8_e4m3 --seconds 3 --time-cap 300 --live-steps 256 \
  --output "$out/probe-${gpu}-${stamp}.json" || rc=1
# 3. calibration from the sweep
if [ -f "$out/probe-${gpu}-${stamp}.json" ]; then
  "$build/kvplan" calibrate "$out/probe-${gpu}-${stamp}.json" --output "$out/calibration-${gpu}-${stamp}.json" || rc=1
fi
ls -la "$out"
exit $rc
