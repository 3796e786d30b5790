#!/usr/bin/python3
"""Distributed benchmark of scaledesk-train, all measured in one run on this machine:
 (a) allreduce bus bandwidth of the communicator against plain MPI_Allreduce (bench_comm, 2 ranks);
 (b) exposed communication as a share of all communication, ddp against fused, on cpu-bench;
 (c) weak-scaling efficiency of 2 ranks x 1 thread against 1 rank x 1 thread, per strategy
     (local batch 2 either way; efficiency = median step time of 1 rank / of 2 ranks).

Usage: bench_dist.py --train BUILD/trainer/scaledesk-train --bench-comm BUILD/tests/bench_comm [--reps 2]"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, '..', '..', '..'))
WARMUP = 4
MPIRUN = ['mpirun', '--allow-run-as-root', '--oversubscribe', '--bind-to', 'core', '--map-by', 'core']


def steps_of(run_dir):
    with open(os.path.join(run_dir, 'metrics.jsonl')) as f:
        return [r for r in map(json.loads, f) if r.get('kind') == 'step']


def run(train, workdir, name, ranks, strategy):
    run_dir = os.path.join(workdir, name)
    shutil.rmtree(run_dir, ignore_errors=True)
    args = [train, '--yaml_config', os.path.join(ROOT, 'configs', 'unet.yaml'), '--config', 'cpu-bench', '--num_epochs', '1',
            '--enable_benchy', '--threads', '1', '--local_batch_size', '2', '--seed', '1', '--run_dir', run_dir]
    if ranks > 1:
        args = MPIRUN + ['-np', str(ranks)] + args + ['--backend', 'mpi', '--strategy', strategy]
    subprocess.run(args, cwd=workdir, check=True, stdout=subprocess.DEVNULL)
    measured = steps_of(run_dir)[WARMUP:]
    return {'step_s': statistics.median(s['step_s'] for s in measured),
            'comm_s': sum(s['comm_s'] for s in measured),
            'exposed_s': sum(s['comm_exposed_s'] for s in measured),
            'steps': len(measured)}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--train', required=True)
    ap.add_argument('--bench-comm', required=True)
    ap.add_argument('--reps', type=int, default=2)
    args = ap.parse_args()
    train = os.path.abspath(args.train)
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT='1', OMPI_ALLOW_RUN_AS_ROOT_CONFIRM='1')
    os.environ.update(env)

    print('(a) communicator allreduce against MPI_Allreduce')
    out = subprocess.run(MPIRUN + ['-np', '2', os.path.abspath(args.bench_comm)], check=True, capture_output=True, text=True)
    print(out.stdout.strip())

    with tempfile.TemporaryDirectory(prefix='scaledesk-bench-dist-') as workdir:
        subprocess.run([train, 'make-data', '--out', 'data', '--box', '128', '--val-box', '96'], cwd=workdir, check=True,
                       stdout=subprocess.DEVNULL)
        results = {k: [] for k in ('single', 'ddp', 'fused', 'zero1')}
        for rep in range(args.reps):
            results['single'].append(run(train, workdir, f'single-{rep}', 1, 'none'))
            for strategy in ('ddp', 'fused', 'zero1'):
                results[strategy].append(run(train, workdir, f'{strategy}-{rep}', 2, strategy))
            print(f'rep {rep + 1}: ' + ', '.join(f'{k} {v[-1]["step_s"]:.3f} s/step' for k, v in results.items()),
                  file=sys.stderr, flush=True)
        med = lambda k, f: statistics.median(r[f] for r in results[k])
        t1 = med('single', 'step_s')
        print()
        print(f'(b, c) cpu-bench, local batch 2, 1 thread per rank, mpi backend, {args.reps} reps (median), '
              f'steps {WARMUP + 1}.. of each run')
        print('| strategy | ranks | step s | weak-scaling efficiency | comm s (sum) | exposed s (sum) | exposed / comm |')
        print('|---|---|---|---|---|---|---|')
        print(f'| none | 1 | {t1:.3f} | 1.00 | 0 | 0 | - |')
        for k in ('ddp', 'fused', 'zero1'):
            comm, exposed = med(k, 'comm_s'), med(k, 'exposed_s')
            share = exposed / comm if comm > 0 else float('nan')
            print(f'| {k} | 2 | {med(k, "step_s"):.3f} | {t1 / med(k, "step_s"):.2f} | {comm:.2f} | {exposed:.2f} | '
                  f'{share:.2f} |')
        print('targets: (a) ratio >= 0.9; (b) ddp exposed/comm <= 0.5; (c) efficiency >= 0.90')


if __name__ == '__main__':
    main()
