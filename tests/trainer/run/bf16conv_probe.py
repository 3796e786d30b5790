#!/usr/bin/env python3
"""Shows the libtorch 1.13 oneDNN bug that makes scaledesk-train refuse bf16 on the CPU with that
libtorch (trainer/src/compat/torchcompat.h, docs/trainer.md "Mixed precision"): the weight gradient
of a bf16 Conv3d (kernel 4, stride 2, padding 1, as the U-Net's) differs from call to call on the same
inputs, with NaN in it, for small volumes. Each shape is run 5 times; freed memory is filled with NaN
between calls, which an uninitialised read then shows. Exit 1 when any shape is wrong.

Usage: /usr/bin/python3 tests/trainer/run/bf16conv_probe.py   (Debian 12's python3-torch 1.13: wrong;
       in the Debian 13 root's python3 with torch 2.6: exact)"""
import sys

import torch

torch.manual_seed(0)
torch.set_num_threads(1)
print('torch', torch.__version__, '| oneDNN on:', torch.backends.mkldnn.enabled)
wrong = 0
for ci, co, side in [(16, 32, 4), (32, 64, 4), (64, 128, 4), (16, 8, 4), (4, 8, 32), (16, 32, 8), (512, 512, 4)]:
    conv = torch.nn.Conv3d(ci, co, 4, stride=2, padding=1)
    x = torch.randn(2, ci, side, side, side)
    with torch.autocast('cpu', dtype=torch.bfloat16):
        grad_out = torch.randn_like(conv(x))
    grads = []
    for _ in range(5):
        junk = [torch.full((1 << 20,), float('nan')) for _ in range(8)]
        del junk
        with torch.autocast('cpu', dtype=torch.bfloat16):
            y = conv(x)
        y.backward(grad_out)
        grads.append(conv.weight.grad.clone())
        conv.zero_grad()
    same = all(torch.equal(grads[0], g) for g in grads)
    nan = any(torch.isnan(g).any().item() for g in grads)
    wrong += (not same) or nan
    print(f'Conv3d {ci:>3} -> {co:>3} on {side}^3: weight gradient {"the same every call" if same else "DIFFERS between calls"}'
          f'{", holds NaN" if nan else ""}')
sys.exit(1 if wrong else 0)
