// End-to-end tests of the real scaledesk-train binary on generated data.
#include "compat/torchcompat.h"
#include "dist/buckets.h"
#include "dist/comm.h"
#include "model/unet.h"
#include "run/checkpoint.h"
#include "run/tensorboardlog.h"
#include "testutil.h"

#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstring>
#include <dlfcn.h>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#ifdef SCALEDESK_HAVE_TBEVENTS
#include "eventfile.h"
#endif

using namespace scaledesk::test;
using json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

const std::string kBin = SCALEDESK_TRAIN_BIN;
const std::string kUnet = std::string(SCALEDESK_SOURCE_DIR) + "/configs/unet.yaml";

// The CPU's model name and its bf16 flags, as /proc/cpuinfo says.
std::string cpuModel()
{
    std::ifstream in("/proc/cpuinfo");
    std::string line, model, flags;
    while (std::getline(in, line)) {
        if (model.empty() && line.rfind("model name", 0) == 0) model = line.substr(line.find(':') + 2);
        if (flags.empty() && line.rfind("flags", 0) == 0)
            for (const char* f : {" avx512bw", " avx512_bf16", " amx_bf16", " amx_tile"})
                if ((line + " ").find(std::string(f) + " ") != std::string::npos) flags += f;
    }
    return "CPU: " + model + " (flags:" + (flags.empty() ? std::string(" none of avx512bw/avx512_bf16/amx") : flags) + ")";
}

// Whether /proc/cpuinfo lists a flag that oneDNN's bf16 kernels need (AVX-512BW, AVX512-BF16 or
// AMX-BF16); without one the trainer refuses CPU bf16 before its check (docs/trainer.md).
bool cpuFlagsHaveBf16()
{
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line))
        if (line.rfind("flags", 0) == 0) {
            line += ' ';
            for (const char* f : {" avx512bw ", " avx512_bf16 ", " amx_bf16 "})
                if (line.find(f) != std::string::npos) return true;
            return false;
        }
    return false;
}

class TrainCli : public GeneratedDataSuite {
protected:
    static void SetUpTestSuite() { setUpData(kBin); }
    static void TearDownTestSuite() { tearDownData(); }

    // Runs the trainer in the suite's folder (where data/ lives) with the given arguments; `env`
    // (already quoted, e.g. "A=1 -u B") goes to env(1) before the binary.
    static ProcessResult train(const std::string& args, const std::string& cwd = "", const std::string& env = "")
    {
        return runCommand("cd " + shellQuote(cwd.empty() ? s_dir->path() : cwd) + " && " + (env.empty() ? "" : "env " + env + " ") +
                          shellQuote(kBin) + " --yaml_config " + shellQuote(kUnet) + " " + args);
    }
};

// Starts the trainer without waiting; stdout and stderr go to `logFile`.
pid_t spawnTrainer(const std::vector<std::string>& args, const std::string& cwd, const std::string& logFile)
{
    std::vector<std::string> argv = {kBin, "--yaml_config", kUnet};
    argv.insert(argv.end(), args.begin(), args.end());
    return spawnProcess(argv, cwd, logFile);
}

// Waits until metrics.jsonl holds a line for which `match` is true (or 120 s pass).
bool waitForRecord(const std::string& runDir, const std::function<bool(const json&)>& match)
{
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    while (std::chrono::steady_clock::now() < deadline) {
        for (const auto& line : readLines(runDir + "/metrics.jsonl")) {
            try {
                if (match(json::parse(line))) return true;
            } catch (const json::exception&) {
                // a line being written
            }
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return false;
}

// Model parameters and Adam state of two cpu-tiny checkpoints compared bit for bit, plus the
// loop position.
void expectSameCheckpoint(const std::string& a, const std::string& b)
{
    using namespace scaledesk::train;
    auto load = [](const std::string& path, UNet& model, std::unique_ptr<torch::optim::Adam>& adam) {
        model = UNet(UNetOptions{4, 5, 4, false});
        adam = std::make_unique<torch::optim::Adam>(model->parameters(), torch::optim::AdamOptions(1e-3));
        return loadCheckpoint(path, model, *adam, {});
    };
    UNet ma{nullptr}, mb{nullptr};
    std::unique_ptr<torch::optim::Adam> oa, ob;
    const CheckpointState sa = load(a, ma, oa), sb = load(b, mb, ob);
    EXPECT_EQ(sa.epoch, sb.epoch);
    EXPECT_EQ(sa.iters, sb.iters);
    EXPECT_EQ(sa.batchInEpoch, sb.batchInEpoch);
    const auto pa = ma->parameters(), pb = mb->parameters();
    ASSERT_EQ(pa.size(), pb.size());
    int compared = 0;
    for (std::size_t i = 0; i < pa.size(); ++i) {
        ASSERT_TRUE(torch::equal(pa[i], pb[i])) << "parameter " << i;
        auto& stA = static_cast<torch::optim::AdamParamState&>(*oa->state().at(scaledesk::train::compat::optimizerStateKey(pa[i])));
        auto& stB = static_cast<torch::optim::AdamParamState&>(*ob->state().at(scaledesk::train::compat::optimizerStateKey(pb[i])));
        EXPECT_EQ(stA.step(), stB.step());
        ASSERT_TRUE(torch::equal(stA.exp_avg(), stB.exp_avg())) << "exp_avg " << i;
        ASSERT_TRUE(torch::equal(stA.exp_avg_sq(), stB.exp_avg_sq())) << "exp_avg_sq " << i;
        compared += 3;
    }
    EXPECT_GT(compared, 10);
    EXPECT_GT(sa.iters, 0);
}

}  // namespace

TEST_F(TrainCli, DescribeBasePrintsTheParameterCount)
{
    const auto r = train("--config base --describe");
    ASSERT_EQ(r.exitCode, 0) << r.output;
    EXPECT_NE(r.output.find("\nparameters: 116977029\n"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("conv_up5"), std::string::npos);
}

TEST_F(TrainCli, LogLinesMatchTheNerscFormats)
{
    const auto r = train("--config cpu-tiny --seed 4 --run_num 07");
    ASSERT_EQ(r.exitCode, 0) << r.output;
    const std::string runDir = path("runs/cpu-tiny/1GPU/07");  // <expdir>/<config>/<N>GPU/<run_num>
    ASSERT_TRUE(fs::exists(runDir + "/out.log"));
    const std::string prefix = R"(^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} - root - INFO - )";
    const std::regex header(prefix + "------------------ Configuration ------------------$");
    const std::regex epochLine(prefix + R"(Time taken for epoch (\d+) is ([0-9.e+-]+) sec, avg ([0-9.e+-]+) samples/sec$)");
    const std::regex trainLoss(prefix + R"(  Avg train loss=\d+\.\d{6}$)");
    const std::regex valLoss(prefix + R"(  Avg val loss=\d+\.\d{6}$)");
    const std::regex valTime(prefix + R"(  Total validation time: [0-9.e+-]+ sec$)");
    const std::vector<std::string> lines = readLines(runDir + "/out.log");
    // out.log holds exactly the lines printed on stdout.
    std::string joined;
    for (const auto& l : lines) joined += l + "\n";
    EXPECT_EQ(joined, r.output);

    std::vector<std::string> order;
    int epochs = 0;
    for (std::size_t i = 0; i < lines.size(); ++i) {
        std::smatch m;
        const std::string& l = lines[i];
        if (std::regex_match(l, header))
            order.push_back("header");
        else if (l.find("Configuration file: " + kUnet) != std::string::npos)
            order.push_back("file");
        else if (l.find(" - INFO - rank 0, begin data loader init") != std::string::npos)
            order.push_back("begin");
        else if (l.find(" - INFO - rank 0, data loader initialized with config lowmem") != std::string::npos)
            order.push_back("ready");
        else if (l.find(" - INFO - Starting Training Loop...") != std::string::npos)
            order.push_back("start");
        else if (std::regex_match(l, m, epochLine)) {
            ++epochs;
            EXPECT_EQ(std::stoi(m[1]), epochs);
            // S = steps × global batch / T (8 steps of 2 samples).
            EXPECT_NEAR(std::stod(m[3]), 8 * 2 / std::stod(m[2]), 1e-6 * std::stod(m[3]));
            ASSERT_LT(i + 3, lines.size());
            EXPECT_TRUE(std::regex_match(lines[i + 1], trainLoss)) << lines[i + 1];
            EXPECT_TRUE(std::regex_match(lines[i + 2], valLoss)) << lines[i + 2];
            EXPECT_TRUE(std::regex_match(lines[i + 3], valTime)) << lines[i + 3];
            order.push_back("epoch");
        } else if (l.find(" - INFO - DONE ---- rank 0") != std::string::npos)
            order.push_back("done");
    }
    EXPECT_EQ(order, (std::vector<std::string>{"header", "file", "begin", "ready", "start", "epoch", "epoch", "done"}));

    // The four TensorBoard tags are recoverable from metrics.jsonl.
    const auto initial = records(runDir, "initial");
    ASSERT_EQ(initial.size(), 1u);
    EXPECT_EQ(initial[0]["step"], 0);  // Loss/train and Loss/valid at step 0
    EXPECT_GT(initial[0]["train_loss"].get<double>(), 0.0);
    EXPECT_GT(initial[0]["val_loss"].get<double>(), 0.0);
    const auto epochRecords = records(runDir, "epoch");
    ASSERT_EQ(epochRecords.size(), 2u);
    for (int e = 0; e < 2; ++e) {
        const json& j = epochRecords[std::size_t(e)];
        EXPECT_EQ(j["step"], 8 * (e + 1));  // iters at the end of the epoch
        for (const char* key : {"train_loss", "val_loss", "lr", "iters_per_s", "epoch_s", "samples_per_s"})
            EXPECT_TRUE(j.contains(key) && j[key].is_number()) << key;
    }
    const auto steps = records(runDir, "step");
    ASSERT_EQ(steps.size(), 16u);
    for (std::size_t i = 0; i < steps.size(); ++i) {
        EXPECT_EQ(steps[i]["step"], int64_t(i + 1));
        for (const char* key : {"t", "loss", "lr", "step_s", "data_s", "forward_s", "backward_s", "optim_s", "compute_s"})
            EXPECT_TRUE(steps[i].contains(key) && steps[i][key].is_number()) << key;
    }
    // Learning Rate at the epoch step equals the last step's LR.
    EXPECT_DOUBLE_EQ(epochRecords[0]["lr"].get<double>(), steps[7]["lr"].get<double>());
    const auto csv = readLines(runDir + "/epochs.csv");
    ASSERT_EQ(csv.size(), 3u);
    EXPECT_EQ(csv[0].rfind("epoch,step,wall_s,train_s,val_s,samples_processed_global,steps,", 0), 0u);
    const json manifest = json::parse(readFile(runDir + "/manifest.json"));
    EXPECT_EQ(manifest["status"], "finished");
    EXPECT_EQ(manifest["seed"], "4");
    EXPECT_EQ(manifest["world_size"], 1);
    // The revision of the tree this binary was built from, taken at build time (a commit since the
    // configure step shows), or "unknown" outside a git checkout (trainer/cmake/gitrevision.cmake).
    const auto git = runCommand("cd " + shellQuote(SCALEDESK_SOURCE_DIR "/trainer") +
                                " && git ls-files --error-unmatch CMakeLists.txt >/dev/null 2>&1 && git rev-parse --short=12 HEAD");
    const std::string head = git.exitCode == 0 ? git.output.substr(0, git.output.find_last_not_of(" \n") + 1) : "unknown";
    EXPECT_EQ(manifest["git_revision"], head);
    // Every strategy's messages carry the whole gradient (fp32), whatever strategy ran.
    const int64_t gradientBytes = manifest["parameters"].get<int64_t>() * 4;
    for (const char* strategy : {"ddp", "fused", "zero1"}) {
        int64_t sum = 0;
        for (const json& b : manifest["comm_message_bytes"][strategy]) sum += b.get<int64_t>();
        EXPECT_EQ(sum, gradientBytes) << strategy;
    }
    EXPECT_EQ(manifest["zero_bucket_mb"], 25.0);
    EXPECT_EQ(manifest["num_data_workers"], 1);  // cpu-tiny's (the planner's data wait reads it)
    // The host's CPUs and the threads per rank: the planner flags layouts of more threads than CPUs.
    EXPECT_EQ(manifest["host_cpus"].get<int>(), int(std::thread::hardware_concurrency()));
    EXPECT_GE(manifest["threads_per_rank"].get<int>(), 1);
    EXPECT_NE(csv[0].find(",gns_b_simple"), std::string::npos) << csv[0];
}

// The bucket layout the planner reads from manifest.json is the one the strategies use: reverse
// definition order, a parameter never split, a group closed before the parameter that overflows it.
TEST(BucketLayout, GroupsInReverseOrderWithoutSplittingAParameter)
{
    using scaledesk::train::bucketGroups;
    const int64_t mib = 1024 * 1024 / 4;  // float32 elements in a MiB
    // Parameters 0..4 of 0.5, 2, 1, 1 and 0.25 MiB; caps: first 1 MiB, then 2 MiB.
    const std::vector<int64_t> numels{mib / 2, 2 * mib, mib, mib, mib / 4};
    const auto groups = bucketGroups(numels, 2.0, 1.0);
    // 4 (0.25) + 3 (1) = 1.25 > 1 → {4}; {3, 2} = 2; {1} = 2; {0}.
    const std::vector<std::vector<std::size_t>> want{{4}, {3, 2}, {1}, {0}};
    EXPECT_EQ(groups, want);
    // A parameter larger than the cap is a group of its own.
    EXPECT_EQ(bucketGroups({5 * mib, mib}, 2.0, 2.0), (std::vector<std::vector<std::size_t>>{{1}, {0}}));
    const auto bytes = scaledesk::train::strategyMessageBytes(numels, 2.0, 4.0, 2.0, 3);
    const int64_t MiB = 1024 * 1024;
    EXPECT_EQ(bytes.at("ddp"), (std::vector<int64_t>{MiB / 4, 2 * MiB, 2 * MiB, MiB / 2}));
    // fused, 4 MiB buffers: 0.25 + 1 + 1 = 2.25, and 2 more would be 4.25; then 2 + 0.5.
    EXPECT_EQ(bytes.at("fused"), (std::vector<int64_t>{9 * MiB / 4, 5 * MiB / 2}));
    // zero1, 2 MiB buckets: 524288 elements → 174762 per rank, buckets of 524286; 4.75 MiB =
    // 1245184 elements = 2 full buckets and 196612 more, 65538 per rank (196614, padded).
    EXPECT_EQ(bytes.at("zero1"), (std::vector<int64_t>{524286 * 4, 524286 * 4, 196614 * 4}));
}

// zero1's layout: every element in exactly one rank's chunk of one bucket, each rank's chunks
// end to end in its shard, the padding under one chunk per rank.
TEST(BucketLayout, ZeroLayoutCoversTheVectorOnce)
{
    using scaledesk::train::zeroLayout;
    for (const int ranks : {1, 2, 3, 7}) {
        for (const int64_t total : {1LL, 5LL, 1000LL, 262144LL, 1245184LL, 16676037LL}) {
            for (const double mb : {0.001, 0.05, 2.0, 25.0, 4096.0}) {
                const auto z = zeroLayout(total, ranks, mb);
                ASSERT_GE(z.padded, total);
                EXPECT_LT(z.padded - total, z.lastChunk * ranks) << total << " " << ranks << " " << mb;
                int64_t covered = 0, shard = 0;
                for (int64_t k = 0; k < z.buckets; ++k) {
                    EXPECT_EQ(z.offsetOf(k), covered);
                    EXPECT_LE(z.chunkOf(k) * ranks * 4, std::max<int64_t>(int64_t(mb * 1024 * 1024), ranks * 4));
                    covered += z.chunkOf(k) * ranks;
                    shard += z.chunkOf(k);
                }
                EXPECT_EQ(covered, z.padded);
                EXPECT_EQ(shard, z.shard);
            }
        }
    }
    // One bucket when the cap holds the vector: the layout of an unbucketed ZeRO-1.
    const auto one = zeroLayout(1000, 3, 1.0);
    EXPECT_EQ(one.buckets, 1);
    EXPECT_EQ(one.padded, 1002);
    EXPECT_EQ(one.shard, 334);
}

// An epoch record's gradient noise scale is TensorBoard's GNS/B_simple (null: NaN, as the
// losses), besides its epoch/ field; a record without it has no such tag.
TEST(TensorBoardTags, GradientNoiseScale)
{
    const auto tags = [](const json& r) {
        std::map<std::string, double> out;
        for (const auto& [tag, value] : scaledesk::train::tensorboardScalars(r)) out[tag] = value;
        return out;
    };
    const auto measured = tags(json{{"kind", "epoch"}, {"step", 8}, {"train_loss", 0.5}, {"gns_b_simple", 3.5}});
    ASSERT_TRUE(measured.count("GNS/B_simple"));
    EXPECT_EQ(measured.at("GNS/B_simple"), 3.5);
    EXPECT_EQ(measured.at("epoch/gns_b_simple"), 3.5);
    EXPECT_TRUE(std::isnan(tags(json{{"kind", "epoch"}, {"step", 8}, {"gns_b_simple", nullptr}}).at("GNS/B_simple")));
    EXPECT_FALSE(tags(json{{"kind", "epoch"}, {"step", 8}, {"train_loss", 0.5}}).count("GNS/B_simple"));
}

// Rank 0 keeps a TensorBoard event file in logs/, as the NERSC trainer does: the NERSC tags at the
// same steps and with the same values as metrics.jsonl (as float, TensorBoard's type), and a
// step/<field> scalar for each step record.
TEST_F(TrainCli, TensorBoardEventsMirrorTheMetrics)
{
#ifndef SCALEDESK_HAVE_TBEVENTS
    GTEST_SKIP() << "built without protobuf: the trainer writes no event files";
#else
    const std::string runDir = path("tb");
    const auto r = train("--config cpu-tiny --seed 3 --run_dir tb");
    ASSERT_EQ(r.exitCode, 0) << r.output;
    std::vector<std::string> files;
    for (const auto& e : fs::directory_iterator(runDir + "/logs")) files.push_back(e.path().string());
    ASSERT_EQ(files.size(), 1u);
    EXPECT_EQ(fs::path(files[0]).filename().string().rfind("events.out.tfevents.", 0), 0u) << files[0];
    EXPECT_NE(r.output.find("TensorBoard: " + std::string("tb/logs/events.out.tfevents.")), std::string::npos) << r.output;
    const scaledesk::tb::EventFileContents c = scaledesk::tb::readEventFile(files[0]);
    ASSERT_TRUE(c.problems.empty()) << c.problems.front().message;
    EXPECT_EQ(c.fileVersion, "brain.Event:2");
    auto at = [&](const std::string& tag, int64_t step) -> std::optional<double> {
        for (const auto& p : c.scalars)
            if (p.tag == tag && p.step == step) return p.value;
        return std::nullopt;
    };
    const json initial = records(runDir, "initial").at(0);
    ASSERT_TRUE(at("Loss/train", 0));
    EXPECT_EQ(*at("Loss/train", 0), double(float(initial["train_loss"].get<double>())));
    EXPECT_EQ(*at("Loss/valid", 0), double(float(initial["val_loss"].get<double>())));
    const auto epochs = records(runDir, "epoch");
    ASSERT_EQ(epochs.size(), 2u);
    for (const json& e : epochs) {
        const int64_t step = e["step"].get<int64_t>();
        for (const auto& [tag, field] : std::vector<std::pair<std::string, std::string>>{
                 {"Loss/train", "train_loss"}, {"Loss/valid", "val_loss"}, {"Learning Rate", "lr"}, {"Avg iters per sec", "iters_per_s"}}) {
            ASSERT_TRUE(at(tag, step)) << tag << " at step " << step;
            EXPECT_EQ(*at(tag, step), double(float(e[field].get<double>()))) << tag;
        }
        ASSERT_TRUE(at("epoch/epoch_s", step));
    }
    const auto steps = records(runDir, "step");
    ASSERT_EQ(steps.size(), 16u);  // 2 epochs of 16 samples at a global batch of 2
    int stepLosses = 0;
    for (const auto& p : c.scalars) stepLosses += p.tag == "step/loss";
    EXPECT_EQ(stepLosses, 16);
    for (const json& s : steps) {
        ASSERT_TRUE(at("step/loss", s["step"].get<int64_t>()));
        EXPECT_EQ(*at("step/step_s", s["step"].get<int64_t>()), double(float(s["step_s"].get<double>())));
    }
    // Wall times are the records' own.
    for (const auto& p : c.scalars) EXPECT_GT(p.wallTime, 1.7e9);
#endif
}

TEST_F(TrainCli, LossFallsOnGeneratedData)
{
    const std::string runDir = path("falls");
    const auto r = train("--config cpu-short --num_epochs 2 --seed 1 --run_dir falls");
    ASSERT_EQ(r.exitCode, 0) << r.output;
    const double initial = records(runDir, "initial").at(0)["val_loss"].get<double>();
    const auto epochs = records(runDir, "epoch");
    ASSERT_EQ(epochs.size(), 2u);
    const double last = epochs.back()["val_loss"].get<double>();
    EXPECT_LT(last, 0.5 * initial) << "initial " << initial << ", after two epochs " << last;
    EXPECT_LT(epochs[1]["train_loss"].get<double>(), epochs[0]["train_loss"].get<double>());
}

TEST_F(TrainCli, SameSeedGivesTheSameRun)
{
    ASSERT_EQ(train("--config cpu-tiny --num_epochs 1 --seed 21 --threads 2 --run_dir same1").exitCode, 0);
    ASSERT_EQ(train("--config cpu-tiny --num_epochs 1 --seed 21 --threads 2 --run_dir same2").exitCode, 0);
    ASSERT_EQ(train("--config cpu-tiny --num_epochs 1 --seed 22 --threads 2 --run_dir other").exitCode, 0);
    const auto a = records(path("same1"), "step"), b = records(path("same2"), "step"), c = records(path("other"), "step");
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i]["loss"], b[i]["loss"]) << i;
    EXPECT_NE(a[0]["loss"], c[0]["loss"]);
}

TEST_F(TrainCli, KillAfterCheckpointThenResumeIsBitExact)
{
    const std::string common = "--config cpu-tiny --num_epochs 4 --seed 9 --threads 2 ";
    ASSERT_EQ(train(common + "--run_dir straight").exitCode, 0);

    // SIGKILL once epoch 2's checkpoint is on disk, then resume.
    fs::create_directories(path("killed"));
    const pid_t pid = spawnTrainer({"--config", "cpu-tiny", "--num_epochs", "4", "--seed", "9", "--threads", "2", "--run_dir", "killed"},
                                   s_dir->path(), path("killed.log"));
    ASSERT_TRUE(waitForRecord(path("killed"), [](const json& j) {
        return j.value("event", "") == "checkpoint" && j.value("epoch", 0) == 2;
    })) << readFile(path("killed.log"));
    kill(pid, SIGKILL);
    EXPECT_EQ(waitExit(pid), 128 + SIGKILL);
    const auto resumed = train(common + "--run_dir killed --resume");
    ASSERT_EQ(resumed.exitCode, 0) << resumed.output;
    EXPECT_NE(resumed.output.find("Resuming from"), std::string::npos);
    expectSameCheckpoint(path("straight/checkpoints/latest.pt"), path("killed/checkpoints/latest.pt"));
    // Epoch 4's losses are the same numbers.
    EXPECT_EQ(records(path("straight"), "epoch").back()["val_loss"], records(path("killed"), "epoch").back()["val_loss"]);
}

TEST_F(TrainCli, SigtermCheckpointsMidEpochAndResumesExactly)
{
    const std::string common = "--config cpu-tiny --num_epochs 3 --seed 12 --threads 2 ";
    ASSERT_EQ(train(common + "--run_dir ref").exitCode, 0);
    fs::create_directories(path("term"));
    const pid_t pid = spawnTrainer({"--config", "cpu-tiny", "--num_epochs", "3", "--seed", "12", "--threads", "2", "--run_dir", "term"},
                                   s_dir->path(), path("term.log"));
    ASSERT_TRUE(waitForRecord(path("term"), [](const json& j) { return j.value("kind", "") == "step" && j.value("step", 0) >= 11; }));
    kill(pid, SIGTERM);
    EXPECT_EQ(waitExit(pid), 75) << readFile(path("term.log"));  // EX_TEMPFAIL: requeue me
    const auto events = records(path("term"), "event");
    ASSERT_FALSE(events.empty());
    EXPECT_EQ(events.back()["event"], "preempted");
    EXPECT_EQ(json::parse(readFile(path("term/manifest.json")))["status"], "preempted");
    const auto resumed = train(common + "--run_dir term --resume");
    ASSERT_EQ(resumed.exitCode, 0) << resumed.output;
    expectSameCheckpoint(path("ref/checkpoints/latest.pt"), path("term/checkpoints/latest.pt"));
    const auto a = records(path("ref"), "epoch"), b = records(path("term"), "epoch");
    ASSERT_EQ(b.size(), a.size());  // every epoch recorded once
    for (std::size_t i = 0; i < a.size(); ++i) {
        EXPECT_EQ(a[i]["train_loss"], b[i]["train_loss"]) << "epoch " << i + 1;
        EXPECT_EQ(a[i]["val_loss"], b[i]["val_loss"]) << "epoch " << i + 1;
    }
    for (const auto& entry : fs::directory_iterator(path("term/checkpoints")))
        EXPECT_EQ(entry.path().filename(), "latest.pt");  // no temporary left behind
}

// No seed anywhere: the first start draws one; the resume must keep it, not draw another.
TEST_F(TrainCli, ResumeWithoutASeedKeepsTheDrawnSeed)
{
    fs::create_directories(path("drawn"));
    const pid_t pid = spawnTrainer({"--config", "cpu-tiny", "--num_epochs", "3", "--threads", "2", "--run_dir", "drawn"}, s_dir->path(),
                                   path("drawn.log"));
    ASSERT_TRUE(waitForRecord(path("drawn"), [](const json& j) { return j.value("kind", "") == "step" && j.value("step", 0) >= 3; }));
    kill(pid, SIGTERM);
    ASSERT_EQ(waitExit(pid), 75) << readFile(path("drawn.log"));
    const std::string seed = json::parse(readFile(path("drawn/manifest.json")))["seed"];
    const auto resumed = train("--config cpu-tiny --num_epochs 3 --threads 2 --run_dir drawn --resume");
    ASSERT_EQ(resumed.exitCode, 0) << resumed.output;
    EXPECT_NE(resumed.output.find("Resuming from"), std::string::npos);
    EXPECT_EQ(json::parse(readFile(path("drawn/manifest.json")))["seed"], seed);
    EXPECT_EQ(records(path("drawn"), "event").back()["event"], "finished");
}

// The checkpoint's trust boundary: --resume loads only the user's own checkpoint that no one else
// can change, and says why it will not load one.
TEST_F(TrainCli, ResumeLoadsOnlyAPrivateCheckpointOfThisUser)
{
    ASSERT_EQ(train("--config cpu-tiny --num_epochs 1 --threads 2 --run_dir shared").exitCode, 0);
    const std::string checkpoint = path("shared/checkpoints/latest.pt");
    ASSERT_TRUE(fs::exists(checkpoint));
    fs::permissions(checkpoint, fs::perms::others_write, fs::perm_options::add);
    auto r = train("--config cpu-tiny --num_epochs 1 --threads 2 --run_dir shared --resume");
    EXPECT_EQ(r.exitCode, 1) << r.output;
    EXPECT_NE(r.output.find("latest.pt: not loaded: others may write it (mode 06"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("); a checkpoint is read by libtorch's whole archive importer"), std::string::npos) << r.output;
    fs::permissions(checkpoint, fs::perms::others_write, fs::perm_options::remove);
    if (::geteuid() == 0) {
        ASSERT_EQ(::chown(checkpoint.c_str(), 65534, 65534), 0);
        r = train("--config cpu-tiny --num_epochs 1 --threads 2 --run_dir shared --resume");
        EXPECT_EQ(r.exitCode, 1) << r.output;
        EXPECT_NE(r.output.find("latest.pt: not loaded: it belongs to user id 65534, not to you"), std::string::npos) << r.output;
        ASSERT_EQ(::chown(checkpoint.c_str(), 0, 0), 0);
    }
    r = train("--config cpu-tiny --num_epochs 1 --threads 2 --run_dir shared --resume");
    EXPECT_EQ(r.exitCode, 0) << r.output;
    EXPECT_NE(r.output.find("Resuming from"), std::string::npos) << r.output;
}

struct BadCase {
    std::string name;
    std::string args;
    std::string expect;
};

TEST_F(TrainCli, BadInputsEndWithOneClearLine)
{
    TempDir empty;
    writeFile(path("broken.yaml"), "base:\n  Nsamples: 64\n  box_size: [1, 2\n");
    writeFile(path("smallbox.yaml"),
              "base:\n  box_size: [16, 16]\n  data_size: 32\n  full_scale: False\n  train_path: data/train.h5\n"
              "  val_path: data/valid.h5\n");
    fs::create_directories(path("corrupt/checkpoints"));
    writeFile(path("corrupt/checkpoints/latest.pt"), "not a checkpoint");
    ASSERT_EQ(train("--config cpu-tiny --num_epochs 1 --seed 3 --run_dir mismatch").exitCode, 0);
    writeFile(path("a-file"), "x");
    ASSERT_EQ(
        runCommand("cd " + shellQuote(s_dir->path()) + " && " + shellQuote(kBin) + " make-data --out small --box 64 --val-box 40").exitCode,
        0);
    writeFile(path("shape.yaml"),
              "base:\n  box_size: [128, 96]\n  data_size: 32\n  full_scale: False\n"
              "  train_path: small/train.h5\n  val_path: small/valid.h5\n");
    // A copy of cpu-tiny that differs in lambda_rho only; and one with another data path.
    writeFile(path("lam.yaml"),
              readFile(kUnet) +
                  "\ncpu-tiny-lam:\n  <<: *cpu\n  base_channels: 4\n  global_batch_size: 2\n"
                  "  base_batch_size: 2\n  Nsamples: 16\n  Nsamples_val: 8\n  num_epochs: 2\n  lambda_rho: 0.5\n"
                  "  lr_schedule: {scaling: sqrt, start_lr: 1.0E-3, end_lr: 0.0, warmup_steps: 8}\n"
                  "cpu-tiny-data:\n  <<: *cpu\n  base_channels: 4\n  global_batch_size: 2\n"
                  "  base_batch_size: 2\n  Nsamples: 16\n  Nsamples_val: 8\n  num_epochs: 2\n  train_path: 'data/../data/train.h5'\n"
                  "  lr_schedule: {scaling: sqrt, start_lr: 1.0E-3, end_lr: 0.0, warmup_steps: 8}\n");
    // A checkpoint whose loop position lies (a hostile or damaged file): written with the real
    // writer, so only the field is wrong.
    ASSERT_EQ(train("--config cpu-tiny --num_epochs 1 --seed 3 --run_dir hostile").exitCode, 0);
    {
        using namespace scaledesk::train;
        UNet model(UNetOptions{4, 5, 4, false});
        torch::optim::Adam adam(model->parameters(), torch::optim::AdamOptions(1e-3));
        const std::string ckpt = path("hostile/checkpoints/latest.pt");
        CheckpointState state = loadCheckpoint(ckpt, model, adam, {});
        state.batchInEpoch = -5;
        saveCheckpoint(ckpt, model, adam, state);
    }
    fs::create_directories(path("huge/checkpoints"));
    fs::copy_file(path("hostile/checkpoints/latest.pt"), path("huge/checkpoints/latest.pt"));
    fs::copy_file(path("hostile/manifest.json"), path("huge/manifest.json"));
    {
        using namespace scaledesk::train;
        UNet model(UNetOptions{4, 5, 4, false});
        torch::optim::Adam adam(model->parameters(), torch::optim::AdamOptions(1e-3));
        const std::string ckpt = path("huge/checkpoints/latest.pt");
        CheckpointState state = loadCheckpoint(ckpt, model, adam, {});
        state.batchInEpoch = 0;
        state.epoch = 1000000;
        saveCheckpoint(ckpt, model, adam, state);
    }

    const std::vector<BadCase> cases = {
        {"missing hdf5", "--config cpu-tiny --run_dir nodata", "data/train.h5: no such file"},
        {"unknown config", "--config nope", "no config named 'nope'"},
        {"malformed yaml", "--config base --yaml_config " + shellQuote(path("broken.yaml")), "broken.yaml:4:1: malformed YAML"},
        {"box smaller than crop", "--config base --yaml_config " + shellQuote(path("smallbox.yaml")),
         "smallbox.yaml:2:13: config 'base', key 'box_size': train box side 16 must be larger than the crop side 32"},
        {"wrong shape", "--config base --yaml_config " + shellQuote(path("shape.yaml")) + " --run_dir shape",
         "small/train.h5: dataset 'Nbody' has shape (4, 64, 64, 64), expected (4, 128, 128, 128)"},
        {"unwritable run folder", "--config cpu-tiny --run_dir a-file/run", "a-file/run: cannot create the run folder"},
        {"corrupt checkpoint", "--config cpu-tiny --run_dir corrupt --resume",
         "corrupt/checkpoints/latest.pt: corrupt or unreadable checkpoint"},
        {"mismatched checkpoint", "--config cpu-short --seed 3 --run_dir mismatch --resume",
         "checkpoint does not match this run: Nsamples is 16 in the checkpoint but 512 now; base_channels is 4 in the "
         "checkpoint but 8 now"},
        {"changed lambda_rho",
         "--config cpu-tiny-lam --num_epochs 1 --seed 3 --run_dir mismatch --resume --yaml_config " + shellQuote(path("lam.yaml")),
         "checkpoint does not match this run: lambda_rho is 0.0 in the checkpoint but 0.5 now"},
        {"changed data path",
         "--config cpu-tiny-data --num_epochs 1 --seed 3 --run_dir mismatch --resume --yaml_config " + shellQuote(path("lam.yaml")),
         "train_path is data/train.h5 in the checkpoint but data/../data/train.h5 now"},
        {"negative loop position", "--config cpu-tiny --num_epochs 1 --seed 3 --run_dir hostile --resume",
         "hostile/checkpoints/latest.pt: field 'batch_in_epoch' is -5, outside 0..8 for this run"},
        {"loop position past the end", "--config cpu-tiny --num_epochs 1 --seed 3 --run_dir huge --resume",
         "huge/checkpoints/latest.pt: field 'epoch' is 1000000, outside 0..1 for this run"},
    };
    for (const auto& c : cases) {
        // The missing-data case runs where there is no data/ folder.
        const auto r = c.name == "missing hdf5" ? train(c.args, empty.path()) : train(c.args);
        EXPECT_EQ(r.exitCode, 1) << c.name << "\n" << r.output;
        std::string last = r.output;
        while (!last.empty() && last.back() == '\n') last.pop_back();
        last = last.substr(last.rfind('\n') == std::string::npos ? 0 : last.rfind('\n') + 1);
        EXPECT_EQ(last.rfind("scaledesk-train: error: ", 0), 0u) << c.name << ": " << last;
        EXPECT_NE(last.find(c.expect), std::string::npos) << c.name << "\n  got:    " << last << "\n  wanted: " << c.expect;
    }
    // Missing data is refused before the run folder exists; a data file found wrong once the run
    // had started (its shape) is recorded in the run's own files.
    EXPECT_FALSE(fs::exists(empty.file("nodata"))) << "a run refused for missing data left a folder";
    const auto failed = records(path("shape"), "event");
    ASSERT_FALSE(failed.empty());
    EXPECT_EQ(failed.back()["event"], "failed");
    EXPECT_NE(failed.back()["message"].get<std::string>().find("expected (4, 128, 128, 128)"), std::string::npos);
    // The mismatched resume left the good checkpoint untouched.
    EXPECT_EQ(json::parse(readFile(path("mismatch/manifest.json")))["status"], "failed");
    EXPECT_TRUE(fs::exists(path("mismatch/checkpoints/latest.pt")));
}

TEST_F(TrainCli, ANonPositiveCountNamesTheRule)
{
    const auto r = train("--config cpu-tiny --num_epochs 0");
    EXPECT_NE(r.exitCode, 0);
    EXPECT_NE(r.output.find("--num_epochs: must be greater than 0, got 0"), std::string::npos) << r.output;
    // A word for a number, and a negative count where 0 is allowed: one line each, no 309-digit range.
    const auto word = train("--config cpu-tiny --threads two");
    EXPECT_NE(word.exitCode, 0);
    EXPECT_NE(word.output.find("--threads: 'two' is not a number"), std::string::npos) << word.output;
    const auto workers = train("--config cpu-tiny --num_data_workers -1");
    EXPECT_NE(workers.exitCode, 0);
    EXPECT_NE(workers.output.find("--num_data_workers: must be 0 or greater, got -1"), std::string::npos) << workers.output;
    EXPECT_EQ(workers.output.find("1797693"), std::string::npos) << workers.output;
    const auto stopCheck = train("--config cpu-tiny --stop_check_s -0.5 --run_dir stopcheck");
    EXPECT_NE(stopCheck.exitCode, 0);
    EXPECT_NE(stopCheck.output.find("--stop_check_s: must be 0 or greater, got -0.5"), std::string::npos) << stopCheck.output;
    const auto stopCheckWord = train("--config cpu-tiny --stop_check_s inf --run_dir stopcheck");
    EXPECT_NE(stopCheckWord.output.find("--stop_check_s: 'inf' is not a number"), std::string::npos) << stopCheckWord.output;
    EXPECT_FALSE(fs::exists(path("stopcheck")));
    // A negative seed is refused, not wrapped to 2^64 - 1.
    const auto seed = train("--config cpu-tiny --seed -1 --run_dir seed");
    EXPECT_NE(seed.exitCode, 0);
    EXPECT_NE(seed.output.find("--seed: must be a whole number from 0"), std::string::npos) << seed.output;
    EXPECT_EQ(seed.output.find("18446744073709551615 --"), std::string::npos) << seed.output;
    EXPECT_FALSE(fs::exists(path("seed")));
}

// bf16 on the CPU (autocast; no loss scale): where this libtorch computes it correctly (2.x) and
// the check before training finds this CPU's bf16 gradients within 50 % of fp32's, it trains, and
// over 56 steps every loss is within 1 % of the fp32 run's with the same seed while not equal to it
// (an autocast that did nothing would match bit for bit). Measured on libtorch 2.6 with
// AVX512-BF16: at most 0.034 %. Where it does not (1.13, whose oneDNN bf16 Conv3d weight gradients
// are wrong; a CPU whose bf16 kernels the check finds wrong), it is refused in one line before
// anything is written.
TEST_F(TrainCli, Bf16OnTheCpuTracksFp32OrIsRefused)
{
    const std::string common = "--config cpu-tiny --num_epochs 7 --seed 31 --threads 1 ";
    const auto r = train(common + "--run_dir bf16 --amp_mode bf16");
    if (!scaledesk::train::compat::kCpuBf16ConvolutionGradientsCorrect) {
        EXPECT_EQ(r.exitCode, 1);
        EXPECT_NE(r.output.find("amp_mode bf16: libtorch " + scaledesk::train::compat::torchVersion() +
                                "'s oneDNN computes wrong bf16 Conv3d weight gradients"),
                  std::string::npos)
            << r.output;
        EXPECT_FALSE(fs::exists(path("bf16"))) << "a refused run left a folder";
        return;
    }
    if (!cpuFlagsHaveBf16()) {  // no AVX-512 or AMX (the CI machine's CPU): refused before the check
        EXPECT_EQ(r.exitCode, 1) << r.output;
        EXPECT_NE(r.output.find("amp_mode bf16: bf16 on the CPU needs AVX-512 or AMX, and this CPU has neither"), std::string::npos)
            << r.output;
        EXPECT_FALSE(fs::exists(path("bf16"))) << "a refused run left a folder";
        return;
    }
    if (r.output.find("amp_mode bf16: this CPU's bf16 kernels compute the model's gradients wrong") != std::string::npos) {
        EXPECT_EQ(r.exitCode, 1);
        EXPECT_FALSE(fs::exists(path("bf16"))) << "a refused run left a folder";
        std::cout << "bf16 refused on this CPU by the check before training:\n" << r.output << std::endl;
        return;
    }
    EXPECT_NE(r.output.find(" - INFO - bf16 check: every gradient within "), std::string::npos) << r.output;
    // Which CPU this ran on, for a failure: bf16 kernels differ by CPU (docs/trainer.md).
    SCOPED_TRACE(cpuModel() + "; " + r.output.substr(r.output.find("bf16 check:"), 120));
    ASSERT_EQ(r.exitCode, 0) << r.output;
    ASSERT_EQ(train(common + "--run_dir fp32").exitCode, 0);
    EXPECT_NE(r.output.find(" - INFO - amp_mode bf16\n"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find(" - INFO - device cpu, mixed precision bf16"), std::string::npos) << r.output;
    const json manifest = json::parse(readFile(path("bf16/manifest.json")));
    EXPECT_EQ(manifest["amp_mode"], "bf16");
    EXPECT_EQ(manifest["enable_amp"], false);
    // The step-0 losses are computed without autocast, as in the original.
    EXPECT_EQ(records(path("fp32"), "initial").at(0)["val_loss"], records(path("bf16"), "initial").at(0)["val_loss"]);
    const auto a = records(path("fp32"), "step"), b = records(path("bf16"), "step");
    ASSERT_EQ(a.size(), 56u);
    ASSERT_EQ(b.size(), a.size());
    int differing = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        ASSERT_TRUE(b[i]["loss"].is_number()) << "bf16 step " << i + 1 << " has a NaN loss: " << b[i].dump();
        const double fp32 = a[i]["loss"].get<double>(), bf16 = b[i]["loss"].get<double>();
        EXPECT_LE(std::abs(bf16 - fp32), 0.01 * std::abs(fp32)) << "step " << i + 1;
        differing += bf16 != fp32;
    }
    EXPECT_GT(differing, 0);
}

// The check before a CPU bf16 run refuses a model whose bf16 gradients are wrong: a planted fault
// (the last parameter's bf16 gradient doubled, as a wrong kernel would make it) is found on any
// CPU, named, and stops the run in one line before anything is written.
TEST_F(TrainCli, Bf16OnTheCpuIsRefusedWhereItsGradientsAreWrong)
{
    if (!scaledesk::train::compat::kCpuBf16ConvolutionGradientsCorrect) GTEST_SKIP() << "libtorch 1.13 refuses CPU bf16 before the check";
    if (!cpuFlagsHaveBf16())
        GTEST_SKIP() << "this CPU has neither AVX-512 nor AMX: bf16 is refused before the check (" << cpuModel() << ")";
    const auto r = train("--config cpu-tiny --num_epochs 1 --seed 31 --threads 1 --run_dir wrong --amp_mode bf16", "",
                         "SCALEDESK_FAULT_BF16_GRADIENT=2");
    EXPECT_EQ(r.exitCode, 1) << r.output;
    EXPECT_NE(r.output.find("amp_mode bf16: this CPU's bf16 kernels compute the model's gradients wrong: a check before training "
                            "(one sample of 32^3, fp32 against bf16 autocast) found "),
              std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find("'s gradient 10"), std::string::npos) << r.output;  // doubled: about 100 % away
    EXPECT_NE(r.output.find(" % away from fp32's"), std::string::npos) << r.output;
    EXPECT_FALSE(fs::exists(path("wrong"))) << "a refused run left a folder";
}

// enable_amp is the NERSC trainer's AMP: fp16 autocast with a loss scaler. On the CPU it needs a
// libtorch whose CPU autocast has float16 (2.4+), and warns that it is slow there. A planted inf
// gradient (step 3) skips that step and halves the scale; the schedule still advances.
TEST_F(TrainCli, EnableAmpIsFp16WithALossScalerThatSkipsAnInfStep)
{
    const auto r =
        train("--config cpu-tiny --num_epochs 1 --seed 31 --threads 1 --run_dir fp16 --enable_amp", "", "SCALEDESK_FAULT_NONFINITE_GRAD=3");
    if (!scaledesk::train::compat::kCpuFp16Autocast) {
        EXPECT_EQ(r.exitCode, 1);
        EXPECT_NE(r.output.find("enable_amp (fp16 with a loss scaler): fp16 on the CPU needs libtorch 2.4 or later"), std::string::npos)
            << r.output;
        EXPECT_FALSE(fs::exists(path("fp16")));
        return;
    }
    ASSERT_EQ(r.exitCode, 0) << r.output;
    EXPECT_NE(r.output.find(" - WARNING - fp16 on the CPU: CPUs have no fast fp16 convolutions"), std::string::npos) << r.output;
    const json manifest = json::parse(readFile(path("fp16/manifest.json")));
    EXPECT_EQ(manifest["amp_mode"], "fp16");
    EXPECT_EQ(manifest["enable_amp"], true);
    const auto steps = records(path("fp16"), "step");
    ASSERT_EQ(steps.size(), 8u);
    for (std::size_t i = 0; i < steps.size(); ++i) {
        const int64_t step = steps[i]["step"];
        EXPECT_EQ(steps[i].value("skipped", false), step == 3) << steps[i].dump();
        EXPECT_EQ(steps[i]["loss_scale"].get<double>(), step < 3 ? 65536.0 : 32768.0) << steps[i].dump();
        EXPECT_TRUE(steps[i]["loss"].is_number()) << steps[i].dump();
    }
    EXPECT_NE(steps[2]["lr"], steps[3]["lr"]);  // the LR schedule advanced over the skipped step
    EXPECT_EQ(records(path("fp16"), "epoch").at(0)["skipped_steps"], 1);
}

// --backend nccl where there is no GPU (this machine): one line on stderr naming the reason, exit
// 1, nothing written. A build without NCCL says so (not "needs a GPU", which a GPU would not fix),
// whatever else was asked, --describe included; a CUDA build with NCCL says that it needs a GPU.
TEST_F(TrainCli, NcclWithoutAGpuIsOneLine)
{
    const auto built = scaledesk::train::availableBackends();
    const bool withNccl = std::find(built.begin(), built.end(), "nccl") != built.end();
    for (const std::string extra : {"", " --describe"}) {
        // stderr alone: stdout goes nowhere.
        const auto r = runCommand("cd " + shellQuote(s_dir->path()) + " && (" + shellQuote(kBin) + " --yaml_config " + shellQuote(kUnet) +
                                  " --config cpu-tiny --run_dir nccl --backend nccl" + extra + " 2>&1 >/dev/null)");
        if (withNccl && !extra.empty()) continue;  // describing needs no GPU where NCCL is built in
        EXPECT_EQ(r.exitCode, 1) << extra;
        const std::string says = withNccl ? "scaledesk-train: error: --backend nccl needs a GPU: "
                                          : "scaledesk-train: error: --backend nccl: this scaledesk-train was built without it (";
        EXPECT_EQ(r.output.rfind(says, 0), 0u) << r.output;
        EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
        EXPECT_FALSE(fs::exists(path("nccl")));
    }
}

namespace {
std::size_t countOf(const std::string& text, const std::string& what)
{
    std::size_t n = 0;
    for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
}

// cpu-tiny with YAML enable_amp/enable_benchy True, G > B (so the warm-up branch applies) and no warm-up.
const char* kOptConfig = "\ncpu-tiny-opt:\n  <<: *cpu\n  base_channels: 4\n  global_batch_size: 2\n  base_batch_size: 1\n"
                         "  Nsamples: 16\n  Nsamples_val: 8\n  num_epochs: 1\n  enable_amp: True\n  enable_benchy: True\n"
                         "  lr_schedule: {scaling: sqrt, start_lr: 1.0E-3, end_lr: 0.0, warmup_steps: 0}\n";
}  // namespace

// The original's rule: each enable_* is the command line's flag, False when absent, whatever the
// YAML says; a YAML True that the absent flag overwrites is said.
TEST_F(TrainCli, EnableSwitchesAreTheCommandLinesAsInTheOriginal)
{
    const std::string yaml = path("opt.yaml");
    writeFile(yaml, readFile(kUnet) + kOptConfig);
    const std::string common = "--yaml_config " + shellQuote(yaml) + " --config cpu-tiny-opt --seed 5 --threads 1 ";

    // No flags: both YAML Trues become False; benchy off means step-0 losses and validation exist.
    const auto off = train(common + "--run_dir opt-off");
    ASSERT_EQ(off.exitCode, 0) << off.output;
    EXPECT_NE(off.output.find(" - INFO - enable_amp False\n"), std::string::npos) << off.output;
    EXPECT_NE(off.output.find(" - INFO - enable_benchy False\n"), std::string::npos);
    EXPECT_NE(off.output.find(" - WARNING - enable_amp is True in config 'cpu-tiny-opt' (" + yaml + ":"), std::string::npos) << off.output;
    EXPECT_NE(off.output.find("but the command line decides it, as in the original: False without --enable_amp"), std::string::npos);
    EXPECT_NE(off.output.find(" - WARNING - enable_benchy is True in config 'cpu-tiny-opt'"), std::string::npos);
    EXPECT_EQ(off.output.find("fp16 on the CPU"), std::string::npos);  // enable_amp False: no fp16 run
    EXPECT_EQ(json::parse(readFile(path("opt-off/manifest.json")))["enable_amp"], false);
    EXPECT_EQ(records(path("opt-off"), "initial").size(), 1u);
    EXPECT_TRUE(records(path("opt-off"), "epoch").at(0)["val_loss"].is_number());
    // warmup_steps 0 at G > B: the first step's LR is the cosine's, right below sqrt(2) × start_lr.
    const auto steps = records(path("opt-off"), "step");
    ASSERT_EQ(steps.size(), 8u);
    const double init = std::sqrt(2.0) * 1.0e-3, pi = std::acos(-1.0);
    EXPECT_NEAR(steps[0]["lr"].get<double>(), 0.5 * init * (1 + std::cos(pi / 8.0)), 1e-15);
    for (const auto& st : steps) EXPECT_TRUE(st["loss"].is_number());

    // Given: --enable_benchy is True; --enable_amp=false is False and, being given, not warned about.
    const auto on = train(common + "--run_dir opt-on --enable_benchy --enable_amp=false");
    ASSERT_EQ(on.exitCode, 0) << on.output;
    EXPECT_NE(on.output.find(" - INFO - enable_benchy True\n"), std::string::npos) << on.output;
    EXPECT_NE(on.output.find(" - INFO - enable_amp False\n"), std::string::npos);
    EXPECT_EQ(on.output.find(" - WARNING - enable_amp is True"), std::string::npos) << on.output;
    EXPECT_EQ(on.output.find(" - WARNING - enable_benchy is True"), std::string::npos);
    EXPECT_TRUE(records(path("opt-on"), "initial").empty());                    // benchy: no step-0 losses
    EXPECT_TRUE(records(path("opt-on"), "epoch").at(0)["val_loss"].is_null());  // and no validation

    // --enable_amp given turns it on over a YAML False (cpu-tiny's); --describe shows where it came from.
    const auto described = train("--config cpu-tiny --describe --enable_amp");
    ASSERT_EQ(described.exitCode, 0) << described.output;
    EXPECT_NE(described.output.find("  enable_amp True    # command line\n"), std::string::npos) << described.output;
    EXPECT_NE(described.output.find("  enable_jit False    # command line\n"), std::string::npos);
}

// --noddp in one process: world size 1, no gradient exchange; --disable_broadcast_buffers is recorded.
TEST_F(TrainCli, NoddpAndDisableBroadcastBuffersAreRecorded)
{
    const auto r = train("--config cpu-tiny --num_epochs 1 --seed 6 --threads 2 --noddp --disable_broadcast_buffers --run_dir noddp1");
    ASSERT_EQ(r.exitCode, 0) << r.output;
    const json manifest = json::parse(readFile(path("noddp1/manifest.json")));
    EXPECT_EQ(manifest["world_size"], 1);
    EXPECT_EQ(manifest["strategy"], "none");
    EXPECT_EQ(manifest["noddp"], true);
    EXPECT_EQ(manifest["broadcast_buffers"], false);
    EXPECT_EQ(manifest["status"], "finished");
    const auto started = records(path("noddp1"), "event").at(0);
    EXPECT_EQ(started["event"], "started");
    EXPECT_EQ(started["noddp"], true);
    EXPECT_EQ(started["world_size"], 1);
    // Without the flags: the defaults are recorded too.
    ASSERT_EQ(train("--config cpu-tiny --num_epochs 1 --seed 6 --threads 2 --run_dir ddp1").exitCode, 0);
    const json plain = json::parse(readFile(path("ddp1/manifest.json")));
    EXPECT_EQ(plain["strategy"], "ddp");  // as launched: a 1-rank run is its strategy's baseline
    EXPECT_EQ(plain["run_id"], "ddp1");
    EXPECT_EQ(plain["noddp"], false);
    EXPECT_EQ(plain["broadcast_buffers"], true);
    // One process trains the same with and without --noddp.
    EXPECT_EQ(records(path("noddp1"), "epoch").at(0)["val_loss"], records(path("ddp1"), "epoch").at(0)["val_loss"]);
    // Started in its own folder with --run_dir . (as a job script does): the id is the folder's name.
    fs::create_directories(path("in-place"));
    fs::create_directory_symlink(path("data"), path("in-place/data"));
    const auto here = train("--config cpu-tiny --num_epochs 1 --seed 6 --threads 2 --run_dir .", path("in-place"));
    ASSERT_EQ(here.exitCode, 0) << here.output;
    EXPECT_EQ(json::parse(readFile(path("in-place/manifest.json")))["run_id"], "in-place");

    const auto both = train("--config cpu-tiny --noddp --check_replicas --run_dir never");
    EXPECT_EQ(both.exitCode, 1);
    EXPECT_NE(both.output.find("scaledesk-train: error: --check_replicas: the replicas of a --noddp run are not synchronised"),
              std::string::npos)
        << both.output;
}

TEST_F(TrainCli, HelpDescribesTheNewSwitches)
{
    const auto r = runCommand(shellQuote(kBin) + " --help");
    ASSERT_EQ(r.exitCode, 0) << r.output;
    for (const char* text : {"--noddp", "gradients are never synchronised", "--disable_broadcast_buffers", "the U-Net has no buffers",
                             "--gpu_sample_s", "0 switches telemetry off", "absent (or =false): off, whatever the YAML says"})
        EXPECT_NE(r.output.find(text), std::string::npos) << text;
    const auto bad = train("--config cpu-tiny --gpu_sample_s -1");
    EXPECT_NE(bad.exitCode, 0);
    EXPECT_NE(bad.output.find("must be 0 (off) or at least 0.01, got -1"), std::string::npos) << bad.output;
}

// GPU telemetry end to end on the stand-in NVML (fake_nvml.c: GPU 0 reads 250 W, 87 %, 40 GiB of
// 80 GiB; GPU 1 300 W, 50 %, 20 GiB). A CPU run samples the GPU of its local rank (0 here).
TEST_F(TrainCli, GpuTelemetryRecordsEveryIntervalAndEachEpochsEnergy)
{
    const std::string fake = "-u CUDA_VISIBLE_DEVICES -u LOCAL_RANK SCALEDESK_NVML_LIBRARY=" + shellQuote(SCALEDESK_FAKE_NVML);
    // cpu-tiny's run lasts about a second: a short interval gives tens of samples.
    const auto r = train("--config cpu-tiny --seed 8 --threads 2 --gpu_sample_s 0.03 --run_dir gpu", "", fake);
    ASSERT_EQ(r.exitCode, 0) << r.output;
    EXPECT_EQ(countOf(r.output, "GPU telemetry"), 1u) << r.output;
    EXPECT_NE(r.output.find(" - INFO - GPU telemetry: CPU run; sampling GPU 0 of this node, which this trainer does not use, every "
                            "0.03 s\n"),
              std::string::npos)
        << r.output;

    const auto samples = records(path("gpu"), "gpu");
    ASSERT_GE(samples.size(), 10u);
    std::vector<double> gaps;
    int64_t lastStep = 0;
    for (std::size_t i = 0; i < samples.size(); ++i) {
        const json& g = samples[i];
        EXPECT_EQ(g["rank"], 0);
        EXPECT_EQ(g["gpu"], 0);
        EXPECT_EQ(g["power_w"], 250.0);
        EXPECT_EQ(g["util_pct"], 87.0);
        EXPECT_EQ(g["mem_used_mib"], 40960.0);
        EXPECT_EQ(g["mem_total_mib"], 81920.0);
        EXPECT_GE(g["step"].get<int64_t>(), lastStep);
        lastStep = g["step"];
        if (i > 0) gaps.push_back(g["t"].get<double>() - samples[i - 1]["t"].get<double>());
    }
    EXPECT_GT(lastStep, 8);  // sampled in both epochs
    EXPECT_LE(lastStep, 16);
    std::sort(gaps.begin(), gaps.end());
    EXPECT_GT(gaps.front(), 0.0);  // each sample once, in order
    EXPECT_NEAR(gaps[gaps.size() / 2], 0.03, 0.015) << "median gap";

    const auto perEpoch = records(path("gpu"), "gpu_epoch");
    const auto epochs = records(path("gpu"), "epoch");
    ASSERT_EQ(perEpoch.size(), 2u);
    ASSERT_EQ(epochs.size(), 2u);
    for (int e = 0; e < 2; ++e) {
        const json& g = perEpoch[std::size_t(e)];
        EXPECT_EQ(g["epoch"], e + 1);
        EXPECT_EQ(g["rank"], 0);
        EXPECT_EQ(g["gpu"], 0);
        EXPECT_GE(g["samples"].get<int64_t>(), 1);
        // Constant power: energy is 250 W over the epoch's window (training and validation).
        EXPECT_NEAR(g["energy_wh"].get<double>(), 250.0 * g["window_s"].get<double>() / 3600.0, 1e-9);
        EXPECT_GE(g["window_s"].get<double>(), epochs[std::size_t(e)]["epoch_s"].get<double>());
        EXPECT_NEAR(g["mean_power_w"].get<double>(), 250.0, 1e-6);
        EXPECT_EQ(g["mean_util_pct"], 87.0);
        EXPECT_EQ(g["max_mem_used_mib"], 40960.0);
        EXPECT_EQ(epochs[std::size_t(e)]["gpu_energy_wh"], g["energy_wh"]);
        EXPECT_EQ(epochs[std::size_t(e)]["gpu_util_pct"], 87.0);
    }
    const json manifest = json::parse(readFile(path("gpu/manifest.json")));
    EXPECT_EQ(manifest["gpu_telemetry"]["status"], "sampling");
    EXPECT_EQ(manifest["gpu_telemetry"]["gpu"], 0);
    EXPECT_EQ(manifest["gpu_telemetry"]["interval_s"], 0.03);

    // CUDA_VISIBLE_DEVICES renumbers: this rank's device 0 is the node's GPU 1.
    const std::string second = "-u LOCAL_RANK CUDA_VISIBLE_DEVICES=1 SCALEDESK_NVML_LIBRARY=" + shellQuote(SCALEDESK_FAKE_NVML);
    const auto r1 = train("--config cpu-tiny --num_epochs 1 --seed 8 --threads 2 --gpu_sample_s 0.1 --run_dir gpu1", "", second);
    ASSERT_EQ(r1.exitCode, 0) << r1.output;
    EXPECT_NE(r1.output.find("GPU telemetry: CPU run; sampling GPU 1 of this node"), std::string::npos) << r1.output;
    const auto samples1 = records(path("gpu1"), "gpu");
    ASSERT_FALSE(samples1.empty());
    for (const auto& g : samples1) {
        EXPECT_EQ(g["gpu"], 1);
        EXPECT_EQ(g["power_w"], 300.0);
    }
    EXPECT_EQ(records(path("gpu1"), "gpu_epoch").at(0)["gpu"], 1);
}

TEST_F(TrainCli, GpuTelemetryWithoutNvmlOrSwitchedOffRecordsNothing)
{
    const auto r = train("--config cpu-tiny --num_epochs 1 --seed 8 --threads 2 --run_dir nonvml", "",
                         "SCALEDESK_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1");
    ASSERT_EQ(r.exitCode, 0) << r.output;
    EXPECT_EQ(countOf(r.output, "GPU telemetry"), 1u) << r.output;
    EXPECT_NE(r.output.find(" - INFO - no GPU telemetry: no NVML (/nonexistent/libnvidia-ml.so.1: cannot open shared object file: No such "
                            "file or directory); nothing recorded\n"),
              std::string::npos)
        << r.output;
    EXPECT_TRUE(records(path("nonvml"), "gpu").empty());
    // This machine as it is: where the real libnvidia-ml.so.1 does not load (a CPU machine, CI),
    // a run says so once.
    if (void* real = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL)) {
        dlclose(real);
    } else {
        const auto plain = train("--config cpu-tiny --num_epochs 1 --seed 8 --threads 2 --run_dir plain");
        ASSERT_EQ(plain.exitCode, 0) << plain.output;
        EXPECT_EQ(countOf(plain.output, "no GPU telemetry"), 1u) << plain.output;
        EXPECT_EQ(countOf(plain.output, "GPU telemetry"), 1u) << plain.output;
        EXPECT_TRUE(records(path("plain"), "gpu").empty());
    }
    EXPECT_TRUE(records(path("nonvml"), "gpu_epoch").empty());
    EXPECT_FALSE(records(path("nonvml"), "epoch").at(0).contains("gpu_energy_wh"));
    const json manifest = json::parse(readFile(path("nonvml/manifest.json")));
    EXPECT_EQ(manifest["gpu_telemetry"]["status"], "unavailable");
    EXPECT_TRUE(manifest["gpu_telemetry"]["gpu"].is_null());

    const auto off = train("--config cpu-tiny --num_epochs 1 --seed 8 --threads 2 --gpu_sample_s 0 --run_dir gpuoff", "",
                           "SCALEDESK_NVML_LIBRARY=" + shellQuote(SCALEDESK_FAKE_NVML));
    ASSERT_EQ(off.exitCode, 0) << off.output;
    EXPECT_EQ(countOf(off.output, "GPU telemetry"), 1u) << off.output;
    EXPECT_NE(off.output.find(" - INFO - GPU telemetry: off (--gpu_sample_s 0)\n"), std::string::npos);
    EXPECT_TRUE(records(path("gpuoff"), "gpu").empty());
    EXPECT_EQ(json::parse(readFile(path("gpuoff/manifest.json")))["gpu_telemetry"]["status"], "off");
}
