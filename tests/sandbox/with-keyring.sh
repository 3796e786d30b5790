#!/usr/bin/env bash
# Runs a command on a private D-Bus session with an unlocked GNOME Keyring (the Secret Service),
# so keyring code is tested against a real keyring without touching the user's own.
#   with-keyring.sh COMMAND [ARGS…]
set -euo pipefail
command -v dbus-run-session >/dev/null || { echo "with-keyring: dbus-run-session not found (install dbus)" >&2; exit 1; }
command -v gnome-keyring-daemon >/dev/null || { echo "with-keyring: gnome-keyring-daemon not found (install gnome-keyring)" >&2; exit 1; }
home="$(mktemp -d)"
trap 'rm -rf "$home"' EXIT
# The keyring's files live in a throw-away XDG data home; its password is irrelevant (unlocked).
export XDG_DATA_HOME="$home/data" XDG_RUNTIME_DIR="$home/run"
mkdir -p "$XDG_DATA_HOME" "$XDG_RUNTIME_DIR"
chmod 0700 "$XDG_RUNTIME_DIR"
exec dbus-run-session -- bash -c '
  eval "$(printf "test" | gnome-keyring-daemon --unlock --components=secrets --daemonize)"
  export GNOME_KEYRING_CONTROL
  "$@"' with-keyring "$@"
