#!/usr/bin/env python3
"""Writes the itwinai fixture folders beside this script (see README.md): files in the three
layouts of itwinai's scalability tutorial, from the column and file-name description in
shared/reference/itwinai-scaling.md §3. Written for ScaleDesk's tests; not itwinai's output.
The numbers are chosen so that tst_importer can work out the report's values by hand."""
import os
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def csv(path, header, rows):
    write(path, ",".join(header) + "\n" + "".join(",".join(str(c) for c in r) + "\n" for r in rows))


EPOCH = ["epoch_id", "time", "name", "nodes"]
GPU = ["sample_idx", "utilization", "power", "local_rank", "node_idx", "num_global_gpus", "strategy", "probing_interval"]
PROF = ["name", "node_id", "self_cuda_time_total", "cuda_time_total", "cuda_time_total_str", "calls", "strategy", "num_gpus",
        "global_rank"]


def epochs(path, name, nodes, times):
    csv(path, EPOCH, [(i + 1, t, name, nodes) for i, t in enumerate(times)])


def gpu(path, strategy, nodes, per_node, samples, power, util, interval):
    rows = []
    for node in range(nodes):
        for lr in range(per_node):
            for s in range(samples):
                rows.append((s, util(node * per_node + lr, s), power, lr, node, nodes * per_node, strategy, interval))
    csv(path, GPU, rows)


def prof(path, strategy, gpus, rank, node, ops):
    csv(path, PROF, [(f'"{n}"' if "," in n else n, node, t, t, f"{t}us", 1, strategy, gpus, rank) for n, t in ops])


def pr262(root):
    m = os.path.join(root, "scalability-metrics")
    epochs(f"{m}/epoch-time/epochtime_ddp_1.csv", "ddp", 1, [12.0, 10.0, 8.0])
    epochs(f"{m}/epoch-time/epochtime_ddp_2.csv", "ddp", 2, [7.0, 5.0, 6.0])
    epochs(f"{m}/epoch-time/epochtime_horovod_1.csv", "horovod", 1, [14.0, 12.0, 10.0])
    epochs(f"{m}/epoch-time/epochtime_horovod_2.csv", "horovod", 2, [8.0, 6.0, 7.0])
    # ddp: 200 W on every GPU, 1 s apart; utilisation 50 + 10·sample.
    gpu(f"{m}/gpu-energy-data/ddp_4.csv", "ddp", 1, 4, 2, 200, lambda g, s: 50 + 10 * s, 1)
    gpu(f"{m}/gpu-energy-data/ddp_8.csv", "ddp", 2, 4, 2, 250, lambda g, s: 40 + 10 * s, 2)
    gpu(f"{m}/gpu-energy-data/horovod_4.csv", "horovod", 1, 4, 3, 180, lambda g, s: 30 + g, 1)
    gpu(f"{m}/gpu-energy-data/horovod_8.csv", "horovod", 2, 4, 3, 180, lambda g, s: 30 + g, 1)
    ops0 = [("aten::conv3d", 600), ("ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)", 200),
            ("cudaStreamSynchronize", 100), ("Memcpy HtoD (Pageable -> Device)", 50)]
    ops1 = [("aten::conv3d", 500), ("ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)", 100)]
    prof(f"{m}/communication-data/ddp_4_0.csv", "ddp", 4, 0, 0, ops0)
    prof(f"{m}/communication-data/ddp_4_1.csv", "ddp", 4, 1, 0, ops1)


def unified(root):
    m = os.path.join(root, "scalability-metrics")
    for run, one, two, power in (("r-a", [20.0, 16.0, 18.0], [11.0, 9.0, 10.0], 300),
                                 ("r-b", [22.0, 18.0, 20.0], [13.0, 11.0, 12.0], 330)):
        epochs(f"{m}/{run}/epoch-time/epochtime_deepspeed_1N.csv", "deepspeed", 1, one)
        epochs(f"{m}/{run}/epoch-time/epochtime_deepspeed_2N.csv", "deepspeed", 2, two)
        gpu(f"{m}/{run}/gpu-energy-data/deepspeed_4.csv", "deepspeed", 1, 4, 3, power, lambda g, s: 70 + 5 * g, 1)
    prof(f"{m}/r-a/computation-data/deepspeed_4_0.csv", "deepspeed", 4, 0, 0,
         [("ProfilerStep#1", 1000), ("aten::mm", 300), ("autograd::engine::evaluate_function: MmBackward0", 100),
          ("c10::Half", 50), ("ncclKernel_AllReduce_RING_LL_Sum_half", 150), ("Memcpy DtoD (Device -> Device)", 100)])


def mlflow(root):
    store = os.path.join(root, "mllogs", "mlflow")
    write(f"{store}/0/meta.yaml", "artifact_location: file:///tmp/mllogs/mlflow/0\ncreation_time: 1733400000000\n"
          "experiment_id: '0'\nlast_update_time: 1733400000000\nlifecycle_stage: active\nname: Default\n")
    exp = "421983"
    write(f"{store}/{exp}/meta.yaml", f"artifact_location: file:///tmp/mllogs/mlflow/{exp}\ncreation_time: 1733400000000\n"
          f"experiment_id: '{exp}'\nlast_update_time: 1733400000000\nlifecycle_stage: active\nname: unnamed-experiment\n")
    counter = [0]

    def run(name, start, parent=None, params=None, metrics=None, deleted=False, profile=None):
        counter[0] += 1
        rid = f"{counter[0]:02d}" + "0123456789abcdef0123456789abcd"
        d = f"{store}/{exp}/{rid}"
        write(f"{d}/meta.yaml", f"artifact_uri: file:///tmp/mllogs/mlflow/{exp}/{rid}/artifacts\nend_time: {start + 60000}\n"
              f"entry_point_name: ''\nexperiment_id: '{exp}'\nlifecycle_stage: {'deleted' if deleted else 'active'}\n"
              f"run_id: {rid}\nrun_name: {name}\nrun_uuid: {rid}\nsource_name: ''\nsource_type: 4\nsource_version: ''\n"
              f"start_time: {start}\nstatus: 3\ntags: []\nuser_id: itwinai\n")
        write(f"{d}/tags/mlflow.runName", name)
        write(f"{d}/tags/mlflow.user", "itwinai")
        if parent:
            write(f"{d}/tags/mlflow.parentRunId", parent)
        for k, v in (params or {}).items():
            write(f"{d}/params/{k}", str(v))
        for k, points in (metrics or {}).items():
            write(f"{d}/metrics/{k}", "".join(f"{t} {v} {s}\n" for t, v, s in points))
        if profile:
            prof(f"{d}/artifacts/torch_profiling_averages/torch_profiling_averages.csv", params["strategy"],
                 params["global_world_size"], params["global_rank"], "node-a", profile)
        os.makedirs(f"{d}/artifacts", exist_ok=True)
        return rid

    def training(strategy, world, start, times, profile=False):
        top = run("scalability-" + strategy, start)
        for rank in range(world):
            power = [(start + 1000 * s, p, s) for s, p in enumerate((100, 200, 300))]
            util = [(start + 1000 * s, u + 10 * rank, s) for s, u in enumerate((40, 60, 80))]
            metrics = {"gpu_power_W": power, "gpu_utilization_percent": util}
            if rank == 0:
                metrics["epoch_time_s"] = [(start + 10000 * (e + 1), t, e) for e, t in enumerate(times)]
            ops = [("aten::addmm", 800), ("ProfilerStep#2", 500), ("nccl:all_reduce", 200)] if profile else None
            run(f"worker_{rank}" + (" (main)" if rank == 0 else ""), start, top,
                {"strategy": strategy, "global_rank": rank, "global_world_size": world, "probing_interval": 1},
                metrics, profile=ops)

    t0 = 1733400000000
    training("ddp", 2, t0, [9.0, 7.0, 8.0], profile=True)
    training("ddp", 2, t0 + 3600000, [11.0, 9.0, 10.0])
    training("ddp", 4, t0 + 7200000, [5.0, 4.0, 6.0])
    training("horovod", 2, t0 + 10800000, [12.0, 10.0, 11.0])
    training("horovod", 4, t0 + 14400000, [7.0, 6.0, 5.0])
    # A run deleted in the MLflow UI (lifecycle_stage: deleted): not imported.
    run("scalability-ddp", t0 + 18000000, params={"strategy": "ddp", "global_rank": 0, "global_world_size": 8},
        metrics={"epoch_time_s": [(t0 + 18010000, 1.0, 0)]}, deleted=True)


for layout in ("pr262", "unified", "mlflow"):
    shutil.rmtree(os.path.join(HERE, layout), ignore_errors=True)
pr262(os.path.join(HERE, "pr262"))
unified(os.path.join(HERE, "unified"))
mlflow(os.path.join(HERE, "mlflow"))
