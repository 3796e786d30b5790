"""A small, real DDP training script: the user's own code that ScaleDesk's command-run tests launch.

torch.distributed over env:// (gloo), DistributedDataParallel over a few layers, random data from a
fixed seed. It logs through scaledesk_metrics (which ScaleDesk puts beside the run) and prints the
NERSC trainer's epoch lines, as a script of the tutorial would.

    python3 train_ddp.py [--epochs N] [--steps N] [--batch N] [--strategy NAME] [--print-argv]
                         [--fail-at-epoch N] [--sleep S] [--exit-code N] [WORD ...]
"""

import argparse
import json
import logging
import os
import socket
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn

import scaledesk_metrics as sd


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--steps", type=int, default=8, help="steps per epoch")
    parser.add_argument("--batch", type=int, default=8, help="per-rank batch")
    parser.add_argument("--strategy", default="ddp")
    parser.add_argument("--print-argv", action="store_true", help="print this script's argv as JSON and train on")
    parser.add_argument("--fail-at-epoch", type=int, default=0, help="raise an error at the start of this epoch")
    parser.add_argument("--sleep", type=float, default=0.0, help="seconds to sleep per step (a slower run)")
    parser.add_argument("--no-parameters", action="store_true", help="do not tell scaledesk_metrics the parameter count (the planner's missing input)")
    parser.add_argument("--print-steps", action="store_true", help="print 'step N loss X' per step (rank 0), for output patterns")
    parser.add_argument("--exit-code", type=int, default=0, help="leave with sys.exit(N) after training")
    parser.add_argument("extra", nargs="*", help="words that are only printed (with --print-argv)")
    args = parser.parse_args()

    rank = int(os.environ["RANK"])
    world = int(os.environ["WORLD_SIZE"])
    logging.basicConfig(format="%(asctime)s - root - %(levelname)s - %(message)s", level=logging.INFO)
    log = logging.getLogger("root") if rank == 0 else logging.getLogger("quiet")
    if rank != 0:
        log.setLevel(logging.WARNING)
    if args.print_argv and rank == 0:
        print("ARGV " + json.dumps(sys.argv[1:], ensure_ascii=False), flush=True)

    if world > 1:
        dist.init_process_group("gloo", init_method="env://")
    torch.manual_seed(1234)
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 1))
    if world > 1:
        model = nn.parallel.DistributedDataParallel(model)
    optimiser = torch.optim.SGD(model.parameters(), lr=0.05)
    # Where each rank ran (SLURM's node name: the sandbox's nodes share one host), for the tests.
    host = os.environ.get("SLURMD_NODENAME") or socket.gethostname()
    hosts = [host]
    if world > 1:
        hosts = [None] * world
        dist.all_gather_object(hosts, host)
    if args.no_parameters:
        sd.init(strategy_arg=args.strategy, rank_hosts=hosts)
    else:
        sd.init(parameters=sum(p.numel() for p in model.parameters()), dtype="float32", strategy_arg=args.strategy, rank_hosts=hosts)

    generator = torch.Generator().manual_seed(100 + rank)
    weights = torch.randn(32, 1, generator=torch.Generator().manual_seed(7))
    step = 0
    first = 1
    # A stop saved a checkpoint (rank 0, in the run folder): resume at the start of that epoch.
    if os.path.exists("checkpoint.pt"):
        saved = torch.load("checkpoint.pt")
        model.load_state_dict(saved["model"])
        optimiser.load_state_dict(saved["optimiser"])
        first, step = saved["epoch"], saved["step"]
        log.info("resumed at epoch %d, step %d", first, step)
    for epoch in range(first, args.epochs + 1):
        epoch_start_step = step
        if epoch == args.fail_at_epoch:
            raise RuntimeError("planted failure at epoch %d" % epoch)
        start = time.time()
        total = 0.0
        for _ in range(args.steps):
            x = torch.randn(args.batch, 32, generator=generator)
            y = x @ weights + 0.1 * torch.randn(args.batch, 1, generator=generator)
            loss = nn.functional.mse_loss(model(x), y)
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            step += 1
            total += loss.item()
            sd.log(step, loss=loss.item(), lr=0.05)
            if args.print_steps and rank == 0:
                print("step %d loss %.6f" % (step, loss.item()), flush=True)
            if args.sleep:
                time.sleep(args.sleep)
            if sd.stop_requested():
                if rank == 0:
                    torch.save({"model": model.state_dict(), "optimiser": optimiser.state_dict(), "epoch": epoch,
                                "step": epoch_start_step}, "checkpoint.pt")
                log.info("stop requested: checkpoint saved at epoch %d", epoch)
                sd.exit_for_requeue()
        seconds = time.time() - start
        samples = args.steps * args.batch * world
        mean = torch.tensor([total / args.steps])
        if world > 1:
            dist.all_reduce(mean)
            mean /= world
        sd.epoch(epoch, train_time=seconds, samples=samples, train_loss=mean.item(), lr=0.05)
        log.info("Time taken for epoch %d is %s sec, avg %s samples/sec", epoch, seconds, samples / seconds)
        log.info("  Avg train loss=%f", mean.item())
    if world > 1:
        dist.destroy_process_group()
    if args.exit_code:
        sys.exit(args.exit_code)


if __name__ == "__main__":
    main()
