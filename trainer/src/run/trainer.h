#pragma once

#include "dist/comm.h"
#include "run/config.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace scaledesk::train {

class RunLog;

/// Exit code after a SIGUSR1/SIGTERM checkpoint, so a SLURM script can tell "requeue me"
/// apart from success (0) and failure (1). 75 is EX_TEMPFAIL.
constexpr int kExitPreempted = 75;

/// Everything a training run needs beyond the YAML: CLI overrides already applied to `config`.
struct TrainOptions {
    TrainConfig config;
    std::string runNum = "00";
    std::string runDir;                     ///< empty: <expdir>/<config>/<N>GPU/<run_num>
    int threads = 0;                        ///< intra-op threads; 0: cores / local ranks
    std::optional<int64_t> localBatchSize;  ///< --local_batch_size: global = world × local
    bool resume = false;
    int worldSize = 1;
    int rank = 0;
    int localRanks = 1;
    std::string strategy = "ddp";  ///< ddp, fused or zero1 (none at world size 1)
    double bucketCapMb = 25.0;
    double fusionMb = 64.0;
    double zeroBucketMb = 25.0;  ///< zero1: bucket size in MiB (DeepSpeed's reduce_bucket_size / allgather_bucket_size)
    bool sharedStreams = false;  ///< --data_streams shared
    bool checkReplicas = false;  ///< --check_replicas: compare parameter hashes after every step
    bool noddp = false;          ///< --noddp: every rank trains its own replica, no gradient sync
    /// --gns_every: the gradient noise scale's norms every this many steps (0: never); unset: every
    /// step on a GPU, every 8th on CPU ranks (gnsEvery()).
    std::optional<int> gnsEvery;
    /// --stop_check_s: the stop request is agreed by an allreduce after a step about every this
    /// many seconds of steps (0: after every step) and at the end of each epoch.
    double stopCheckSeconds = 1.0;
    bool broadcastBuffers = true;    ///< false with --disable_broadcast_buffers (recorded; the U-Net has no buffers)
    double gpuSampleSeconds = 1.0;   ///< --gpu_sample_s: NVML telemetry interval; 0 switches it off
    std::string nvmlLibrary;         ///< empty: NvmlLibrary::defaultPath()
    std::vector<std::string> notes;  ///< warnings about the command line, logged by rank 0 after the configuration
    Communicator* comm = nullptr;    ///< required by runTraining
    DistEnv dist;
    c10::Device device{c10::DeviceType::CPU};  ///< chooseDevice()'s answer for this rank
};

/// How often the gradient noise scale's norms are taken: --gns_every, else every step on a GPU
/// (two passes over the gradients cost microseconds there) and every 8th step on CPU ranks, where a
/// pass over the gradients is memory-bound on a core the step also computes on (cpu-bench:
/// measured at 1.4–6 % of a step when taken every step; bench-gns).
int gnsEvery(const TrainOptions& options);

/// The resolved run: batch sizes, steps and the run folder, as the loop will use them.
struct RunPlan {
    int64_t localBatch = 0;
    int64_t globalBatch = 0;
    int64_t samplesPerRank = 0;
    int64_t stepsPerEpoch = 0;
    int64_t valSamplesPerRank = 0;
    int64_t totSteps = 0;
    uint64_t seed = 0;
    int threads = 1;
    std::string runDir;
};

/// Resolves batch sizes (NERSC rule: local = ⌊global / world⌋, or global = world × local when
/// --local_batch_size is given), step counts, seed, threads and the run folder.
RunPlan planRun(const TrainOptions& options);

/// Intra-op threads per rank: `threads` (--threads) when given, else the cores this process may
/// use shared among the node's `localRanks` ranks.
int threadsPerRank(int threads, int localRanks);

/// The settings a checkpoint must have been written with to be resumed by this run: the model, the
/// batch, the data, the schedule and the loss (checkpoint.h).
std::map<std::string, std::string> resumeSettings(const TrainConfig& config, const RunPlan& plan, int worldSize);

/// Prints the resolved config and the model's layer table with a `parameters: N` line.
void describeRun(const TrainOptions& options, const RunPlan& plan);

/// Trains to the end, or to a checkpoint when SIGUSR1/SIGTERM arrives. Returns the exit code.
/// Throws on configuration, data and file problems (the caller prints one line).
int runTraining(const TrainOptions& options, RunPlan plan, RunLog& log);

/// Records a `failed` event in metrics.jsonl and the manifest when the run had started.
void recordFailure(const RunPlan& plan, const std::string& message);

/// Installs the SIGUSR1/SIGTERM handlers that ask the loop to checkpoint and stop, and ignores SIGPIPE
/// so that a dead peer's socket is a reported error, not a silent death.
void installStopSignals();

}  // namespace scaledesk::train
