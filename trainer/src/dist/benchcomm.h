#pragma once

#include "run/config.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace scaledesk::train {

class Communicator;

/// What `scaledesk-train bench-comm` measures: each collective the strategies use (allreduce for
/// ddp and fused; reduce-scatter and allgather for zero1) on float32 buffers of each size, the
/// median (and minimum) of `reps` timed calls after two untimed ones, every rank taking part; and
/// ("compute") how much the ranks slow each other's compute: a convolution kernel like the
/// U-Net's, forward and backward on the CPU, timed on rank 0 alone while the others sleep, then on
/// every rank at once, `computeSeconds` each. With `model`, that compute is the config's own
/// training step instead: the U-Net's forward, loss, backward and Adam step on batches of
/// `localBatch` crops from the config's own loader (its train_path read by num_data_workers threads
/// beside the compute, as in training), or random batches where the data cannot be opened here.
struct BenchCommOptions {
    std::vector<long long> sizes{4096, 65536, 1 << 20, 4 << 20, 16 << 20, 64 << 20};  ///< bytes
    std::vector<std::string> ops{"allreduce", "reduce_scatter", "allgather", "compute"};
    int reps = 10;
    double computeSeconds = 1.0;
    /// > 0: each collective and size is timed again after this many seconds of compute kernels per
    /// call and no barrier, as training meets it (JSON "mode": "after_compute").
    double afterCompute = 0;
    /// The config whose training step is the compute (compute contention, and before each call
    /// with afterCompute); none: the convolution kernel.
    std::optional<TrainConfig> model;
    int64_t localBatch = 1;  ///< with model: crops per step
    /// With model: the strategies' layout (the training's --bucket_cap_mb, --fusion_mb,
    /// --zero_bucket_mb). Each collective is also timed at every size a step of a strategy sends
    /// with it at this job's ranks (configMessageSizes), so that the planner reads the curve at
    /// those sizes instead of interpolating across a step in it.
    double bucketCapMb = 25.0, fusionMb = 64.0, zeroBucketMb = 25.0;
    std::string out;  ///< JSON lines written here by rank 0 ("" or "-": standard output only)
};

/// Parses "4K,64K,1M,16M" (K, M, G: powers of 1024; plain numbers are bytes) into byte counts,
/// each a positive multiple of 4; throws std::invalid_argument naming the bad item.
std::vector<long long> parseByteSizes(const std::string& list);

/// The sizes `op` is timed at over `ranks` ranks, each with the strategies that send it (empty for
/// a size of the grid only): the grid (`options.sizes`) and, with a model, the messages a step of
/// each strategy sends with `op` (dist/buckets.h: ddp's buckets and fused's buffers by allreduce,
/// zero1's buckets by reduce-scatter and allgather), every size rounded down to whole float32
/// elements, a whole number per rank (at least one each); ascending, each once.
std::vector<std::pair<long long, std::vector<std::string>>> benchSizes(const BenchCommOptions& options, const std::string& op, int ranks);

/// Runs the benchmark on `comm` (every rank calls it). Rank 0 prints a table and writes one JSON
/// line per collective and size: {"kind": "allreduce" | "reduce_scatter" | "allgather", "backend",
/// "ranks", "nodes", "host", "bytes" (the full buffer), "seconds" (the slowest rank's median),
/// "min_s", "reps", "t"}, and "sent_by" (the strategies of the config that send this size, from
/// benchSizes) where there are any; a reduction is timed with the average that follows it in the strategies
/// (×1/n over the buffer, or the shard of a reduce-scatter), and its line says "averaged": true.
/// With afterCompute, a second line per collective and size with "mode": "after_compute",
/// "seconds" (the mean over calls of the last rank in, who waits for none, without the slowest and
/// fastest tenth of the calls), "median_s" and "max_s" (its median and slowest call), "wait_s" (the ranks'
/// mean time in the collective beyond it: the arrival imbalance a step pays once), "compute_s"
/// (the kernels' time before each call, the ranks' mean) and "kernels"; and for the allreduce a
/// third with "mode": "overlapped": each call launched before the kernels and waited for after
/// them, "compute_s" the kernels' time while it ran and "seconds" the wait after them (both the
/// ranks' mean over calls), what a collective behind compute costs. For compute: {"kind":
/// "compute", …, "alone_s" (rank 0's median alone), "seconds" (the slowest rank's median with
/// every rank computing), "mean_s" (the ranks' mean of theirs), "reps" (rank 0's timed kernels
/// alone)}. The compute and after-compute lines name their compute: "kernel" is "conv", or "model"
/// with "config", "local_batch", "data_workers" and "data": "loader" (the config's data), or
/// "random" with "data_note" (why the data could not be opened). A kernel's time is its compute
/// alone: a batch's wait for the loader is left out, as in the trainer's step/compute_s. The lines are the input of `scaledesk plan --comm`
/// (docs/planner.md). Nodes are the distinct host names of the ranks. Needs at least two ranks;
/// throws CommError otherwise.
void runBenchComm(Communicator& comm, const BenchCommOptions& options);

}  // namespace scaledesk::train
