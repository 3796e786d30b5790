#!/usr/bin/env bash
# Two real OpenSSH servers on loopback, for the SSH transport's tests. Both use one generated
# ed25519 host key and listen on 127.0.0.1 only, on non-default ports:
#   - $port (26822): public-key auth only, for root (PermitRootLogin prohibit-password). The
#     sandbox's two user keys are appended to root's ~/.ssh/authorized_keys, each line marked
#     with the comment "scaledesk-ssh-sandbox"; stop removes exactly those lines.
#   - $kbd_port (26823): keyboard-interactive through PAM only, for the dedicated user
#     scaledesk-kbd (created when missing) whose password is regenerated at every start.
# Must run as root (it writes root's authorized_keys, sets a password and binds sshd).
#
#   ssh-sandbox.sh start   start (idempotent) and wait until both ports accept connections
#   ssh-sandbox.sh stop    stop both servers, remove the marked authorized_keys lines and the folder
#   ssh-sandbox.sh env     print the variables tests need
#
# Folder: $SCALEDESK_SSH_SANDBOX_DIR (default /tmp/scaledesk-ssh-sandbox). It holds:
#   id_ed25519(.pub)       unencrypted user key for root
#   id_ed25519_pass(.pub)  passphrase-protected user key for root; the passphrase is in `passphrase`
#   kbd-password           the password of scaledesk-kbd
#   known_hosts            the host key for [127.0.0.1]:26822 and [127.0.0.1]:26823
#   ssh_config             Host alias `sandbox` → root@127.0.0.1:26822 with the unencrypted key
#   sshd-<port>.pid/.log   the servers' pid files and logs
set -euo pipefail
dir="${SCALEDESK_SSH_SANDBOX_DIR:-/tmp/scaledesk-ssh-sandbox}"
port="${SCALEDESK_SSH_PORT:-26822}"
kbd_port="${SCALEDESK_SSH_KBD_PORT:-26823}"
kbd_user=scaledesk-kbd
marker=scaledesk-ssh-sandbox
sshd=/usr/sbin/sshd  # sshd re-executes itself and insists on an absolute path
auth_keys="${HOME:-/root}/.ssh/authorized_keys"

die() { echo "ssh-sandbox: $*" >&2; exit 1; }

need() {
  [ "$(id -u)" = 0 ] || die "must run as root (it edits root's authorized_keys and adds a user)"
  [ -x "$sshd" ] || die "$sshd not found: install openssh-server (packaging/install-deps.sh does)"
  for b in ssh ssh-keygen useradd chpasswd; do
    command -v "$b" >/dev/null || PATH="$PATH:/usr/sbin" command -v "$b" >/dev/null || die "$b not found"
  done
  export PATH="$PATH:/usr/sbin"
}

running() { [ -f "$dir/sshd-$1.pid" ] && kill -0 "$(cat "$dir/sshd-$1.pid")" 2>/dev/null; }

accepts() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

remove_keys() {
  [ -f "$auth_keys" ] || return 0
  if grep -q " $marker\$" "$auth_keys"; then
    local tmp
    tmp="$(mktemp "$auth_keys.XXXXXX")"
    grep -v " $marker\$" "$auth_keys" > "$tmp" || true
    chmod 0600 "$tmp"
    mv -f "$tmp" "$auth_keys"
  fi
}

write_sshd_config() {  # $1 port, $2 file, $3 the auth-specific lines
  cat > "$2" <<CONF
ListenAddress 127.0.0.1:$1
HostKey $dir/ssh_host_ed25519_key
PidFile $dir/sshd-$1.pid
StrictModes yes
PasswordAuthentication no
PermitEmptyPasswords no
X11Forwarding no
PrintMotd no
PrintLastLog no
UseDNS no
AllowTcpForwarding yes
MaxStartups 50:30:100
Subsystem sftp internal-sftp
$3
CONF
}

start() {
  need
  if running "$port" && running "$kbd_port" && accepts "$port" && accepts "$kbd_port"; then
    echo "ssh-sandbox: already running ($dir)"
    return 0
  fi
  stop >/dev/null 2>&1 || true
  mkdir -p "$dir"
  chmod 0755 "$dir"
  mkdir -p /run/sshd && chmod 0755 /run/sshd

  ssh-keygen -q -t ed25519 -N '' -C "$marker-host" -f "$dir/ssh_host_ed25519_key"
  ssh-keygen -q -t ed25519 -N '' -C "$marker" -f "$dir/id_ed25519"
  head -c 18 /dev/urandom | base64 | tr -d '/+=' > "$dir/passphrase"
  ssh-keygen -q -t ed25519 -N "$(cat "$dir/passphrase")" -C "$marker" -f "$dir/id_ed25519_pass"
  chmod 0600 "$dir/passphrase"

  # Root's authorized_keys: our lines exactly once (remove_keys ran in stop above).
  mkdir -p "$(dirname "$auth_keys")"
  chmod 0700 "$(dirname "$auth_keys")"
  touch "$auth_keys"
  chmod 0600 "$auth_keys"
  [ -s "$auth_keys" ] && [ -n "$(tail -c1 "$auth_keys")" ] && echo >> "$auth_keys"
  cat "$dir/id_ed25519.pub" "$dir/id_ed25519_pass.pub" >> "$auth_keys"

  # The keyboard-interactive user and a fresh password.
  id "$kbd_user" >/dev/null 2>&1 || useradd -m -s /bin/sh "$kbd_user"
  head -c 18 /dev/urandom | base64 | tr -d '/+=' > "$dir/kbd-password"
  chmod 0600 "$dir/kbd-password"
  echo "$kbd_user:$(cat "$dir/kbd-password")" | chpasswd

  local hostkey
  hostkey="$(cut -d' ' -f1,2 "$dir/ssh_host_ed25519_key.pub")"
  printf '[127.0.0.1]:%s %s\n[127.0.0.1]:%s %s\n' "$port" "$hostkey" "$kbd_port" "$hostkey" > "$dir/known_hosts"
  cat > "$dir/ssh_config" <<CONF
Host sandbox
  HostName 127.0.0.1
  Port $port
  User root
  IdentityFile $dir/id_ed25519
  IdentitiesOnly yes
  UserKnownHostsFile $dir/known_hosts
  StrictHostKeyChecking yes
  BatchMode yes
CONF

  # SetEnv: sessions find the SLURM sandbox's slurm.conf, as a cluster's login node finds its own,
  # and $dir/path-first comes first on their PATH: where tests put a site's sbatch wrapper
  # (tst_sbatch_wrappers), as a site's login shell would find it. It is empty otherwise.
  mkdir -p "$dir/path-first"
  write_sshd_config "$port" "$dir/sshd-$port.conf" "PermitRootLogin prohibit-password
SetEnv SLURM_CONF=${SCALEDESK_SANDBOX_DIR:-/tmp/scaledesk-slurm-sandbox}/etc/slurm.conf PATH=$dir/path-first:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
PubkeyAuthentication yes
KbdInteractiveAuthentication no
UsePAM no"
  write_sshd_config "$kbd_port" "$dir/sshd-$kbd_port.conf" "PermitRootLogin no
PubkeyAuthentication no
KbdInteractiveAuthentication yes
UsePAM yes
AllowUsers $kbd_user"

  "$sshd" -f "$dir/sshd-$port.conf" -E "$dir/sshd-$port.log"
  "$sshd" -f "$dir/sshd-$kbd_port.conf" -E "$dir/sshd-$kbd_port.log"
  for _ in $(seq 1 100); do
    if accepts "$port" && accepts "$kbd_port"; then
      echo "ssh-sandbox: listening on 127.0.0.1:$port (keys) and :$kbd_port (keyboard-interactive) ($dir)"
      return 0
    fi
    sleep 0.1
  done
  echo "ssh-sandbox: sshd did not start; logs:" >&2
  tail -n 20 "$dir"/sshd-*.log >&2 || true
  exit 1
}

stop() {
  local p pid
  for p in "$port" "$kbd_port"; do
    running "$p" || continue
    pid="$(cat "$dir/sshd-$p.pid")"
    # Per-connection monitors outlive the listener; end them first (their session children follow).
    pkill -P "$pid" 2>/dev/null || true
    kill "$pid" 2>/dev/null || true
  done
  for _ in $(seq 1 50); do
    running "$port" || running "$kbd_port" || break
    sleep 0.1
  done
  for p in "$port" "$kbd_port"; do
    running "$p" && kill -9 "$(cat "$dir/sshd-$p.pid")" 2>/dev/null || true
  done
  remove_keys
  rm -rf "$dir"
  echo "ssh-sandbox: stopped"
}

# Cuts every open connection to the main sshd as a network failure would: the client sees the
# connection drop, not its command end. So each session's process goes first; the commands it ran
# (orphans by then) follow, and the call returns once the listener has no connection left.
drop() {
  running "$port" || { echo "ssh-sandbox: not running" >&2; exit 1; }
  local listener session kids
  listener="$(cat "$dir/sshd-$port.pid")"
  for session in $(pgrep -P "$listener"); do
    kids="$(pgrep -P "$session" || true)"
    kill -KILL "$session" 2>/dev/null || true
    [ -z "$kids" ] || kill -KILL $kids 2>/dev/null || true
  done
  for _ in $(seq 1 50); do
    pgrep -P "$listener" >/dev/null || return 0
    sleep 0.1
  done
  echo "ssh-sandbox: connections still open after 5 s" >&2
  exit 1
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  drop) drop ;;
  env)
    echo "export SCALEDESK_SSH_SANDBOX_DIR=$dir SCALEDESK_SSH_PORT=$port SCALEDESK_SSH_KBD_PORT=$kbd_port" \
         "SCALEDESK_SSH_KBD_USER=$kbd_user"
    ;;
  *) echo "usage: $0 start|stop|drop|env" >&2; exit 2 ;;
esac
