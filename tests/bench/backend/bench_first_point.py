#!/usr/bin/env python3
"""How soon a run's first live point reaches the mirror: the user's own code (a PyTorch DDP
script launched with `scaledesk submit --run`, reporting through scaledesk_metrics) against the
bundled trainer (`--config cpu-tiny`), both on the local profile, measured in the same process,
alternating, so the machine's noise falls on both.

For each rep and each kind: a fresh run is submitted, then `scaledesk status RUN` polls as fast as
it returns until the run's mirrored metrics.jsonl holds a `step` record. The time from the submit's
start to that moment is the run's "first live point" (what the window shows after its next poll).

    bench_first_point.py --scaledesk build/gui/scaledesk --train build/trainer/scaledesk-train [--reps 5]

Prints each time, the medians and the ratio command / native.
"""
import argparse
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

SOURCE = Path(__file__).resolve().parents[3]


def run(cli, workspace, *args, env=None):
    return subprocess.run([cli, "--workspace", workspace, *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          env=env, text=True)


def first_point(cli, workspace, run_id, submit_args, env):
    start = time.monotonic()
    r = run(cli, workspace, "submit", "--name", run_id, *submit_args, env=env)
    if r.returncode != 0:
        raise SystemExit("submit failed: " + r.stdout)
    metrics = Path(workspace) / "runs" / run_id / "metrics.jsonl"
    while time.monotonic() - start < 300:
        run(cli, workspace, "status", run_id, env=env)
        if metrics.exists() and b'"kind":"step"' in metrics.read_bytes():
            return time.monotonic() - start
    raise SystemExit(run_id + ": no step record within 300 s")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scaledesk", required=True)
    ap.add_argument("--train", required=True, help="scaledesk-train (the native run's trainer)")
    ap.add_argument("--reps", type=int, default=5)
    args = ap.parse_args()
    cli = os.path.abspath(args.scaledesk)
    with tempfile.TemporaryDirectory() as tmp:
        workspace = os.path.join(tmp, "ws")
        env = dict(os.environ, SCALEDESK_TRAIN=os.path.abspath(args.train), SCALEDESK_SLOTS_DIR=os.path.join(tmp, "slots"))
        definition = os.path.join(tmp, "own.yaml")
        with open(definition, "w") as f:
            f.write("command: [/usr/bin/python3, '{code}/train_ddp.py', --epochs, '1', --steps, '4', --batch, '2']\n"
                    f"code: {SOURCE}/tests/commandrun\n"
                    "env: {OMP_NUM_THREADS: '1'}\n")
        # The native run's data, made once, before any timing.
        r = run(cli, workspace, "submit", "--config", "cpu-tiny", "--name", "warm", "--make-data", "--wait", env=env)
        if r.returncode != 0:
            raise SystemExit("warm-up failed: " + r.stdout)
        kinds = {
            "native": ["--config", "cpu-tiny", "--make-data", "--", "--num_epochs", "1"],
            "command": ["--run", definition],
        }
        times = {k: [] for k in kinds}
        for rep in range(args.reps):
            order = list(kinds) if rep % 2 == 0 else list(reversed(list(kinds)))
            for kind in order:
                t = first_point(cli, workspace, f"{kind}-{rep}", kinds[kind], env)
                times[kind].append(t)
                print(f"rep {rep} {kind}: first live point after {t:.2f} s", flush=True)
                run(cli, workspace, "status", "--wait", "--timeout", "300", f"{kind}-{rep}", env=env)
        native, command = statistics.median(times["native"]), statistics.median(times["command"])
        print(f"median first live point: native {native:.2f} s, command {command:.2f} s; command / native = {command / native:.2f}")


if __name__ == "__main__":
    main()
