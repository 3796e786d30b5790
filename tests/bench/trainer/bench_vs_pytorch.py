#!/usr/bin/python3
"""Benchmark: scaledesk-train against the Python PyTorch peer (pytorch_peer.py) on the same
config, data, thread count and fp32 math, alternating runs so both see the same machine noise.
Prints samples/s of each, the ratio, and the C++ data-wait share of step time.

Usage: bench_vs_pytorch.py --train BUILD/trainer/scaledesk-train [--reps 3] [--config cpu-bench]
It generates the config's data in a temporary folder (make-data) unless --workdir has it."""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys

from benchdata import workdir_with_data

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, '..', '..', '..'))
WARMUP = 4


def throughput(step_ends, batch):
    """Samples per second over the steps after the warm-up steps."""
    return (len(step_ends) - WARMUP) * batch / (step_ends[-1] - step_ends[WARMUP - 1])


def run_cpp(train, yaml_config, config, threads, workdir, rep):
    run_dir = os.path.join(workdir, f'cpp-{rep}')
    shutil.rmtree(run_dir, ignore_errors=True)  # metrics.jsonl appends: start from an empty folder
    subprocess.run([train, '--yaml_config', yaml_config, '--config', config, '--run_dir', run_dir, '--num_epochs', '1',
                    '--enable_benchy', '--threads', str(threads), '--seed', str(rep + 1)],
                   cwd=workdir, check=True, stdout=subprocess.DEVNULL)
    steps = []
    with open(os.path.join(run_dir, 'metrics.jsonl')) as f:
        for line in f:
            record = json.loads(line)
            if record.get('kind') == 'step':
                steps.append(record)
    ends = [s['t'] for s in steps]
    measured = steps[WARMUP:]
    wall = ends[-1] - ends[WARMUP - 1]
    return {'samples_per_s': throughput(ends, steps[0]['samples']), 'steps': len(steps),
            'data_share': sum(s['data_s'] for s in measured) / wall,
            'forward_s': statistics.median(s['forward_s'] for s in measured),
            'backward_s': statistics.median(s['backward_s'] for s in measured),
            'optim_s': statistics.median(s['optim_s'] for s in measured)}


# glibc settings equal to what scaledesk-train sets with mallopt() at start-up.
TUNED_MALLOC = {'MALLOC_MMAP_THRESHOLD_': str(1 << 30), 'MALLOC_TRIM_THRESHOLD_': str(1 << 30),
                'MALLOC_TOP_PAD_': str(64 << 20)}


def run_peer(yaml_config, config, threads, steps, workdir, rep, tuned_malloc=False):
    env = dict(os.environ, **TUNED_MALLOC) if tuned_malloc else None
    out = subprocess.run(['/usr/bin/python3', os.path.join(HERE, 'pytorch_peer.py'), '--yaml_config', yaml_config,
                          '--config', config, '--steps', str(steps), '--threads', str(threads), '--seed', str(rep + 1)],
                         cwd=workdir, check=True, capture_output=True, text=True, env=env).stdout
    d = json.loads(out.strip().splitlines()[-1])
    wall = d['step_ends'][-1] - d['step_ends'][WARMUP - 1]
    return {'samples_per_s': throughput(d['step_ends'], d['batch']), 'data_share': sum(d['data_waits'][WARMUP:]) / wall}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--train', required=True, help='path of the scaledesk-train binary')
    ap.add_argument('--yaml_config', default=os.path.join(ROOT, 'configs', 'unet.yaml'))
    ap.add_argument('--config', default='cpu-bench')
    ap.add_argument('--threads', type=int, default=os.cpu_count())
    ap.add_argument('--reps', type=int, default=3)
    ap.add_argument('--workdir', help='folder with data/ (default: a temporary one)')
    args = ap.parse_args()
    train = os.path.abspath(args.train)
    workdir, _keep = workdir_with_data(train, args.workdir, 'scaledesk-bench-')
    cpp, peer, tuned = [], [], []
    for rep in range(args.reps):
        c = run_cpp(train, args.yaml_config, args.config, args.threads, workdir, rep)
        cpp.append(c)
        peer.append(run_peer(args.yaml_config, args.config, args.threads, c['steps'], workdir, rep))
        tuned.append(run_peer(args.yaml_config, args.config, args.threads, c['steps'], workdir, rep, True))
        print(f'rep {rep + 1}: scaledesk-train {c["samples_per_s"]:.2f} samples/s, '
              f'pytorch {peer[-1]["samples_per_s"]:.2f}, pytorch+malloc env {tuned[-1]["samples_per_s"]:.2f}',
              file=sys.stderr, flush=True)
    med = lambda rows, key: statistics.median(r[key] for r in rows)
    c_sps, p_sps = med(cpp, 'samples_per_s'), med(peer, 'samples_per_s')
    print(f'config {args.config}, {args.threads} threads, 1 data worker, fp32, {args.reps} alternating reps '
          f'(median), steps {WARMUP + 1}..{cpp[0]["steps"]}')
    print(f'| implementation | samples/s | data wait / step time |')
    print(f'|---|---|---|')
    print(f'| scaledesk-train (C++) | {c_sps:.2f} | {100 * med(cpp, "data_share"):.2f} % |')
    print(f'| PyTorch peer (Python) | {p_sps:.2f} | {100 * med(peer, "data_share"):.2f} % |')
    print(f'| PyTorch peer with MALLOC_* env as scaledesk-train sets | {med(tuned, "samples_per_s"):.2f} | '
          f'{100 * med(tuned, "data_share"):.2f} % |')
    print(f'ratio C++ / Python: {c_sps / p_sps:.2f}x  (target >= 1.10x; data wait target < 5 %)')
    print(f'ratio C++ / Python with the same malloc settings: {c_sps / med(tuned, "samples_per_s"):.2f}x')
    print(f'C++ step phases (median s): forward {med(cpp, "forward_s"):.3f}, backward {med(cpp, "backward_s"):.3f}, '
          f'optimizer {med(cpp, "optim_s"):.3f}')


if __name__ == '__main__':
    main()
