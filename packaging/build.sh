#!/usr/bin/env bash
# Configures (once) and builds ScaleDesk into ./build (or $SCALEDESK_BUILD_DIR). A second run
# reuses the build; ccache keeps rebuilds after a clean cheap.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${SCALEDESK_BUILD_DIR:-$root/build}"
jobs="${SCALEDESK_JOBS:-$(nproc)}"

if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release "$@"
elif [ $# -gt 0 ]; then
  cmake "$build" "$@"
fi
cmake --build "$build" --parallel "$jobs"
