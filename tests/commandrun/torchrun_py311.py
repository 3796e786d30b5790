#!/usr/bin/env python3
"""torchrun for Debian 12's python3-torch (1.13) under its Python 3.11, for the tests.

There every torchrun fails at once ("AttributeError: 'NoneType' object has no attribute 'get'"):
Std.from_str("0"), the default of --redirects and --tee, returns None because Python 3.11 no
longer yields a Flag's zero member when iterating it. PyTorch 2.0 fixed it. This runs
torch.distributed.run as `torchrun` does, with that one function fixed; on a PyTorch without the
bug it changes nothing.
"""
import sys

from torch.distributed.elastic.multiprocessing import api
from torch.distributed.run import main

_from_str = api.Std.from_str


def _fixed(vm):
    std = _from_str(vm)
    if std is None:
        return api.Std.NONE
    if isinstance(std, dict):
        return {k: api.Std.NONE if v is None else v for k, v in std.items()}
    return std


api.Std.from_str = staticmethod(_fixed)

if __name__ == "__main__":
    sys.exit(main())
