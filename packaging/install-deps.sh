#!/usr/bin/env bash
# Installs every Debian 12 package ScaleDesk needs to build, test and run. Idempotent: packages
# already installed are skipped, and apt-get update runs only when something is missing.
set -euo pipefail

packages=(
  # toolchain
  build-essential cmake ninja-build ccache git pkg-config
  # trainer: libtorch (CPU, Debian's 1.13), Gloo, a fast BLAS (the default reference BLAS is 10-40x slower),
  # HDF5, yaml-cpp, CLI11, nlohmann-json, OpenMPI
  libtorch-dev libgloo-dev libopenblas0-openmp libhdf5-dev libyaml-cpp-dev libcli11-dev nlohmann-json3-dev
  libopenmpi-dev openmpi-bin
  # backend: Qt 6 (Core, Sql with SQLite, Concurrent, Test), libssh, QtKeychain, simdjson (metrics parsing)
  qt6-base-dev libqt6sql6-sqlite libssh-dev qtkeychain-qt6-dev libsimdjson-dev
  # TensorBoard event files (tbevents/): protobuf for the Event messages, Boost.CRC for TFRecord's CRC-32C
  libprotobuf-dev protobuf-compiler libboost-dev
  # the desktop app: Qt 6 Widgets (in qt6-base-dev), Charts, Svg; a font so text renders offscreen;
  # Xvfb for screenshots of a real window
  qt6-charts-dev qt6-svg-dev fonts-dejavu-core xvfb xauth
  # packages: dpkg-shlibdeps (dpkg-dev), and the validators of the desktop file and the metainfo
  dpkg-dev desktop-file-utils appstream
  # the SSH half of the sandbox: a real sshd on loopback
  openssh-server openssh-client
  # the fuzz targets (libFuzzer, clang's sanitizer runtimes)
  clang libclang-rt-14-dev
  # tests and benchmarks: GoogleTest, Google Benchmark, the Python PyTorch peer (Debian's python3-torch)
  libgtest-dev libbenchmark-dev python3 python3-torch python3-h5py python3-yaml python3-numpy
  # the code sync benchmark's peer: rsync over the same SSH
  rsync
  # the test sandbox: a real SLURM (munge, slurmctld, slurmd; srun --mpi=pmix with Open MPI)
  slurm-wlm munge
  # the keyring test: a Secret Service (gnome-keyring) on a private D-Bus session
  gnome-keyring dbus
  # the trainer's libtorch 2.x / CUDA build: a Debian 13 root (tests/gpu/trixie-root.sh)
  debootstrap
)
# Installed without their recommends (which would pull in a desktop's PAM and UI pieces).
no_recommends=(gnome-keyring)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "install-deps: installing ${missing[*]}"
$SUDO apt-get update -qq
plain=()
bare=()
for p in "${missing[@]}"; do
  if [[ " ${no_recommends[*]} " == *" $p "* ]]; then bare+=("$p"); else plain+=("$p"); fi
done
[ ${#plain[@]} -eq 0 ] || DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${plain[@]}"
[ ${#bare[@]} -eq 0 ] || DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${bare[@]}"
