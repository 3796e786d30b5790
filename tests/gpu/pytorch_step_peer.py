#!/usr/bin/env python3
"""The PyTorch eager peer of `scaledesk-train bench-step`: the same U-Net (tests/bench/trainer/unet_model.py,
116,977,029 parameters at base 64), the same loss (L1 on the float output), Adam (fused on a GPU, as
the trainer's), autocast by --amp (fp16 with torch's GradScaler, bf16 without), cuDNN benchmark mode
and TF32 as the trainer sets them, on one fixed batch that stays on the device, the loss read on the
host every step as the trainer does. Prints one JSON line: {"impl": "pytorch", "samples_per_s", ...}.

Usage: pytorch_step_peer.py [--device cuda] [--batch 16] [--data_size 64] [--base_channels 64]
                            [--amp none|fp16|bf16] [--steps 20] [--warmup 5] [--channels_last] [--threads N]"""
import argparse
import json
import os
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'bench', 'trainer'))
from unet_model import UNet  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--device', default='cuda')
    ap.add_argument('--batch', type=int, default=16)
    ap.add_argument('--data_size', type=int, default=64)
    ap.add_argument('--base_channels', type=int, default=64)
    ap.add_argument('--levels', type=int, choices=(5, 6), default=6)
    ap.add_argument('--out_channels', type=int, default=5)
    ap.add_argument('--amp', choices=('none', 'fp16', 'bf16'), default='none')
    ap.add_argument('--steps', type=int, default=20)
    ap.add_argument('--warmup', type=int, default=5)
    ap.add_argument('--channels_last', action='store_true', help='model and batch in channels_last_3d')
    ap.add_argument('--threads', type=int, default=0)
    ap.add_argument('--seed', type=int, default=1)
    args = ap.parse_args()
    if args.steps < 1 or args.warmup < 0 or args.batch < 1:
        ap.error('--steps and --batch must be at least 1, --warmup at least 0')
    if args.data_size % (1 << args.levels):
        ap.error(f'--data_size {args.data_size} must be divisible by 2^{args.levels}')
    device = torch.device(args.device)
    if device.type == 'cuda' and not torch.cuda.is_available():
        sys.exit('pytorch_step_peer: --device cuda, but torch sees no GPU')
    if args.threads:
        torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    torch.backends.cudnn.benchmark = True
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    fmt = torch.channels_last_3d if args.channels_last else torch.contiguous_format
    model = UNet(args.base_channels, args.levels == 6, args.out_channels).to(device, memory_format=fmt)
    model.train()
    fused = {'fused': True} if device.type == 'cuda' else {}
    optimizer = torch.optim.Adam(model.parameters(), lr=2e-4, betas=(0.9, 0.999), eps=1e-8, **fused)
    scaler = torch.amp.GradScaler(device.type, enabled=args.amp == 'fp16')
    dtype = {'fp16': torch.float16, 'bf16': torch.bfloat16}.get(args.amp, torch.float32)
    n, c = args.batch, args.data_size
    inp = (torch.randn(n, 4, c, c, c, device=device) * 0.1).contiguous(memory_format=fmt)
    tar = torch.tanh(torch.randn(n, args.out_channels, c, c, c, device=device)).contiguous(memory_format=fmt)
    times, losses = [], []
    for i in range(args.warmup + args.steps):
        if i == args.warmup:
            start = time.perf_counter()
        t0 = time.perf_counter()
        optimizer.zero_grad(set_to_none=False)
        with torch.autocast(device.type, dtype=dtype, enabled=args.amp != 'none'):
            out = model(inp)
        loss = F.l1_loss(out.float(), tar)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        losses.append(loss.item())
        times.append(time.perf_counter() - t0)
    seconds = time.perf_counter() - start
    timed = sorted(times[args.warmup:])
    peak = torch.cuda.max_memory_allocated(device) / 2**20 if device.type == 'cuda' else None
    print(json.dumps({'impl': 'pytorch', 'torch': torch.__version__, 'cuda': torch.version.cuda,
                      'device': str(device), 'gpu_name': torch.cuda.get_device_name(device) if device.type == 'cuda' else '',
                      'parameters': sum(p.numel() for p in model.parameters()), 'local_batch': n, 'data_size': c,
                      'amp_mode': args.amp, 'channels_last': args.channels_last, 'threads': torch.get_num_threads(),
                      'warmup': args.warmup, 'steps': args.steps, 'seconds': seconds, 'samples_per_s': args.steps * n / seconds,
                      'step_s_median': timed[len(timed) // 2], 'step_s_min': timed[0], 'loss_first': losses[0],
                      'loss_last': losses[-1], 'peak_mem_mib': peak}))


if __name__ == '__main__':
    main()
