// The run before it trains: batch sizes, steps and folder (planRun), and what --describe prints.
#include "run/trainer.h"

#include "model/unet.h"

#include <torch/torch.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <random>
#include <sched.h>
#include <thread>

namespace scaledesk::train {

namespace fs = std::filesystem;

namespace {

int usableCores()
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
    return std::max(1u, std::thread::hardware_concurrency());
}

}  // namespace

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

}  // namespace scaledesk::train
