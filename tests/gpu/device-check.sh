#!/usr/bin/env bash
# The GPU check: one command, run from the repository root on a machine with an NVIDIA GPU, Python
# with a PyTorch wheel (CUDA), cmake, ninja or make, g++ and nvcc, and no apt or network. It builds
# scaledesk-train against the wheel's libtorch and NCCL and checks the GPU path end to end.
#
#   tests/gpu/device-check.sh [--out DIR] [--python PY] [--carry DIR] [--jobs N] [--rehearse]
#
#   --out DIR     results: device-check.json and summary.txt (default $OUT, else ./gpu-check-out)
#   --python PY   the Python whose torch is built against (default: python3)
#   --carry DIR   the dependencies that travel with the repository (default build-gpu-carry/, made by
#                 tests/gpu/carry-deps.sh on a machine with Debian's packages)
#   --jobs N      parallel compile jobs (default: the cores)
#   --rehearse    no GPU here: build, then run every step that a CPU can (check-comm over gloo, the
#                 step benchmark and its PyTorch peer on a small config, a short run); GPU steps are
#                 reported as skipped. For this project's Debian 13 root (docs/trainer.md).
#
# Steps, each with its own time limit, all within 8 minutes:
#   build       scaledesk-train against torch.utils.cmake_prefix_path, NCCL from the wheel's nvidia-nccl
#   version     scaledesk-train --version (libtorch, CUDA, NCCL)
#   nccl-1      check-comm: every collective on the GPU against the CPU's result, one rank
#   nccl-2      the same with two ranks, where the machine has two GPUs (NCCL refuses two ranks on one)
#   bench       bench-step: the full base U-Net (116,977,029 parameters, 64³ crops, 16 a GPU: the NERSC
#               tutorial's 64 over 4 GPUs) in fp32 and bf16, samples/s, against the same model in
#               PyTorch eager (tests/gpu/pytorch_step_peer.py) in the same run, also in channels_last_3d
#   run         a short real run on the synthetic loader in bf16, with NVML telemetry every 0.2 s
#   tensorboard the run's event file read by the tensorboard package
#   nvml        the run's GPU samples: power, utilisation and memory present and positive
# Exit code: 0 when every step that ran passed (targets are reported, not enforced), 1 otherwise,
# 2 for bad arguments.
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
out="${OUT:-$repo/gpu-check-out}"
python=python3
carry="$repo/build-gpu-carry"
jobs="$(nproc)"
rehearse=0
usage() { sed -n '2,30p' "$0" | sed 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out="${2:?--out needs a folder}"; shift 2 ;;
    --python) python="${2:?--python needs an interpreter}"; shift 2 ;;
    --carry) carry="${2:?--carry needs a folder}"; shift 2 ;;
    --jobs) jobs="${2:?--jobs needs a number}"; shift 2 ;;
    --rehearse) rehearse=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "device-check: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
case "$jobs" in ''|*[!0-9]*|0) echo "device-check: --jobs must be a positive whole number, got '$jobs'" >&2; exit 2 ;; esac
command -v "$python" > /dev/null || { echo "device-check: no Python '$python' (--python)" >&2; exit 2; }
[ -d "$carry/yaml-cpp" ] || { echo "device-check: no carried dependencies in $carry (tests/gpu/carry-deps.sh makes them; --carry)" >&2; exit 2; }

mkdir -p "$out/logs" "$out/work"
out="$(cd "$out" && pwd)"
work="$out/work"
build="$repo/build-device-check"
results="$out/steps.jsonl"
: > "$results"
started=$SECONDS
# Seconds for every step together: the check fits in 8 minutes on the GPU machine (16 cores). A
# rehearsal on a small machine builds far slower, so it gets more.
budget="${SCALEDESK_GPU_CHECK_BUDGET:-$([ "$rehearse" = 1 ] && echo 1500 || echo 470)}"
build_limit=$([ "$rehearse" = 1 ] && echo 1200 || echo 300)
failed=0

# One step: its name, a time limit in seconds, then the command. Its output goes to logs/NAME.log;
# its result (passed, failed, skipped; seconds) to steps.jsonl.
step() {
  local name="$1" limit="$2"
  shift 2
  local t0=$SECONDS rc left=$((budget - (SECONDS - started)))
  if [ "$left" -lt 15 ]; then
    skip "$name" "the check's $budget s were spent"
    failed=$((failed + 1))
    return 1
  fi
  [ "$limit" -le "$left" ] || limit=$left
  echo "device-check: $name ..." >&2
  # The step runs in a process group of its own (a step may be a function of this script, which
  # timeout(1) cannot run), and a watchdog ends the whole group at its limit.
  rm -f "$out/logs/$name.timeout"
  set -m
  ( "$@" ) > "$out/logs/$name.log" 2>&1 &
  local pid=$!
  set +m
  ( sleep "$limit"; touch "$out/logs/$name.timeout"; kill -TERM -- "-$pid" 2>/dev/null; sleep 10; kill -KILL -- "-$pid" 2>/dev/null ) &
  local watchdog=$!
  wait "$pid"
  rc=$?
  kill "$watchdog" 2>/dev/null
  wait "$watchdog" 2>/dev/null
  [ -e "$out/logs/$name.timeout" ] && rc=124
  local status=passed
  [ $rc -eq 0 ] || { status=failed; failed=$((failed + 1)); }
  [ $rc -eq 124 ] && status="failed (over ${limit} s)"
  printf '{"step":"%s","status":"%s","exit":%d,"seconds":%d}\n' "$name" "$status" "$rc" "$((SECONDS - t0))" >> "$results"
  echo "device-check: $name $status ($((SECONDS - t0)) s)" >&2
  return $rc
}
skip() {
  printf '{"step":"%s","status":"skipped","why":"%s"}\n' "$1" "$2" >> "$results"
  echo "device-check: $1 skipped: $2" >&2
}

# What this machine has: the wheel, its CUDA and ABI, the GPUs, NCCL from the wheel's nvidia package.
"$python" - > "$out/environment.json" 2> "$out/logs/environment.log" <<'PY'
import json, os, shutil, subprocess
import torch
env = {'torch': torch.__version__, 'torch_cuda': torch.version.cuda, 'cmake_prefix_path': torch.utils.cmake_prefix_path,
       'cxx11_abi': bool(torch._C._GLIBCXX_USE_CXX11_ABI), 'cuda_available': torch.cuda.is_available(),
       'gpus': [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())] if torch.cuda.is_available() else []}
try:
    import nvidia.nccl
    env['nccl_home'] = os.path.dirname(nvidia.nccl.__file__) if nvidia.nccl.__file__ else list(nvidia.nccl.__path__)[0]
except Exception as e:
    env['nccl_home'] = None
try:
    import tensorboard
    env['tensorboard'] = tensorboard.__version__
except Exception:
    env['tensorboard'] = None
for tool in ('cmake', 'nvcc', 'g++', 'ninja'):
    path = shutil.which(tool)
    env[tool] = subprocess.run([path, '--version'], capture_output=True, text=True).stdout.splitlines()[0] if path else None
print(json.dumps(env))
PY
[ -s "$out/environment.json" ] || { cat "$out/logs/environment.log" >&2; echo "device-check: $python cannot import torch" >&2; exit 1; }
field() { "$python" -c "import json,sys; v=json.load(open('$out/environment.json')).get('$1'); print('' if v is None else (len(v) if isinstance(v, list) else v))"; }
gpus="$(field gpus)"
torch_prefix="$(field cmake_prefix_path)"
nccl_home="$(field nccl_home)"
[ "$rehearse" = 1 ] && gpus=0
echo "device-check: torch $(field torch) (CUDA $(field torch_cuda)), $gpus GPU(s), NCCL home ${nccl_home:-none}" >&2

generator=()
command -v ninja > /dev/null && generator=(-G Ninja)
nccl=ON
[ "$rehearse" = 1 ] && [ -z "$nccl_home" ] && nccl=AUTO
configure() {
  NCCL_HOME="$nccl_home" cmake -S "$repo" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$torch_prefix" \
    -DSCALEDESK_VENDOR_DIR="$carry" -DSCALEDESK_BUILD_BACKEND=OFF -DSCALEDESK_BUILD_GUI=OFF -DBUILD_TESTING=OFF \
    -DSCALEDESK_WITH_NCCL="$nccl" -DSCALEDESK_WITH_HDF5=OFF -DSCALEDESK_WITH_MPI=OFF -DSCALEDESK_WITH_TENSORBOARD=ON \
    -DSCALEDESK_USE_CCACHE=OFF &&
    cmake --build "$build" --parallel "$jobs" --target scaledesk-train
}
if ! step build "$build_limit" configure; then
  tail -n 40 "$out/logs/build.log" >&2
fi
train="$build/trainer/scaledesk-train"

if [ -x "$train" ]; then
  step version 30 "$train" --version

  # The collectives, against the CPU's result.
  if [ "$gpus" -ge 1 ]; then
    step nccl-1 60 "$train" check-comm --backend nccl --device cuda --numels 1,1000,1048576,16777216
  else
    skip nccl-1 "no GPU"
  fi
  two_ranks() {  # $1: backend, $2: device
    local port=$((29500 + RANDOM % 1000)) pids=() rc=0
    for r in 0 1; do
      RANK=$r WORLD_SIZE=2 LOCAL_RANK=$r LOCAL_WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
        "$train" check-comm --backend "$1" --device "$2" --numels 1,1000,1048576 > "$out/logs/check-comm-$1-rank$r.log" 2>&1 &
      pids+=($!)
    done
    for p in "${pids[@]}"; do wait "$p" || rc=1; done
    cat "$out/logs/check-comm-$1-rank0.log"
    return $rc
  }
  if [ "$gpus" -ge 2 ]; then
    step nccl-2 90 two_ranks nccl cuda
  elif [ "$rehearse" = 1 ]; then
    skip nccl-2 "no GPU"
    step gloo-2 90 two_ranks gloo cpu
  else
    skip nccl-2 "one GPU: NCCL refuses two ranks on one GPU"
  fi

  # The step benchmark against PyTorch eager, same model and batch, alternating.
  if [ "$gpus" -ge 1 ]; then
    device=cuda; config=base; batch=16; steps=30; warmup=8
    shape=(--data_size 64 --base_channels 64 --levels 6)
  else
    device=cpu; config=cpu-tiny; batch=2; steps=5; warmup=2
    shape=(--data_size 32 --base_channels 4 --levels 5)
  fi
  bench() {
    local m
    for m in none bf16; do
      "$train" bench-step --yaml_config "$repo/configs/unet.yaml" --config $config --local_batch_size $batch --amp_mode $m \
        --device $device --steps $steps --warmup $warmup || return 1
      "$python" "$here/pytorch_step_peer.py" --device $device --batch $batch "${shape[@]}" --amp $m --steps $steps --warmup $warmup || return 1
      if [ $m = bf16 ]; then
        "$python" "$here/pytorch_step_peer.py" --device $device --batch $batch "${shape[@]}" --amp $m --steps $steps \
          --warmup $warmup --channels_last || return 1
      fi
    done
  }
  step bench 240 bench

  # A short run as the trainer runs one, telemetry on; then what the app reads of it.
  if [ "$gpus" -ge 1 ]; then
    printf 'check:\n  <<: *base\n  data_loader_config: synthetic\n  Nsamples: 1024\n  Nsamples_val: 64\n  num_epochs: 2\n  expdir: runs\n' > "$work/check.yaml"
  else
    printf 'check:\n  <<: *cpu-tiny-base\n  data_loader_config: synthetic\n  num_epochs: 1\n' > "$work/check.yaml"
  fi
  # The check's config merges with the project's configs (its anchors), in a file of its own.
  sed 's/^cpu-tiny:$/cpu-tiny: \&cpu-tiny-base/' "$repo/configs/unet.yaml" | cat - "$work/check.yaml" > "$work/configs.yaml"
  rm -rf "$work/run"
  step run 150 "$train" --yaml_config "$work/configs.yaml" --config check --run_dir "$work/run" --amp_mode bf16 --gpu_sample_s 0.2 \
    --device $device --seed 3 --local_batch_size $batch

  if [ -z "$(field tensorboard)" ]; then
    skip tensorboard "the tensorboard package is not installed"
  else
    step tensorboard 60 "$python" - "$work/run/logs" <<'PY'
import json, sys
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
acc = EventAccumulator(sys.argv[1], size_guidance={'scalars': 0})
acc.Reload()
tags = acc.Tags()['scalars']
counts = {t: len(acc.Scalars(t)) for t in tags}
print(json.dumps({'scalar_tags': counts}))
missing = [t for t in ('Loss/train', 'Loss/valid', 'Learning Rate', 'Avg iters per sec') if t not in counts]
sys.exit(f'missing tags: {missing}' if missing else 0)
PY
  fi

  if [ "$gpus" -ge 1 ]; then
    step nvml 30 "$python" - "$work/run/metrics.jsonl" <<'PY'
import json, sys
gpu = [r for r in map(json.loads, open(sys.argv[1])) if r.get('kind') in ('gpu', 'gpu_epoch')]
samples = [r for r in gpu if r['kind'] == 'gpu']
ok = [r for r in samples if (r.get('power_w') or 0) > 0 and r.get('util_pct') is not None and (r.get('mem_used_mib') or 0) > 0]
epochs = [r for r in gpu if r['kind'] == 'gpu_epoch']
print(json.dumps({'samples': len(samples), 'with_power_util_memory': len(ok), 'epochs': epochs}))
sys.exit(0 if samples and len(ok) == len(samples) and epochs and all((e.get('energy_wh') or 0) > 0 for e in epochs) else 1)
PY
  else
    skip nvml "no GPU"
  fi
fi

# The results: every step's status, the benchmark's numbers and the targets, as JSON and text.
"$python" - "$out" "$rehearse" "$((SECONDS - started))" <<'PY'
import json, os, sys
out, rehearse, seconds = sys.argv[1], sys.argv[2] == '1', int(sys.argv[3])
env = json.load(open(os.path.join(out, 'environment.json')))
steps = [json.loads(l) for l in open(os.path.join(out, 'steps.jsonl'))]
def lines(name):
    try:
        return [json.loads(l) for l in open(os.path.join(out, 'logs', name + '.log')) if l.startswith('{')]
    except FileNotFoundError:
        return []
bench = lines('bench')
def pick(impl, mode, cl=False):
    for b in bench:
        if (b.get('impl', 'scaledesk') == impl) and b['amp_mode'] == mode and bool(b.get('channels_last')) == cl:
            return b
rows = {}
for mode in ('none', 'bf16'):
    ours, peer = pick('scaledesk', mode), pick('pytorch', mode)
    if ours and peer:
        rows[mode] = {'scaledesk_samples_per_s': ours['samples_per_s'], 'pytorch_samples_per_s': peer['samples_per_s'],
                      'ratio': ours['samples_per_s'] / peer['samples_per_s'], 'parameters': ours['parameters'],
                      'local_batch': ours['local_batch'], 'device': ours['device'], 'gpu_name': ours['gpu_name'],
                      'scaledesk_peak_mem_mib': ours['peak_mem_mib'], 'pytorch_peak_mem_mib': peer['peak_mem_mib']}
cl = pick('pytorch', 'bf16', True)
if cl and 'bf16' in rows:
    rows['bf16']['pytorch_channels_last_samples_per_s'] = cl['samples_per_s']
comm = {n: [l for l in lines(n) if 'summary' in l] for n in ('nccl-1', 'nccl-2', 'gloo-2')}
result = {'rehearsal': rehearse, 'seconds': seconds, 'environment': env, 'steps': steps, 'bench': rows,
          'check_comm': {k: v[0] for k, v in comm.items() if v}, 'version': ''.join(open(os.path.join(out, 'logs', 'version.log')).read().split('\n')[:1]) if os.path.exists(os.path.join(out, 'logs', 'version.log')) else None,
          'tensorboard': (lines('tensorboard') or [None])[0], 'nvml': (lines('nvml') or [None])[0]}
bf16 = rows.get('bf16')
result['targets'] = {'bf16_samples_per_s_at_least_3000': None if rehearse or not bf16 else bf16['scaledesk_samples_per_s'] >= 3000,
                     'bf16_at_least_pytorch_eager': None if rehearse or not bf16 else bf16['ratio'] >= 1.0}
json.dump(result, open(os.path.join(out, 'device-check.json'), 'w'), indent=2)
with open(os.path.join(out, 'summary.txt'), 'w') as f:
    w = lambda s='': print(s, file=f)
    w(f"scaledesk GPU check{' (rehearsal without a GPU)' if rehearse else ''}: {seconds} s")
    w(f"torch {env['torch']} (CUDA {env['torch_cuda']}, C++11 ABI {env['cxx11_abi']}); GPUs: {', '.join(env['gpus']) or 'none'}")
    w(f"built: {result['version']}")
    for s in steps:
        w(f"  {s['step']:<12} {s['status']}" + (f" ({s['seconds']} s)" if 'seconds' in s else f": {s.get('why', '')}"))
    for name, c in result['check_comm'].items():
        w(f"{name}: {c['checks']} collectives checked, {c['failed']} failed ({c['backend']}, {c['ranks']} rank(s), {c['device']})")
    for mode, r in rows.items():
        extra = f", PyTorch channels_last {r['pytorch_channels_last_samples_per_s']:.1f}" if 'pytorch_channels_last_samples_per_s' in r else ''
        w(f"bench {mode}: scaledesk-train {r['scaledesk_samples_per_s']:.1f} samples/s, PyTorch eager {r['pytorch_samples_per_s']:.1f}"
          f" ({r['ratio']:.2f}x){extra}; {r['parameters']:,} parameters, batch {r['local_batch']} on {r['device']} {r['gpu_name']}")
    for k, v in result['targets'].items():
        w(f"target {k}: {'n/a' if v is None else ('met' if v else 'NOT met')}")
print(open(os.path.join(out, 'summary.txt')).read())
PY
echo "device-check: results in $out/device-check.json and $out/summary.txt" >&2
[ "$failed" -eq 0 ]
