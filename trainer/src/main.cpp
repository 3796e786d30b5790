// scaledesk-train: command line of the U-Net trainer (spec §5 flags plus ScaleDesk's).
#include "data/hdf5volume.h"
#include "data/makedata.h"
#include "device/device.h"
#include "dist/benchcomm.h"
#include "dist/checkcomm.h"
#include "dist/comm.h"
#include "gitrevision.h"
#include "run/benchstep.h"
#include "run/checkpoint.h"
#include "run/config.h"
#include "run/runfiles.h"
#include "run/trainer.h"

#include <ATen/Parallel.h>
#include <CLI/CLI.hpp>
#include <c10/util/Exception.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <malloc.h>
#include <sstream>
#include <string>
#include <vector>

using namespace scaledesk::train;

namespace {

struct CliValues {
    std::string yamlConfig = "./configs/unet.yaml";
    std::string config = "base";
    std::optional<int64_t> numEpochs, localBatchSize, numDataWorkers;
    std::optional<std::string> dataLoaderConfig, expdir;
    // The original's rule (spec §5): the four enable_* come from the command line alone, False
    // when the flag is absent, whatever the YAML says.
    struct Switch {
        bool value = false;
        bool given = false;
    };
    Switch enableAmp, enableApex, enableJit, enableBenchy;
    std::optional<uint64_t> seed;
    std::optional<std::string> ampMode;
};

// Applies the command line to the YAML values. Options override only when given; the enable_*
// flags always do, as in the original (an absent flag writes False over a YAML True, with a warning
// in `notes`).
void applyOverrides(const CliValues& v, TrainConfig& c, std::vector<std::string>& notes)
{
    auto boolText = [](bool b) { return std::string(b ? "True" : "False"); };
    if (v.numEpochs) {
        c.numEpochs = *v.numEpochs;
        overrideEntry(c, "num_epochs", std::to_string(*v.numEpochs));
    }
    if (v.numDataWorkers) {
        c.numDataWorkers = *v.numDataWorkers;
        overrideEntry(c, "num_data_workers", std::to_string(*v.numDataWorkers));
    }
    if (v.dataLoaderConfig) {
        parseDataLoaderMode(*v.dataLoaderConfig, c.dataLoader);
        overrideEntry(c, "data_loader_config", *v.dataLoaderConfig);
    }
    if (v.expdir) {
        c.expdir = *v.expdir;
        overrideEntry(c, "expdir", *v.expdir);
    }
    const std::pair<CliValues::Switch, std::pair<bool*, const char*>> flags[] = {
        {v.enableAmp, {&c.enableAmp, "enable_amp"}},
        {v.enableApex, {&c.enableApex, "enable_apex"}},
        {v.enableJit, {&c.enableJit, "enable_jit"}},
        {v.enableBenchy, {&c.enableBenchy, "enable_benchy"}},
    };
    for (const auto& [flag, target] : flags) {
        const auto [field, key] = target;
        const bool value = flag.value;
        if (*field && !flag.given) {
            std::string where;
            for (const auto& e : c.entries)
                if (e.key == key) where = " (" + e.location + ")";
            notes.push_back(std::string(key) + " is True in config '" + c.name + "'" + where +
                            " but the command line decides it, as in the original: False without --" + key);
        }
        *field = value;
        overrideEntry(c, key, boolText(value));
    }
    if (v.seed) {
        c.seed = *v.seed;
        overrideEntry(c, "seed", std::to_string(*v.seed));
    }
    if (v.ampMode) {
        AmpMode mode = AmpMode::None;
        parseAmpMode(*v.ampMode, mode);  // CLI11 checked the word
        c.ampMode = mode;
        overrideEntry(c, "amp_mode", *v.ampMode);
    }
}

// Every step allocates and frees large tensors (vol2col columns of the 3D convolutions, Adam's
// temporaries). By default glibc serves each from a fresh mmap and unmaps it on free, so the
// kernel zero-fills the same pages again every step: measured here as ~20% of a cpu-bench step.
// Keep freed memory in the heap instead; the process's peak footprint is unchanged.
void keepFreedMemory()
{
    mallopt(M_MMAP_THRESHOLD, 1 << 30);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
    mallopt(M_TOP_PAD, 64 << 20);
}

std::string rankPrefix;

// One line on stderr; in an MPI job the other ranks are taken down too, so none waits forever.
int fail(const std::string& message)
{
    const bool prefixed = message.rfind(rankPrefix, 0) == 0;
    // One write, so lines of several ranks sharing a terminal never interleave.
    const std::string line = "scaledesk-train: error: " + (prefixed ? "" : rankPrefix) + message + "\n";
    std::fputs(line.c_str(), stderr);
    std::fflush(stderr);
    abortMpiJob(1);
    return 1;
}

}  // namespace

namespace {
// CLI11's PositiveNumber and NonNegativeNumber say "Value 0 not in range 0 to 1.79e308" (all 309
// digits): name the rule instead, and a word given for a number as such.
CLI::Validator numberAtLeast(bool zeroAllowed)
{
    return CLI::Validator(
        [zeroAllowed](std::string& text) -> std::string {
            double value = 0;
            if (!CLI::detail::lexical_cast(text, value) || !std::isfinite(value)) return "'" + text + "' is not a number";
            if (zeroAllowed ? value < 0 : !(value > 0))
                return (zeroAllowed ? "must be 0 or greater, got " : "must be greater than 0, got ") + text;
            return {};
        },
        zeroAllowed ? "NON-NEGATIVE" : "POSITIVE");
}
const CLI::Validator kPositive = numberAtLeast(false);
const CLI::Validator kNonNegative = numberAtLeast(true);
// A seed is a whole number from 0: "-1" would otherwise wrap to 18446744073709551615.
const CLI::Validator kSeed(
    [](std::string& text) {
        if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos)
            return "must be a whole number from 0 to 18446744073709551615, got " + text;
        return std::string();
    },
    "SEED");
}  // namespace

namespace {

// Everything the command line sets, and the subcommands it may name.
struct Cli {
    CliValues values;
    TrainOptions options;
    bool describe = false;
    std::string checkConfigs;
    std::string backend = "auto";
    std::string device = "auto";
    int commTimeout = 300;
    std::string dataStreams = "independent";
    bool disableBroadcastBuffers = false;
    CLI::Option *configOption = nullptr, *ampFlag = nullptr, *apexFlag = nullptr, *jitFlag = nullptr, *benchyFlag = nullptr;
    MakeDataOptions makeData;
    CLI::App* make = nullptr;
    BenchCommOptions benchComm;
    std::string benchSizes = "4K,64K,1M,4M,16M,64M";
    CLI::App* bench = nullptr;
    CheckCommOptions checkComm;
    CLI::App* check = nullptr;
    BenchStepOptions benchStep;
    CLI::App* benchStepApp = nullptr;
};

// The configuration's own options: which config, and the NERSC flags that override its keys.
void addConfigOptions(CLI::App& app, Cli& cli)
{
    CliValues& v = cli.values;
    TrainOptions& options = cli.options;
    app.add_option("--yaml_config", v.yamlConfig, "YAML file of named configs")
        ->capture_default_str()
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    cli.configOption = app.add_option("--config", v.config, "name of the config in the YAML file")->capture_default_str();
    app.add_option("--run_num", options.runNum, "run number: <expdir>/<config>/<N>GPU/<run_num>")->capture_default_str();
    app.add_option("--num_epochs", v.numEpochs, "override num_epochs")->check(kPositive);
    app.add_option("--local_batch_size", options.localBatchSize, "per-rank batch; the global batch becomes world size x this")
        ->check(kPositive);
    app.add_option("--data_loader_config", v.dataLoaderConfig, "override data_loader_config")
        ->check(CLI::IsMember({"synthetic", "inmem", "lowmem", "dali-lowmem"}));
    app.add_option("--num_data_workers", v.numDataWorkers, "override num_data_workers (prefetch threads)")->check(kNonNegative);
    // As in the original, each enable_* is the flag's value, False when absent: the YAML's value is
    // always overwritten (a YAML True without the flag is logged as a warning).
    cli.ampFlag =
        app.add_flag("--enable_amp{true}", v.enableAmp.value,
                     "NERSC's AMP: fp16 autocast with a loss scaler (a GPU mode); absent (or =false): off, whatever the YAML says");
    app.add_option("--amp_mode", v.ampMode,
                   "override amp_mode: none, fp16 (autocast with a loss scaler, GPUs) or bf16 (autocast, no scaler: GPUs of "
                   "compute capability 8.0+, CPUs with AVX-512 or AMX); given, it decides over enable_amp")
        ->check(CLI::IsMember({"none", "fp16", "bf16"}));
    cli.apexFlag = app.add_flag("--enable_apex{true}", v.enableApex.value,
                                "recorded only (Adam math is unchanged); absent: False, whatever the YAML says");
    cli.jitFlag = app.add_flag("--enable_jit{true}", v.enableJit.value,
                               "recorded only (the loss is plain L1 either way); absent: False, whatever the YAML says");
    cli.benchyFlag = app.add_flag("--enable_benchy{true}", v.enableBenchy.value,
                                  "skip the step-0 losses and validation, as under benchy; absent: False, whatever the YAML says");
    app.add_option("--expdir", v.expdir, "override expdir (the experiment root)");
    app.add_option("--run_dir", options.runDir, "write the run here instead of <expdir>/<config>/<N>GPU/<run_num>");
    app.add_option("--seed", v.seed, "seed for weights and data streams (default: the YAML seed, else random)")->check(kSeed);
}

// How the ranks run: threads, device, strategy, backend, and the run's switches.
void addRunOptions(CLI::App& app, Cli& cli)
{
    TrainOptions& options = cli.options;
    app.add_option("--threads", options.threads, "intra-op threads per rank (default: usable cores / local ranks)")->check(kPositive);
    app.add_flag("--resume", options.resume, "continue from <run folder>/checkpoints/latest.pt when it exists");
    app.add_flag("--describe", cli.describe, "print the resolved config and the model summary, then exit");
    app.add_option("--check_configs", cli.checkConfigs,
                   "check these configs of --yaml_config (comma-separated, or 'all'): load and validate each, print every "
                   "error (file:line:column, and the config), exit 1 if any; builds no model");
    app.add_option("--device", cli.device,
                   "auto (a GPU when this build has CUDA and the process sees one: one GPU per rank, by LOCAL_RANK or "
                   "SLURM_LOCALID), cpu or cuda (an error without a GPU)")
        ->capture_default_str()
        ->check(CLI::IsMember({"auto", "cpu", "cuda"}));
    app.add_option("--strategy", options.strategy,
                   "data-parallel strategy: ddp (bucketed allreduce overlapped with backward), fused (Horovod-style "
                   "allreduce after backward), zero1 (sharded Adam state: reduce-scatter + allgather)")
        ->capture_default_str()
        ->check(CLI::IsMember({"ddp", "fused", "zero1"}));
    app.add_option("--backend", cli.backend,
                   "communication backend: auto (nccl on GPUs when built with it, else mpi when launched by mpirun/srun "
                   "--mpi, else gloo), mpi, gloo or nccl (CUDA builds)")
        ->capture_default_str()
        ->check(CLI::IsMember({"auto", "mpi", "gloo", "nccl"}));
    app.add_option("--bucket_cap_mb", options.bucketCapMb, "ddp bucket size in MiB (the first bucket is 1 MiB)")
        ->capture_default_str()
        ->check(kPositive);
    app.add_option("--fusion_mb", options.fusionMb, "fused: fusion buffer size in MiB")->capture_default_str()->check(kPositive);
    app.add_option("--zero_bucket_mb", options.zeroBucketMb,
                   "zero1: bucket size in MiB, one reduce-scatter and one allgather per bucket (DeepSpeed's reduce_bucket_size)")
        ->capture_default_str()
        ->check(kPositive);
    app.add_option("--comm_timeout", cli.commTimeout, "seconds a rendezvous or collective may wait before failing")
        ->capture_default_str()
        ->check(kPositive);
    app.add_option("--data_streams", cli.dataStreams,
                   "independent: each rank draws its own random crops (NERSC); shared: ranks split one stream, so N ranks "
                   "see exactly the samples of one rank with an N-times larger batch")
        ->capture_default_str()
        ->check(CLI::IsMember({"independent", "shared"}));
    app.add_flag("--check_replicas", options.checkReplicas,
                 "after every step, check that all ranks hold bit-identical parameters (a debugging aid; costs a hash per step)");
    app.add_flag("--noddp", options.noddp,
                 "NERSC's benchmarking mode: every rank trains its own replica and gradients are never synchronised "
                 "(world size, batch split, loss averaging and rank 0's run files as usual; --strategy is ignored)");
    app.add_option("--gns_every", options.gnsEvery,
                   "take the gradient noise scale's norms every N steps, 0: never (default: every step on a GPU, every 8th on "
                   "CPU). With two or more ranks, the squared norm of the gradients before and after the average (one dot "
                   "product per bucket each) give B_simple (McCandlish et al. 2018), recorded per epoch as gns_b_simple "
                   "(metrics.jsonl, epochs.csv, TensorBoard GNS/B_simple)")
        ->check(kNonNegative);
    app.add_option("--stop_check_s", options.stopCheckSeconds,
                   "with two or more ranks, agree on a stop request (SIGUSR1/SIGTERM to any rank) after a step about every "
                   "this many seconds of steps, and at the end of each epoch; each check is an allreduce that synchronises "
                   "the ranks once more. 0: after every step")
        ->capture_default_str()
        ->check(kNonNegative);
    app.add_flag("--disable_broadcast_buffers", cli.disableBroadcastBuffers,
                 "accepted for compatibility and recorded in manifest.json; changes nothing: the U-Net has no buffers "
                 "(no normalisation layers), and gradients are bucket views already");
    app.add_option("--gpu_sample_s", options.gpuSampleSeconds,
                   "seconds between GPU telemetry samples: NVML power, utilisation and memory of each rank's GPU, into "
                   "metrics.jsonl (NVML is libnvidia-ml.so.1, or $SCALEDESK_NVML_LIBRARY); 0 switches telemetry off, "
                   "otherwise at least 0.01")
        ->capture_default_str()
        ->check(CLI::Validator(
            [](std::string& text) {
                double value = -1;
                if (!CLI::detail::lexical_cast(text, value) || !(value == 0 || value >= 0.01))
                    return "must be 0 (off) or at least 0.01, got " + text;
                return std::string();
            },
            ""));
}

void addSubcommands(CLI::App& app, Cli& cli)
{
    MakeDataOptions& makeData = cli.makeData;
    cli.make = app.add_subcommand("make-data", "write generated train.h5 and valid.h5 in the NERSC layout");
    CLI::App* make = cli.make;
    make->add_option("--out", makeData.outDir, "output folder")->required();
    make->add_option("--box", makeData.trainBox, "side of the training volume")->capture_default_str()->check(CLI::Range(2, 2048));
    make->add_option("--val-box", makeData.valBox, "side of the validation volume")->capture_default_str()->check(CLI::Range(2, 2048));
    make->add_option("--seed", makeData.seed, "seed of the random fields")->capture_default_str();
    make->add_option("--correlation-length", makeData.correlationLength, "smoothing length of the fields, in voxels")
        ->capture_default_str()
        ->check(kPositive);

    BenchCommOptions& benchComm = cli.benchComm;
    cli.bench = app.add_subcommand(
        "bench-comm",
        "time the collectives of the strategies (allreduce; reduce-scatter and allgather) over this job's ranks at each "
        "size, and (compute) a convolution kernel on one rank alone and on every rank at once; with --config "
        "(and --yaml_config, --local_batch_size), that config's own training step instead of the kernel, on batches from its "
        "own data loader (train_path, num_data_workers threads; random batches where the data cannot be opened, "
        "said in the line), and every "
        "collective also at the sizes each strategy sends for that config (--bucket_cap_mb, --fusion_mb, "
        "--zero_bucket_mb) at this job's ranks (launch "
        "it as the training is launched: mpirun -np N or srun, with its --threads); rank 0 prints a table and "
        "appends JSON lines to --out for `scaledesk plan --comm`. CPU tensors and the mpi and gloo backends");
    CLI::App* bench = cli.bench;
    bench->add_option("--sizes", cli.benchSizes, "comma-separated sizes in bytes (K, M, G: powers of 1024)")->capture_default_str();
    bench->add_option("--ops", benchComm.ops, "what to time, comma-separated")
        ->delimiter(',')
        ->capture_default_str()
        ->check(CLI::IsMember({"allreduce", "reduce_scatter", "allgather", "compute"}));
    bench->add_option("--reps", benchComm.reps, "timed calls per size (after two untimed ones)")->capture_default_str()->check(kPositive);
    bench->add_option("--out", benchComm.out, "append the JSON lines to this file (rank 0)");
    bench->add_option("--compute_seconds", benchComm.computeSeconds, "compute: seconds of kernels alone, and again on every rank")
        ->capture_default_str()
        ->check(kPositive);
    bench
        ->add_option("--after_compute", benchComm.afterCompute,
                     "also time each collective and size after this many seconds of compute kernels per call, with no barrier "
                     "(0: not): the collective as training meets it, which `scaledesk plan` prefers; the allreduce also once "
                     "launched before the kernels and waited for after them (\"overlapped\": what ddp hides behind backward)")
        ->capture_default_str()
        ->check(kNonNegative);
    bench->fallthrough();  // --backend and --comm_timeout are the training's options

    cli.check = app.add_subcommand("check-comm",
                                   "check every collective (allreduce sum and avg, reduce-scatter, allgather, broadcast, barrier) of "
                                   "--backend on --device tensors of float32, float64 and int64 against the result computed on the CPU; "
                                   "launch it as training is launched (mpirun, srun or env:// ranks); rank 0 prints a JSON line per "
                                   "check; exit 1 if any fails");
    cli.check->add_option("--numels", cli.checkComm.numels, "elements per rank, comma-separated")
        ->delimiter(',')
        ->capture_default_str()
        ->check(kPositive);
    cli.check->fallthrough();

    BenchStepOptions& step = cli.benchStep;
    cli.benchStepApp = app.add_subcommand("bench-step",
                                          "time --config's training step alone (autocast by --amp_mode, backward, fused Adam) on one "
                                          "fixed batch that stays on --device: the model's samples/s without data loading; prints one "
                                          "JSON line (the GPU check sets it against PyTorch eager's)");
    cli.benchStepApp->add_option("--steps", step.steps, "timed steps")->capture_default_str()->check(kPositive);
    cli.benchStepApp->add_option("--warmup", step.warmup, "untimed steps first")->capture_default_str()->check(kNonNegative);
    cli.benchStepApp->fallthrough();  // --config, --yaml_config, --local_batch_size, --amp_mode, --device, --threads, --seed
}

// --check_configs: every config on its own, so that an error in one does not hide the others'.
int checkConfigs(const Cli& cli)
{
    std::vector<std::string> names;
    if (cli.checkConfigs == "all") {
        names = listConfigNames(cli.values.yamlConfig);
    } else {
        std::stringstream list(cli.checkConfigs);
        for (std::string name; std::getline(list, name, ',');)
            if (!name.empty()) names.push_back(name);
    }
    int bad = 0;
    for (const std::string& name : names) {
        try {
            validateTrainConfig(loadTrainConfig(cli.values.yamlConfig, name));
        } catch (const std::exception& e) {
            std::fputs(("scaledesk-train: error: " + std::string(e.what()) + " [config " + name + "]\n").c_str(), stderr);
            ++bad;
        }
    }
    return bad > 0 ? 1 : 0;
}

// The device of this rank: --device, where --backend nccl needs a GPU whatever it says.
c10::Device rankDevice(const Cli& cli, const DistEnv& dist)
{
    DeviceRequest request = DeviceRequest::Auto;
    parseDeviceRequest(cli.device, request);  // CLI11 checked the word
    return chooseDevice(request, probeCuda(), dist.localRank, dist.localSize, nodeName(), cli.backend == "nccl" ? "--backend nccl" : "");
}

int benchComm(Cli& cli)
{
    BenchCommOptions& options = cli.benchComm;
    options.sizes = parseByteSizes(cli.benchSizes);
    if (cli.backend == "nccl")
        throw CommError("bench-comm times collectives on CPU tensors (the mpi and gloo backends); it does not time nccl yet");
    const DistEnv dist = discoverDistEnv();
    if (cli.configOption->count() > 0) {  // the config's own step is the compute
        options.model = loadTrainConfig(cli.values.yamlConfig, cli.values.config);
        applyOverrides(cli.values, *options.model, cli.options.notes);  // --num_data_workers, --data_loader_config, as the training's
        validateTrainConfig(*options.model);
        options.localBatch = cli.options.localBatchSize.value_or(std::max<int64_t>(1, options.model->globalBatchSize / dist.size));
        options.bucketCapMb = cli.options.bucketCapMb;
        options.fusionMb = cli.options.fusionMb;
        options.zeroBucketMb = cli.options.zeroBucketMb;
    }
    rankPrefix = dist.size > 1 ? "rank " + std::to_string(dist.rank) + ": " : "";
    {
        const auto comm = makeCommunicator(cli.backend, dist, std::chrono::seconds(cli.commTimeout), c10::Device(c10::DeviceType::CPU));
        at::set_num_threads(threadsPerRank(cli.options.threads, dist.localSize));  // as the training would
        runBenchComm(*comm, options);
    }
    shutdownMpi();
    return 0;
}

int checkComm(Cli& cli)
{
    const DistEnv dist = discoverDistEnv();
    rankPrefix = dist.size > 1 ? "rank " + std::to_string(dist.rank) + ": " : "";
    cli.checkComm.device = rankDevice(cli, dist);
    configureDevice(cli.checkComm.device, false, false);
    int failed = 0;
    {
        // One rank alone still checks the backend's own collectives (nccl on one GPU), where one was named.
        const auto comm = makeCommunicator(cli.backend, dist, std::chrono::seconds(cli.commTimeout), cli.checkComm.device,
                                           /*evenAlone=*/cli.backend != "auto");
        failed = runCheckComm(*comm, cli.checkComm);
    }
    shutdownMpi();
    return failed > 0 ? 1 : 0;
}

int benchStep(Cli& cli)
{
    BenchStepOptions& o = cli.benchStep;
    o.config = loadTrainConfig(cli.values.yamlConfig, cli.values.config);
    applyOverrides(cli.values, o.config, cli.options.notes);
    validateTrainConfig(o.config);
    o.amp = o.config.amp();
    o.localBatch = cli.options.localBatchSize.value_or(o.config.globalBatchSize);
    if (cli.values.seed) o.seed = *cli.values.seed;
    o.device = rankDevice(cli, DistEnv{});
    configureDevice(o.device, /*cudnnBenchmark=*/true, /*tf32=*/true);
    at::set_num_threads(threadsPerRank(cli.options.threads, 1));
    runBenchStep(o);
    return 0;
}

int train(Cli& cli)
{
    TrainOptions& options = cli.options;
    options.sharedStreams = cli.dataStreams == "shared";
    options.broadcastBuffers = !cli.disableBroadcastBuffers;
    const DistEnv dist = discoverDistEnv();
    options.dist = dist;
    options.worldSize = dist.size;
    options.rank = dist.rank;
    options.localRanks = dist.localSize;
    rankPrefix = dist.size > 1 ? "rank " + std::to_string(dist.rank) + ": " : "";
    options.config = loadTrainConfig(cli.values.yamlConfig, cli.values.config);
    applyOverrides(cli.values, options.config, options.notes);
    validateTrainConfig(options.config);
    if (options.noddp && options.checkReplicas)
        throw ConfigError("--check_replicas: the replicas of a --noddp run are not synchronised, so they differ by design");
    const RunPlan plan = planRun(options);
    if (cli.describe) {
        if (dist.rank == 0) describeRun(options, plan);
        shutdownMpi();
        return 0;
    }
    options.device = rankDevice(cli, dist);
    // As the NERSC trainer: cuDNN picks its fastest kernels, and fp32 runs use TF32 where the GPU has it.
    configureDevice(options.device, /*cudnnBenchmark=*/true, /*tf32=*/true);
    installStopSignals();
    RunLog log(options.rank);
    int code = 1;
    {
        const auto comm = makeCommunicator(cli.backend, dist, std::chrono::seconds(cli.commTimeout), options.device);
        options.comm = comm.get();
        try {
            code = runTraining(options, plan, log);
        } catch (const std::exception& e) {
            if (dist.rank == 0) recordFailure(plan, e.what());
            log.error(e.what());
            throw;
        }
    }
    shutdownMpi();
    return code;
}

}  // namespace

int main(int argc, char** argv)
{
    keepFreedMemory();
    CLI::App app{"scaledesk-train: the NERSC cosmology 3D U-Net training in C++ (libtorch).\n"
                 "Trains a named config of a YAML file; `make-data` writes generated HDF5 data."};
    // The libraries a cluster build linked: what the About dialog and `profiles test` show.
    app.set_version_flag("--version",
                         std::string("scaledesk-train " SCALEDESK_VERSION "+g" SCALEDESK_GIT_REVISION " (") + buildLibraries() + ")");
    // A later occurrence of an option wins, so scripts can append overrides.
    app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    Cli cli;
    addConfigOptions(app, cli);
    addRunOptions(app, cli);
    addSubcommands(app, cli);
    CLI11_PARSE(app, argc, argv);
    cli.values.enableAmp.given = cli.ampFlag->count() > 0;
    cli.values.enableApex.given = cli.apexFlag->count() > 0;
    cli.values.enableJit.given = cli.jitFlag->count() > 0;
    cli.values.enableBenchy.given = cli.benchyFlag->count() > 0;
    try {
        // A backend this build lacks is said at once, whatever else was asked (--describe included).
        const std::vector<std::string> built = availableBackends();
        if (cli.backend != "auto" && std::find(built.begin(), built.end(), cli.backend) == built.end()) {
            std::string others;
            for (const std::string& b : built) others += (others.empty() ? "" : " or ") + b;
            return fail("--backend " + cli.backend + ": this scaledesk-train was built without it (" + buildLibraries() + "); use " +
                        (others.empty() ? std::string("a build that has it") : others) +
                        ", or build against a libtorch that has it (docs/trainer.md)");
        }
        if (!cli.checkConfigs.empty()) return checkConfigs(cli);
        if (cli.make->parsed()) {
            makeData(cli.makeData);
            std::cout << "wrote " << cli.makeData.outDir << "/train.h5 (box " << cli.makeData.trainBox << ") and " << cli.makeData.outDir
                      << "/valid.h5 (box " << cli.makeData.valBox << ")" << std::endl;
            return 0;
        }
        if (cli.bench->parsed()) return benchComm(cli);
        if (cli.check->parsed()) return checkComm(cli);
        if (cli.benchStepApp->parsed()) return benchStep(cli);
        return train(cli);
    } catch (const c10::Error& e) {
        return fail(e.what_without_backtrace());
    } catch (const std::exception& e) {
        return fail(e.what());
    }
}
