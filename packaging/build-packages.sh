#!/usr/bin/env bash
# Builds the .deb and the .tgz into packages/ (installs what is missing and builds first).
#   packaging/build-packages.sh
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${SCALEDESK_BUILD_DIR:-$root/build}"
"$root/packaging/install-deps.sh"
"$root/packaging/build.sh"
mkdir -p "$root/packages"
(cd "$build" && cpack -G "DEB;TGZ" -B "$root/packages")
ls -1 "$root"/packages/scaledesk[-_]*
