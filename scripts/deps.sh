#!/usr/bin/env bash
# Installs what kvplan needs to build and test on Debian 12 / Ubuntu 24.04 (apt-get; sudo when not root).
# Skips apt entirely when every package is already installed.
set -euo pipefail
pkgs=(build-essential cmake ninja-build git libcli11-dev nlohmann-json3-dev libeigen3-dev catch2 libyaml-cpp-dev)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
echo "kvplan: installing ${missing[*]}" >&2
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
