#include "run/trainer.h"

#include "data/dataset.h"
#include "dist/buckets.h"
#include "dist/gradsync.h"
#include "model/unet.h"
#include "run/checkpoint.h"
#include "run/gpusampler.h"
#include "run/nvmllibrary.h"
#include "run/runfiles.h"
#include "run/tensorboardlog.h"

#include <ATen/autocast_mode.h>
#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <sched.h>
#include <unistd.h>

namespace scaledesk::train {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

volatile std::sig_atomic_t g_stopSignal = 0;

extern "C" void onStopSignal(int signal) { g_stopSignal = signal; }

using Clock = std::chrono::steady_clock;
double seconds(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

int usableCores()
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
    return std::max(1u, std::thread::hardware_concurrency());
}

// Mirrors Python's `with torch.autocast(...)`: thread-local state, restored on exit.
class AutocastGuard {
public:
    AutocastGuard(bool enabled, const torch::Device& device) : m_enabled(enabled), m_cuda(device.is_cuda())
    {
        if (!m_enabled) return;
        if (m_cuda) {
            m_prevEnabled = at::autocast::is_enabled();
            m_prevDtype = at::autocast::get_autocast_gpu_dtype();
            at::autocast::set_enabled(true);
            at::autocast::set_autocast_gpu_dtype(at::kBFloat16);
        } else {
            m_prevEnabled = at::autocast::is_cpu_enabled();
            m_prevDtype = at::autocast::get_autocast_cpu_dtype();
            at::autocast::set_cpu_enabled(true);
            at::autocast::set_autocast_cpu_dtype(at::kBFloat16);
        }
        at::autocast::increment_nesting();
    }
    ~AutocastGuard()
    {
        if (!m_enabled) return;
        if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
        if (m_cuda) {
            at::autocast::set_enabled(m_prevEnabled);
            at::autocast::set_autocast_gpu_dtype(m_prevDtype);
        } else {
            at::autocast::set_cpu_enabled(m_prevEnabled);
            at::autocast::set_autocast_cpu_dtype(m_prevDtype);
        }
    }

private:
    bool m_enabled;
    bool m_cuda;
    bool m_prevEnabled = false;
    at::ScalarType m_prevDtype = at::kBFloat16;
};

bool cpuHasBf16()
{
    std::ifstream cpuinfo("/proc/cpuinfo");
    std::string line;
    while (std::getline(cpuinfo, line)) {
        if (line.rfind("flags", 0) == 0)
            return line.find(" avx512_bf16") != std::string::npos || line.find(" amx_bf16") != std::string::npos ||
                line.find(" avx512bw") != std::string::npos;  // oneDNN emulates bf16 on AVX-512BW
    }
    return false;
}

std::string hostName()
{
    char buf[256] = {};
    ::gethostname(buf, sizeof buf - 1);
    return buf;
}

std::string csvNumber(double v)
{
    if (std::isnan(v)) return "nan";
    return pythonFloatRepr(v);
}

// JSON has no NaN or infinity; a diverged loss must still be recorded, so write null and
// flag it (the reader shows it, never drops it silently).
json jsonNumber(double v)
{
    if (std::isfinite(v)) return v;
    return nullptr;
}

std::map<std::string, std::string> resumeSettings(const TrainConfig& c, const RunPlan& plan, int worldSize)
{
    return {
        {"base_channels", std::to_string(c.baseChannels)},
        {"full_scale", c.fullScale ? "True" : "False"},
        {"N_out_channels", std::to_string(c.outChannels)},
        {"global_batch_size", std::to_string(plan.globalBatch)},
        {"Nsamples", std::to_string(c.nSamples)},
        {"num_epochs", std::to_string(c.numEpochs)},
        {"data_size", std::to_string(c.dataSize)},
        {"seed", std::to_string(plan.seed)},
        {"world_size", std::to_string(worldSize)},
        {"lr_schedule",
         std::string(lrScalingName(c.lrScaling)) + "," + pythonFloatRepr(c.startLr) + "," + pythonFloatRepr(c.endLr) + "," +
             std::to_string(c.warmupSteps)},
        // What the data and the loss are: a resume on other data, crops or weights trains a
        // different model without saying so.
        {"data_loader_config", dataLoaderModeName(c.dataLoader)},
        {"train_path", c.trainPath},
        {"val_path", c.valPath},
        {"box_size", std::to_string(c.trainBox) + "," + std::to_string(c.valBox)},
        {"lambda_rho", pythonFloatRepr(c.lambdaRho)},
        {"init", pythonFloatRepr(c.convScale) + "," + pythonFloatRepr(c.convBias)},
    };
}

}  // namespace

void installStopSignals()
{
    struct sigaction action {};
    action.sa_handler = onStopSignal;
    sigemptyset(&action.sa_mask);
    sigaction(SIGUSR1, &action, nullptr);
    sigaction(SIGTERM, &action, nullptr);
}

void recordFailure(const RunPlan& plan, const std::string& message)
{
    const fs::path runDir(plan.runDir);
    if (!fs::exists(runDir / "metrics.jsonl")) return;
    try {
        LineFile metrics;
        metrics.open((runDir / "metrics.jsonl").string());
        metrics.writeLine(json{{"kind", "event"}, {"event", "failed"}, {"t", unixNow()}, {"message", message}}.dump());
        closeManifest(runDir.string(), "failed", message);
    } catch (const std::exception&) {
        // The failure itself is reported by the caller; a second one while recording it is not.
    }
}

int threadsPerRank(int threads, int localRanks) { return threads > 0 ? threads : std::max(1, usableCores() / std::max(1, localRanks)); }

RunPlan planRun(const TrainOptions& o)
{
    const TrainConfig& c = o.config;
    RunPlan plan;
    if (o.localBatchSize) {
        plan.localBatch = *o.localBatchSize;
        plan.globalBatch = plan.localBatch * o.worldSize;
    } else {
        plan.globalBatch = c.globalBatchSize;
        plan.localBatch = c.globalBatchSize / o.worldSize;
        if (plan.localBatch < 1)
            throw ConfigError(c.yamlPath + ": config '" + c.name + "': global_batch_size " + std::to_string(c.globalBatchSize) +
                              " is smaller than the world size " + std::to_string(o.worldSize));
    }
    plan.samplesPerRank = (c.nSamples + o.worldSize - 1) / o.worldSize;  // DistributedSampler: ⌈N / world⌉
    plan.stepsPerEpoch = (plan.samplesPerRank + plan.localBatch - 1) / plan.localBatch;
    plan.valSamplesPerRank = (c.nSamplesVal + o.worldSize - 1) / o.worldSize;
    plan.totSteps = c.numEpochs * (c.nSamples / plan.globalBatch);
    if (plan.totSteps < 1)
        throw ConfigError(c.yamlPath + ": config '" + c.name + "': Nsamples " + std::to_string(c.nSamples) +
                          " gives no step at global batch " + std::to_string(plan.globalBatch));
    if (c.seed) {
        plan.seed = *c.seed;
    } else {
        std::random_device rd;
        plan.seed = (uint64_t(rd()) << 32) ^ rd();
    }
    plan.threads = threadsPerRank(o.threads, o.localRanks);
    if (!o.runDir.empty())
        plan.runDir = o.runDir;
    else
        plan.runDir = (fs::path(c.expdir) / c.name / (std::to_string(o.worldSize) + "GPU") / o.runNum).string();
    return plan;
}

void describeRun(const TrainOptions& o, const RunPlan& plan)
{
    const TrainConfig& c = o.config;
    std::cout << "Configuration file: " << c.yamlPath << "\n";
    std::cout << "Configuration name: " << c.name << "\n";
    for (const auto& e : c.entries) std::cout << "  " << e.key << " " << e.display << "    # " << e.location << "\n";
    for (const auto& note : o.notes) std::cout << "warning: " << note << "\n";
    std::cout << "world size: " << o.worldSize << (o.noddp && o.worldSize > 1 ? " (--noddp: replicas train apart)" : "")
              << ", local batch: " << plan.localBatch << ", global batch: " << plan.globalBatch << ", steps/epoch: " << plan.stepsPerEpoch
              << ", tot_steps: " << plan.totSteps << "\n";
    LrSchedule schedule{c.lrScaling, c.startLr, c.endLr, c.warmupSteps, plan.totSteps, plan.globalBatch, c.baseBatchSize};
    std::cout << "lr: init " << pythonFloatRepr(schedule.initLr()) << ", step 1 " << pythonFloatRepr(schedule.at(1)) << ", last step "
              << pythonFloatRepr(schedule.at(plan.totSteps)) << "\n";
    std::cout << "run folder: " << plan.runDir << "\n";
    UNet model(unetOptions(c));
    std::cout << "model: U-Net, " << c.levels() << " levels, base_channels " << c.baseChannels << ", input (4, " << c.dataSize << ", "
              << c.dataSize << ", " << c.dataSize << ")\n";
    char row[160];
    std::snprintf(row, sizeof row, "  %-11s %-20s %6s %6s %9s %13s\n", "layer", "type", "in", "out", "spatial", "params");
    std::cout << row;
    for (const auto& l : model->layerTable(c.dataSize)) {
        const std::string spatial = std::to_string(l.spatialIn) + "->" + std::to_string(l.spatialOut);
        std::snprintf(row, sizeof row, "  %-11s %-20s %6lld %6lld %9s %13lld\n", l.name.c_str(), l.kind.c_str(), (long long)l.inChannels,
                      (long long)l.outChannels, spatial.c_str(), (long long)l.parameters);
        std::cout << row;
    }
    std::cout << "parameters: " << model->parameterCount() << std::endl;
}

namespace {

// Fixed-size text exchange over the communicator (host names): 256 bytes per rank.
std::vector<std::string> allgatherText(Communicator& comm, const std::string& text)
{
    constexpr int64_t kBytes = 256;
    torch::Tensor full = torch::zeros({kBytes * comm.size()}, torch::kLong);
    torch::Tensor mine = torch::zeros({kBytes}, torch::kLong);
    for (std::size_t i = 0; i < text.size() && i < std::size_t(kBytes - 1); ++i) mine[int64_t(i)] = int64_t(uint8_t(text[i]));
    comm.allgather(full, mine);
    std::vector<std::string> out;
    for (int r = 0; r < comm.size(); ++r) {
        std::string s;
        for (int64_t i = 0; i < kBytes; ++i) {
            const int64_t c = full[r * kBytes + i].item<int64_t>();
            if (c == 0) break;
            s += char(c);
        }
        out.push_back(s);
    }
    return out;
}

// FNV-1a over the resolved configuration and run plan: ranks launched with different configs
// must not train together.
int64_t configHash(const TrainOptions& o, const RunPlan& plan)
{
    std::string text;
    for (const auto& e : o.config.entries)
        if (e.key != "seed") text += e.key + "=" + e.display + "\n";
    text += "plan=" + std::to_string(plan.localBatch) + "," + std::to_string(plan.globalBatch) + "," + std::to_string(plan.seed) + "," +
        o.strategy + "," + std::to_string(o.sharedStreams) + "," + std::to_string(o.noddp);
    uint64_t h = 1469598103934665603ULL;
    for (unsigned char c : text) h = (h ^ c) * 1099511628211ULL;
    return int64_t(h & 0x7fffffffffffffffULL);
}

// --check_replicas: every rank must hold bit-identical parameters after every step.
void checkReplicas(Communicator& comm, UNet& model, int64_t step)
{
    if (comm.size() == 1) return;
    uint64_t h = 1469598103934665603ULL;
    for (const auto& p : model->parameters()) {
        const torch::Tensor t = p.detach().contiguous();
        const auto* bytes = static_cast<const unsigned char*>(t.data_ptr());
        for (int64_t i = 0; i < t.numel() * int64_t(t.element_size()); ++i) h = (h ^ bytes[i]) * 1099511628211ULL;
    }
    torch::Tensor all = torch::zeros({comm.size()}, torch::kLong);
    comm.allgather(all, torch::full({1}, int64_t(h & 0x7fffffffffffffffULL), torch::kLong));
    std::string differing;
    for (int r = 1; r < comm.size(); ++r)
        if (all[r].item<int64_t>() != all[0].item<int64_t>()) differing += (differing.empty() ? "" : ", ") + std::to_string(r);
    if (!differing.empty())
        throw std::runtime_error("replica check failed after step " + std::to_string(step) + ": the parameters of rank(s) " + differing +
                                 " differ from rank 0's");
}

double allreduceMean(Communicator& comm, double value)
{
    if (comm.size() == 1) return value;
    torch::Tensor t = torch::full({1}, value, torch::kDouble);
    comm.allreduce(t);
    return t.item<double>() / double(comm.size());
}

}  // namespace

namespace {

// One training run, step by step: each method is one stage of runTraining(), in the order it
// calls them. Members hold what the stages hand on to each other.
class Training {
public:
    Training(const TrainOptions& o, RunPlan plan, RunLog& log)
        : o(o), c(o.config), comm(*o.comm), plan(std::move(plan)), log(log), rank0(o.rank == 0), runDir(this->plan.runDir),
          checkpointPath(runDir / "checkpoints" / "latest.pt")
    {}

    int run()
    {
        agreeOnSeed();
        const double startUnix = unixNow();
        at::set_num_threads(plan.threads);
        chooseDevice();
        refuseDifferentConfigs();
        openRunFiles();
        logConfiguration();
        warnAboutThreadedCpuAmp();
        if (rank0)
            for (const auto& note : o.notes) log.warning(note);
        startTelemetry();
        openData();
        buildModel();
        resumeFromCheckpoint();
        startReplicas();
        if (rank0) announceStart(startUnix);
        if (!resumed && !c.enableBenchy) recordInitialLosses();
        log.info("Starting Training Loop...");
        iters = state.iters;
        model->train();
        for (int64_t epoch = state.epoch; epoch < c.numEpochs; ++epoch) {
            if (auto stopped = trainEpoch(epoch)) return *stopped;
            if (auto stopped = endEpoch(epoch)) return *stopped;
        }
        finishTelemetry();
        comm.barrier();
        event("finished", iters, c.numEpochs);
        if (rank0) closeManifest(runDir.string(), "finished");
        log.info("DONE ---- rank " + std::to_string(o.rank));
        return 0;
    }

private:
    // A run resumed without a fixed seed keeps the seed it drew at its first start (its manifest
    // records it): a new draw would not match the checkpoint. A seed drawn at random is rank 0's
    // for everyone.
    void agreeOnSeed()
    {
        if (!c.seed && o.resume && rank0 && fs::exists(checkpointPath)) {
            std::ifstream in(runDir / "manifest.json");
            const json m = json::parse(in, nullptr, false);
            if (!m.is_discarded() && m.contains("seed") && m["seed"].is_string()) plan.seed = std::stoull(m["seed"].get<std::string>());
        }
        if (!c.seed && comm.size() > 1) {
            torch::Tensor seed = torch::full({1}, int64_t(plan.seed), torch::kLong);
            comm.broadcast(seed, 0);
            plan.seed = uint64_t(seed.item<int64_t>());
        }
    }

    void chooseDevice()
    {
        if (torch::cuda::is_available())
            device = torch::Device(torch::kCUDA, int8_t(o.dist.localRank % std::max<int64_t>(1, torch::cuda::device_count())));
        if (c.enableAmp && !device.is_cuda() && !cpuHasBf16())
            throw ConfigError(c.yamlPath + ": config '" + c.name +
                              "': enable_amp needs bf16 support, and this CPU has neither AVX-512 nor AMX");
    }

    // An open bug, measured with Debian's libtorch 1.13 on a 2-core AVX-512 machine: cpu-tiny in
    // bf16 gave a NaN loss in 2 of 40 otherwise identical runs with 2 intra-op threads, in 6 of 30
    // with 1 thread and 2 prefetch workers, and under test_train_cli every time even with 1 thread
    // and no workers (0 of 30 when the same command ran by hand). fp32: 0 of 40, and its same-seed
    // runs are bit-identical. Not found yet; said, not hidden.
    void warnAboutThreadedCpuAmp()
    {
        if (rank0 && c.enableAmp && !device.is_cuda())
            log.warning("enable_amp on the CPU: bf16 CPU runs of this build have given sporadic NaN losses (an open bug, "
                        "seen most with several threads or prefetch workers); check the losses, or train in fp32");
    }

    // Ranks launched with different configs would train different models: stop before any work.
    void refuseDifferentConfigs()
    {
        if (comm.size() == 1) return;
        torch::Tensor hashes = torch::zeros({comm.size()}, torch::kLong);
        torch::Tensor mine = torch::full({1}, configHash(o, plan), torch::kLong);
        comm.allgather(hashes, mine);
        std::string differing;
        for (int r = 1; r < comm.size(); ++r)
            if (hashes[r].item<int64_t>() != hashes[0].item<int64_t>()) differing += (differing.empty() ? "" : ", ") + std::to_string(r);
        if (!differing.empty())
            throw ConfigError("rank(s) " + differing +
                              " were started with a configuration that differs from rank 0's "
                              "(config, overrides, batch, seed or strategy); every rank must get the same arguments");
    }

    // Run folder and files: rank 0 owns them; other ranks write only rank-<N>.log.
    void openRunFiles()
    {
        std::error_code ec;
        fs::create_directories(runDir / "checkpoints", ec);
        if (ec || !fs::is_directory(runDir))
            throw std::runtime_error(plan.runDir + ": cannot create the run folder" + (ec ? ": " + ec.message() : ""));
        if (::access(runDir.c_str(), W_OK) != 0) throw std::runtime_error(plan.runDir + ": the run folder is not writable");
        if (!rank0) {
            log.openFile((runDir / ("rank-" + std::to_string(o.rank) + ".log")).string());
            return;
        }
        log.openFile((runDir / "out.log").string());
        metrics.open((runDir / "metrics.jsonl").string());
        log.info(tensorboard.open(runDir.string(), unixNow()));
        const bool newCsv = !fs::exists(runDir / "epochs.csv") || fs::file_size(runDir / "epochs.csv") == 0;
        epochsCsvWidth = epochsCsvColumns().size();
        if (!newCsv) {
            std::ifstream existing(runDir / "epochs.csv");
            std::string header;
            std::getline(existing, header);
            epochsCsvWidth = std::min(epochsCsvWidth, std::size_t(std::count(header.begin(), header.end(), ',') + 1));
        }
        epochsCsv.open((runDir / "epochs.csv").string());
        if (newCsv) {
            std::string header;
            for (const auto& col : epochsCsvColumns()) header += (header.empty() ? "" : ",") + col;
            epochsCsv.writeLine(header);
        }
    }

    // Configuration dump, as the original's YParams.log().
    void logConfiguration()
    {
        if (!rank0) return;
        log.info("------------------ Configuration ------------------");
        log.info("Configuration file: " + c.yamlPath);
        log.info("Configuration name: " + c.name);
        for (const auto& e : c.entries) log.info(e.key + " " + e.display);
        log.info("---------------------------------------------------");
        if (c.dataLoader == DataLoaderMode::DaliLowmem)
            log.warning("data_loader_config dali-lowmem: NVIDIA DALI is not part of scaledesk-train; reading the same HDF5 "
                        "crops through the native lowmem path (the 24-entry transform table, not DALI's O_h augmentation)");
    }

    void openData()
    {
        log.info("rank " + std::to_string(o.rank) + ", begin data loader init");
        trainSource = openVolumeSource(c.dataLoader, c.trainPath, c.trainBox, c.outChannels, plan.seed);
        validSource = openVolumeSource(c.dataLoader, c.valPath, c.valBox, c.outChannels, plan.seed ^ 0xa5a5a5a5ULL);
        log.info("rank " + std::to_string(o.rank) + ", data loader initialized with config " + dataLoaderModeName(c.dataLoader));
    }

    void buildModel()
    {
        torch::manual_seed(plan.seed);
        model = UNet(unetOptions(c));
        model->initWeights(c.convScale, c.convBias);
        model->to(device);
        optimizer =
            std::make_unique<torch::optim::Adam>(model->parameters(), torch::optim::AdamOptions(c.startLr).betas({0.9, 0.999}).eps(1e-8));
        schedule = LrSchedule{c.lrScaling, c.startLr, c.endLr, c.warmupSteps, plan.totSteps, plan.globalBatch, c.baseBatchSize};
        settings = resumeSettings(c, plan, o.worldSize);
    }

    // Rank 0 reads the checkpoint; its loop position (here) and its state (startReplicas) reach every rank.
    void resumeFromCheckpoint()
    {
        if (o.resume && rank0) {
            if (fs::exists(checkpointPath)) {
                state = loadCheckpoint(checkpointPath.string(), model, *optimizer, settings);
                checkLoopPosition();
                resumed = true;
                log.info("Resuming from " + checkpointPath.string() + " at epoch " + std::to_string(state.epoch + 1) + ", step " +
                         std::to_string(state.iters));
            } else {
                log.info("No checkpoint in " + (runDir / "checkpoints").string() + "; starting from the beginning");
            }
        }
        if (comm.size() == 1) return;
        torch::Tensor position = torch::tensor({int64_t(resumed), state.epoch, state.batchInEpoch, state.iters}, torch::kLong);
        comm.broadcast(position, 0);
        resumed = position[0].item<int64_t>() != 0;
        state.epoch = position[1].item<int64_t>();
        state.batchInEpoch = position[2].item<int64_t>();
        state.iters = position[3].item<int64_t>();
    }

    // A checkpoint's loop position indexes loaders and sums: refuse one outside what this run has.
    void checkLoopPosition() const
    {
        auto refuse = [&](const std::string& field, int64_t value, int64_t max) {
            throw CheckpointError(checkpointPath.string() + ": field '" + field + "' is " + std::to_string(value) + ", outside 0.." +
                                  std::to_string(max) + " for this run");
        };
        if (state.epoch < 0 || state.epoch > c.numEpochs) refuse("epoch", state.epoch, c.numEpochs);
        if (state.batchInEpoch < 0 || state.batchInEpoch > plan.stepsPerEpoch)
            refuse("batch_in_epoch", state.batchInEpoch, plan.stepsPerEpoch);
        if (state.iters < 0 || state.iters > c.numEpochs * plan.stepsPerEpoch)
            refuse("iters", state.iters, c.numEpochs * plan.stepsPerEpoch);
        if (std::isinf(state.epochLossSum))
            throw CheckpointError(checkpointPath.string() + ": field 'epoch_loss_sum' is not a finite number");
    }

    // DDP semantics: every rank starts from rank 0's parameters (and, resumed, its Adam state).
    // --noddp (NERSC's benchmarking mode): the replicas start alike (same seed; a resume gives every
    // rank rank 0's checkpoint) and then train apart: no gradient is ever exchanged.
    void startReplicas()
    {
        broadcastState(comm, model, *optimizer);
        strategyLabel = comm.size() > 1 && !o.noddp ? o.strategy : "none";
        sync = makeGradientSync(strategyLabel, comm, model, *optimizer, o.bucketCapMb, o.fusionMb, o.zeroBucketMb);
        sync->importOptimizerState();
        if (rank0 && o.noddp && comm.size() > 1)
            log.info("--noddp: each of the " + std::to_string(comm.size()) +
                     " ranks trains its own replica; gradients are not synchronised. Losses are averaged over ranks as "
                     "in the original; the checkpoint holds rank 0's replica");
        // The node of each rank (SLURM's node name under SLURM): what `nodes` counts.
        hosts = comm.size() > 1 ? allgatherText(comm, nodeName()) : std::vector<std::string>{nodeName()};
    }

    void announceStart(double startUnix)
    {
        std::vector<std::string> distinct = hosts;
        std::sort(distinct.begin(), distinct.end());
        distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
        RunManifest m;
        m.runId = runDir.filename().string() == o.runNum ? c.name + "-" + o.runNum : runDir.filename().string();
        m.config = c.name;
        m.yamlConfig = c.yamlPath;
        m.strategy = strategyLabel;
        m.backend = comm.backend();
        m.launcher = o.dist.source;
        m.worldSize = o.worldSize;
        m.nodes = int(distinct.size());
        m.ranksPerNode = o.dist.localSize;
        m.hostnames = hosts;
        m.device = device.is_cuda() ? "cuda" : "cpu";
        m.threadsPerRank = plan.threads;
        m.localBatch = plan.localBatch;
        m.globalBatch = plan.globalBatch;
        m.bucketCapMb = o.bucketCapMb;
        m.fusionMb = o.fusionMb;
        m.zeroBucketMb = o.zeroBucketMb;
        m.dataStreams = o.sharedStreams ? "shared" : "independent";
        m.stepsPerEpoch = plan.stepsPerEpoch;
        m.totSteps = plan.totSteps;
        m.numEpochs = c.numEpochs;
        m.nSamples = c.nSamples;
        m.nSamplesVal = c.nSamplesVal;
        m.dataLoader = dataLoaderModeName(c.dataLoader);
        m.dataSize = c.dataSize;
        m.baseChannels = c.baseChannels;
        m.fullScale = c.fullScale;
        m.parameters = model->parameterCount();
        {
            std::vector<int64_t> numels;
            for (const auto& p : model->parameters()) numels.push_back(p.numel());
            m.messageBytes = strategyMessageBytes(numels, o.bucketCapMb, o.fusionMb, o.zeroBucketMb, o.worldSize);
        }
        m.enableAmp = c.enableAmp;
        m.noddp = o.noddp;
        m.broadcastBuffers = o.broadcastBuffers;
        m.gpuSampleSeconds = o.gpuSampleSeconds;
        m.gpuTelemetry = gpuStatus;
        m.gpuIndex = gpu ? int(gpu->gpu()) : -1;
        m.seed = plan.seed;
        m.mpiVersion = mpiLibraryVersion();
        m.startUnix = startUnix;
        if (const std::string warning = writeStartManifest(runDir.string(), m, resumed); !warning.empty()) log.warning(warning);
        event(resumed ? "resumed" : "started", state.iters, state.epoch + 1,
              {{"pid", int(::getpid())},
               {"host", hostName()},
               {"strategy", strategyLabel},
               {"noddp", o.noddp},
               {"backend", comm.backend()},
               {"world_size", o.worldSize}});
    }

    // Rank 0's record: a line of metrics.jsonl and, with its scalars, an event of logs/ (TensorBoard).
    void writeMetric(const json& record)
    {
        metrics.writeLine(record.dump());
        tensorboard.record(record);
    }

    void event(const std::string& name, int64_t step, int64_t epoch, json extra = json::object())
    {
        if (!rank0) return;
        json j = {{"kind", "event"}, {"event", name}, {"t", unixNow()}, {"step", step}, {"epoch", epoch}};
        for (auto& [k, v] : extra.items()) j[k] = v;
        writeMetric(j);
    }

    void saveState(const CheckpointState& s)
    {
        sync->exportOptimizerState();  // zero1: a collective, on every rank
        if (rank0) saveCheckpoint(checkpointPath.string(), model, *optimizer, s);
    }

    LoaderPlan loaderPlan(Stream stream, int64_t epoch, int64_t samples, int64_t firstBatch) const
    {
        LoaderPlan p;
        p.seed = plan.seed;
        p.stream = stream;
        p.epoch = epoch;
        p.crop = c.dataSize;
        p.numSamples = samples;
        p.batchSize = plan.localBatch;
        p.firstBatch = firstBatch;
        p.workers = c.numDataWorkers;
        if (o.sharedStreams) {
            p.streamRank = 0;
            p.indexStride = plan.localBatch * o.worldSize;
            p.indexOffset = int64_t(o.rank) * plan.localBatch;
        } else {
            p.streamRank = o.rank;
        }
        return p;
    }

    // Mean loss over a pass; every batch's loss is averaged over ranks first (NERSC validation).
    double evaluate(const std::shared_ptr<VolumeSource>& source, Stream stream, int64_t epoch, int64_t samples, bool autocast)
    {
        // The loader's buffers are filled by worker threads outside inference mode: create them first.
        BatchLoader loader(source, loaderPlan(stream, epoch, samples, 0));
        double sum = 0.0;
        int64_t count = 0;
        {
            c10::InferenceMode inference;
            model->eval();
            while (auto batch = loader.next()) {
                AutocastGuard amp(autocast, device);
                const torch::Tensor out = model->forward(batch->input.to(device));
                const double local = computeLoss(out.to(torch::kFloat), batch->target.to(device), c.lambdaRho).item<double>();
                sum += allreduceMean(comm, local);
                ++count;
            }
        }
        model->train();
        return count ? sum / double(count) : std::nan("");
    }

    // Step-0 losses so that relative-time plots line up (sc21 PR #14): one batch each, no autocast.
    void recordInitialLosses()
    {
        const double initTrain = evaluate(trainSource, Stream::InitialTrain, 0, plan.localBatch, false);
        const double initValid = evaluate(validSource, Stream::InitialValid, 0, plan.localBatch, false);
        if (rank0)
            writeMetric(json{{"kind", "initial"},
                             {"step", 0},
                             {"epoch", 0},
                             {"t", unixNow()},
                             {"train_loss", jsonNumber(initTrain)},
                             {"val_loss", jsonNumber(initValid)}});
    }

    // All ranks must stop at the same step: the stop request is agreed on by an allreduce.
    bool stopRequested()
    {
        if (comm.size() == 1) return g_stopSignal != 0;
        torch::Tensor flag = torch::full({1}, int64_t(g_stopSignal != 0), torch::kLong);
        comm.allreduce(flag);
        return flag.item<int64_t>() > 0;
    }

    int stopForRequeue(const std::string& message, int64_t epoch, json extra)
    {
        log.info(message);
        extra["checkpoint"] = checkpointPath.string();
        finishTelemetry();
        event("preempted", iters, epoch + 1, extra);
        if (rank0) closeManifest(runDir.string(), "preempted");
        return kExitPreempted;
    }

    // One epoch's training steps; the exit code when a stop request ends the run mid-epoch.
    std::optional<int> trainEpoch(int64_t epoch)
    {
        const int64_t firstBatch = (resumed && epoch == state.epoch) ? state.batchInEpoch : 0;
        lossSum = (resumed && epoch == state.epoch) ? state.epochLossSum : 0.0;
        BatchLoader loader(trainSource, loaderPlan(Stream::Train, epoch, plan.samplesPerRank, firstBatch));
        dataWait = computeTotal = commTotal = exposedTotal = 0.0;
        stepsThisRun = samplesThisRank = 0;
        batchesDone = firstBatch;
        comm.barrier();  // epoch wall time is the job's, not one rank's
        const auto epochStart = Clock::now();
        if (gpu) gpu->beginWindow();
        for (;;) {
            const auto t0 = Clock::now();
            auto batch = loader.next();
            if (!batch) break;
            torch::Tensor input = batch->input.to(device);
            torch::Tensor target = batch->target.to(device);
            if (plantImbalance && input.size(0) > 1) {
                input = input.narrow(0, 0, input.size(0) - 1);
                target = target.narrow(0, 0, target.size(0) - 1);
                plantImbalance = false;
            }
            const auto t1 = Clock::now();
            ++iters;
            const double lr = schedule.at(iters);
            sync->zeroGrad();
            torch::Tensor loss;
            {
                AutocastGuard amp(c.enableAmp, device);
                loss = computeLoss(model->forward(input).to(torch::kFloat), target, c.lambdaRho);
            }
            const double lossValue = loss.item<double>();
            const auto t2 = Clock::now();
            loss.backward();
            const auto t3 = Clock::now();
            sync->afterBackward();
            sync->step(lr);
            const auto t4 = Clock::now();
            const SyncTimes comms = sync->takeTimes();
            if (gpu) gpu->setStep(iters);
            lossSum += lossValue;
            ++batchesDone;
            ++stepsThisRun;
            samplesThisRank += input.size(0);
            const double data = seconds(t0, t1), fwd = seconds(t1, t2), bwd = seconds(t2, t3);
            const double opt = std::max(0.0, seconds(t3, t4) - comms.exposedSeconds);
            dataWait += data;
            computeTotal += fwd + bwd + opt;
            commTotal += comms.commSeconds;
            exposedTotal += comms.exposedSeconds;
            if (rank0) {
                writeMetric(json{{"kind", "step"},
                                 {"step", iters},
                                 {"epoch", epoch + 1},
                                 {"t", unixNow()},
                                 {"loss", jsonNumber(lossValue)},
                                 {"lr", lr},
                                 {"step_s", seconds(t0, t4)},
                                 {"data_s", data},
                                 {"forward_s", fwd},
                                 {"backward_s", bwd},
                                 {"optim_s", opt},
                                 {"compute_s", fwd + bwd + opt},
                                 {"comm_s", comms.commSeconds},
                                 {"comm_exposed_s", comms.exposedSeconds},
                                 {"samples", int64_t(input.size(0)) * o.worldSize}});
            }
            // Rank 0's own GPU samples as they come (other ranks' arrive at the epoch's end).
            if (rank0 && gpu) writeGpuSamples(0, gpu->takeSamples());
            if (o.checkReplicas) checkReplicas(comm, model, iters);
            if (stopRequested()) {
                saveState(CheckpointState{epoch, batchesDone, iters, lossSum, settings});
                const std::string signalName = g_stopSignal == SIGUSR1 ? "SIGUSR1" : g_stopSignal == SIGTERM ? "SIGTERM" : "a peer's stop";
                return stopForRequeue("Received " + signalName + ": checkpoint written to " + checkpointPath.string() + " at step " +
                                          std::to_string(iters) + "; exiting for requeue",
                                      epoch, {{"signal", signalName}});
            }
        }
        rankLoopTime = seconds(epochStart, Clock::now());
        comm.barrier();
        epochTime = seconds(epochStart, Clock::now());
        return std::nullopt;
    }

    // After an epoch's steps: the fairness check, the NERSC log lines, validation, the epoch's
    // records, and the end-of-epoch checkpoint. The exit code when a stop request ends the run here.
    std::optional<int> endEpoch(int64_t epoch)
    {
        // Per-rank loop times and sample counts: straggler spread and the fairness check.
        torch::Tensor perRank = torch::zeros({2 * comm.size()}, torch::kDouble);
        comm.allgather(perRank, torch::tensor({rankLoopTime, double(samplesThisRank)}, torch::kDouble));
        double maxRank = 0.0, minRank = 1e300;
        std::string counts;
        bool fair = true;
        int64_t samplesGlobal = 0;
        for (int r = 0; r < comm.size(); ++r) {
            const double t = perRank[2 * r].item<double>();
            const int64_t n = int64_t(perRank[2 * r + 1].item<double>());
            maxRank = std::max(maxRank, t);
            minRank = std::min(minRank, t);
            counts += (r ? ", " : "") + std::to_string(n);
            fair = fair && n == samplesThisRank;
            samplesGlobal += n;
        }
        if (!fair)
            throw std::runtime_error("fairness check failed in epoch " + std::to_string(epoch + 1) +
                                     ": ranks processed different numbers of samples [" + counts +
                                     "]; a scaling measurement from this run would be wrong");

        const double samplesPerSec = double(stepsThisRun * plan.globalBatch) / epochTime;
        const double trainLoss = lossSum / double(std::max<int64_t>(1, batchesDone));
        const double lastLr = schedule.at(iters);
        if (rank0) {
            log.info("Time taken for epoch " + std::to_string(epoch + 1) + " is " + pythonFloatRepr(epochTime) + " sec, avg " +
                     pythonFloatRepr(samplesPerSec) + " samples/sec");
            char line[96];
            std::snprintf(line, sizeof line, "  Avg train loss=%f", trainLoss);
            log.info(line);
        }

        double valLoss = std::nan(""), valTime = 0.0;
        if (!c.enableBenchy) {
            const auto v0 = Clock::now();
            valLoss = evaluate(validSource, Stream::Valid, epoch, plan.valSamplesPerRank, c.enableAmp);
            valTime = seconds(v0, Clock::now());
            if (rank0) {
                char line[96];
                std::snprintf(line, sizeof line, "  Avg val loss=%f", valLoss);
                log.info(line);
                log.info("  Total validation time: " + pythonFloatRepr(valTime) + " sec");
            }
        }
        const GpuTotals gpuTotals = recordGpuEpoch(epoch);
        if (rank0) {
            const double now = unixNow();
            json epochRecord{{"kind", "epoch"},
                             {"epoch", epoch + 1},
                             {"step", iters},
                             {"t", now},
                             {"train_loss", jsonNumber(trainLoss)},
                             {"val_loss", jsonNumber(valLoss)},
                             {"lr", lastLr},
                             {"epoch_s", epochTime},
                             {"val_s", valTime},
                             {"steps", stepsThisRun},
                             {"samples", samplesGlobal},
                             {"samples_per_s", samplesPerSec},
                             {"iters_per_s", double(stepsThisRun) / epochTime},
                             {"data_s", dataWait},
                             {"compute_s", computeTotal},
                             {"comm_s", commTotal},
                             {"comm_exposed_s", exposedTotal},
                             {"max_rank_s", maxRank},
                             {"min_rank_s", minRank}};
            if (gpuTotals.ranks > 0) {
                epochRecord["gpu_energy_wh"] = jsonNumber(gpuTotals.energyWh);
                epochRecord["gpu_util_pct"] = jsonNumber(gpuTotals.meanUtilPct);
            }
            writeMetric(epochRecord);
            const std::vector<std::string> row = {std::to_string(epoch + 1),
                                                  std::to_string(iters),
                                                  csvNumber(epochTime + valTime),
                                                  csvNumber(epochTime),
                                                  csvNumber(valTime),
                                                  std::to_string(samplesGlobal),
                                                  std::to_string(stepsThisRun),
                                                  csvNumber(samplesPerSec),
                                                  csvNumber(dataWait),
                                                  csvNumber(computeTotal),
                                                  csvNumber(exposedTotal),
                                                  csvNumber(maxRank),
                                                  csvNumber(minRank),
                                                  csvNumber(trainLoss),
                                                  csvNumber(valLoss),
                                                  csvNumber(lastLr),
                                                  csvNumber(now),
                                                  gpuTotals.ranks > 0 ? csvNumber(gpuTotals.energyWh) : std::string(),
                                                  gpuTotals.ranks > 0 ? csvNumber(gpuTotals.meanUtilPct) : std::string()};
            std::string text;
            // A run resumed from an older trainer's file keeps that file's columns.
            for (std::size_t i = 0; i < row.size() && i < epochsCsvWidth; ++i) text += (i == 0 ? "" : ",") + row[i];
            epochsCsv.writeLine(text);
        }
        saveState(CheckpointState{epoch + 1, 0, iters, 0.0, settings});
        event("checkpoint", iters, epoch + 1, {{"path", checkpointPath.string()}});
        if (stopRequested())
            return stopForRequeue("Received a stop signal: the end-of-epoch checkpoint is in " + checkpointPath.string() +
                                      "; exiting for requeue",
                                  epoch, json::object());
        return std::nullopt;
    }

    // GPU telemetry (docs/trainer.md): every rank samples its own GPU through NVML, loaded at run
    // time; each rank says once in its log what it samples, or why nothing.
    void startTelemetry()
    {
        if (o.gpuSampleSeconds <= 0) {
            gpuStatus = "off";
            log.info("GPU telemetry: off (--gpu_sample_s 0)");
            return;
        }
        gpuStatus = "unavailable";
        std::string why;
        auto nvml = NvmlLibrary::open(o.nvmlLibrary.empty() ? NvmlLibrary::defaultPath() : o.nvmlLibrary, why);
        if (!nvml) {
            log.info("no GPU telemetry: no NVML (" + why + "); nothing recorded");
            return;
        }
        // A CPU run samples the GPU its local rank would use: on a GPU node that shows it idle.
        const int cudaIndex = device.is_cuda() ? int(device.index()) : o.dist.localRank;
        if (!nvml->selectCudaDevice(cudaIndex, std::getenv("CUDA_VISIBLE_DEVICES"), why)) {
            log.info("no GPU telemetry: no GPU to sample (" + why + "); nothing recorded");
            return;
        }
        const std::string every = " every " + pythonFloatRepr(o.gpuSampleSeconds) + " s";
        const std::string index = std::to_string(nvml->selectedIndex());
        if (device.is_cuda())
            log.info("GPU telemetry: sampling GPU " + index + " (cuda:" + std::to_string(cudaIndex) + ")" + every);
        else
            log.info("GPU telemetry: CPU run; sampling GPU " + index + " of this node, which this trainer does not use," + every);
        gpu = std::make_unique<GpuSampler>(std::move(nvml), o.gpuSampleSeconds, [this](const std::string& m) { log.warning(m); });
        gpuStatus = "sampling";
    }

    void writeGpuSamples(int rank, const std::vector<GpuSample>& samples, int gpuIndex = -1)
    {
        for (const GpuSample& s : samples)
            writeMetric(json{{"kind", "gpu"},
                             {"t", s.t},
                             {"step", s.step},
                             {"rank", rank},
                             {"gpu", gpuIndex >= 0 ? gpuIndex : int(gpu->gpu())},
                             {"power_w", jsonNumber(s.powerW)},
                             {"util_pct", jsonNumber(s.utilPct)},
                             {"mem_used_mib", jsonNumber(s.memUsedMiB)},
                             {"mem_total_mib", jsonNumber(s.memTotalMiB)}});
    }

    // Every rank's waiting samples reach rank 0, which writes them. The communicator has no
    // gather: an allgather of the counts, then of the samples padded to the longest list. Called by
    // every rank at the same points (epoch end, stop, finish), telemetry or not.
    void flushGpuSamples()
    {
        std::vector<GpuSample> mine = gpu ? gpu->takeSamples() : std::vector<GpuSample>{};
        if (comm.size() == 1) {
            if (!mine.empty()) writeGpuSamples(0, mine);
            return;
        }
        torch::Tensor counts = torch::zeros({comm.size()}, torch::kLong);
        comm.allgather(counts, torch::full({1}, int64_t(mine.size()), torch::kLong));
        const int64_t longest = counts.max().item<int64_t>();
        if (longest == 0) return;
        constexpr int64_t kFields = 7;
        torch::Tensor packed = torch::zeros({longest * kFields}, torch::kDouble);
        auto* p = packed.data_ptr<double>();
        for (const GpuSample& s : mine) {
            for (double v : {s.t, double(s.step), double(gpu->gpu()), s.powerW, s.utilPct, s.memUsedMiB, s.memTotalMiB}) *p++ = v;
        }
        torch::Tensor all = torch::zeros({comm.size() * longest * kFields}, torch::kDouble);
        comm.allgather(all, packed);
        if (!rank0) return;
        const double* a = all.data_ptr<double>();
        for (int r = 0; r < comm.size(); ++r) {
            std::vector<GpuSample> theirs;
            int gpuIndex = -1;
            for (int64_t i = 0; i < counts[r].item<int64_t>(); ++i) {
                const double* f = a + (int64_t(r) * longest + i) * kFields;
                GpuSample s;
                s.t = f[0];
                s.step = int64_t(f[1]);
                gpuIndex = int(f[2]);
                s.powerW = f[3];
                s.utilPct = f[4];
                s.memUsedMiB = f[5];
                s.memTotalMiB = f[6];
                theirs.push_back(s);
            }
            writeGpuSamples(r, theirs, gpuIndex);
        }
    }

    struct GpuTotals {
        int ranks = 0;                   ///< ranks that sampled a GPU this epoch
        double energyWh = std::nan("");  ///< summed over those that measured power
        double meanUtilPct = std::nan("");
    };

    // The epoch's GPU samples and one `gpu_epoch` summary per sampling rank; collective.
    GpuTotals recordGpuEpoch(int64_t epoch)
    {
        const bool have = gpu != nullptr;
        const GpuWindow w = have ? gpu->endWindow() : GpuWindow{};
        flushGpuSamples();
        constexpr int64_t kFields = 8;
        const std::vector<double> mine = {
            double(have),   have ? double(gpu->gpu()) : -1.0, double(w.samples), w.seconds, w.energyWh, w.meanPowerW, w.meanUtilPct,
            w.maxMemUsedMiB};
        torch::Tensor all = torch::tensor(mine, torch::kDouble);
        if (comm.size() > 1) {
            torch::Tensor gathered = torch::zeros({comm.size() * kFields}, torch::kDouble);
            comm.allgather(gathered, all);
            all = gathered;
        }
        GpuTotals totals;
        if (!rank0) return totals;
        const double* a = all.data_ptr<double>();
        double utilSum = 0.0;
        int utilRanks = 0;
        for (int r = 0; r < comm.size(); ++r) {
            const double* f = a + int64_t(r) * kFields;
            if (f[0] == 0.0) continue;
            ++totals.ranks;
            if (!std::isnan(f[4])) totals.energyWh = (std::isnan(totals.energyWh) ? 0.0 : totals.energyWh) + f[4];
            if (!std::isnan(f[6])) {
                utilSum += f[6];
                ++utilRanks;
            }
            writeMetric(json{{"kind", "gpu_epoch"},
                             {"t", unixNow()},
                             {"step", iters},
                             {"epoch", epoch + 1},
                             {"rank", r},
                             {"gpu", int(f[1])},
                             {"samples", int64_t(f[2])},
                             {"window_s", f[3]},
                             {"energy_wh", jsonNumber(f[4])},
                             {"mean_power_w", jsonNumber(f[5])},
                             {"mean_util_pct", jsonNumber(f[6])},
                             {"max_mem_used_mib", jsonNumber(f[7])}});
        }
        if (utilRanks > 0) totals.meanUtilPct = utilSum / double(utilRanks);
        return totals;
    }

    // At the end or a stop: the sampler ends, and what it had not handed over is written; collective.
    void finishTelemetry()
    {
        if (gpu) gpu->stop();
        flushGpuSamples();
    }

    const TrainOptions& o;
    const TrainConfig& c;
    Communicator& comm;
    RunPlan plan;
    RunLog& log;
    const bool rank0;
    const fs::path runDir;
    const fs::path checkpointPath;
    torch::Device device{torch::kCPU};
    LineFile metrics, epochsCsv;
    std::size_t epochsCsvWidth = 0;  ///< columns of epochs.csv as its header has them
    TensorBoardLog tensorboard;      ///< rank 0's logs/events.out.tfevents.*
    std::shared_ptr<VolumeSource> trainSource, validSource;
    UNet model{nullptr};
    std::unique_ptr<torch::optim::Adam> optimizer;
    LrSchedule schedule{};
    std::map<std::string, std::string> settings;
    CheckpointState state;
    bool resumed = false;
    std::unique_ptr<GradientSync> sync;
    std::string strategyLabel;
    std::vector<std::string> hosts;
    std::unique_ptr<GpuSampler> gpu;  ///< null: no telemetry on this rank
    std::string gpuStatus;            ///< sampling, off or unavailable
    // Test-only fault injection (docs/trainer.md): this rank drops one sample of its first batch,
    // which the fairness check must catch.
    bool plantImbalance =
        std::getenv("SCALEDESK_FAULT_SHORT_BATCH_RANK") && std::atoi(std::getenv("SCALEDESK_FAULT_SHORT_BATCH_RANK")) == o.rank;
    // The loop's position and the current epoch's sums.
    int64_t iters = 0, batchesDone = 0, stepsThisRun = 0, samplesThisRank = 0;
    double lossSum = 0.0, dataWait = 0.0, computeTotal = 0.0, commTotal = 0.0, exposedTotal = 0.0;
    double rankLoopTime = 0.0, epochTime = 0.0;
};

}  // namespace

int runTraining(const TrainOptions& o, RunPlan plan, RunLog& log) { return Training(o, std::move(plan), log).run(); }

}  // namespace scaledesk::train
