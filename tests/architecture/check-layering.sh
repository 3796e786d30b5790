#!/usr/bin/env bash
# The layering the design fixes, checked on what was built:
#   - the core backend library (scaledesk_backend) links neither CLI11 nor Qt Widgets or Charts:
#     not in its link interface, not in its objects' symbols, not in its sources' includes;
#   - the command line (backend/cli) is the only place that includes CLI11.
# Usage: check-layering.sh <libscaledesk_backend.a> <its LINK_LIBRARIES> <source dir>
set -euo pipefail
lib=$1 links=$2 src=$3
fail=0
if grep -Eiq 'CLI11|Widgets|Charts' <<<"$links"; then
  echo "FAIL: scaledesk_backend links: $links"; fail=1
fi
symbols=$(nm -C "$lib" 2>/dev/null | grep -E ' (CLI::|QWidget|QChart)' || true)
if [ -n "$symbols" ]; then
  echo "FAIL: scaledesk_backend's objects use CLI11, Widgets or Charts:"; head -5 <<<"$symbols"; fail=1
fi
includes=$(grep -rnE '#include <(CLI/|QWidget|QtWidgets|QChart|QtCharts)' "$src/backend" --include='*.h' --include='*.cpp' | grep -v "^$src/backend/cli/" || true)
if [ -n "$includes" ]; then
  echo "FAIL: the core backend includes:"; echo "$includes"; fail=1
fi
elsewhere=$(grep -rln '#include <CLI/' "$src/backend" "$src/gui" --include='*.h' --include='*.cpp' | grep -v "^$src/backend/cli/" || true)
if [ -n "$elsewhere" ]; then
  echo "FAIL: CLI11 outside backend/cli: $elsewhere"; fail=1
fi
[ "$fail" -eq 0 ] && echo "ok: scaledesk_backend links ${links//;/, }; no CLI11, Widgets or Charts in it"
exit "$fail"
