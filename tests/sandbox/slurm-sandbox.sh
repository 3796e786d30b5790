#!/usr/bin/env bash
# A real SLURM cluster of one node on loopback, for tests: munged, slurmctld and slurmd from
# Debian's slurm-wlm with a generated slurm.conf (proctrack/linuxproc, task/none, this machine's
# CPUs), all state under one folder. Nothing listens beyond 127.0.0.1 except what slurm binds
# for its own ports, which are non-default so a real cluster on this host is never touched.
#
#   slurm-sandbox.sh start   start (idempotent) and wait until the node is idle
#   slurm-sandbox.sh stop    stop every daemon and remove the state
#   slurm-sandbox.sh env     print `export SLURM_CONF=…` for clients
#
# Folder: $SCALEDESK_SANDBOX_DIR (default /tmp/scaledesk-slurm-sandbox).
#
# Several nodes on this one host: SCALEDESK_SANDBOX_NODES=N (default 1) makes nodes sd1…sdN, each
# with NodeHostname set to this host, a slurmd port of its own (SCALEDESK_SLURMD_PORT + i) and
# this host's CPUs (the nodes share them: SLURM does not know), and one `slurmd -N sdI` each. srun spans them (srun -N2 -n2); --mpi=pmix does not
# across two of them (both slurmstepds create the same /tmp/spmix_appdir_<uid>_<job>.<step>), so
# multi-node runs use gloo over SLURM's variables (plain srun, MpiDefault=none). Give such a
# sandbox its own folder and ports so it runs beside the one-node sandbox.
set -euo pipefail
dir="${SCALEDESK_SANDBOX_DIR:-/tmp/scaledesk-slurm-sandbox}"
conf="$dir/etc/slurm.conf"
ctld_port="${SCALEDESK_SLURMCTLD_PORT:-26817}"
slurmd_port="${SCALEDESK_SLURMD_PORT:-26818}"
nodes="${SCALEDESK_SANDBOX_NODES:-1}"

die() { echo "slurm-sandbox: $*" >&2; exit 1; }

need() {
  for b in munged mungekey slurmctld slurmd srun sbatch squeue scontrol sinfo; do
    command -v "$b" >/dev/null || PATH="$PATH:/usr/sbin" command -v "$b" >/dev/null \
      || die "$b not found: install slurm-wlm and munge (packaging/install-deps.sh does)"
  done
  export PATH="$PATH:/usr/sbin"
}

running() { [ -f "$dir/$1.pid" ] && kill -0 "$(cat "$dir/$1.pid")" 2>/dev/null; }

write_config() {
  local host cpus mem
  host="$(hostname -s)"
  cpus="$(nproc)"
  mem=$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 / 2 ))
  mkdir -p "$dir"/{etc,state,spool,log,munge}
  cat > "$conf" <<CONF
ClusterName=sandbox
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool/%n
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd-%n.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
SlurmdTimeout=30
InactiveLimit=0
KillWait=5
MinJobAge=300
CONF
  if [ "$nodes" -le 1 ]; then
    echo "NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN" >> "$conf"
  else
    local i
    for i in $(seq 1 "$nodes"); do
      echo "NodeName=sd$i NodeHostname=$host NodeAddr=127.0.0.1 Port=$(( slurmd_port + i )) CPUs=$cpus RealMemory=$(( mem / nodes )) State=UNKNOWN" >> "$conf"
    done
  fi
  echo "PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO" >> "$conf"
}

# The slurmd processes: `slurmd` (one node), or `slurmd -N sdI` for each node.
node_names() { if [ "$nodes" -le 1 ]; then hostname -s; else seq -f 'sd%g' 1 "$nodes"; fi; }
slurmds_running() {
  local n
  for n in $(node_names); do running "slurmd-$n" || return 1; done
}

start() {
  need
  export SLURM_CONF="$conf"
  if running slurmctld && slurmds_running && running munged; then
    echo "slurm-sandbox: already running ($dir)"
    return 0
  fi
  stop >/dev/null 2>&1 || true
  write_config
  [ -f "$dir/munge/munge.key" ] || mungekey --create --keyfile="$dir/munge/munge.key" >/dev/null 2>&1 \
    || dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none
  chmod 0400 "$dir/munge/munge.key"
  chmod 0700 "$dir/munge"
  munged --force --socket="$dir/munge/munge.socket" --key-file="$dir/munge/munge.key" \
    --pid-file="$dir/munged.pid" --log-file="$dir/log/munged.log" --seed-file="$dir/munge/munge.seed"
  slurmctld -f "$conf" -i
  if [ "$nodes" -le 1 ]; then
    slurmd -f "$conf"
  else
    for n in $(node_names); do slurmd -f "$conf" -N "$n"; done
  fi
  # Wait for every node to register and become usable.
  for _ in $(seq 1 60); do
    states="$(sinfo -h -N -o '%T' 2>/dev/null || true)"
    ready="$(echo "$states" | grep -c -E '^(idle|mixed|allocated)$' || true)"
    if [ "$ready" -ge "$nodes" ]; then echo "slurm-sandbox: $nodes node(s) $(echo "$states" | head -1) ($dir)"; return 0; fi
    sleep 0.5
  done
  echo "slurm-sandbox: the nodes did not become idle; logs:" >&2
  tail -n 20 "$dir/log/slurmctld.log" "$dir"/log/slurmd-*.log >&2 || true
  exit 1
}

stop() {
  local daemons=(slurmctld munged) f d
  for f in "$dir"/slurmd*.pid; do [ -f "$f" ] && daemons+=("$(basename "$f" .pid)"); done
  for d in "${daemons[@]}"; do
    if running "$d"; then
      kill "$(cat "$dir/$d.pid")" 2>/dev/null || true
    fi
  done
  for _ in $(seq 1 50); do
    local any=0
    for d in "${daemons[@]}"; do running "$d" && any=1; done
    [ "$any" = 1 ] || break
    sleep 0.2
  done
  for d in "${daemons[@]}"; do
    running "$d" && kill -9 "$(cat "$dir/$d.pid")" 2>/dev/null || true
  done
  rm -rf "$dir"
  echo "slurm-sandbox: stopped"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  env) echo "export SLURM_CONF=$conf PATH=\$PATH:/usr/sbin" ;;
  *) echo "usage: $0 start|stop|env" >&2; exit 2 ;;
esac
