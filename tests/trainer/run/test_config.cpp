#include "run/config.h"

#include "testutil.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

using namespace scaledesk::train;
namespace fs = std::filesystem;

namespace {
const std::string kData = SCALEDESK_TEST_DATA;
const std::string kUnet = std::string(SCALEDESK_SOURCE_DIR) + "/configs/unet.yaml";

const ConfigEntry* entry(const TrainConfig& c, const std::string& key)
{
    for (const auto& e : c.entries)
        if (e.key == key) return &e;
    return nullptr;
}
}  // namespace

TEST(Config, EveryNerscConfigLoadsWithTheOriginalValues)
{
    const std::vector<std::string> names = listConfigNames(kUnet);
    for (const char* n : {"base", "short", "short_opt", "bs64_opt", "bs256_opt", "bs512_test", "bs512_opt", "bs2048_opt", "bs8192_opt",
                          "cpu-tiny", "cpu-short", "cpu-bench"})
        EXPECT_NE(std::find(names.begin(), names.end(), n), names.end()) << n;
    for (const auto& n : names) {
        const TrainConfig c = loadTrainConfig(kUnet, n);
        EXPECT_NO_THROW(validateTrainConfig(c)) << n;
    }
    const TrainConfig base = loadTrainConfig(kUnet, "base");
    EXPECT_EQ(base.globalBatchSize, 64);
    EXPECT_EQ(base.nSamples, 65536);
    EXPECT_EQ(base.nSamplesVal, 8192);
    EXPECT_EQ(base.numEpochs, 10);
    EXPECT_EQ(base.trainBox, 1024);
    EXPECT_EQ(base.valBox, 512);
    EXPECT_EQ(base.lrScaling, LrScaling::Sqrt);
    EXPECT_DOUBLE_EQ(base.startLr, 2.0e-4);
    EXPECT_EQ(base.warmupSteps, 128);
    EXPECT_DOUBLE_EQ(base.convScale, 0.02);
    EXPECT_FALSE(base.useCache.has_value());  // 'None'
    EXPECT_EQ(base.dataLoader, DataLoaderMode::Lowmem);

    const TrainConfig s = loadTrainConfig(kUnet, "short_opt");  // short_opt → short → base
    EXPECT_EQ(s.nSamples, 4096);
    EXPECT_EQ(s.numEpochs, 4);
    EXPECT_TRUE(s.enableAmp);
    EXPECT_EQ(s.dataLoader, DataLoaderMode::DaliLowmem);
    EXPECT_EQ(loadTrainConfig(kUnet, "bs8192_opt").numEpochs, 320);
    EXPECT_EQ(loadTrainConfig(kUnet, "bs512_test").numEpochs, 10);
    EXPECT_EQ(loadTrainConfig(kUnet, "bs2048_opt").globalBatchSize, 2048);

    const TrainConfig bench = loadTrainConfig(kUnet, "cpu-bench");
    EXPECT_EQ(bench.dataSize, 32);
    EXPECT_EQ(bench.baseChannels, 32);
    EXPECT_FALSE(bench.fullScale);
    EXPECT_EQ(bench.globalBatchSize, 2);
}

TEST(Config, MergeKeysInheritAndOverride)
{
    const std::string file = kData + "/run/configs/inherit.yaml";
    const TrainConfig parent = loadTrainConfig(file, "parent");
    const TrainConfig grand = loadTrainConfig(file, "grandchild");
    EXPECT_EQ(grand.globalBatchSize, 16);           // own value
    EXPECT_EQ(grand.nSamples, 128);                 // from child, overriding parent
    EXPECT_EQ(grand.numEpochs, 3);                  // from child
    EXPECT_EQ(grand.lrScaling, LrScaling::Linear);  // from parent, nested map kept whole
    EXPECT_DOUBLE_EQ(grand.endLr, 1.0e-5);
    EXPECT_EQ(parent.nSamples, 64);  // the parent is not changed by its children
    // Location of an inherited value is where it was written.
    ASSERT_NE(entry(grand, "Nsamples"), nullptr);
    EXPECT_NE(entry(grand, "Nsamples")->location.find("inherit.yaml:12:"), std::string::npos);
    EXPECT_NE(entry(grand, "global_batch_size")->location.find("inherit.yaml:17:"), std::string::npos);
    // A list of merges: earlier sources win; explicit keys win over all of them.
    const TrainConfig both = loadTrainConfig(file, "both");
    EXPECT_EQ(both.nSamples, 128);    // child before extra
    EXPECT_EQ(both.baseChannels, 8);  // only in extra
    EXPECT_EQ(both.dataSize, 32);
    EXPECT_FALSE(both.fullScale);
    EXPECT_EQ(entry(both, "use_cache")->display, "None");
}

TEST(Config, DumpPrintsValuesAsPythonDoes)
{
    const TrainConfig base = loadTrainConfig(kUnet, "base");
    EXPECT_EQ(entry(base, "weight_init")->display, "{'conv_init': 'normal', 'conv_scale': 0.02, 'conv_bias': 0.0}");
    EXPECT_EQ(entry(base, "lr_schedule")->display, "{'scaling': 'sqrt', 'start_lr': 0.0002, 'end_lr': 0.0, 'warmup_steps': 128}");
    EXPECT_EQ(entry(base, "box_size")->display, "[1024, 512]");
    EXPECT_EQ(entry(base, "full_scale")->display, "True");
    EXPECT_EQ(entry(base, "expdir")->display, "/logs");
}

TEST(Config, PythonFloatRepr)
{
    EXPECT_EQ(pythonFloatRepr(752.9529612064362), "752.9529612064362");
    EXPECT_EQ(pythonFloatRepr(0.0002), "0.0002");
    EXPECT_EQ(pythonFloatRepr(2e-05), "2e-05");
    EXPECT_EQ(pythonFloatRepr(1.0), "1.0");
    EXPECT_EQ(pythonFloatRepr(100.0), "100.0");
    EXPECT_EQ(pythonFloatRepr(1e16), "1e+16");
    EXPECT_EQ(pythonFloatRepr(-0.5), "-0.5");
    EXPECT_EQ(pythonFloatRepr(87.04), "87.04");
}

// Golden folder: each bad/*.yaml names the config to load and the error text it must give.
TEST(Config, BadConfigsGiveTheirErrors)
{
    int checked = 0;
    for (const auto& file : fs::directory_iterator(kData + "/run/configs/bad")) {
        const auto lines = scaledesk::test::readLines(file.path().string());
        ASSERT_GE(lines.size(), 2u);
        const std::string config = lines[0].substr(std::string("# config: ").size());
        const std::string expect = lines[1].substr(std::string("# expect: ").size());
        try {
            const TrainConfig c = loadTrainConfig(file.path().string(), config);
            validateTrainConfig(c);
            ADD_FAILURE() << file.path() << ": no error";
        } catch (const ConfigError& e) {
            EXPECT_NE(std::string(e.what()).find(expect), std::string::npos)
                << file.path() << "\n  got:    " << e.what() << "\n  wanted: " << expect;
        }
        ++checked;
    }
    EXPECT_GE(checked, 10);
}

TEST(Config, MissingAndUnreadableFiles)
{
    scaledesk::test::TempDir dir;
    try {
        loadTrainConfig(dir.file("absent.yaml"), "base");
        FAIL();
    } catch (const ConfigError& e) {
        EXPECT_EQ(std::string(e.what()), dir.file("absent.yaml") + ": no such file");
    }
    scaledesk::test::writeFile(dir.file("list.yaml"), "- a\n- b\n");
    EXPECT_THROW(loadTrainConfig(dir.file("list.yaml"), "base"), ConfigError);
}

// warmup_steps 0 is accepted (no warm-up); negative values are refused (bad/warmup-negative.yaml).
TEST(Config, ZeroWarmupStepsIsAccepted)
{
    scaledesk::test::TempDir dir;
    scaledesk::test::writeFile(dir.file("w.yaml"),
                               scaledesk::test::readFile(kUnet) +
                                   "\nnowarm:\n  <<: *base\n  global_batch_size: 128\n"
                                   "  lr_schedule: {scaling: sqrt, start_lr: 2.0E-4, end_lr: 0.0, warmup_steps: 0}\n");
    const TrainConfig c = loadTrainConfig(dir.file("w.yaml"), "nowarm");
    EXPECT_NO_THROW(validateTrainConfig(c));
    EXPECT_EQ(c.warmupSteps, 0);
    ASSERT_NE(entry(c, "lr_schedule"), nullptr);
    EXPECT_EQ(entry(c, "lr_schedule")->display, "{'scaling': 'sqrt', 'start_lr': 0.0002, 'end_lr': 0.0, 'warmup_steps': 0}");
}
