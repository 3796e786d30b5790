// scaledesk-train: command line of the U-Net trainer (spec §5 flags plus ScaleDesk's).
#include "checkpoint.h"
#include "config.h"
#include "hdf5volume.h"
#include "makedata.h"
#include "runfiles.h"
#include "trainer.h"

#include <CLI/CLI.hpp>
#include <c10/util/Exception.h>

#include <iostream>
#include <malloc.h>

using namespace scaledesk::train;

namespace {

struct CliValues {
    std::string yamlConfig = "./configs/unet.yaml";
    std::string config = "base";
    std::optional<int64_t> numEpochs, localBatchSize, numDataWorkers;
    std::optional<std::string> dataLoaderConfig, expdir;
    std::optional<bool> enableAmp, enableApex, enableJit, enableBenchy;
    std::optional<uint64_t> seed;
};

// Only flags the user gave change the YAML values (the original overwrote enable_* always).
void applyOverrides(const CliValues& v, TrainConfig& c)
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
    const std::pair<const std::optional<bool>*, std::pair<bool*, const char*>> flags[] = {
        {&v.enableAmp, {&c.enableAmp, "enable_amp"}},
        {&v.enableApex, {&c.enableApex, "enable_apex"}},
        {&v.enableJit, {&c.enableJit, "enable_jit"}},
        {&v.enableBenchy, {&c.enableBenchy, "enable_benchy"}},
    };
    for (const auto& [given, target] : flags) {
        if (*given) {
            *target.first = **given;
            overrideEntry(c, target.second, boolText(**given));
        }
    }
    if (v.seed) {
        c.seed = *v.seed;
        overrideEntry(c, "seed", std::to_string(*v.seed));
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

int fail(const std::string& message)
{
    std::cerr << "scaledesk-train: error: " << message << std::endl;
    return 1;
}

}  // namespace

int main(int argc, char** argv)
{
    keepFreedMemory();
    CLI::App app{"scaledesk-train: the NERSC cosmology 3D U-Net training in C++ (libtorch).\n"
                 "Trains a named config of a YAML file; `make-data` writes generated HDF5 data."};
    app.set_version_flag("--version", std::string("scaledesk-train ") + SCALEDESK_TRAIN_VERSION);

    CliValues v;
    TrainOptions options;
    bool describe = false;
    app.add_option("--yaml_config", v.yamlConfig, "YAML file of named configs")
        ->capture_default_str()
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    app.add_option("--config", v.config, "name of the config in the YAML file")->capture_default_str();
    app.add_option("--run_num", options.runNum, "run number: <expdir>/<config>/<N>GPU/<run_num>")->capture_default_str();
    app.add_option("--num_epochs", v.numEpochs, "override num_epochs")->check(CLI::PositiveNumber);
    app.add_option("--local_batch_size", options.localBatchSize,
                   "per-rank batch; the global batch becomes world size x this")
        ->check(CLI::PositiveNumber);
    app.add_option("--data_loader_config", v.dataLoaderConfig, "override data_loader_config")
        ->check(CLI::IsMember({"synthetic", "inmem", "lowmem", "dali-lowmem"}));
    app.add_option("--num_data_workers", v.numDataWorkers, "override num_data_workers (prefetch threads)")
        ->check(CLI::NonNegativeNumber);
    // CLI11 assigns a std::optional flag even when it is absent, so the given ones are read
    // back from their counts after parsing.
    bool amp = false, apex = false, jit = false, benchy = false;
    CLI::Option* ampFlag =
        app.add_flag("--enable_amp{true}", amp, "bf16 autocast (=false to switch off); unset keeps the YAML value");
    CLI::Option* apexFlag = app.add_flag("--enable_apex{true}", apex, "accepted for compatibility; Adam math is unchanged");
    CLI::Option* jitFlag = app.add_flag("--enable_jit{true}", jit, "accepted for compatibility; the loss is plain L1 either way");
    CLI::Option* benchyFlag =
        app.add_flag("--enable_benchy{true}", benchy, "skip the step-0 losses and validation, as under benchy");
    app.add_option("--expdir", v.expdir, "override expdir (the experiment root)");
    app.add_option("--run_dir", options.runDir, "write the run here instead of <expdir>/<config>/<N>GPU/<run_num>");
    app.add_option("--threads", options.threads, "intra-op threads per rank (default: usable cores / local ranks)")
        ->check(CLI::PositiveNumber);
    app.add_option("--seed", v.seed, "seed for weights and data streams (default: the YAML seed, else random)");
    app.add_flag("--resume", options.resume, "continue from <run folder>/checkpoints/latest.pt when it exists");
    app.add_flag("--describe", describe, "print the resolved config and the model summary, then exit");

    MakeDataOptions makeData;
    CLI::App* make = app.add_subcommand("make-data", "write generated train.h5 and valid.h5 in the NERSC layout");
    make->add_option("--out", makeData.outDir, "output folder")->required();
    make->add_option("--box", makeData.trainBox, "side of the training volume")->capture_default_str()->check(CLI::Range(2, 2048));
    make->add_option("--val-box", makeData.valBox, "side of the validation volume")->capture_default_str()->check(CLI::Range(2, 2048));
    make->add_option("--seed", makeData.seed, "seed of the random fields")->capture_default_str();
    make->add_option("--correlation-length", makeData.correlationLength, "smoothing length of the fields, in voxels")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);

    CLI11_PARSE(app, argc, argv);
    if (ampFlag->count()) v.enableAmp = amp;
    if (apexFlag->count()) v.enableApex = apex;
    if (jitFlag->count()) v.enableJit = jit;
    if (benchyFlag->count()) v.enableBenchy = benchy;

    try {
        if (make->parsed()) {
            scaledesk::train::makeData(makeData);
            std::cout << "wrote " << makeData.outDir << "/train.h5 (box " << makeData.trainBox << ") and " << makeData.outDir
                      << "/valid.h5 (box " << makeData.valBox << ")" << std::endl;
            return 0;
        }
        options.config = loadTrainConfig(v.yamlConfig, v.config);
        applyOverrides(v, options.config);
        validateTrainConfig(options.config);
        const RunPlan plan = planRun(options);
        if (describe) {
            describeRun(options, plan);
            return 0;
        }
        installStopSignals();
        RunLog log(options.rank);
        try {
            return runTraining(options, plan, log);
        } catch (const std::exception& e) {
            recordFailure(plan, e.what());
            throw;
        }
    } catch (const c10::Error& e) {
        return fail(e.what_without_backtrace());
    } catch (const std::exception& e) {
        return fail(e.what());
    }
}
