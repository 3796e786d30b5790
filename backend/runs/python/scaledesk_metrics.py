"""ScaleDesk's metrics for your own training code (standard library only).

ScaleDesk puts this file in each command run's folder and that folder on PYTHONPATH, so a script
that ScaleDesk launches can write the files every ScaleDesk view reads, exactly as its own trainer
does: metrics.jsonl (live loss, learning rate, throughput), epochs.csv (the scaling report's epoch
times) and manifest.json (what ran, and whether it finished):

    import scaledesk_metrics as sd
    sd.init(parameters=sum(p.numel() for p in model.parameters()), dtype="float32")
    for epoch in range(1, epochs + 1):
        for step, batch in ...:
            sd.log(global_step, loss=loss.item(), lr=lr)
        sd.epoch(epoch, train_time=seconds, samples=samples_all_ranks, train_loss=..., val_loss=...)

Only rank 0 (the RANK variable) writes; every call is free on the other ranks. Outside ScaleDesk
(no SCALEDESK_RUN_DIR) the files go to the current folder. An uncaught exception records the run
as failed with its message; a normal exit records it as finished.

A stop (`scaledesk cancel --signal USR1`, the window's Stop, SLURM's warning before the time
limit) sends every rank the run definition's stop_signal. A script that checks for it saves its
checkpoint and leaves for a requeue, which resumes it:

        if sd.stop_requested():             # every rank calls it at the same points
            save_checkpoint()
            sd.exit_for_requeue()           # exit 75: the job is requeued, the run resumes
"""

import atexit
import datetime
import json
import math
import os
import signal
import socket
import sys
import time

__all__ = ["init", "log", "epoch", "finish", "stop_requested", "exit_for_requeue"]

REQUEUE_EXIT_CODE = 75  # EX_TEMPFAIL: what the job scripts requeue, as for scaledesk-train

_EPOCH_COLUMNS = [
    "epoch", "step", "wall_s", "train_s", "val_s", "samples_processed_global", "steps", "throughput_samples_s",
    "data_wait_s", "compute_s", "allreduce_wait_s", "max_rank_wall_s", "min_rank_wall_s", "train_loss", "val_loss",
    "lr", "t_end", "gpu_energy_wh", "gpu_util_pct",
]


class _Run:
    def __init__(self):
        self.rank = int(os.environ.get("RANK", "0") or 0)
        self.dir = os.environ.get("SCALEDESK_RUN_DIR") or os.getcwd()
        self.manifest = None
        self.metrics = None
        self.last_step = 0
        self.last_epoch = 0
        self.steps_at_epoch = 0
        self.ended = False

    def path(self, name):
        return os.path.join(self.dir, name)

    def write_manifest(self):
        tmp = self.path("manifest.json.part")
        with open(tmp, "w") as f:
            json.dump(self.manifest, f, indent=2, sort_keys=True, default=str)
            f.write("\n")
        os.replace(tmp, self.path("manifest.json"))

    def record(self, record):
        record.setdefault("t", time.time())
        self.metrics.write(json.dumps(_finite(record), sort_keys=True, separators=(",", ":")) + "\n")
        self.metrics.flush()


_run = None


def _utc_now():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def _finite(record):
    # JSON has no NaN or infinity: write them as the strings ScaleDesk reads back as such.
    out = {}
    for key, value in record.items():
        if isinstance(value, float) and not math.isfinite(value):
            value = "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
        out[key] = value
    return out


def _number(value, name):
    if hasattr(value, "item"):  # a 0-d tensor or a numpy scalar
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError("scaledesk_metrics: %s must be a number, not %r" % (name, type(value).__name__))
    return value


def _int_env(name):
    try:
        return int(os.environ.get(name, ""))
    except ValueError:
        return None


class _Stop:
    requested = False
    polled = False  # the script asked at least once: it handles stops itself


def _on_stop(signum, frame):
    if not _Stop.polled:
        # A script that never asks would not stop: the signal does what it did before.
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)
        return
    _Stop.requested = True


def _install_stop_handler():
    if "SCALEDESK_RUN_ID" not in os.environ:
        return  # not launched by ScaleDesk: leave the signals alone
    sig = getattr(signal, "SIG" + os.environ.get("SCALEDESK_STOP_SIGNAL", "USR1"), None)
    if sig is not None:
        try:
            signal.signal(sig, _on_stop)
        except ValueError:  # not the main thread
            pass


_install_stop_handler()


def stop_requested():
    """Whether a stop arrived. With torch.distributed up, whether it arrived on any rank (one small
    all-reduce), so every rank stops at the same step; call it at the same points on every rank."""
    _Stop.polled = True
    requested = _Stop.requested
    torch = sys.modules.get("torch")
    dist = getattr(torch, "distributed", None) if torch is not None else None
    if dist is not None and dist.is_available() and dist.is_initialized():
        flag = torch.tensor([1 if requested else 0])
        dist.all_reduce(flag, op=dist.ReduceOp.MAX)
        requested = bool(flag.item())
    return requested


def exit_for_requeue():
    """Records the stop (manifest status `preempted`) and exits with 75 on every rank: the job
    script requeues the job (SLURM) or the run waits for `scaledesk requeue`, and the script resumes
    from the checkpoint it saved."""
    init()
    if _run.rank == 0 and not _run.ended:
        _run.ended = True
        _run.record({"kind": "event", "event": "preempted", "step": _run.last_step, "epoch": _run.last_epoch})
        _run.manifest["status"] = "preempted"
        _run.write_manifest()
    sys.exit(REQUEUE_EXIT_CODE)


def init(parameters=None, dtype=None, **fields):
    """Starts the run's records (called by the first log() or epoch() when not called before).

    parameters: the model's parameter count and dtype its gradients are sent in, which the planner
    needs to predict other rank counts. Extra keyword fields go to manifest.json as they are.
    """
    global _run
    if _run is not None:
        return
    _run = _Run()
    if _run.rank != 0:
        return
    os.makedirs(_run.dir, exist_ok=True)
    world = _int_env("WORLD_SIZE") or 1
    nodes = _int_env("SCALEDESK_NODES") or 1
    local_batch = _int_env("SCALEDESK_LOCAL_BATCH") or None
    manifest = {
        "run_id": os.environ.get("SCALEDESK_RUN_ID", os.path.basename(os.path.abspath(_run.dir))),
        "status": "running",
        "start_utc": _utc_now(),
        "launcher": "command",
        "command": sys.argv,
        "code": os.environ.get("SCALEDESK_CODE", ""),
        "strategy": os.environ.get("SCALEDESK_VARIANT", ""),
        "world_size": world,
        "nodes": nodes,
        "ranks_per_node": _int_env("SCALEDESK_RANKS_PER_NODE") or max(1, world // nodes),
        "hostnames": [os.environ.get("SLURMD_NODENAME") or socket.gethostname()],  # rank 0's
        "nodelist": os.environ.get("SLURM_JOB_NODELIST", ""),
        "slurm_job_id": os.environ.get("SLURM_JOB_ID", ""),
        "versions": {"python": sys.version.split()[0]},
    }
    if local_batch:
        manifest["local_batch_size"] = local_batch
        manifest["global_batch_size"] = local_batch * world
    if parameters is not None:
        manifest["parameters"] = int(_number(parameters, "parameters"))
    if dtype is not None:
        manifest["gradient_dtype"] = str(dtype)
    torch = sys.modules.get("torch")
    if torch is not None:
        manifest["versions"]["torch"] = str(getattr(torch, "__version__", ""))
    manifest["environment"] = {k: v for k, v in os.environ.items() if k in _ENVIRONMENT or k.startswith(_ENVIRONMENT_PREFIXES)}
    if os.environ.get("SCALEDESK_CODE_HASH"):
        # Code the launch sent: its hash, the folder it came from, and that folder's git state as
        # the launch read it (code.diff is beside the run already); the copy here is no checkout.
        manifest["code_hash"] = os.environ["SCALEDESK_CODE_HASH"]
        manifest["code_source"] = os.environ.get("SCALEDESK_CODE_SOURCE", "")
        git = None
        if os.environ.get("SCALEDESK_CODE_COMMIT"):
            git = {"commit": os.environ["SCALEDESK_CODE_COMMIT"], "dirty": os.environ.get("SCALEDESK_CODE_DIRTY") == "1"}
            if git["dirty"]:
                git["diff"] = "code.diff"
    else:
        code = manifest["code"] or os.path.dirname(os.path.abspath(sys.argv[0] if sys.argv and sys.argv[0] else "."))
        git = _git_state(code, _run.path("code.diff"))
    if git:
        manifest["code_git"] = git
    manifest.update(fields)
    # A requeued run goes on in the same folder: its first start stays its start.
    previous = _read_manifest(_run.path("manifest.json"))
    resumed = previous.get("status") in ("preempted", "running", "failed")
    if resumed and previous.get("start_utc"):
        manifest["start_utc"] = previous["start_utc"]
    _run.manifest = manifest
    _run.write_manifest()
    _run.metrics = open(_run.path("metrics.jsonl"), "a")
    _run.record({"kind": "event", "event": "resumed" if resumed else "started", "step": 0, "epoch": 0, "world_size": world,
                 "strategy": manifest["strategy"], "pid": os.getpid(), "host": socket.gethostname()})
    new_csv = not os.path.exists(_run.path("epochs.csv")) or os.path.getsize(_run.path("epochs.csv")) == 0
    _run.epochs = open(_run.path("epochs.csv"), "a")
    if new_csv:
        _run.epochs.write(",".join(_EPOCH_COLUMNS) + "\n")
        _run.epochs.flush()
    atexit.register(_at_exit)
    # sys.exit(N) with N != 0 is a failure, though no exception reaches the hook.
    plain_exit = sys.exit

    def exit_with(code=None):
        _Exit.code = code
        plain_exit(code)

    sys.exit = exit_with
    previous_hook = sys.excepthook

    def hook(kind, value, trace):
        finish(failed="%s: %s" % (kind.__name__, value))
        previous_hook(kind, value, trace)

    sys.excepthook = hook


def log(step, **scalars):
    """One training step's scalars (loss=…, lr=…, any number): the run view's live curves."""
    init()
    if _run.rank != 0:
        return
    step = int(_number(step, "step"))
    record = {"kind": "step", "step": step, "epoch": _run.last_epoch + 1}
    for name, value in scalars.items():
        record[name] = _number(value, name)
    _run.last_step = step
    _run.record(record)


def epoch(epoch, train_time, samples, step=None, **scalars):
    """The end of an epoch: its number, the seconds it trained, the samples all ranks processed.

    These are what the scaling report reads (epoch time, throughput, speedup). Optional keywords:
    train_loss, val_loss, lr, val_time, data_wait, compute, allreduce_wait, and any other number.
    """
    init()
    if _run.rank != 0:
        return
    epoch = int(_number(epoch, "epoch"))
    train_time = float(_number(train_time, "train_time"))
    samples = _number(samples, "samples")
    step = _run.last_step if step is None else int(_number(step, "step"))
    values = {name: _number(value, name) for name, value in scalars.items()}
    now = time.time()
    val_time = values.pop("val_time", None)
    record = {"kind": "epoch", "epoch": epoch, "step": step, "epoch_s": train_time, "samples": samples,
              "samples_per_s": samples / train_time if train_time > 0 else float("nan"), "steps": step - _run.steps_at_epoch}
    if val_time is not None:
        record["val_s"] = val_time
    record.update(values)
    _run.record(record)
    row = {
        "epoch": epoch, "step": step, "train_s": train_time, "samples_processed_global": samples,
        "steps": step - _run.steps_at_epoch, "throughput_samples_s": record["samples_per_s"], "t_end": now,
        "wall_s": None if val_time is None else train_time + val_time, "val_s": val_time,
        "data_wait_s": values.get("data_wait"), "compute_s": values.get("compute"),
        "allreduce_wait_s": values.get("allreduce_wait"), "train_loss": values.get("train_loss"),
        "val_loss": values.get("val_loss"), "lr": values.get("lr"),
    }
    _run.epochs.write(",".join("" if row.get(c) is None else repr(row[c]) for c in _EPOCH_COLUMNS) + "\n")
    _run.epochs.flush()
    _run.last_epoch = epoch
    _run.steps_at_epoch = step


def finish(failed=None):
    """Records the end: finished, or failed with the reason given. Called at exit when not before."""
    if _run is None or _run.rank != 0 or _run.ended:
        return
    _run.ended = True
    status = "failed" if failed else "finished"
    event = {"kind": "event", "event": status, "step": _run.last_step, "epoch": _run.last_epoch}
    if failed:
        event["message"] = failed
        _run.manifest["error"] = failed
    _run.record(event)
    _run.manifest["status"] = status
    _run.manifest["end_utc"] = _utc_now()
    _run.write_manifest()


# What the manifest keeps of the environment: what decides how the code ran, never secrets.
_ENVIRONMENT = {"PATH", "PYTHONPATH", "VIRTUAL_ENV", "CONDA_PREFIX", "CONDA_DEFAULT_ENV", "OMP_NUM_THREADS",
                "CUDA_VISIBLE_DEVICES", "MASTER_ADDR", "MASTER_PORT", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "LD_LIBRARY_PATH"}
_ENVIRONMENT_PREFIXES = ("NCCL_", "SCALEDESK_", "TORCH_", "GLOO_", "SLURM_JOB_", "SLURM_NTASKS", "SLURM_NNODES")


def _git_state(folder, diff_path):
    """The code's commit and whether it had changes (their diff saved beside the run), when the
    folder is a git checkout and git is there; else None."""
    import subprocess

    def git(*args):
        done = subprocess.run(["git", "-C", folder] + list(args), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=20)
        if done.returncode != 0:
            raise OSError("git " + args[0])
        return done.stdout

    try:
        commit = git("rev-parse", "HEAD").decode().strip()
        changed = git("status", "--porcelain", "--untracked-files=no").decode().strip()
        state = {"commit": commit, "dirty": bool(changed)}
        if changed:
            with open(diff_path, "wb") as f:
                f.write(git("diff", "HEAD"))
            state["diff"] = os.path.basename(diff_path)
        return state
    except (OSError, subprocess.SubprocessError):
        return None


def _read_manifest(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


class _Exit:
    code = None


def _at_exit():
    code = _Exit.code
    finish(failed=None if code in (None, 0) else "exit code %s" % (code,))
