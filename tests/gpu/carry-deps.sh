#!/usr/bin/env bash
# Prepares the dependencies that travel with the repository to a GPU machine that has PyTorch but
# no apt and no network (tests/gpu/device-check.sh): the ones scaledesk-train needs beyond libtorch,
# taken from Debian 12's own packages and sources, built there with the wheel's compiler and ABI.
#
#   tests/gpu/carry-deps.sh [DIR]      (default: build-gpu-carry/ in the checkout)
#
# DIR/yaml-cpp     yaml-cpp's source (Debian's yaml-cpp source package)
# DIR/protobuf     protobuf's source (Debian's protobuf source package): the TensorBoard event files
# DIR/prefix/usr   CLI11 and nlohmann-json, header-only (Debian's libcli11-dev, nlohmann-json3-dev)
# DIR/boost        the Boost headers that boost/crc.hpp needs (from Debian's libboost1.74-dev)
# HDF5 and MPI stay behind: the check trains on the synthetic loader, its ranks meet over env://.
# Prints the size; the device tool carries at most 64 MiB.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
src="$(cd "$here/../.." && pwd)"
out="${1:-$src/build-gpu-carry}"
mirror="${SCALEDESK_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
say() { echo "carry-deps: $*" >&2; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/lists/partial" "$work/archives/partial" "$out"
# A private apt state: the machine's own package lists stay as they are.
printf 'deb %s bookworm main\ndeb-src %s bookworm main\n' "$mirror" "$mirror" > "$work/sources.list"
apt_opts=(-o "Dir::State::Lists=$work/lists" -o "Dir::Cache::archives=$work/archives" -o "Dir::Etc::SourceList=$work/sources.list"
          -o "Dir::Etc::SourceParts=/dev/null" -o "APT::Sandbox::User=root")
say "reading Debian 12's package lists"
apt-get "${apt_opts[@]}" update -qq
cd "$work"

unpack_source() {  # $1: source package, $2: folder name in $out
  apt-get "${apt_opts[@]}" source --download-only -qq "$1" > /dev/null
  local orig
  orig="$(ls "$1"_*.orig.tar.* | head -n 1)"
  rm -rf "$out/$2" && mkdir -p "$out/$2"
  tar -xf "$orig" -C "$out/$2" --strip-components=1
  say "$2: $(basename "$orig")"
}
unpack_source yaml-cpp yaml-cpp
unpack_source protobuf protobuf
# What the trainer does not build: protobuf's tests, benchmarks, docs and other languages.
rm -rf "$out/protobuf/"{benchmarks,csharp,java,js,objectivec,php,python,ruby,conformance,docs,examples,kokoro} \
       "$out/protobuf/src/google/protobuf/testdata" "$out/protobuf/third_party/googletest"
find "$out/protobuf/src" \( -name '*unittest*' -o -name '*_test.cc' -o -name 'test_*' \) -delete

apt-get "${apt_opts[@]}" download -qq libcli11-dev nlohmann-json3-dev libboost1.74-dev > /dev/null
rm -rf "$out/prefix" && mkdir -p "$out/prefix"
for deb in libcli11-dev_*.deb nlohmann-json3-dev_*.deb; do dpkg-deb -x "$deb" "$out/prefix"; say "prefix: $deb"; done
rm -rf "$out/prefix/usr/share/doc"
dpkg-deb -x libboost1.74-dev_*.deb boost-deb
rm -rf "$out/boost" && mkdir -p "$out/boost"
# The headers boost/crc.hpp reaches, whichever compiler includes it (all of boost/config), and the
# version header that CMake's FindBoost reads.
( cd boost-deb/usr/include &&
  { echo '#include <boost/crc.hpp>' | g++ -x c++ -std=c++17 -M -I. - | tr ' \\' '\n\n' | grep '^boost/';
    find boost/config -type f; echo boost/version.hpp; } | sort -u | while read -r f; do
      mkdir -p "$out/boost/$(dirname "$f")" && cp "$f" "$out/boost/$f"; done )
say "boost: $(find "$out/boost" -type f | wc -l) headers ($(basename libboost1.74-dev_*.deb))"
size="$(du -sm "$out" | cut -f1)"
say "ready: $out, $size MiB"
[ "$size" -le 64 ] || { say "over the 64 MiB the device tool carries"; exit 1; }
