#!/usr/bin/env bash
# The pictures of docs/gui.md, retaken from the real window (offscreen): the demo workspace (the
# demo sweep runs first if it has not) in the light palette and in a dark one, and the welcome
# panel of an empty workspace. Needs a build with tests (packaging/build.sh, BUILD_TESTING on).
# The add-cluster picture (wizard-cluster.png) comes from the wizard's sandbox test:
#   SCALEDESK_SCREENSHOT_DIR=docs/images ctest --test-dir build -R tst_gui_ssh
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${SCALEDESK_BUILD_DIR:-$root/build}"
workspace="${SCALEDESK_DEMO_DIR:-$root/demo}/workspace"
export QT_QPA_PLATFORM=offscreen
mkdir -p "$workspace"
[ -f "$workspace/reports/demo/report.md" ] || "$build/gui/scaledesk" --workspace "$workspace" demo
"$build/tests/gui/docs_screenshots" "$workspace" "$root/docs/images"
