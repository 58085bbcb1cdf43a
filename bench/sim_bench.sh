#!/usr/bin/env bash
# Serving-simulator speed (docs/benchmarks.md): a Release build of kvplan_sim_bench, then 100,000
# ShareGPT-like Poisson requests through each scheduler for llama-3.1-8b on one H100 (best of 3).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build/release}
[ -d "$build" ] || cmake --preset release -DKVPLAN_CUDA=OFF -B "$build" > /dev/null
cmake --build "$build" -j1 --target kvplan_sim_bench > /dev/null
for engine in vllm trtllm sglang; do
  "$build/kvplan_sim_bench" 100000 90 "$engine"
done
