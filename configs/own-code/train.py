"""A PyTorch DDP training script, as a user has one: ScaleDesk runs it as it is.

It reads PyTorch's env:// variables (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT), which ScaleDesk
sets for every rank, and reports its steps and epochs through scaledesk_metrics, which ScaleDesk
places beside the run. Without ScaleDesk (python3 train.py) it trains one rank and writes the same
files to the current folder.
"""

import argparse
import os
import time

import torch
import torch.distributed as dist
import torch.nn as nn

import scaledesk_metrics as sd

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=3)
parser.add_argument("--steps", type=int, default=20, help="steps per epoch")
parser.add_argument("--batch", type=int, default=16, help="per-rank batch")
parser.add_argument("--lr", type=float, default=0.05)
args = parser.parse_args()

world = int(os.environ.get("WORLD_SIZE", "1"))
rank = int(os.environ.get("RANK", "0"))
if world > 1:
    dist.init_process_group("gloo", init_method="env://")

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 1))
if world > 1:
    model = nn.parallel.DistributedDataParallel(model)
optimiser = torch.optim.SGD(model.parameters(), lr=args.lr)
sd.init(parameters=sum(p.numel() for p in model.parameters()), dtype="float32")

data = torch.Generator().manual_seed(rank)
truth = torch.randn(64, 1, generator=torch.Generator().manual_seed(42))
step = 0
for epoch in range(1, args.epochs + 1):
    start = time.time()
    for _ in range(args.steps):
        x = torch.randn(args.batch, 64, generator=data)
        loss = nn.functional.mse_loss(model(x), x @ truth)
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        step += 1
        sd.log(step, loss=loss.item(), lr=args.lr)
    seconds = time.time() - start
    samples = args.steps * args.batch * world
    sd.epoch(epoch, train_time=seconds, samples=samples, train_loss=loss.item(), lr=args.lr)
    if rank == 0:
        print(f"Time taken for epoch {epoch} is {seconds} sec, avg {samples / seconds} samples/sec", flush=True)

if world > 1:
    dist.destroy_process_group()
