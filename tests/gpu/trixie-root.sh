#!/usr/bin/env bash
# The Debian 13 (trixie) root that builds scaledesk-train against libtorch 2.x: Debian 13's CUDA
# libtorch (contrib: libtorch-cuda-dev, with ProcessGroupNCCL) and NCCL, on a machine that has no GPU.
#
#   tests/gpu/trixie-root.sh ensure          create the root, or reuse it when it is complete
#   tests/gpu/trixie-root.sh path            print where it is
#   tests/gpu/trixie-root.sh run CMD ARGS…   run CMD inside it, with the checkout at /src
#
# The root lives outside the checkout, in $SCALEDESK_TRIXIE_ROOT or
# ${XDG_CACHE_HOME:-~/.cache}/scaledesk/trixie-root, so that every clone (and CI's fresh one) reuses
# it. It is rebuilt when this script's package list changes. Needs root (debootstrap, chroot, mount).
#
# cuDNN: Debian's nvidia-cudnn is a downloader package whose postinst fetches cuDNN from NVIDIA, which
# fails offline and leaves every libtorch-cuda package unconfigured. This machine's CUDA toolkit ships
# cuDNN 9 (/usr/local/cuda/lib64), the major version libtorch-cuda-2.6 links (libcudnn.so.9). So the
# root gets a local package of the same name that provides those libraries instead (built below with
# dpkg-deb), and apt resolves the dependency with it: nothing is left unconfigured, nothing is
# downloaded from outside Debian. The libraries' stub (libcudnn.so.9) needs only the C runtime, which
# is all a link and a CPU-only run need.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
src="$(cd "$here/../.." && pwd)"
root="${SCALEDESK_TRIXIE_ROOT:-${XDG_CACHE_HOME:-$HOME/.cache}/scaledesk/trixie-root}"
mirror="${SCALEDESK_TRIXIE_MIRROR:-http://deb.debian.org/debian}"
cudnn_dir="${SCALEDESK_CUDNN_DIR:-/usr/local/cuda/lib64}"

# What the CUDA build and the trainer's tests need inside the root.
packages=(
  cmake g++ ninja-build ccache git pkg-config python3
  libtorch-cuda-dev libnccl-dev nvidia-cuda-toolkit
  libyaml-cpp-dev libcli11-dev nlohmann-json3-dev libhdf5-dev libopenmpi-dev openmpi-bin
  libgtest-dev libprotobuf-dev protobuf-compiler libboost-dev libgloo-cuda-dev
  python3-torch-cuda python3-numpy python3-yaml python3-h5py
)
stamp_text="packages: ${packages[*]}; cudnn from $cudnn_dir"

say() { echo "trixie-root: $*" >&2; }

need_root() {
  if [ "$(id -u)" -ne 0 ]; then say "needs root (debootstrap, chroot and mount)"; exit 1; fi
}

ready() { [ -f "$root/.scaledesk-ready" ] && [ "$(cat "$root/.scaledesk-ready")" = "$stamp_text" ]; }

# CMD inside the root: in a mount namespace of its own (unshare), with /proc, /dev, /sys and the
# checkout at /src mounted there only; they go when CMD ends, and two runs at once do not meet.
in_root() {
  cp -f /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
  mkdir -p "$root/proc" "$root/dev" "$root/sys" "$root/src" "$root/tmp"
  unshare --mount --propagation private /bin/bash -c '
    root="$1" src="$2"; shift 2
    mount -t proc proc "$root/proc" && mount --rbind /dev "$root/dev" && mount --rbind /sys "$root/sys" &&
      mount --bind "$src" "$root/src" || exit 125
    exec chroot "$root" /usr/bin/env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
      LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"' bash "$root" "$src" "$@"
}

# A local stand-in for Debian's nvidia-cudnn downloader: this machine's cuDNN 9 under the same name.
cudnn_package() {
  local version deb work
  version="$(in_root apt-cache show --no-all-versions nvidia-cudnn 2>/dev/null | sed -n 's/^Version: //p' | head -n1)"
  [ -n "$version" ] || { say "Debian 13 has no nvidia-cudnn package to stand in for"; exit 1; }
  if ! ls "$cudnn_dir"/libcudnn.so.9* > /dev/null 2>&1; then
    say "no cuDNN 9 in $cudnn_dir (set SCALEDESK_CUDNN_DIR): libtorch-cuda needs libcudnn.so.9"
    exit 1
  fi
  work="$root/tmp/nvidia-cudnn-local"
  rm -rf "$work" && mkdir -p "$work/DEBIAN" "$work/usr/lib/x86_64-linux-gnu"
  cp -a "$cudnn_dir"/libcudnn*.so.9* "$work/usr/lib/x86_64-linux-gnu/"
  cat > "$work/DEBIAN/control" <<CONTROL
Package: nvidia-cudnn
Version: ${version}+scaledesk.local
Architecture: amd64
Maintainer: ScaleDesk <team@scaledesk.invalid>
Section: contrib/libs
Priority: optional
Provides: libcudnn9, libcudnn9-cuda-12
Description: cuDNN 9 from this machine's CUDA toolkit, standing in for the downloader package
 Debian's nvidia-cudnn downloads cuDNN from NVIDIA in its postinst; offline, this package
 installs the cuDNN 9 libraries found in $cudnn_dir instead.
CONTROL
  deb="$root/tmp/nvidia-cudnn-local.deb"
  dpkg-deb --root-owner-group -Zgzip --build "$work" "$deb" > /dev/null
  rm -rf "$work"
  echo /tmp/nvidia-cudnn-local.deb
}

create() {
  need_root
  command -v debootstrap > /dev/null || { say "installing debootstrap"; apt-get install -y -qq debootstrap > /dev/null; }
  local started=$SECONDS
  if [ ! -x "$root/usr/bin/apt-get" ]; then
    rm -rf "$root" && mkdir -p "$root"
    say "debootstrap trixie into $root"
    debootstrap --variant=minbase --components=main,contrib,non-free trixie "$root" "$mirror" > "$root.debootstrap.log" 2>&1 ||
      { tail -n 20 "$root.debootstrap.log" >&2; exit 1; }
  fi
  cat > "$root/etc/apt/sources.list" <<SOURCES
deb $mirror trixie main contrib non-free non-free-firmware
SOURCES
  say "apt-get install ${#packages[@]} packages (about 2.7 GB)"
  in_root apt-get update -qq
  # The downloader would fail offline: install the stand-in first, so apt never picks the real one.
  local cudnn_deb
  cudnn_deb="$(cudnn_package)"
  in_root apt-get install -y -qq --no-install-recommends "$cudnn_deb" > /dev/null
  in_root apt-get install -y -qq --no-install-recommends "${packages[@]}" > "$root.apt.log" 2>&1 ||
    { tail -n 30 "$root.apt.log" >&2; exit 1; }
  in_root apt-get clean
  # Nothing may stay half-installed: a package left unconfigured is a broken root.
  if in_root dpkg --audit | grep -q .; then in_root dpkg --audit >&2; say "packages left unconfigured"; exit 1; fi
  echo "$stamp_text" > "$root/.scaledesk-ready"
  say "ready in $((SECONDS - started)) s: $root"
}

cmd="${1:-ensure}"
shift || true
case "$cmd" in
  ensure)
    if ready; then say "reusing $root"; else create; fi
    ;;
  path)
    echo "$root"
    ;;
  run)
    need_root
    ready || { say "no root at $root yet: run '$0 ensure'"; exit 1; }
    [ $# -gt 0 ] || { say "usage: $0 run CMD ARGS…"; exit 2; }
    exec_status=0
    in_root /bin/bash -c 'cd /src && exec "$@"' bash "$@" || exec_status=$?
    exit $exec_status
    ;;
  *)
    say "usage: $0 ensure | path | run CMD ARGS…"
    exit 2
    ;;
esac
