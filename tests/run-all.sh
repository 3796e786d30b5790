#!/usr/bin/env bash
# Installs what is missing, builds everything and runs every test (CTest, all labels).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${SCALEDESK_BUILD_DIR:-$root/build}"

"$root/packaging/install-deps.sh"
"$root/packaging/build.sh"
(cd "$build" && ctest --output-on-failure --timeout 1200 "$@")

# The trainer against libtorch 2.x: its CUDA + NCCL build (every CUDA and NCCL source compiled and
# linked) in the Debian 13 root, and its own tests there on the CPU. SCALEDESK_GPU_BUILD=0 skips it.
if [ "${SCALEDESK_GPU_BUILD:-1}" != 0 ]; then
  "$root/tests/gpu/build-cuda.sh" --test
fi

# The fuzz targets (clang, ASan + UBSan), each run for a short smoke time; SCALEDESK_FUZZ_SMOKE=0
# skips them. Long runs: docs/design.md, "Fuzzing".
if [ "${SCALEDESK_FUZZ_SMOKE:-1}" != 0 ]; then
  cd "$root"
  [ -f build-fuzz/build.ninja ] || cmake --preset fuzz > /dev/null
  cmake --build --preset fuzz
  ctest --preset fuzz
fi
