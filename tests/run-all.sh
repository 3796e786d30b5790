#!/usr/bin/env bash
# Installs what is missing, builds everything and runs every test (CTest, all labels).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${SCALEDESK_BUILD_DIR:-$root/build}"

"$root/packaging/install-deps.sh"
"$root/packaging/build.sh"
cd "$build"
ctest --output-on-failure --timeout 1200 "$@"
