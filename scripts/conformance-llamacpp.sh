#!/usr/bin/env bash
# Conformance of kvplan's llama.cpp rules against the real llama.cpp (node-llama-cpp's prebuilt CPU build).
# Installs the pinned package once into a cache folder, generates synthetic GGUF files, loads each in llama.cpp
# over a matrix of settings and checks kvplan reproduces what llama.cpp printed (scripts/conformance/run.mjs).
# Usage: scripts/conformance-llamacpp.sh [BUILD_DIR] [--quick]     (BUILD_DIR default build/release)
# Exit 0 agree (or skipped: no Node >= 20, or the package cannot be installed, said in one line), 1 a difference.
set -euo pipefail
cd "$(dirname "$0")/.."
build=build/release
quick=""
for a in "$@"; do
  case "$a" in
    --quick) quick=--quick ;;
    *) build="$a" ;;
  esac
done
version=3.22.1
cache="${KVPLAN_NLC_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kvplan/node-llama-cpp-$version}"

if ! command -v node >/dev/null 2>&1; then
  echo "conformance-llamacpp: skipped: node not found (Node >= 20 runs the real llama.cpp)"; exit 0
fi
major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$major" -lt 20 ]; then
  echo "conformance-llamacpp: skipped: node $(node --version) is older than 20"; exit 0
fi
if [ ! -f "$cache/node_modules/node-llama-cpp/package.json" ]; then
  mkdir -p "$cache"
  if ! (cd "$cache" && npm install --silent --no-audit --no-fund --omit=optional --ignore-scripts \
          "node-llama-cpp@$version" "@node-llama-cpp/linux-x64@$version" >/dev/null 2>"$cache/npm-error.log"); then
    echo "conformance-llamacpp: skipped: npm install node-llama-cpp@$version failed ($(tail -n 1 "$cache/npm-error.log"))"; exit 0
  fi
fi
# On a CPU with AMX (Sapphire Rapids and later) ggml picks its sapphirerapids CPU variant, whose AMX buffer type makes
# the backend scheduler assert on the deepseek2 (MLA) graph (GGML_ASSERT(*cur_backend_id != -1), ggml-backend.cpp:1294,
# in node-llama-cpp 3.22.1's prebuilt llama.cpp): all 17 deepseek2 cases "could not run". The cases check the KV
# cache llama.cpp allocates, which no CPU kernel variant changes, so that variant is set aside and ggml loads the
# next best one (AVX-512 without AMX).
bins="$cache/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64"
if grep -qw amx_tile /proc/cpuinfo 2>/dev/null && [ -f "$bins/libggml-cpu-sapphirerapids.so" ]; then
  mv "$bins/libggml-cpu-sapphirerapids.so" "$bins/libggml-cpu-sapphirerapids.so.amx-off"
  echo "conformance-llamacpp: AMX CPU: llama.cpp's sapphirerapids CPU variant set aside (its AMX buffers assert on MLA)"
fi
for exe in "$build/kvplan" "$build/tests/kvplan_make_gguf"; do
  [ -x "$exe" ] || { echo "conformance-llamacpp: $exe not built; build $build first" >&2; exit 2; }
done
export KVPLAN_NLC_DIR="$cache"
out="$build/conformance-llamacpp"
rm -rf "$out"
node scripts/conformance/run.mjs --kvplan "$build/kvplan" --make-gguf "$build/tests/kvplan_make_gguf" --out "$out" $quick
