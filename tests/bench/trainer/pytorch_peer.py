#!/usr/bin/python3
"""The Python PyTorch peer of scaledesk-train for the benchmark: the same U-Net, loss, Adam,
LR schedule and HDF5 crop pipeline as the NERSC train.py (lowmem RandomCropDataset read by a
DataLoader with worker processes), in fp32. Prints one JSON line with its step times.

Run with Debian's python3 (python3-torch, python3-h5py, python3-yaml)."""
import argparse
import json
import math
import time

import h5py
import numpy as np
import torch
import torch.nn.functional as F
import yaml

from unet_model import UNet

# RandomRotator table (NERSC utils/data_loader.py): permutation of the spatial axes, then flips.
ROTATIONS = [
    ((0, 1, 2), (0, 1)), ((0, 1, 2), (0, 2)), ((0, 1, 2), (1, 2)),
    ((1, 0, 2), (0,)), ((1, 0, 2), (0, 2)), ((1, 0, 2), (1,)), ((1, 0, 2), (1, 2)),
    ((2, 1, 0), (0,)), ((2, 1, 0), (0, 1)), ((2, 1, 0), (2,)), ((2, 1, 0), (1, 2)),
    ((0, 2, 1), (1,)), ((0, 2, 1), (0, 1)), ((0, 2, 1), (2,)), ((0, 2, 1), (0, 2)),
    ((1, 2, 0), (0, 1)), ((1, 2, 0), (1, 2)), ((1, 2, 0), (0, 2)), ((1, 2, 0), (0, 1, 2)),
    ((2, 0, 1), (0, 1)), ((2, 0, 1), (0, 2)), ((2, 0, 1), (1, 2)), ((2, 0, 1), (0, 1, 2)),
    ((0, 1, 2), ()),
]


def rotate(sample, r):
    perm, flips = ROTATIONS[r]
    out = np.transpose(sample, (0, 1 + perm[0], 1 + perm[1], 1 + perm[2]))
    if flips:
        out = np.flip(out, axis=tuple(1 + f for f in flips))
    return np.ascontiguousarray(out)


class RandomCropDataset(torch.utils.data.Dataset):
    """lowmem: each worker opens the file lazily and reads two hyperslabs per sample."""

    def __init__(self, path, length, box, crop):
        self.path, self.length, self.box, self.crop = path, length, box, crop
        self.file = None
        self.inp = np.zeros((4, crop, crop, crop), dtype=np.float32)
        self.tar = np.zeros((5, crop, crop, crop), dtype=np.float32)

    def __len__(self):
        return self.length

    def __getitem__(self, idx):
        if self.file is None:
            self.file = h5py.File(self.path, 'r')
            self.nbody, self.hydro = self.file['Nbody'], self.file['Hydro']
        c = self.crop
        x, y, z = np.random.randint(0, self.box - c, size=3)
        self.nbody.read_direct(self.inp, np.s_[0:4, x:x + c, y:y + c, z:z + c], np.s_[0:4, 0:c, 0:c, 0:c])
        self.hydro.read_direct(self.tar, np.s_[0:5, x:x + c, y:y + c, z:z + c], np.s_[0:5, 0:c, 0:c, 0:c])
        r = np.random.randint(0, 24)
        return torch.as_tensor(rotate(self.inp, r)), torch.as_tensor(rotate(self.tar, r))


def lr_at(it, p, tot_steps, global_bs):
    ratio = global_bs / p['base_batch_size']
    s = p['lr_schedule']
    init = {'none': 1.0, 'linear': ratio, 'sqrt': math.sqrt(ratio)}[s['scaling']] * s['start_lr']
    if global_bs > p['base_batch_size'] and s['scaling'] != 'none':
        if it < s['warmup_steps']:
            return it / s['warmup_steps'] * init
        return s['end_lr'] + 0.5 * (init - s['end_lr']) * (1 + math.cos(math.pi * (it - s['warmup_steps']) / tot_steps))
    return s['end_lr'] + 0.5 * (init - s['end_lr']) * (1 + math.cos(math.pi * it / tot_steps))


def merged(config_file, name):
    # PyYAML resolves anchors and `<<:` merge keys itself.
    with open(config_file) as f:
        return yaml.safe_load(f)[name]


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument('--yaml_config', required=True)
    ap.add_argument('--config', default='cpu-bench')
    ap.add_argument('--steps', type=int, default=32)
    ap.add_argument('--threads', type=int, required=True)
    ap.add_argument('--seed', type=int, default=1)
    args = ap.parse_args()
    p = merged(args.yaml_config, args.config)
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    bs = p['global_batch_size']
    crop = p['data_size']
    dataset = RandomCropDataset(p['train_path'], args.steps * bs, p['box_size'][0], crop)
    workers = p['num_data_workers']
    loader = torch.utils.data.DataLoader(dataset, batch_size=bs, num_workers=workers, persistent_workers=workers > 0,
                                         worker_init_fn=lambda wid: np.random.seed((torch.initial_seed() + wid) % (2**32 - 1)))
    model = UNet(p.get('base_channels', 64), p['full_scale'], p['N_out_channels'])
    model.train()
    optimizer = torch.optim.Adam(model.parameters(), lr=p['lr_schedule']['start_lr'])
    tot_steps = p['num_epochs'] * (p['Nsamples'] // bs)
    ends, data_waits, losses = [], [], []
    it = 0
    t_prev = time.perf_counter()
    for inp, tar in loader:
        t_data = time.perf_counter()
        it += 1
        for g in optimizer.param_groups:
            g['lr'] = lr_at(it, p, tot_steps, bs)
        optimizer.zero_grad()
        loss = F.l1_loss(model(inp), tar)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        t_end = time.perf_counter()
        data_waits.append(t_data - t_prev)
        ends.append(t_end)
        t_prev = t_end
    print(json.dumps({'impl': 'pytorch', 'torch': torch.__version__, 'threads': torch.get_num_threads(),
                      'workers': workers, 'batch': bs, 'step_ends': ends, 'data_waits': data_waits,
                      'first_loss': losses[0], 'last_loss': losses[-1]}))


if __name__ == '__main__':
    main()
