#!/usr/bin/env bash
# Quick start: install dependencies, build kvplan, and size the KV cache of a built-in default model
# (Llama-3.1-8B at 32k tokens). Extra arguments replace the default `kv` command line.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
cmake --preset release >/dev/null
cmake --build --preset release >&2
if [ $# -eq 0 ]; then
  set -- kv llama-3.1-8b --context 32k
fi
exec build/release/kvplan "$@"
