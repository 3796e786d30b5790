#!/usr/bin/python3
"""The planner's held-out check (issue 36), on a fresh workspace and the `local` profile:

 1. one 1-rank run of a config the model was never developed on (heldout.yaml: heldout-28);
 2. `scaledesk calibrate --config` of it at 2 ranks (the collectives at the grid and at the sizes
    each strategy sends with that config, and its own step as the compute);
 3. `scaledesk plan` of ddp and fused at 2 ranks, from those two only;
 4. then two measured 2-rank runs of each strategy, and the prediction against each.

Prints the table (prediction, its range, each run, the error) and whether each run is within 10 %.
Every run uses 1 thread per rank, local batch 1 (weak scaling), 4 epochs, the first left out.

heldout.yaml holds one config per round of checks, each new to the model when its checks were made:
heldout-28 (2026-12-06/07, checks 1-7), heldout-22 (2026-12-07 afternoon, from a fresh clone),
heldout-18 (2026-12-07 evening, from a fresh clone, after --stop_check_s).

Usage: heldout_check.py --scaledesk BUILD/gui/scaledesk --workspace DIR [--config NAME] [--sizes GRID]"""
import argparse
import csv
import io
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CONFIG_FILE = os.path.join(HERE, 'heldout.yaml')
TRAIN_ARGS = ['--', '--threads', '1', '--num_epochs', '4', '--local_batch_size', '1']


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--scaledesk', required=True)
    ap.add_argument('--workspace', required=True, help='a folder that does not exist yet')
    ap.add_argument('--config', default='heldout-28', help='a config of heldout.yaml (default heldout-28)')
    ap.add_argument('--sizes', default='64K,1M,4M,16M,25M,32M,48M,64M,96M', help="calibrate's grid")
    args = ap.parse_args()
    if os.path.exists(args.workspace):
        sys.exit(f'{args.workspace}: exists; the check starts from a fresh workspace')
    sd = [os.path.abspath(args.scaledesk), '--workspace', args.workspace]

    def run(*a, out=False):
        print('$ scaledesk ' + ' '.join(a), file=sys.stderr, flush=True)
        r = subprocess.run(sd + list(a), capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(f'scaledesk {a[0]} failed (exit {r.returncode}): {r.stderr.strip() or r.stdout.strip()}')
        return r.stdout if out else None

    common = ['--config-file', CONFIG_FILE, '--config', args.config]
    run('submit', *common, '--sweep', 'held-base', '--ranks-per-node', '1', '--make-data', '--wait', '--timeout', '1800', *TRAIN_ARGS)
    run('calibrate', '--nodes', '1', '--ranks-per-node', '2', '--sizes', args.sizes, *common, '--local-batch', '1', '--make-data', '--name', 'held-cal',
        '--wait', '--timeout', '1800')
    plan_dir = os.path.join(args.workspace, 'held-plan')
    run('plan', '--sweep', 'held-base', '--nodes', '1', '--ranks-per-node', '2', '--strategies', 'ddp,fused', '--out', plan_dir,
        '--format', 'csv,md')
    with open(os.path.join(plan_dir, 'plan.csv')) as f:
        plan = {r['strategy']: r for r in csv.DictReader(f)}
    run('submit', *common, '--sweep', 'held-2r', '--strategies', 'ddp,fused', '--ranks-per-node', '2', '--repetitions', '2',
        '--make-data', '--wait', '--timeout', '3600', *TRAIN_ARGS)
    report = run('report', '--sweep', 'held-2r', '--format', 'csv', '--out', os.path.join(args.workspace, 'held-report'), out=True)
    with open(os.path.join(args.workspace, 'held-report', 'runs.csv')) as f:
        runs = list(csv.DictReader(f))
    print(f'config {args.config} ({CONFIG_FILE}), 2 ranks on one node, from a 1-rank run and `scaledesk calibrate --config`')
    print('| strategy | predicted epoch s | range | run | measured epoch s | error | within 10 % | in range |')
    print('|---|---|---|---|---|---|---|---|')
    within = 0
    total = 0
    for strategy in ('ddp', 'fused'):
        p = plan[strategy]
        if not p['epoch_s']:
            print(f'| {strategy} | not measured: {p["not_measured"]} | | | | | | |')
            continue
        pred, lo, hi = float(p['epoch_s']), float(p['epoch_low_s']), float(p['epoch_high_s'])
        for r in sorted((r for r in runs if r['strategy'] == strategy), key=lambda r: r['run_id']):
            m = float(r['epoch_s'])
            err = pred / m - 1
            ok = abs(err) <= 0.10
            within += ok
            total += 1
            note = f' ({p["range_notes"]})' if p.get('range_notes') else ''
            print(f'| {strategy} | {pred:.3f} | {lo:.3f}–{hi:.3f}{note} | {r["run_id"]} | {m:.3f} | {100 * err:+.1f} % | '
                  f'{"yes" if ok else "no"} | {"yes" if lo <= m <= hi else "no"} |')
    print(f'{within} of {total} runs within 10 %')
    del report


if __name__ == '__main__':
    main()
