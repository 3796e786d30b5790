#!/usr/bin/env bash
# The main job on a fresh Debian 12 machine: installs what is missing and builds; then, with a
# display, opens the ScaleDesk window on the demo workspace (the `local` profile, the example
# configs, and the demo sweep once it has run); without one, runs `scaledesk demo` headless: a
# small local scaling sweep (cpu-demo: 1 and 2 ranks × ddp and fused, one run at a time), then
# the scaling report as CSV, Markdown, PNG, SVG and PDF, printing where each file is.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${SCALEDESK_BUILD_DIR:-$root/build}"
workspace="${SCALEDESK_DEMO_DIR:-$root/demo}/workspace"

"$root/packaging/install-deps.sh"
"$root/packaging/build.sh"

scaledesk="$build/gui/scaledesk"
mkdir -p "$workspace"
if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ] && [ "${SCALEDESK_DEMO_HEADLESS:-0}" != 1 ]; then
  # The demo sweep first, if it has not run yet, so the window has curves and plots to show.
  [ -f "$workspace/reports/demo/report.md" ] || "$scaledesk" --workspace "$workspace" demo
  exec "$scaledesk" --workspace "$workspace"
fi
"$scaledesk" --workspace "$workspace" demo
cat <<MSG

The demo workspace is $workspace:
  runs/<run id>/   each run's record (run.json) and the mirror of its files (metrics.jsonl, epochs.csv, logs)
  reports/demo/    the scaling report: groups.csv, runs.csv, report.md and six plots as PNG, SVG and PDF
With a display, \`$scaledesk --workspace $workspace\` opens the window on it.
MSG
