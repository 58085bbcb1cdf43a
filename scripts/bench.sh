#!/usr/bin/env bash
# Benchmarks: the in-process sweep and plan timings (kvplan_bench), then `kvplan plan` end to end
# (process start, profile loading, JSON output) as the median of 51 runs. Release build.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
cmake --preset release >/dev/null
cmake --build --preset release >&2
build/release/kvplan_bench
times=()
for i in $(seq 51); do
  s=$(date +%s%N)
  build/release/kvplan plan llama-3.1-70b --gpu h100 --tensor-parallel-size 4 --context 32k --concurrency 64 --format json >/dev/null || true
  e=$(date +%s%N)
  times+=($(( (e - s) / 1000 )))
done
median=$(printf '%s\n' "${times[@]}" | sort -n | sed -n '26p')
echo "kvplan plan end to end (llama-3.1-70b, 4 x h100, json) median ${median} us"
