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

# The 1,000 x 1,000-cell sweep end to end, against an awk one-liner printing rows of the same shape
# (wall seconds and peak RSS from GNU time; median of 5 runs each).
bench() {  # label, command...
  local label=$1; shift
  local runs=()
  for i in 1 2 3 4 5; do
    /usr/bin/time -f "%e %M" -o /tmp/kvplan-bench-time "$@" >/dev/null
    runs+=("$(cat /tmp/kvplan-bench-time)")
  done
  printf '%s\n' "${runs[@]}" | sort -n | sed -n '3p' | awk -v l="$label" '{printf "%-40s %6.2f s  %7.1f MiB peak RSS\n", l, $1, $2 / 1024}'
}
command -v /usr/bin/time >/dev/null || { echo "install GNU time (apt-get install time) for the end-to-end sweep figures"; exit 0; }
sweep=(build/release/kvplan sweep llama-3.1-8b --context 1..1000 --concurrency 1..1000)
bench "sweep 1000x1000 csv" "${sweep[@]}" --format csv
bench "sweep 1000x1000 jsonl" "${sweep[@]}" --format jsonl
bench "sweep 1000x1000 json (streamed)" "${sweep[@]}" --format json
bench "sweep 1000x1000 table" "${sweep[@]}" --format table
bench "awk one-liner, same rows" awk 'BEGIN{for(c=1;c<=1000;c++)for(n=1;n<=1000;n++)printf "h100-sxm,1,bf16,%d,%d,%d,%d,true,%d,fits\n",c,n,c*n*131072,c*n*131072+19001778176,58476986368-c*n*131072}'
