#!/usr/bin/env bash
# The probe's CPU tests on aarch64: cross-compiles the probe, the core and tests/unit/test_probe.cpp with
# g++-aarch64-linux-gnu (static) and runs them under qemu-aarch64, so the NEON kernel and its row
# conversions are checked against the double-precision reference like the x86 ones. Installs the cross
# compiler and qemu-user with apt-get when missing; says so in one line and exits 0 when it cannot.
# Usage: scripts/test-aarch64.sh [BUILD_DIR]  (default build/aarch64)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-build/aarch64}
pkgs=(g++-aarch64-linux-gnu qemu-user catch2)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  echo "kvplan: installing ${missing[*]} for the aarch64 tests" >&2
  if ! { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2; }; then
    echo "kvplan: aarch64 tests skipped: could not install ${missing[*]}" >&2
    exit 0
  fi
fi
mkdir -p "$out"
srcs=(gpu_probe/src/common.cpp gpu_probe/src/probe.cpp gpu_probe/src/registry.cpp gpu_probe/src/cpu/cpu_backend.cpp
      tests/main.cpp tests/unit/test_probe.cpp planner/src/core/*.cpp)
objs=()
for f in "${srcs[@]}"; do objs+=("$out/$(echo "$f" | tr / _).o"); done
# one compile per source, two at a time (make's job server without a makefile)
printf '%s\n' "${srcs[@]}" | xargs -P 2 -I{} sh -c 'f={}; aarch64-linux-gnu-g++ -std=c++20 -O2 -Wall -Wextra -Werror=uninitialized -Igpu_probe/include -Ikernels -Igpu_probe/src -Iplanner/include -c "$f" -o "'"$out"'/$(echo "$f" | tr / _).o"'
aarch64-linux-gnu-g++ -static -o "$out/kvplan_probe_tests" "${objs[@]}" -lpthread
echo "kvplan: aarch64 probe tests under qemu (NEON, then the portable path)" >&2
qemu-aarch64 "$out/kvplan_probe_tests" "[probe]"
KVPLAN_CPU_ISA=portable qemu-aarch64 "$out/kvplan_probe_tests" "[probe][cpu]"
