#!/usr/bin/env bash
# Builds the .deb and .tgz with CPack from a finished build, unpacks the .deb into a throw-away
# root, checks that every declared dependency is a package apt knows, runs both binaries from the
# unpacked paths, and validates the desktop file and the AppStream metainfo.
#   test-package.sh BUILD_DIR
set -euo pipefail
build="$(cd "$1" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$build"
cpack -G "DEB;TGZ" -B "$work/out" > "$work/cpack.log" 2>&1 || { cat "$work/cpack.log"; exit 1; }
deb="$(ls "$work"/out/scaledesk_*.deb)"
tgz="$(ls "$work"/out/scaledesk-*.tar.gz)"
echo "packages: $(basename "$deb") $(basename "$tgz")"
root="$work/root"
dpkg-deb -x "$deb" "$root"

fail() { echo "FAIL: $*" >&2; exit 1; }

# Every declared dependency (first of each alternative) is a Debian package apt can install.
depends="$(dpkg-deb -f "$deb" Depends)"
[ -n "$depends" ] || fail "the .deb declares no dependencies"
IFS=',' read -ra groups <<< "$depends"
for g in "${groups[@]}"; do
  name="$(echo "$g" | cut -d'|' -f1 | sed 's/(.*)//' | tr -d ' ')"
  candidate="$(apt-cache policy "$name" | awk '/Candidate:/ {print $2}')"
  [ -n "$candidate" ] && [ "$candidate" != "(none)" ] || fail "dependency $name is not a package apt knows"
done
echo "dependencies: ${#groups[@]}, all known to apt"
# libssh with the fix of CVE-2023-6004 (ProxyCommand/ProxyJump), as the build requires.
grep -q 'libssh-4 (>= 0.10.6)' <<< "$depends" || fail "the .deb does not require libssh-4 >= 0.10.6: $depends"
# … and apt can satisfy every Depends, versions included (a simulated install; nothing changes).
sim="$(apt-get install --simulate --no-install-recommends "$deb" 2>&1)" || fail "apt cannot install the .deb: $sim"
echo "apt: the .deb's dependencies can be installed"

# The files a user and `deploy` need.
for f in usr/bin/scaledesk usr/bin/scaledesk-train \
         usr/share/applications/org.scaledesk.ScaleDesk.desktop \
         usr/share/metainfo/org.scaledesk.ScaleDesk.metainfo.xml \
         usr/share/icons/hicolor/scalable/apps/org.scaledesk.ScaleDesk.svg \
         usr/share/icons/hicolor/48x48/apps/org.scaledesk.ScaleDesk.png \
         usr/share/icons/hicolor/256x256/apps/org.scaledesk.ScaleDesk.png \
         usr/share/scaledesk/configs/unet.yaml usr/share/scaledesk/configs/profiles/perlmutter.yaml \
         usr/share/scaledesk/configs/own-code/ddp.yaml usr/share/scaledesk/configs/own-code/train.py \
         usr/share/scaledesk/python/scaledesk_metrics.py \
         usr/share/scaledesk/trainer-src/CMakeLists.txt usr/share/scaledesk/trainer-src/trainer/CMakeLists.txt \
         usr/share/scaledesk/trainer-src/trainer/src/main.cpp usr/share/scaledesk/trainer-src/configs/unet.yaml \
         usr/share/scaledesk/trainer-src/tbevents/tensorboard.proto; do
  [ -e "$root/$f" ] || fail "missing $f"
done
head -c 4 "$root/usr/share/icons/hicolor/48x48/apps/org.scaledesk.ScaleDesk.png" | grep -q PNG || fail "the 48 px icon is not a PNG"

# Both binaries run from the unpacked tree, and the app finds its own trainer and sources there.
v="$("$root/usr/bin/scaledesk" --version)" && grep -q "^scaledesk 0\." <<< "$v" || fail "scaledesk --version"
v="$("$root/usr/bin/scaledesk-train" --version)" && grep -q "^scaledesk-train 0\..*libtorch" <<< "$v" || fail "scaledesk-train --version: $v"
"$root/usr/bin/scaledesk-train" --yaml_config "$root/usr/share/scaledesk/configs/unet.yaml" --config base --describe \
  > "$work/describe.txt" || fail "scaledesk-train --describe"
grep -q "116,977,029\|116977029" "$work/describe.txt" || fail "describe does not report the model's 116,977,029 parameters"
out="$(env -u SCALEDESK_TRAIN SCALEDESK_HOME="$work/ws" "$root/usr/bin/scaledesk" profiles test local)"
grep -q "ok   trainer: $root/usr/bin/scaledesk-train" <<< "$out" || fail "the installed scaledesk does not use the installed trainer: $out"
# (Output captured first: `grep -q` closing the pipe early would fail the writer under pipefail.)
dry="$(env -u SCALEDESK_TRAINER_SOURCES SCALEDESK_HOME="$work/ws" "$root/usr/bin/scaledesk" submit --config cpu-tiny --make-data --dry-run \
  --config-file "$root/usr/share/scaledesk/configs/unet.yaml")" || fail "dry run"
grep -q "$root/usr/bin/scaledesk-train" <<< "$dry" || fail "the dry run does not use the installed trainer"

desktop-file-validate "$root/usr/share/applications/org.scaledesk.ScaleDesk.desktop" || fail "desktop-file-validate"
appstreamcli validate --no-net --pedantic "$root/usr/share/metainfo/org.scaledesk.ScaleDesk.metainfo.xml" || fail "appstreamcli validate"
listing="$(tar -tzf "$tgz")"
grep -q "bin/scaledesk-train$" <<< "$listing" || fail "the .tgz lacks scaledesk-train"
echo "package test: all checks passed"
