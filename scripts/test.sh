#!/usr/bin/env bash
# Runs every test: installs dependencies, configures, builds (CUDA kernels too when nvcc is found)
# and runs CTest (unit, property, CLI contract and golden tests).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
cmake --workflow --preset ci
