#!/usr/bin/env python3
"""Benchmark: mixed precision against fp32 in scaledesk-train itself, on the same config, data,
seed and thread count, alternating runs so both see the same machine noise. Prints samples/s of
each mode, the ratio to fp32, and how far each mode's losses are from fp32's, step by step.

Usage: bench_amp.py --train BUILD/trainer/scaledesk-train [--modes bf16] [--reps 3] [--config cpu-bench]
                    [--epochs 1]
A mode the build refuses (libtorch 1.13 has no correct bf16 on the CPU) is reported with its
reason, not measured. The CPU's bf16 target is 1.5x fp32; on GPUs run tests/gpu/device-check.sh."""
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


def run(train, yaml_config, config, mode, threads, epochs, seed, workdir, rep):
    run_dir = os.path.join(workdir, f'{mode}-{rep}')
    shutil.rmtree(run_dir, ignore_errors=True)  # metrics.jsonl appends: start from an empty folder
    p = subprocess.run([train, '--yaml_config', yaml_config, '--config', config, '--run_dir', run_dir, '--num_epochs', str(epochs),
                        '--enable_benchy', '--threads', str(threads), '--seed', str(seed), '--amp_mode', mode],
                       cwd=workdir, capture_output=True, text=True)
    if p.returncode != 0:
        lines = [l for l in p.stderr.splitlines() if 'error:' in l]
        return {'refused': lines[-1] if lines else p.stderr.strip()[-300:]}
    steps = []
    with open(os.path.join(run_dir, 'metrics.jsonl')) as f:
        for line in f:
            record = json.loads(line)
            if record.get('kind') == 'step':
                steps.append(record)
    ends = [s['t'] for s in steps]
    return {'samples_per_s': (len(ends) - WARMUP) * steps[0]['samples'] / (ends[-1] - ends[WARMUP - 1]),
            'losses': [s['loss'] for s in steps]}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--train', required=True, help='path of the scaledesk-train binary')
    ap.add_argument('--yaml_config', default=os.path.join(ROOT, 'configs', 'unet.yaml'))
    ap.add_argument('--config', default='cpu-bench')
    ap.add_argument('--modes', default='bf16', help='comma-separated modes to set against fp32 (bf16, fp16)')
    ap.add_argument('--threads', type=int, default=os.cpu_count())
    ap.add_argument('--epochs', type=int, default=1)
    ap.add_argument('--reps', type=int, default=3)
    ap.add_argument('--workdir', help='folder with data/ (default: a temporary one)')
    args = ap.parse_args()
    if args.reps < 1 or args.epochs < 1:
        ap.error('--reps and --epochs must be at least 1')
    modes = [m for m in args.modes.split(',') if m]
    for m in modes:
        if m not in ('bf16', 'fp16'):
            ap.error(f'--modes: unknown mode {m!r} (bf16, fp16)')
    train = os.path.abspath(args.train)
    workdir, _keep = workdir_with_data(train, args.workdir, 'scaledesk-bench-amp-')
    results = {m: [] for m in ['none'] + modes}
    for rep in range(args.reps):
        for m in results:
            results[m].append(run(train, args.yaml_config, args.config, m, args.threads, args.epochs, rep + 1, workdir, rep))
        print(f'rep {rep + 1}: ' + ', '.join(f'{m} ' + (f'{r[-1]["samples_per_s"]:.2f} samples/s' if 'refused' not in r[-1]
                                                         else 'refused') for m, r in results.items()), file=sys.stderr, flush=True)
    base = results['none']
    if any('refused' in r for r in base):
        sys.exit('fp32 run failed: ' + next(r['refused'] for r in base if 'refused' in r))
    fp32 = statistics.median(r['samples_per_s'] for r in base)
    print(f'config {args.config}, {args.threads} threads, {args.reps} alternating reps (median), '
          f'{len(base[0]["losses"])} steps each, samples/s after step {WARMUP}')
    print('| mode | samples/s | / fp32 | max |loss - fp32 loss| / fp32 loss |')
    print('|---|---|---|---|')
    print(f'| fp32 (none) | {fp32:.2f} | 1.00x | 0 |')
    for m in modes:
        if any('refused' in r for r in results[m]):
            print(f'| {m} | refused | | {results[m][0]["refused"]} |')
            continue
        sps = statistics.median(r['samples_per_s'] for r in results[m])
        drift = max(abs(a - b) / abs(b) for r, f in zip(results[m], base) for a, b in zip(r['losses'], f['losses']))
        print(f'| {m} | {sps:.2f} | {sps / fp32:.2f}x | {100 * drift:.3f} % |')
        if m == 'bf16':
            print(f'ratio bf16 / fp32: {sps / fp32:.2f}x  (target >= 1.5x on a CPU with AVX512-BF16)')


if __name__ == '__main__':
    main()
