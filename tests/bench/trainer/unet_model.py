"""The NERSC cosmology 3D U-Net in PyTorch (NERSC/ml-pm-training-2022 models/unet.py), as the
Python peers of scaledesk-train build it: the CPU benchmark's pytorch_peer.py and the GPU check's
tests/gpu/pytorch_step_peer.py. Needs torch only."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class UNet(nn.Module):
    def __init__(self, base, full_scale, out_channels):
        super().__init__()
        c = base
        down_out = [c, 2 * c, 4 * c, 8 * c, 8 * c, 8 * c]
        levels = 6 if full_scale else 5
        self.down = nn.ModuleList()
        cin = 4
        for i in range(levels):
            self.down.append(nn.Conv3d(cin, down_out[i], 4, 2, 1))
            cin = down_out[i]
        self.up = nn.ModuleList()
        for k in range(levels, 1, -1):
            cin = down_out[k - 1] if k == levels else 2 * down_out[k - 1]
            self.up.append(nn.ConvTranspose3d(cin, down_out[k - 2], 4, 2, 1))
        self.last = nn.ConvTranspose3d(2 * c, out_channels, 4, 2, 1)
        for m in self.modules():
            if 'Conv' in m.__class__.__name__:
                nn.init.normal_(m.weight, 0.0, 0.02)
                nn.init.constant_(m.bias, 0.0)

    def forward(self, x):
        skips = []
        for d in self.down:
            x = F.leaky_relu(d(x), 0.01, inplace=True)
            skips.append(x)
        for i, u in enumerate(self.up):
            x = F.relu(u(x), inplace=True)
            x = torch.cat([x, skips[len(self.down) - 2 - i]], 1)
        return torch.tanh(self.last(x))
