#!/usr/bin/env python3
"""Writes an event file into a folder the way a trainer does: a real one (the NERSC example's,
written by PyTorch's SummaryWriter) appended in pieces cut at arbitrary bytes, with pauses, so
that a live reader sees records arrive, and some cut in the middle.

    python3 grow_events.py SOURCE_EVENT_FILE OUT_FOLDER [--pieces N] [--pause S]
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
    args = parser.parse_args()
    with open(args.source, "rb") as f:
        data = f.read()
    os.makedirs(args.out, exist_ok=True)
    target = os.path.join(args.out, os.path.basename(args.source))
    # Cuts at odd offsets (not record boundaries), the same for every run.
    cuts = sorted({len(data) * i // args.pieces + 13 * i for i in range(1, args.pieces)} | {len(data)})
    start = 0
    with open(target, "ab") as out:
        for cut in cuts:
            cut = min(cut, len(data))
            out.write(data[start:cut])
            out.flush()
            print("wrote %d of %d bytes" % (cut, len(data)), flush=True)
            start = cut
            time.sleep(args.pause)


if __name__ == "__main__":
    main()
