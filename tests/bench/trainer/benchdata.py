"""The folder the CPU benchmarks run in: the given one, or a temporary one, with the generated
HDF5 data the CPU configs read (data/train.h5, data/valid.h5, made by scaledesk-train make-data)."""
import os
import subprocess
import tempfile


def workdir_with_data(train, workdir=None, prefix='scaledesk-bench-'):
    """Returns (folder, handle): keep the handle while the folder is used (a temporary one goes with it)."""
    handle = None
    if not workdir:
        handle = tempfile.TemporaryDirectory(prefix=prefix)
        workdir = handle.name
    if not os.path.exists(os.path.join(workdir, 'data', 'train.h5')):
        subprocess.run([train, 'make-data', '--out', 'data', '--box', '128', '--val-box', '96'], cwd=workdir, check=True,
                       stdout=subprocess.DEVNULL)
    return workdir, handle
