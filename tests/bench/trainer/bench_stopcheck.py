#!/usr/bin/python3
"""What agreeing on the stop request after every step costs the trainer, against the default
cadence (--stop_check_s 1: about once a second of steps), on 2- and 4-rank CPU runs.

The peer is in the same run: each repetition runs --stop_check_s 0 (the allreduce after every
step) and the default back to back on the same data, so machine drift between repetitions cancels
in the ratio of their epoch times (epochs.csv train_s, the first epoch left out as warm-up). Also
prints what each leaves outside its step records (tests/bench/planner/outside_steps.py), the part
of an epoch the planner's step model does not see.

Usage: bench_stopcheck.py --train BUILD/trainer/scaledesk-train [--reps 4] [--config cpu-demo]"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, '..', '..', '..'))
sys.path.insert(0, os.path.join(HERE, '..', 'planner'))
from outside_steps import outside_share  # noqa: E402
from benchdata import workdir_with_data  # noqa: E402

MPIRUN = ['mpirun', '--allow-run-as-root', '--oversubscribe', '--bind-to', 'none']
WARMUP = 1


def run(train, workdir, name, ranks, config, stop_check):
    run_dir = os.path.join(workdir, name)
    shutil.rmtree(run_dir, ignore_errors=True)
    args = MPIRUN + ['-np', str(ranks), train, '--yaml_config', os.path.join(ROOT, 'configs', 'unet.yaml'), '--config', config,
                     '--num_epochs', '3', '--enable_benchy', '--threads', '1', '--seed', '1', '--run_dir', run_dir,
                     '--backend', 'mpi', '--strategy', 'ddp', '--stop_check_s', str(stop_check)]
    subprocess.run(args, cwd=workdir, check=True, stdout=subprocess.DEVNULL)
    return outside_share(run_dir, WARMUP)  # (epochs s, steps s)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--train', required=True)
    ap.add_argument('--reps', type=int, default=4)
    ap.add_argument('--config', default='cpu-demo')
    args = ap.parse_args()
    train = os.path.abspath(args.train)
    os.environ.update(OMPI_ALLOW_RUN_AS_ROOT='1', OMPI_ALLOW_RUN_AS_ROOT_CONFIRM='1')
    workdir, handle = workdir_with_data(train, prefix='scaledesk-bench-stopcheck-')
    with handle:
        print(f'{args.config}, ddp, mpi backend, 1 thread per rank, 3 epochs (epoch 1 left out), {args.reps} pairs per rank count, '
              'each pair run back to back')
        print('| ranks | every step: epochs s | outside its steps | default: epochs s | outside its steps | '
              'epoch time, every step / default |')
        print('|---|---|---|---|---|---|')
        for ranks in (2, 4):
            ratios, outside_every, outside_default = [], [], []
            for rep in range(args.reps):
                every = run(train, workdir, f'every-{ranks}-{rep}', ranks, args.config, 0)
                default = run(train, workdir, f'default-{ranks}-{rep}', ranks, args.config, 1)
                ratios.append(every[0] / default[0])
                outside_every.append(every[0] / every[1] - 1)
                outside_default.append(default[0] / default[1] - 1)
                print(f'| {ranks} | {every[0]:.3f} | {100 * outside_every[-1]:+.1f} % | {default[0]:.3f} | '
                      f'{100 * outside_default[-1]:+.1f} % | {ratios[-1]:.3f} |', flush=True)
            print(f'| {ranks} | | median {100 * statistics.median(outside_every):+.1f} % | | '
                  f'median {100 * statistics.median(outside_default):+.1f} % | median {statistics.median(ratios):.3f} |', flush=True)


if __name__ == '__main__':
    main()
