#!/usr/bin/env python3
"""The planner's coverage benchmark (docs/planner.md, "The coverage benchmark").

For each config, in a fresh workspace of its own on the `local` profile (a profile's calibrations
are shared by its sweeps, and the compute contention read is the latest config's):
 1. one run at each rank count of --ranks (one node) for each strategy, one after another (never
    two at once: they would share the cores), weak scaling at --local-batch per rank, 1 thread each;
 2. `scaledesk calibrate --config` at each rank count above 1 (the collectives at the grid and at the
    sizes the strategies send, and the config's own step on its loader's batches as the compute);
 3. `scaledesk plan-check` of the sweep: each size predicted from the runs at half its ranks or
    fewer on one node, with the plan's nominal 90 % range, beside what the size measured.
Prints every point and, over all of them, the coverage of the ranges and their median relative
half-width: the planner issue's bar is coverage >= 85 % and median half-width <= 25 %.

Across nodes (--profile-file, --two-node-ranks): every run and calibration goes to that profile
(the two-slurmd sandbox: `SCALEDESK_SANDBOX_NODES=2 tests/sandbox/slurm-sandbox.sh start`,
`tests/sandbox/ssh-sandbox.sh start`, SCALEDESK_SSH_CONFIG set to the SSH sandbox's ssh_config, and a
profile with `mpi: none`, trained with `--train-args=--backend,gloo`); runs on two nodes at each
of --two-node-ranks ranks per node are added, calibrate runs at 2 nodes with those ranks per node
too, and plan-check predicts them from the one-node runs at half their ranks or fewer.

Usage: coverage.py --scaledesk BUILD/gui/scaledesk --workspace DIR [--configs cpu-demo,cpu-bench,cpu-short]
                   [--ranks 1,2,4] [--strategies ddp,fused] [--epochs 4] [--local-batch 2]
                   [--profile-file YAML --two-node-ranks 1,2 --train-args=--backend,gloo]"""
import argparse
import csv
import os
import re
import statistics
import subprocess
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--scaledesk', required=True)
    ap.add_argument('--workspace', required=True, help='a folder that does not exist yet (one workspace per config inside)')
    ap.add_argument('--configs', default='cpu-demo,cpu-bench,cpu-short')
    ap.add_argument('--ranks', default='1,2,4')
    ap.add_argument('--strategies', default='ddp,fused')
    ap.add_argument('--epochs', default='4')
    ap.add_argument('--local-batch', default='2')
    ap.add_argument('--profile-file', help='an ssh+slurm profile YAML to run everything on (default: the local profile)')
    ap.add_argument('--two-node-ranks', default='', help='with --profile-file: ranks per node of the runs on two nodes')
    ap.add_argument('--train-args', default='', help='extra scaledesk-train flags, comma-separated (e.g. --backend,gloo)')
    args = ap.parse_args()
    if os.path.exists(args.workspace):
        sys.exit(f'{args.workspace}: exists; the benchmark starts from fresh workspaces')
    if args.two_node_ranks and not args.profile_file:
        sys.exit('--two-node-ranks needs --profile-file (the local profile is one node)')
    ranks = [int(r) for r in args.ranks.split(',')]
    layouts = [(1, n) for n in ranks] + [(2, int(n)) for n in args.two_node_ranks.split(',') if n]
    extra = [a for a in args.train_args.split(',') if a]
    train = ['--', '--threads', '1', '--num_epochs', args.epochs, '--local_batch_size', args.local_batch, *extra]
    profile = os.path.splitext(os.path.basename(args.profile_file))[0] if args.profile_file else 'local'
    points = []
    for config in args.configs.split(','):
        ws = os.path.join(args.workspace, config)
        sd = [os.path.abspath(args.scaledesk), '--workspace', ws]

        def run(*a):
            print('$ scaledesk ' + ' '.join(a), file=sys.stderr, flush=True)
            subprocess.run(sd + list(a), check=True, capture_output=True, text=True)

        # The workspaces share the profile's remote root, where a run's folder is named by its id
        # (sweep, strategy, layout): each config's sweep and calibrations carry its name and this
        # benchmark's workspace, or a second benchmark on the same profile would submit into the
        # first one's run folders (whose finished checkpoints the trainer's --resume would take).
        tag = re.sub(r'[^A-Za-z0-9]+', '-', os.path.basename(os.path.normpath(args.workspace))).strip('-') or 'ws'
        sweep, cal = (f'cov-{tag}-{config}', f'cal-{tag}-{config}') if args.profile_file else ('cov', 'cal')
        if args.profile_file:
            run('profiles', 'add', os.path.abspath(args.profile_file))
        for nodes, n in layouts:
            for s in args.strategies.split(','):
                run('submit', '--profile', profile, '--config', config, '--sweep', sweep, '--strategies', s, '--nodes', str(nodes),
                    '--ranks-per-node', str(n), '--make-data', '--wait', '--timeout', '3600', *train)
        for nodes, n in layouts:
            if nodes * n > 1:
                run('calibrate', '--profile', profile, '--nodes', str(nodes), '--ranks-per-node', str(n), '--config', config,
                    '--local-batch', args.local_batch, '--make-data', '--name', f'{cal}-{nodes}x{n}', '--wait', '--timeout', '3600',
                    *(['--', *extra] if extra else []))
        out = os.path.join(ws, 'plan-check')
        run('plan-check', '--sweep', sweep, '--out', out)
        with open(os.path.join(out, 'check.csv')) as f:
            for row in csv.DictReader(f):
                row['config'] = config
                points.append(row)
    print('| config | strategy | nodes | ranks | fitted on | predicted s | range s | measured s | error | in range | half-width | '
          'outside the model |')
    print('|---|---|---|---|---|---|---|---|---|---|---|---|')
    predicted = [p for p in points if p['predicted_epoch_s']]
    for p in points:
        if not p['predicted_epoch_s']:
            print(f'| {p["config"]} | {p["strategy"]} | {p["nodes"]} | {p["ranks"]} | {p["fitted_on_ranks"]} | not predicted: {p["not_predicted"]} '
                  f'| | {float(p["measured_epoch_s"]):.3f} | | | | |')
            continue
        print(f'| {p["config"]} | {p["strategy"]} | {p["nodes"]} | {p["ranks"]} | {p["fitted_on_ranks"]} | {float(p["predicted_epoch_s"]):.3f} | '
              f'{float(p["epoch_low_s"]):.3f}–{float(p["epoch_high_s"]):.3f} | {float(p["measured_epoch_s"]):.3f} | '
              f'{100 * float(p["error"]):+.1f} % | {p["in_range"]} | {100 * float(p["relative_half_width"]):.1f} % | '
              f'{p.get("outside_model") or "–"} |')
    if not predicted:
        sys.exit('no point could be predicted')
    covered = sum(p['in_range'] == 'yes' for p in predicted)
    half = statistics.median(float(p['relative_half_width']) for p in predicted)
    err = statistics.median(abs(float(p['error'])) for p in predicted)
    print(f'coverage of the nominal 90 % ranges: {covered} of {len(predicted)} = {100 * covered / len(predicted):.0f} % (bar: >= 85 %)')
    print(f'median relative half-width: {100 * half:.1f} % (bar: <= 25 %); median |error| {100 * err:.1f} %; '
          f'{len(points) - len(predicted)} point(s) not predicted')
    flagged = [p for p in predicted if p.get('outside_model')]
    within = [p for p in predicted if abs(float(p['error'])) <= 0.10 or p.get('outside_model')]
    print(f'within 10 % or flagged as outside the model beforehand: {len(within)} of {len(predicted)} '
          f'({len(flagged)} flagged)')


if __name__ == '__main__':
    main()
