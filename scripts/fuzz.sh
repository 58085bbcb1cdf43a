#!/usr/bin/env bash
# Builds the libFuzzer harnesses (clang, ASan + UBSan) and runs one for a given time:
#   scripts/fuzz.sh TARGET SECONDS      TARGET: hf_config | deployments | cmdline | sweep | gguf | manifests | pasted | options
# Seeds come from the tests' data (fuzz/corpus/TARGET holds the growing corpus); findings are
# written to fuzz/findings/TARGET. Prints libFuzzer's final stats line.
set -euo pipefail
cd "$(dirname "$0")/.."
target=${1:?usage: scripts/fuzz.sh TARGET SECONDS}
seconds=${2:-600}
scripts/deps.sh
if ! command -v clang++ >/dev/null || ! dpkg-query -W -f='${Status}' libclang-rt-14-dev 2>/dev/null | grep -q "ok installed"; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq clang libclang-rt-14-dev libfuzzer-14-dev >&2
fi
mkdir -p build
(  # several fuzzers may start at once: configure and build one at a time
  flock 9
  cmake --preset fuzz >/dev/null
  cmake --build --preset fuzz --target "fuzz_${target}" >&2
) 9>build/.fuzz.lock
corpus="fuzz/corpus/${target}"
findings="fuzz/findings/${target}"
mkdir -p "$corpus" "$findings"
seeds="build/fuzz/seeds-${target}"
rm -rf "$seeds" && mkdir -p "$seeds"
case "$target" in
  hf_config) for f in tests/data/configs/*.json tests/data/bad/*.json profiles/models/*.json; do cp "$f" "$seeds/$(echo "$f" | tr / _)"; done ;;
  deployments)
    i=0; for f in tests/data/deploy/*.yaml examples/*.yaml; do i=$((i+1)); { printf '\001'; cat "$f"; } > "$seeds/y$i"; done
    for f in tests/data/deploy/*.json examples/*.json; do i=$((i+1)); { printf '\000'; cat "$f"; } > "$seeds/j$i"; done ;;
  cmdline) python3 -c "
import json,sys
for i,c in enumerate(json.load(open('tests/data/engine-cmdlines.json'))):
    open('$seeds/c%d'%i,'w').write(c['raw'])" ;;
  sweep) for s in '1k,4k,32k' '1k..128k*2' '8..64+8' '1..4' '79.22GiB' '512MiB' '85045477376'; do echo -n "$s" > "$seeds/$(echo -n "$s" | md5sum | cut -c1-8)"; done ;;
  gguf) cp tests/data/gguf/*.gguf "$seeds"/ 2>/dev/null || true ;;
  manifests) for f in tests/data/manifests/*.yaml; do cp "$f" "$seeds/$(basename "$f")"; done ;;
  pasted) python3 -c "
import json
for i,c in enumerate(json.load(open('tests/data/engine-cmdlines.json'))):
    hint={'vllm':1,'sglang':2,'llama.cpp':3,'trtllm':4}[c['engine']]
    open('$seeds/p%d'%i,'wb').write(bytes([hint])+'\\0'.join(c['argv']).encode())" ;;
  options)
    printf '\000kv_cache_config:\n  free_gpu_memory_fraction: 0.8\n  max_tokens: 100000\n  tokens_per_block: 64\nmax_batch_size: 64\ntensor_parallel_size: 2\nspeculative_config:\n  decoding_type: MTP\n' > "$seeds/trt"
    printf '\001max-model-len: 8192\ntensor-parallel-size: 2\nenforce-eager: true\nserved-model-name: [a, b]\nkv-cache-dtype: fp8\n' > "$seeds/vllm"
    printf '\002context-length: 8192\ntp-size: 2\nmem-fraction-static: 0.8\n' > "$seeds/sglang" ;;
esac
build/fuzz/fuzz/"fuzz_${target}" "$corpus" "$seeds" -max_total_time="$seconds" -max_len=65536 -rss_limit_mb=2048 \
  -timeout=10 -artifact_prefix="$findings/" -print_final_stats=1 2>&1 | tee "build/fuzz/${target}.log" | grep -E "^(#[0-9]+ +DONE|stat::|SUMMARY|==[0-9]+==ERROR)" || true
