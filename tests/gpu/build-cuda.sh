#!/usr/bin/env bash
# Builds scaledesk-train against Debian 13's CUDA libtorch 2.x and NCCL, in the Debian 13 root of
# tests/gpu/trixie-root.sh (created on first use, reused afterwards). No GPU is needed: every CUDA
# and NCCL source is compiled and linked; a GPU is only needed to run those paths.
#
#   tests/gpu/build-cuda.sh                 build scaledesk-train and the trainer's tests
#   tests/gpu/build-cuda.sh --test [ARGS]   … then run the trainer's tests (CTest ARGS) inside the root:
#                                           the CPU half of the CUDA build, against libtorch 2.x
#   tests/gpu/build-cuda.sh --run CMD ARGS  run CMD inside the root with the build's programs on PATH,
#                                           e.g. --run scaledesk-train --version
#
# The build folder is build-trixie-cuda/ in the checkout ($SCALEDESK_CUDA_BUILD_DIR, relative to
# it); ccache's cache lives in the root, so a fresh clone rebuilds quickly. Prints the versions it
# built with and exits nonzero on any failure.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
build="${SCALEDESK_CUDA_BUILD_DIR:-build-trixie-cuda}"
case "$build" in /*) echo "build-cuda: SCALEDESK_CUDA_BUILD_DIR must be relative to the checkout" >&2; exit 2 ;; esac
jobs="${SCALEDESK_JOBS:-$(nproc)}"

mode=build
case "${1:-}" in
  --test) mode=test; shift ;;
  --run) mode=run; shift; [ $# -gt 0 ] || { echo "build-cuda: --run needs a command" >&2; exit 2; } ;;
  "") ;;
  -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) echo "build-cuda: unknown argument '$1' (--test, --run CMD ARGS or --help)" >&2; exit 2 ;;
esac

"$here/trixie-root.sh" ensure

if [ "$mode" = run ]; then
  exec "$here/trixie-root.sh" run env PATH="/src/$build/trainer:/usr/bin:/bin" "$@"
fi

"$here/trixie-root.sh" run /bin/bash -euo pipefail -c '
  build="$1"; jobs="$2"; mode="$3"; shift 3
  export CCACHE_DIR=/root/.ccache
  mkdir -p "$build"
  if [ ! -f "$build/build.ninja" ]; then
    cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DSCALEDESK_BUILD_BACKEND=OFF -DSCALEDESK_BUILD_GUI=OFF -DSCALEDESK_WITH_NCCL=ON -DSCALEDESK_WITH_MPI=ON \
      -DSCALEDESK_WITH_HDF5=ON -DSCALEDESK_WITH_TENSORBOARD=ON > "$build/configure.log" 2>&1 ||
      { cat "$build/configure.log" >&2; exit 1; }
  fi
  grep -h "scaledesk-train:" "$build/configure.log" | sed "s/^-- /build-cuda: /" || true
  cmake --build "$build" --parallel "$jobs"
  echo "build-cuda: built with: $("$build/trainer/scaledesk-train" --version)"
  if [ "$mode" = test ]; then
    cd "$build" && ctest --output-on-failure --timeout 1200 -L trainer "$@"
  fi
' bash "$build" "$jobs" "$mode" "$@"
