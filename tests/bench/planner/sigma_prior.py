#!/usr/bin/python3
"""The planner's assumed model form (docs/planner.md, "The assumed model form"): the root mean square
log error of the 1 -> 2-rank predictions the planner makes from measured workspaces.

A plan of runs at one size has no size to hold out, so its model-form σ is assumed
(kAssumedModelSigma, backend/analysis/planparts.h). This prints where that number comes from: for
each workspace made by coverage.py (a folder of per-config workspaces with sweep `cov`) or by
heldout_check.py (sweeps `held-base` and `held-2r`), the current planner predicts the 2-rank points
from the 1-rank runs and the calibration alone (`scaledesk plan-check`, `scaledesk plan`), and each
prediction is set beside the measured epoch. Nothing is measured here: the workspaces' runs and
timings are read as they are, so the planner under test is the one given.

Usage: sigma_prior.py --scaledesk BUILD/gui/scaledesk [--exclude WS:CONFIG:STRATEGY ...] WORKSPACE..."""
import argparse
import csv
import math
import os
import subprocess
import sys
import tempfile


def coverage_points(sd, ws, tmp):
    for config in sorted(os.listdir(ws)):
        out = os.path.join(tmp, f'{os.path.basename(ws)}-{config}')
        subprocess.run([sd, '--workspace', os.path.join(ws, config), 'plan-check', '--sweep', 'cov', '--out', out],
                       check=True, capture_output=True)
        with open(os.path.join(out, 'check.csv')) as f:
            for r in csv.DictReader(f):
                if r['predicted_epoch_s'] and r['fitted_on_ranks'] == '1' and r['ranks'] == '2':
                    yield config, r['strategy'], float(r['predicted_epoch_s']), float(r['measured_epoch_s'])


def heldout_points(sd, ws, tmp):
    out = os.path.join(tmp, os.path.basename(ws))
    subprocess.run([sd, '--workspace', ws, 'plan', '--sweep', 'held-base', '--nodes', '1', '--ranks-per-node', '2',
                    '--strategies', 'ddp,fused', '--out', out, '--format', 'csv'], check=True, capture_output=True)
    with open(os.path.join(out, 'plan.csv')) as f:
        plan = {r['strategy']: float(r['epoch_s']) for r in csv.DictReader(f) if r['epoch_s']}
    with open(os.path.join(ws, 'held-report', 'runs.csv')) as f:
        for r in csv.DictReader(f):
            if r['strategy'] in plan:
                yield 'held-out', r['strategy'], plan[r['strategy']], float(r['epoch_s'])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--scaledesk', required=True)
    ap.add_argument('--exclude', action='append', default=[], help='WORKSPACE:CONFIG:STRATEGY to leave out (say why in the docs)')
    ap.add_argument('workspaces', nargs='+')
    args = ap.parse_args()
    sd = os.path.abspath(args.scaledesk)
    errors = []
    print('| workspace | config | strategy | predicted s | measured s | error | log error |')
    print('|---|---|---|---|---|---|---|')
    with tempfile.TemporaryDirectory() as tmp:
        for ws in args.workspaces:
            if not os.path.isdir(ws):
                sys.exit(f'{ws}: not a folder')
            held = os.path.isdir(os.path.join(ws, 'held-report'))
            for config, strategy, predicted, measured in (heldout_points if held else coverage_points)(sd, ws, tmp):
                e = math.log(predicted / measured)
                left = f'{ws}:{config}:{strategy}' in args.exclude
                print(f'| {ws} | {config} | {strategy} | {predicted:.3f} | {measured:.3f} | {100 * (predicted / measured - 1):+.1f} % | '
                      f'{e:+.3f}{" (left out)" if left else ""} |')
                if not left:
                    errors.append(e)
    if not errors:
        sys.exit('no 2-rank point predicted from 1-rank runs')
    rms = math.sqrt(sum(e * e for e in errors) / len(errors))
    print(f'{len(errors)} predictions: root mean square log error {rms:.3f}, mean log error {sum(errors) / len(errors):+.3f}, '
          f'largest |log error| {max(abs(e) for e in errors):.3f}')


if __name__ == '__main__':
    main()
