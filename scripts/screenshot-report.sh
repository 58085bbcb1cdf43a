#!/usr/bin/env bash
# Renders a kvplan HTML report to a PNG with headless Chromium, to look at a report's layout without
# a desktop. Installs Debian's chromium when it is missing (apt-get; sudo when not root).
# Usage: scripts/screenshot-report.sh REPORT.html OUT.png [WIDTHxHEIGHT, default 1280x2000]
# Sample reports: KVPLAN_REPORT_SAMPLE=DIR kvplan_tests "[report],[simulate_cli]" writes DIR/report-sample.html
# (plan/check report) and DIR/simulate-sample.html (kvplan simulate, time-series charts).
set -euo pipefail

if [[ $# -lt 2 || $# -gt 3 ]]; then
  echo "usage: $0 REPORT.html OUT.png [WIDTHxHEIGHT]" >&2
  exit 2
fi
report=$1
out=$2
size=${3:-1280x2000}
if [[ ! -f "$report" ]]; then
  echo "$0: error: $report: no such file" >&2
  exit 2
fi
if [[ ! "$size" =~ ^[0-9]+x[0-9]+$ ]]; then
  echo "$0: error: size '$size': expected WIDTHxHEIGHT, e.g. 1280x2000" >&2
  exit 2
fi

find_chromium() {
  local c
  for c in chromium chromium-browser google-chrome; do
    if command -v "$c" >/dev/null 2>&1; then
      command -v "$c"
      return 0
    fi
  done
  return 1
}

if ! browser=$(find_chromium); then
  echo "$0: chromium not found; installing Debian's chromium" >&2
  sudo=""
  if [[ $(id -u) -ne 0 ]]; then sudo="sudo"; fi
  $sudo apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >&2
  browser=$(find_chromium) || { echo "$0: error: chromium still not found after install" >&2; exit 3; }
fi

profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
abs_report=$(cd "$(dirname "$report")" && pwd)/$(basename "$report")
mkdir -p "$(dirname "$out")"
abs_out=$(cd "$(dirname "$out")" && pwd)/$(basename "$out")
rm -f "$abs_out"

# Chromium logs D-Bus and GPU noise even on success; keep its log and show it only on failure.
log="$profile/chromium.log"
"$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync \
  --hide-scrollbars --user-data-dir="$profile/profile" \
  --screenshot="$abs_out" --window-size="${size/x/,}" "file://$abs_report" >"$log" 2>&1 || true

if [[ ! -s "$abs_out" ]]; then
  tail -n 20 "$log" >&2 || true
  echo "$0: error: $abs_out was not written (or is empty)" >&2
  exit 3
fi
echo "$abs_out"
