// One training run from start to end: the stages in the order run() calls them. The step itself is
// run/trainstep.cpp, validation run/validation.cpp, GPU telemetry run/telemetry.cpp and rank 0's
// files run/recorder.cpp.
#include "run/trainer.h"

#include "amp/mixedprecision.h"
#include "data/dataset.h"
#include "data/hdf5volume.h"
#include "device/device.h"
#include "device/stepclock.h"
#include "dist/buckets.h"
#include "dist/gradnoise.h"
#include "dist/gradsync.h"
#include "dist/smallcollectives.h"
#include "model/unet.h"
#include "run/bf16check.h"
#include "run/checkpoint.h"
#include "run/recorder.h"
#include "run/runfiles.h"
#include "run/telemetry.h"
#include "run/trainstep.h"
#include "run/validation.h"

#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <thread>
#include <unistd.h>

namespace scaledesk::train {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

volatile std::sig_atomic_t g_stopSignal = 0;

extern "C" void onStopSignal(int signal) { g_stopSignal = signal; }

using Clock = std::chrono::steady_clock;
double seconds(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

std::string hostName()
{
    char buf[256] = {};
    ::gethostname(buf, sizeof buf - 1);
    return buf;
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

// The sums of an epoch's steps on this rank.
struct EpochSums {
    int64_t steps = 0, samples = 0;
    double loss = 0.0, data = 0.0, compute = 0.0, comm = 0.0, exposed = 0.0;
};

class Training {
public:
    Training(const TrainOptions& o, RunPlan plan, RunLog& log)
        : o(o), c(o.config), comm(*o.comm), plan(std::move(plan)), log(log), rank0(o.rank == 0), runDir(this->plan.runDir),
          checkpointPath(runDir / "checkpoints" / "latest.pt"), device(o.device), recorder(rank0), telemetry(comm, recorder, log),
          clock(makeStepClock(o.device)), amp(c.amp(), o.device.type())
    {}

    int run()
    {
        agreeOnSeed();
        const double startUnix = unixNow();
        at::set_num_threads(plan.threads);
        checkPrecision();
        refuseDifferentConfigs();
        checkDataFiles();
        openRunFiles();
        logConfiguration();
        if (rank0)
            for (const auto& note : o.notes) log.warning(note);
        telemetry.start(o.gpuSampleSeconds, o.nvmlLibrary, device, o.dist.localRank);
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
        telemetry.finish();
        comm.barrier();
        recorder.event("finished", iters, c.numEpochs, json::object());
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

    // The mixed precision must exist on this device, and be computed correctly there.
    void checkPrecision()
    {
        const AmpMode mode = c.amp();
        if (mode == AmpMode::None) return;
        const std::string key = c.ampMode ? "amp_mode " + std::string(ampModeName(mode)) : "enable_amp (fp16 with a loss scaler)";
        const std::string why = mode == AmpMode::Bf16 ? whyNoBf16(device) : whyNoFp16(device);
        if (!why.empty()) throw ConfigError(c.yamlPath + ": config '" + c.name + "': " + key + ": " + why);
        // The CPU's bf16 kernels differ by CPU (AVX512-BF16, AMX, emulated on AVX-512BW): checked
        // on this config's model before anything is written.
        if (mode == AmpMode::Bf16 && device.is_cpu()) {
            bf16Check = bf16GradientCheck(c);
            if (!bf16Check->refusal.empty())
                throw ConfigError(c.yamlPath + ": config '" + c.name + "': " + key + ": " + bf16Check->refusal);
        }
    }

    // Ranks launched with different configs would train different models: stop before any work.
    void refuseDifferentConfigs()
    {
        const std::string differing = ranksDifferingFromRoot(comm, configHash(o, plan));
        if (!differing.empty())
            throw ConfigError("rank(s) " + differing +
                              " were started with a configuration that differs from rank 0's "
                              "(config, overrides, batch, seed or strategy); every rank must get the same arguments");
    }

    // Missing or unreadable data is refused before the run folder exists (nothing half-written).
    void checkDataFiles() const
    {
        if (c.dataLoader == DataLoaderMode::Synthetic) return;
        checkVolumeFile(c.trainPath);
        checkVolumeFile(c.valPath);
    }

    // Run folder and files: rank 0 owns them; other ranks write only rank-<N>.log.
    void openRunFiles()
    {
        std::error_code ec;
        fs::create_directories(runDir / "checkpoints", ec);
        if (ec || !fs::is_directory(runDir))
            throw std::runtime_error(plan.runDir + ": cannot create the run folder" + (ec ? ": " + ec.message() : ""));
        if (::access(runDir.c_str(), W_OK) != 0) throw std::runtime_error(plan.runDir + ": the run folder is not writable");
        log.openFile((runDir / (rank0 ? std::string("out.log") : "rank-" + std::to_string(o.rank) + ".log")).string());
        recorder.open(runDir.string(), log);
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
        const DeviceInfo d = describeDevice(device);
        log.info("device " + d.device + (d.gpuName.empty() ? "" : " (" + d.gpuName + ")") + ", mixed precision " + ampModeName(c.amp()) +
                 (device.is_cuda()
                      ? std::string(", TF32 ") + (d.tf32 ? "on" : "off") + ", cuDNN benchmark " + (d.cudnnBenchmark ? "on" : "off")
                      : ""));
        if (bf16Check) {
            char line[96];
            std::snprintf(line, sizeof line, "bf16 check: every gradient within %.2f %% of fp32's (refused above %.0f %%); largest: ",
                          bf16Check->worst * 100.0, kBf16GradientTolerance * 100.0);
            log.info(line + bf16Check->worstParameter);
        }
        if (c.amp() == AmpMode::Fp16 && !device.is_cuda())
            log.warning("fp16 on the CPU: CPUs have no fast fp16 convolutions, so expect it many times slower than fp32 (bf16 is "
                        "the CPU's mixed precision); meant for checking a config before it goes to GPUs");
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
        if (comm.size() > 1) {
            torch::Tensor position = torch::tensor({int64_t(resumed), state.epoch, state.batchInEpoch, state.iters}, torch::kLong);
            comm.broadcast(position, 0);
            resumed = position[0].item<int64_t>() != 0;
            state.epoch = position[1].item<int64_t>();
            state.batchInEpoch = position[2].item<int64_t>();
            state.iters = position[3].item<int64_t>();
            torch::Tensor scale = torch::tensor({state.lossScale, double(state.lossScaleGrowth)}, torch::kDouble);
            comm.broadcast(scale, 0);
            state.lossScale = scale[0].item<double>();
            state.lossScaleGrowth = int64_t(scale[1].item<double>());
        }
        if (amp.mode() == AmpMode::Fp16 && state.lossScale > 0) amp.scaler().restore(state.lossScale, state.lossScaleGrowth);
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
        if (state.lossScale < 0 || std::isinf(state.lossScale))
            throw CheckpointError(checkpointPath.string() + ": field 'loss_scale' is not a positive number");
    }

    // DDP semantics: every rank starts from rank 0's parameters (and, resumed, its Adam state).
    // --noddp (NERSC's benchmarking mode): the replicas start alike (same seed; a resume gives every
    // rank rank 0's checkpoint) and then train apart: no gradient is ever exchanged.
    void startReplicas()
    {
        broadcastState(comm, model, *optimizer);
        // The strategy as launched, at one rank too (nothing to synchronise there, but a 1-rank ddp
        // run is the ddp baseline of a sweep); --noddp trains without any: "none".
        strategyLabel = o.noddp ? "none" : o.strategy;
        sync = makeGradientSync(strategyLabel, comm, model, *optimizer, *clock, o.bucketCapMb, o.fusionMb, o.zeroBucketMb);
        sync->importOptimizerState();
        sync->setNoiseEvery(gnsEvery(o));
        if (rank0 && gnsEvery(o) > 0 && comm.size() == 1 && !o.noddp)
            log.info("Gradient noise scale: not measured with one rank (it compares the local and the averaged gradient)");
        step = std::make_unique<TrainStep>(model, *sync, amp, comm, *clock, c.lambdaRho);
        plantNonFiniteGradient();
        if (rank0 && o.noddp && comm.size() > 1)
            log.info("--noddp: each of the " + std::to_string(comm.size()) +
                     " ranks trains its own replica; gradients are not synchronised. Losses are averaged over ranks as "
                     "in the original; the checkpoint holds rank 0's replica");
        // The node of each rank (SLURM's node name under SLURM): what `nodes` counts.
        hosts = allgatherText(comm, nodeName());
    }

    // Test-only fault injection (docs/trainer.md): SCALEDESK_FAULT_NONFINITE_GRAD=STEP[:RANK] makes the
    // first element of the first layer's gradient infinite on that rank (default 0) at that step,
    // after backward and before the synchronisation, as an fp16 overflow would. For none, fused and
    // zero1, whose gradients are synchronised after backward (ddp's first-layer bucket may be on its way).
    void plantNonFiniteGradient()
    {
        const char* fault = std::getenv("SCALEDESK_FAULT_NONFINITE_GRAD");
        if (!fault || !*fault) return;
        const std::string text = fault;
        const int64_t atStep = std::atoll(text.c_str());
        const int onRank = text.find(':') == std::string::npos ? 0 : std::atoi(text.c_str() + text.find(':') + 1);
        if (onRank != o.rank) return;
        step->setAfterBackward([this, atStep](UNet& m) {
            if (iters != atStep) return;
            torch::NoGradGuard noGrad;
            m->parameters().front().grad().view(-1)[0] = std::numeric_limits<float>::infinity();
        });
    }

    void announceStart(double startUnix)
    {
        std::vector<std::string> distinct = hosts;
        std::sort(distinct.begin(), distinct.end());
        distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
        RunManifest m;
        // The folder's own name, also when it was given as "." or with a trailing slash.
        fs::path folder = fs::absolute(runDir).lexically_normal();
        if (!folder.has_filename()) folder = folder.parent_path();
        m.runId = folder.filename().string() == o.runNum ? c.name + "-" + o.runNum : folder.filename().string();
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
        const DeviceInfo d = describeDevice(device);
        m.deviceName = d.device;
        m.gpuName = d.gpuName;
        m.cudaVersion = d.cudaVersion;
        m.cudnnVersion = d.cudnnVersion;
        m.ncclVersion = d.ncclVersion;
        m.tf32 = d.tf32;
        m.cudnnBenchmark = d.cudnnBenchmark;
        m.threadsPerRank = plan.threads;
        m.hostCpus = int(std::thread::hardware_concurrency());
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
        m.dataWorkers = c.numDataWorkers;
        m.dataSize = c.dataSize;
        m.baseChannels = c.baseChannels;
        m.fullScale = c.fullScale;
        m.parameters = model->parameterCount();
        std::vector<int64_t> numels;
        for (const auto& p : model->parameters()) numels.push_back(p.numel());
        m.messageBytes = strategyMessageBytes(numels, o.bucketCapMb, o.fusionMb, o.zeroBucketMb, o.worldSize);
        m.enableAmp = c.enableAmp;
        m.ampMode = ampModeName(c.amp());
        m.noddp = o.noddp;
        m.broadcastBuffers = o.broadcastBuffers;
        m.gpuSampleSeconds = o.gpuSampleSeconds;
        m.gpuTelemetry = telemetry.status();
        m.gpuIndex = telemetry.gpuIndex();
        m.seed = plan.seed;
        m.mpiVersion = mpiLibraryVersion();
        m.startUnix = startUnix;
        if (const std::string warning = writeStartManifest(runDir.string(), m, resumed); !warning.empty()) log.warning(warning);
        recorder.event(resumed ? "resumed" : "started", state.iters, state.epoch + 1,
                       {{"pid", int(::getpid())},
                        {"host", hostName()},
                        {"strategy", strategyLabel},
                        {"noddp", o.noddp},
                        {"backend", comm.backend()},
                        {"device", d.device},
                        {"amp_mode", ampModeName(c.amp())},
                        {"world_size", o.worldSize}});
    }

    void saveState(const CheckpointState& s)
    {
        sync->exportOptimizerState();  // zero1: a collective, on every rank
        CheckpointState withScale = s;
        if (amp.mode() == AmpMode::Fp16) {
            withScale.lossScale = amp.scaler().scale();
            withScale.lossScaleGrowth = amp.scaler().growthTracker();
        }
        if (rank0) saveCheckpoint(checkpointPath.string(), model, *optimizer, withScale);
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

    double evaluateOn(const std::shared_ptr<VolumeSource>& source, Stream stream, int64_t epoch, int64_t samples, AmpMode mode)
    {
        return evaluate(model, source, loaderPlan(stream, epoch, samples, 0), device, mode, comm, c.lambdaRho);
    }

    // Step-0 losses so that relative-time plots line up (sc21 PR #14): one batch each, no autocast.
    void recordInitialLosses()
    {
        const double initTrain = evaluateOn(trainSource, Stream::InitialTrain, 0, plan.localBatch, AmpMode::None);
        const double initValid = evaluateOn(validSource, Stream::InitialValid, 0, plan.localBatch, AmpMode::None);
        recorder.write(json{{"kind", "initial"},
                            {"step", 0},
                            {"epoch", 0},
                            {"t", unixNow()},
                            {"train_loss", jsonNumber(initTrain)},
                            {"val_loss", jsonNumber(initValid)}});
    }

    // All ranks must stop at the same step: the stop request is agreed on by an allreduce, after a
    // step every --stop_check_s seconds of steps and at the end of each epoch.
    bool stopRequested() { return stopAgreement.now(comm, g_stopSignal != 0); }

    int stopForRequeue(const std::string& message, int64_t epoch, json extra)
    {
        log.info(message);
        extra["checkpoint"] = checkpointPath.string();
        telemetry.finish();
        recorder.event("preempted", iters, epoch + 1, extra);
        if (rank0) closeManifest(runDir.string(), "preempted");
        return kExitPreempted;
    }

    void recordStep(int64_t epoch, double lr, double data, const StepOutcome& s, int64_t samples, Clock::time_point t0)
    {
        json record{{"kind", "step"},
                    {"step", iters},
                    {"epoch", epoch + 1},
                    {"t", unixNow()},
                    {"loss", jsonNumber(s.loss)},
                    {"lr", lr},
                    {"step_s", seconds(t0, Clock::now())},
                    {"data_s", data},
                    {"forward_s", s.forwardSeconds},
                    {"backward_s", s.backwardSeconds},
                    {"optim_s", s.optimSeconds},
                    {"compute_s", s.forwardSeconds + s.backwardSeconds + s.optimSeconds},
                    {"comm_s", s.sync.commSeconds},
                    {"comm_exposed_s", s.sync.exposedSeconds},
                    {"samples", samples * o.worldSize}};
        if (amp.mode() == AmpMode::Fp16) {
            record["loss_scale"] = amp.scaler().scale();
            if (!s.applied) record["skipped"] = true;  // an inf or NaN gradient: no update, the scale backed off
        }
        recorder.write(record);
    }

    // One epoch's training steps; the exit code when a stop request ends the run mid-epoch.
    std::optional<int> trainEpoch(int64_t epoch)
    {
        const int64_t firstBatch = (resumed && epoch == state.epoch) ? state.batchInEpoch : 0;
        sums = EpochSums{};
        sums.loss = (resumed && epoch == state.epoch) ? state.epochLossSum : 0.0;
        BatchLoader loader(trainSource, loaderPlan(Stream::Train, epoch, plan.samplesPerRank, firstBatch));
        batchesDone = firstBatch;
        comm.barrier();  // epoch wall time is the job's, not one rank's
        const auto epochStart = Clock::now();
        telemetry.beginEpoch();
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
            const double data = seconds(t0, Clock::now());
            ++iters;
            const double lr = schedule.at(iters);
            const StepOutcome s = step->run(input, target, lr);
            sums.loss += s.loss;
            ++batchesDone;
            ++sums.steps;
            sums.samples += input.size(0);
            sums.data += data;
            sums.compute += s.forwardSeconds + s.backwardSeconds + s.optimSeconds;
            sums.comm += s.sync.commSeconds;
            sums.exposed += s.sync.exposedSeconds;
            recordStep(epoch, lr, data, s, input.size(0), t0);
            telemetry.atStep(iters);
            if (o.checkReplicas) checkReplicas(comm, *model, iters);
            if (stopAgreement.afterStep(comm, g_stopSignal != 0, seconds(t0, Clock::now()))) {
                saveState(CheckpointState{epoch, batchesDone, iters, sums.loss, settings});
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

    // Per-rank loop times and sample counts: the straggler spread, and the fairness check (a
    // scaling measurement from ranks that processed different sample counts would be wrong).
    struct RankSpread {
        double maxRank = 0.0, minRank = 1e300;
        int64_t samplesGlobal = 0;
    };
    RankSpread checkFairness(int64_t epoch)
    {
        torch::Tensor perRank = torch::zeros({2 * comm.size()}, torch::kDouble);
        comm.allgather(perRank, torch::tensor({rankLoopTime, double(sums.samples)}, torch::kDouble));
        const double* a = perRank.data_ptr<double>();
        RankSpread spread;
        std::string counts;
        bool fair = true;
        for (int r = 0; r < comm.size(); ++r) {
            const int64_t n = int64_t(a[2 * r + 1]);
            spread.maxRank = std::max(spread.maxRank, a[2 * r]);
            spread.minRank = std::min(spread.minRank, a[2 * r]);
            counts += (r ? ", " : "") + std::to_string(n);
            fair = fair && n == sums.samples;
            spread.samplesGlobal += n;
        }
        if (!fair)
            throw std::runtime_error("fairness check failed in epoch " + std::to_string(epoch + 1) +
                                     ": ranks processed different numbers of samples [" + counts +
                                     "]; a scaling measurement from this run would be wrong");
        return spread;
    }

    // After an epoch's steps: the fairness check, the NERSC log lines, validation, the epoch's
    // records, and the end-of-epoch checkpoint. The exit code when a stop request ends the run here.
    std::optional<int> endEpoch(int64_t epoch)
    {
        const RankSpread spread = checkFairness(epoch);
        const std::optional<GradientNoise> noise = epochNoise();
        const double samplesPerSec = double(sums.steps * plan.globalBatch) / epochTime;
        const double trainLoss = sums.loss / double(std::max<int64_t>(1, batchesDone));
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
            valLoss = evaluateOn(validSource, Stream::Valid, epoch, plan.valSamplesPerRank, c.amp());
            valTime = seconds(v0, Clock::now());
            if (rank0) {
                char line[96];
                std::snprintf(line, sizeof line, "  Avg val loss=%f", valLoss);
                log.info(line);
                log.info("  Total validation time: " + pythonFloatRepr(valTime) + " sec");
            }
        }
        const Telemetry::EpochTotals gpuTotals = telemetry.endEpoch(epoch, iters);
        recordEpoch(epoch, spread, trainLoss, valLoss, valTime, samplesPerSec, gpuTotals, noise);
        saveState(CheckpointState{epoch + 1, 0, iters, 0.0, settings});
        recorder.event("checkpoint", iters, epoch + 1, {{"path", checkpointPath.string()}});
        if (stopRequested())
            return stopForRequeue("Received a stop signal: the end-of-epoch checkpoint is in " + checkpointPath.string() +
                                      "; exiting for requeue",
                                  epoch, json::object());
        return std::nullopt;
    }

    // The epoch's gradient noise (every rank: a collective), from the steps it measured: B_small is
    // a rank's batch, B_big the global one. None with one rank or --gns_every 0.
    std::optional<GradientNoise> epochNoise()
    {
        const GradientSync::NoiseSums norms = sync->takeNoise(comm);
        if (norms.steps == 0 || sums.steps == 0) return std::nullopt;
        const double local = double(sums.samples) / double(sums.steps);
        return estimateGradientNoise(norms.localSq, norms.globalSq, local, local * comm.size());
    }

    // The epoch's `epoch` record and its epochs.csv row (rank 0).
    void recordEpoch(int64_t epoch, const RankSpread& spread, double trainLoss, double valLoss, double valTime, double samplesPerSec,
                     const Telemetry::EpochTotals& gpu, const std::optional<GradientNoise>& noise)
    {
        if (!rank0) return;
        const double now = unixNow();
        const double lastLr = schedule.at(iters);
        json record{{"kind", "epoch"},
                    {"epoch", epoch + 1},
                    {"step", iters},
                    {"t", now},
                    {"train_loss", jsonNumber(trainLoss)},
                    {"val_loss", jsonNumber(valLoss)},
                    {"lr", lastLr},
                    {"epoch_s", epochTime},
                    {"val_s", valTime},
                    {"steps", sums.steps},
                    {"samples", spread.samplesGlobal},
                    {"samples_per_s", samplesPerSec},
                    {"iters_per_s", double(sums.steps) / epochTime},
                    {"data_s", sums.data},
                    {"compute_s", sums.compute},
                    {"comm_s", sums.comm},
                    {"comm_exposed_s", sums.exposed},
                    {"max_rank_s", spread.maxRank},
                    {"min_rank_s", spread.minRank}};
        if (gpu.ranks > 0) {
            record["gpu_energy_wh"] = jsonNumber(gpu.energyWh);
            record["gpu_util_pct"] = jsonNumber(gpu.meanUtilPct);
        }
        if (amp.mode() == AmpMode::Fp16) record["skipped_steps"] = amp.scaler().skippedSteps();
        if (noise) {
            record["gns_b_simple"] = jsonNumber(noise->bSimple);
            record["gns_grad_sq"] = noise->gradSq;
            record["gns_trace_sigma"] = noise->traceSigma;
        }
        recorder.write(record);
        recorder.epochRow({std::to_string(epoch + 1),
                           std::to_string(iters),
                           csvNumber(epochTime + valTime),
                           csvNumber(epochTime),
                           csvNumber(valTime),
                           std::to_string(spread.samplesGlobal),
                           std::to_string(sums.steps),
                           csvNumber(samplesPerSec),
                           csvNumber(sums.data),
                           csvNumber(sums.compute),
                           csvNumber(sums.exposed),
                           csvNumber(spread.maxRank),
                           csvNumber(spread.minRank),
                           csvNumber(trainLoss),
                           csvNumber(valLoss),
                           csvNumber(lastLr),
                           csvNumber(now),
                           gpu.ranks > 0 ? csvNumber(gpu.energyWh) : std::string(),
                           gpu.ranks > 0 ? csvNumber(gpu.meanUtilPct) : std::string(),
                           noise ? csvNumber(noise->bSimple) : std::string()});
    }

    const TrainOptions& o;
    const TrainConfig& c;
    Communicator& comm;
    RunPlan plan;
    RunLog& log;
    std::optional<Bf16Check> bf16Check;  ///< CPU bf16 only: what the check before training found
    const bool rank0;
    const fs::path runDir;
    const fs::path checkpointPath;
    const c10::Device device;
    RunRecorder recorder;  ///< rank 0's metrics.jsonl, logs/ and epochs.csv
    Telemetry telemetry;
    std::unique_ptr<StepClock> clock;
    MixedPrecision amp;
    std::shared_ptr<VolumeSource> trainSource, validSource;
    UNet model{nullptr};
    std::unique_ptr<torch::optim::Adam> optimizer;
    LrSchedule schedule{};
    std::map<std::string, std::string> settings;
    CheckpointState state;
    bool resumed = false;
    std::unique_ptr<GradientSync> sync;
    std::unique_ptr<TrainStep> step;
    std::string strategyLabel;
    std::vector<std::string> hosts;
    StopAgreement stopAgreement{o.stopCheckSeconds};
    // Test-only fault injection (docs/trainer.md): this rank drops one sample of its first batch,
    // which the fairness check must catch.
    bool plantImbalance =
        std::getenv("SCALEDESK_FAULT_SHORT_BATCH_RANK") && std::atoi(std::getenv("SCALEDESK_FAULT_SHORT_BATCH_RANK")) == o.rank;
    // The loop's position and the current epoch's sums.
    int64_t iters = 0, batchesDone = 0;
    EpochSums sums;
    double rankLoopTime = 0.0, epochTime = 0.0;
};

}  // namespace

void installStopSignals()
{
    struct sigaction action {};
    action.sa_handler = onStopSignal;
    // SA_RESTART: a stop that lands in a thread inside a system call (a loader thread's read, the
    // MPI progress thread's sleep) resumes that call, so the stop never turns into an I/O error.
    action.sa_flags = SA_RESTART;
    sigemptyset(&action.sa_mask);
    sigaction(SIGUSR1, &action, nullptr);
    sigaction(SIGTERM, &action, nullptr);
    // A write to a dead peer's socket (Gloo's pairs, the rendezvous store) must be an error that the
    // communicator reports, naming the silent rank, not a SIGPIPE that kills this rank without a word.
    // Python ignores SIGPIPE at start-up, so every PyTorch script runs this way.
    signal(SIGPIPE, SIG_IGN);
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

int gnsEvery(const TrainOptions& options) { return options.gnsEvery.value_or(options.device.is_cuda() ? 1 : 8); }

int runTraining(const TrainOptions& o, RunPlan plan, RunLog& log) { return Training(o, std::move(plan), log).run(); }

}  // namespace scaledesk::train
