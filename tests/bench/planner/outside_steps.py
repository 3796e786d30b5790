#!/usr/bin/python3
"""How much of each run's training epoch its step records leave out (docs/planner.md, "What the step
records leave out"): for every run of the given workspaces, the epochs' training time (epochs.csv
train_s) against the sum of its steps' step_s (metrics.jsonl), the first --warmup epochs left out.

The planner predicts an epoch as steps × the step it models from the step records, so what lies
between the steps (rank 0's step record, the stop-request allreduce every --stop_check_s seconds
of steps, after every step before that option, the epoch's closing barrier) is missing from every
prediction. Prints one row per run and the median by rank count.

Usage: outside_steps.py [--warmup 1] WORKSPACE [WORKSPACE ...]"""
import argparse
import csv
import glob
import json
import os
import statistics


def outside_share(run_dir, warmup):
    steps = 0.0
    with open(os.path.join(run_dir, 'metrics.jsonl')) as f:
        for line in f:
            r = json.loads(line)
            if r.get('kind') == 'step' and r.get('epoch', 0) > warmup:
                steps += r.get('step_s', 0.0)
    with open(os.path.join(run_dir, 'epochs.csv')) as f:
        epochs = sum(float(r['train_s']) for r in csv.DictReader(f) if int(r['epoch']) > warmup and r['train_s'])
    return epochs, steps


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--warmup', type=int, default=1)
    ap.add_argument('workspaces', nargs='+')
    args = ap.parse_args()
    by_ranks = {}
    seen = set()
    print('| run | ranks | nodes | epochs s | steps s | outside the steps |')
    print('|---|---|---|---|---|---|')
    for ws in args.workspaces:
        for run_dir in sorted(set(glob.glob(os.path.join(ws, '**', 'runs', '*'), recursive=True)), key=lambda p: ('/local/runs/' in p, p)):
            if not (os.path.isfile(os.path.join(run_dir, 'metrics.jsonl')) and os.path.isfile(os.path.join(run_dir, 'epochs.csv'))):
                continue
            with open(os.path.join(run_dir, 'manifest.json')) as f:
                m = json.load(f)
            # The local profile keeps each run twice: its job folder and the workspace's mirror.
            key = (m.get('run_id'), m.get('start_utc'))
            if key in seen:
                continue
            seen.add(key)
            epochs, steps = outside_share(run_dir, args.warmup)
            if steps <= 0:
                continue
            share = epochs / steps - 1
            ranks = m.get('world_size', 1)
            by_ranks.setdefault(ranks, []).append(share)
            name = os.path.join(os.path.basename(ws.rstrip('/')), os.path.relpath(run_dir, ws))
            print(f'| {name} | {ranks} | {m.get("nodes", 1)} | {epochs:.3f} | {steps:.3f} | {100 * share:+.1f} % |')
    for ranks in sorted(by_ranks):
        s = by_ranks[ranks]
        print(f'{ranks} rank(s): median {100 * statistics.median(s):+.1f} % over {len(s)} run(s) '
              f'({100 * min(s):+.1f} % to {100 * max(s):+.1f} %)')


if __name__ == '__main__':
    main()
