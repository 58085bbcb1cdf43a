#!/usr/bin/env bash
# The predict -> measure -> calibrate loop on the CPU backend, on this machine:
#   1. kvplan probe over calibration shapes (seqs 1,2,4 x contexts 4k,8k,16k; bf16, q8_0, fp8_e4m3)
#   2. kvplan calibrate -> t = t0 + bytes / BW per dtype
#   3. kvplan probe --calibration on the acceptance shapes 4 x 8k, 2 x 16k (both inside the fitted
#      range, but different runs) and the held-out 1 x 64k (a shape not in the calibration set)
# Usage: bench/cpu_probe_loop.sh [BUILD_DIR] [OUT_DIR]. Run on a quiet machine (1-minute load < 0.7).
set -euo pipefail
build=${1:-build/release}
out=${2:-docs/measurements}
kv="$build/kvplan"
common=(llama-3.1-8b --backend cpu --live-steps 0 --no-contiguous-control --seconds 1 --dtypes bf16,q8_0,fp8_e4m3)
host=$(hostname -s 2>/dev/null || echo host)
tag="cpu-$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //; s/[^A-Za-z0-9]\+/-/g; s/-$//' | tr 'A-Z' 'a-z')-$(nproc)c"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
"$kv" probe "${common[@]}" --seqs 1,2,4 --contexts 4096,8192,16384 --output "$out/$tag-probe-calibration-shapes.json"
"$kv" calibrate "$out/$tag-probe-calibration-shapes.json" --output "$out/$tag-calibration.json"
"$kv" probe "${common[@]}" --seqs 4 --contexts 8192 --calibration "$out/$tag-calibration.json" --output "$out/$tag-probe-4x8k.json"
"$kv" probe "${common[@]}" --seqs 2 --contexts 16384 --calibration "$out/$tag-calibration.json" --output "$out/$tag-probe-2x16k.json"
"$kv" probe "${common[@]}" --seqs 1 --contexts 65536 --calibration "$out/$tag-calibration.json" --output "$out/$tag-probe-1x64k-heldout.json"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
echo "$out/$tag-*.json ($host)" >&2
