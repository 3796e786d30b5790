#!/usr/bin/env python3
"""Writes an event file into a folder the way a trainer does: a real one (the NERSC example's,
written by PyTorch's SummaryWriter) appended in pieces cut at arbitrary bytes, with pauses, so
that a live reader sees records arrive, and some cut in the middle.

    python3 grow_events.py SOURCE_EVENT_FILE OUT_FOLDER [--pieces N] [--pause S] [--log OUT_LOG]

With --log, a log (the NERSC example's out.log) is printed too, a part of it with each piece.
"""
import argparse
import os
import time


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("source")
    parser.add_argument("out")
    parser.add_argument("--pieces", type=int, default=7)
    parser.add_argument("--pause", type=float, default=0.6)
    parser.add_argument("--log", help="a log file to print along, in as many parts")
    args = parser.parse_args()
    with open(args.source, "rb") as f:
        data = f.read()
    os.makedirs(args.out, exist_ok=True)
    target = os.path.join(args.out, os.path.basename(args.source))
    # Cuts at odd offsets (not record boundaries), the same for every run.
    cuts = sorted({len(data) * i // args.pieces + 13 * i for i in range(1, args.pieces)} | {len(data)})
    lines = []
    if args.log:
        with open(args.log, encoding="utf-8") as f:
            lines = f.read().splitlines()
    start = 0
    with open(target, "ab") as out:
        for n, cut in enumerate(cuts):
            part = lines[len(lines) * n // len(cuts):len(lines) * (n + 1) // len(cuts)]
            if part:
                print("\n".join(part), flush=True)
            cut = min(cut, len(data))
            out.write(data[start:cut])
            out.flush()
            print("wrote %d of %d bytes" % (cut, len(data)), flush=True)
            start = cut
            time.sleep(args.pause)


if __name__ == "__main__":
    main()
