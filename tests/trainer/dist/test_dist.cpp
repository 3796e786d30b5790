// Multi-rank runs of the real scaledesk-train: mpirun (mpi backend) and env:// processes (gloo).
#include "compat/torchcompat.h"
#include "dist/benchcomm.h"
#include "dist/buckets.h"
#include "dist/comm.h"
#include "model/unet.h"
#include "run/checkpoint.h"
#include "testutil.h"

#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <thread>
#include <unistd.h>

using namespace scaledesk::test;
using json = nlohmann::json;
using scaledesk::train::BenchCommOptions;
using scaledesk::train::benchSizes;
using scaledesk::train::strategyMessageBytes;
using scaledesk::train::UNet;
using scaledesk::train::unetOptions;
namespace fs = std::filesystem;

namespace {

const std::string kBin = SCALEDESK_TRAIN_BIN;
const std::string kUnet = std::string(SCALEDESK_SOURCE_DIR) + "/configs/unet.yaml";

struct Job {
    std::vector<int> exitCodes;
    std::vector<std::string> outputs;  ///< per rank (mpirun: one combined)
};

class Dist : public GeneratedDataSuite {
protected:
    static void SetUpTestSuite() { setUpData(kBin); }
    static void TearDownTestSuite() { tearDownData(); }

    static std::vector<std::string> trainerArgs(const std::vector<std::string>& args)
    {
        std::vector<std::string> argv = {kBin, "--yaml_config", kUnet, "--threads", "1", "--comm_timeout", "30"};
        argv.insert(argv.end(), args.begin(), args.end());
        return argv;
    }

    // N processes with RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT (NERSC's env:// convention).
    static Job runEnv(int ranks, const std::vector<std::string>& args, const std::vector<std::vector<std::string>>& perRankArgs = {},
                      const std::vector<std::string>& extraEnv = {})
    {
        const int port = nextPort();
        std::vector<int> pids;
        static std::atomic<int> jobs{0};  // the kernel may hand a port out again: the logs keep apart
        const std::string tag = std::to_string(port) + "-" + std::to_string(jobs++);
        for (int r = 0; r < ranks; ++r) {
            std::vector<std::string> argv = trainerArgs(args);
            if (std::size_t(r) < perRankArgs.size())
                argv.insert(argv.end(), perRankArgs[std::size_t(r)].begin(), perRankArgs[std::size_t(r)].end());
            std::vector<std::string> env = {"RANK=" + std::to_string(r), "WORLD_SIZE=" + std::to_string(ranks), "MASTER_ADDR=127.0.0.1",
                                            "MASTER_PORT=" + std::to_string(port)};
            env.insert(env.end(), extraEnv.begin(), extraEnv.end());
            pids.push_back(spawnProcess(argv, s_dir->path(), path("env-" + tag + "-" + std::to_string(r) + ".log"), env));
        }
        Job job;
        for (int r = 0; r < ranks; ++r) {
            job.exitCodes.push_back(waitExit(pids[std::size_t(r)]));
            job.outputs.push_back(readFile(path("env-" + tag + "-" + std::to_string(r) + ".log")));
        }
        return job;
    }

    static Job runMpi(int ranks, const std::vector<std::string>& args, const std::string& mpiEnv = "")
    {
        std::string cmd = "cd " + shellQuote(s_dir->path()) + " && " + mpiEnv +
            " mpirun --allow-run-as-root --oversubscribe --bind-to none -np " + std::to_string(ranks);
        for (const auto& a : trainerArgs(args)) cmd += " " + shellQuote(a);
        const auto r = runCommand(cmd);
        return Job{{r.exitCode}, {r.output}};
    }
};

std::string all(const Job& job)
{
    std::string s;
    for (const auto& o : job.outputs) s += o + "\n----\n";
    return s;
}

std::vector<torch::Tensor> finalParameters(const std::string& checkpoint)
{
    using namespace scaledesk::train;
    UNet model(UNetOptions{4, 5, 4, false});
    torch::optim::Adam adam(model->parameters(), torch::optim::AdamOptions(1e-3));
    loadCheckpoint(checkpoint, model, adam, {});
    std::vector<torch::Tensor> out;
    for (const auto& p : model->parameters()) out.push_back(p.detach().clone());
    return out;
}

}  // namespace

TEST_F(Dist, MpirunTwoAndThreeRanks)
{
    for (int ranks : {2, 3}) {
        const std::string run = "mpi" + std::to_string(ranks);
        const Job job = runMpi(
            ranks,
            {"--config", "cpu-tiny", "--seed", "4", "--strategy", "ddp", "--check_replicas", "--local_batch_size", "1", "--run_dir", run});
        ASSERT_EQ(job.exitCodes[0], 0) << job.outputs[0];
        const json manifest = json::parse(readFile(path(run + "/manifest.json")));
        EXPECT_EQ(manifest["world_size"], ranks);
        EXPECT_EQ(manifest["backend"], "mpi");
        EXPECT_EQ(manifest["strategy"], "ddp");
        EXPECT_EQ(manifest["launcher"], "mpi");
        EXPECT_NE(manifest["versions"]["mpi"].get<std::string>().find("Open MPI"), std::string::npos);
        EXPECT_EQ(manifest["hostnames"].size(), std::size_t(ranks));
        EXPECT_EQ(manifest["status"], "finished");
        for (int r = 1; r < ranks; ++r)
            EXPECT_NE(readFile(path(run + "/rank-" + std::to_string(r) + ".log")).find("DONE ---- rank " + std::to_string(r)),
                      std::string::npos);
        EXPECT_FALSE(fs::exists(path(run + "/rank-0.log")));
        const auto epochs = records(path(run), "epoch");
        ASSERT_EQ(epochs.size(), 2u);
        // Per-rank epoch length ⌈Nsamples / world⌉ with the global batch split: samples counted globally.
        const int64_t perRank = (16 + ranks - 1) / ranks;
        EXPECT_EQ(epochs[0]["samples"], perRank * ranks);
        const auto csv = readLines(path(run + "/epochs.csv"));
        ASSERT_EQ(csv.size(), 3u);
    }
}

// The planner's communication benchmark: every size timed over the ranks, one JSON line each, and
// the compute kernel alone and on both ranks at once.
TEST_F(Dist, BenchCommTimesEverySizeOverTheRanks)
{
    const std::string out = path("bench-comm.jsonl");
    for (const std::string backend : {"mpi", "gloo"}) {
        const std::vector<std::string> args = {"--backend", backend, "bench-comm", "--sizes", "4K,256K",           "--reps", "3",
                                               "--out",     out,     "--threads",  "1",       "--compute_seconds", "0.2"};
        const Job job = backend == "mpi" ? runMpi(2, args) : runEnv(2, args);
        for (int code : job.exitCodes) EXPECT_EQ(code, 0) << all(job);
        EXPECT_NE(job.outputs[0].find("collectives over 2 ranks on 1 node(s), " + backend), std::string::npos) << all(job);
    }
    // Each backend: each collective, each size, then compute.
    const std::vector<std::string> lines = readLines(out);
    ASSERT_EQ(lines.size(), 14u) << readFile(out);
    const std::vector<std::string> ops = {"allreduce", "reduce_scatter", "allgather"};
    for (std::size_t k = 0; k < lines.size(); ++k) {
        const json j = json::parse(lines[k]);
        EXPECT_EQ(j.at("backend"), k < 7 ? "mpi" : "gloo");
        if (k % 7 == 6) {  // the kernel alone (rank 0, the other asleep), then on both ranks
            EXPECT_EQ(j.at("kind"), "compute") << lines[k];
            EXPECT_EQ(j.at("ranks"), 2);
            EXPECT_EQ(j.at("threads"), 1);
            EXPECT_EQ(j.at("host_cpus").get<int>(), int(std::thread::hardware_concurrency()));  // the planner's oversubscription check
            EXPECT_EQ(j.at("kernel"), "conv") << lines[k];
            EXPECT_GT(j.at("alone_s").get<double>(), 0.0) << lines[k];
            EXPECT_GE(j.at("seconds").get<double>(), j.at("mean_s").get<double>()) << lines[k];
            EXPECT_GT(j.at("mean_s").get<double>(), 0.0) << lines[k];
            EXPECT_GE(j.at("reps").get<int>(), 3) << lines[k];
            EXPECT_FALSE(j.contains("bytes"));
            continue;
        }
        const std::size_t i = k % 7;  // 0–5: three collectives × two sizes
        EXPECT_EQ(j.at("kind"), ops[i / 2 % 3]) << lines[k];
        // The reductions are timed with their average (×1/n), as the strategies follow them.
        EXPECT_EQ(j.value("averaged", false), ops[i / 2 % 3] != "allgather") << lines[k];
        EXPECT_EQ(j.at("ranks"), 2);
        EXPECT_EQ(j.at("nodes"), 1);
        EXPECT_EQ(j.at("bytes"), i % 2 == 0 ? 4096 : 262144);
        EXPECT_GT(j.at("seconds").get<double>(), 0.0);
        EXPECT_GE(j.at("seconds").get<double>(), j.at("min_s").get<double>());
        EXPECT_EQ(j.at("reps"), 3);
    }
    // One rank has nothing to reduce with; a size that is not one is named.
    const Job one = runEnv(1, {"--backend", "gloo", "bench-comm"});
    EXPECT_NE(one.exitCodes[0], 0);
    EXPECT_NE(one.outputs[0].find("needs at least two ranks"), std::string::npos) << all(one);
    const ProcessResult bad = runCommand(shellQuote(kBin) + " bench-comm --sizes 4K,6,lots 2>&1");
    EXPECT_NE(bad.exitCode, 0);
    EXPECT_NE(bad.output.find("--sizes: '6' is not a size in bytes"), std::string::npos) << bad.output;
}

// --after_compute: each collective and size again, after compute kernels and no barrier, its own
// line after the barrier's, with the ranks' wait and compute; the allreduce a third time, launched
// before the kernels and waited for after them (ddp's buckets behind backward).
TEST_F(Dist, BenchCommTimesCollectivesAfterComputeToo)
{
    const std::string out = path("bench-after.jsonl");
    const Job job = runMpi(2,
                           {"bench-comm", "--sizes", "4K,64K", "--ops", "allreduce,allgather", "--reps", "3", "--after_compute", "0.02",
                            "--out", out, "--threads", "1"});
    for (int code : job.exitCodes) EXPECT_EQ(code, 0) << all(job);
    EXPECT_NE(job.outputs[0].find("kernel(s) of"), std::string::npos) << all(job);
    const std::vector<std::string> lines = readLines(out);
    // Per size: the allreduce behind a barrier, after compute and overlapped; the allgather behind
    // a barrier and after compute.
    ASSERT_EQ(lines.size(), 10u) << readFile(out);
    for (std::size_t k = 0; k < lines.size(); ++k) {
        const json j = json::parse(lines[k]);
        const bool allreduce = k < 6;
        const std::size_t i = allreduce ? k % 3 : (k - 6) % 2;  // 0 barrier, 1 after compute, 2 overlapped
        EXPECT_EQ(j.at("kind"), allreduce ? "allreduce" : "allgather") << lines[k];
        EXPECT_EQ(j.at("bytes"), (allreduce ? k / 3 : (k - 6) / 2) == 0 ? 4096 : 65536) << lines[k];
        EXPECT_GE(j.at("seconds").get<double>(), j.at("min_s").get<double>()) << lines[k];
        if (i == 0) {
            EXPECT_FALSE(j.contains("mode")) << lines[k];
            continue;
        }
        if (i == 2) {  // the compute while the call ran, and the wait for it after
            EXPECT_EQ(j.at("mode"), "overlapped") << lines[k];
            EXPECT_GE(j.at("kernels").get<int>(), 1) << lines[k];
            EXPECT_GT(j.at("compute_s").get<double>(), 0.0) << lines[k];
            EXPECT_GT(j.at("seconds").get<double>(), 0.0) << lines[k];
            EXPECT_FALSE(j.contains("wait_s")) << lines[k];
            continue;
        }
        EXPECT_EQ(j.at("mode"), "after_compute") << lines[k];
        EXPECT_GE(j.at("kernels").get<int>(), 1) << lines[k];
        EXPECT_GT(j.at("compute_s").get<double>(), 0.0) << lines[k];
        EXPECT_GE(j.at("wait_s").get<double>(), 0.0) << lines[k];
        EXPECT_GT(j.at("seconds").get<double>(), 0.0) << lines[k];
    }
    const ProcessResult bad = runCommand(shellQuote(kBin) + " bench-comm --after_compute -1 2>&1");
    EXPECT_NE(bad.exitCode, 0);
    EXPECT_NE(bad.output.find("--after_compute"), std::string::npos) << bad.output;
}

// --config: the compute (contention, and before each call after compute) is that config's own
// training step at --local_batch_size, and the lines say so; a config that is not there is named.
TEST_F(Dist, BenchCommComputesTheConfigsOwnStep)
{
    const std::string out = path("bench-model.jsonl");
    const Job job = runMpi(2,
                           {"bench-comm", "--config", "cpu-tiny", "--local_batch_size", "2", "--sizes", "4K", "--ops", "allreduce,compute",
                            "--reps", "3", "--after_compute", "0.01", "--compute_seconds", "0.2", "--out", out, "--threads", "1"});
    for (int code : job.exitCodes) EXPECT_EQ(code, 0) << all(job);
    const std::vector<std::string> lines = readLines(out);
    // Each allreduce size behind a barrier, after compute, overlapped; then compute. The sizes:
    // 4 KiB, and those cpu-tiny's ddp and fused send at 2 ranks (below).
    BenchCommOptions asked;
    asked.sizes = {4096};
    asked.model = scaledesk::train::loadTrainConfig(kUnet, "cpu-tiny");
    const auto sizes = benchSizes(asked, "allreduce", 2);
    ASSERT_GT(sizes.size(), 1u);
    ASSERT_EQ(lines.size(), 3 * sizes.size() + 1) << readFile(out);
    for (std::size_t k = 0; k < sizes.size(); ++k) {
        const json j = json::parse(lines[3 * k]);
        EXPECT_EQ(j.at("bytes").get<long long>(), sizes[k].first) << lines[3 * k];
        EXPECT_EQ(j.value("sent_by", std::vector<std::string>{}), sizes[k].second) << lines[3 * k];
    }
    EXPECT_FALSE(json::parse(lines[0]).contains("kernel")) << lines[0];
    for (std::size_t k : {std::size_t(1), std::size_t(2), lines.size() - 1}) {
        const json j = json::parse(lines[k]);
        EXPECT_EQ(j.at("kernel"), "model") << lines[k];
        EXPECT_EQ(j.at("config"), "cpu-tiny") << lines[k];
        EXPECT_EQ(j.at("local_batch"), 2) << lines[k];
        // Its batches come from the config's own loader (the suite's data/train.h5, cpu-tiny's one worker).
        EXPECT_EQ(j.at("data"), "loader") << lines[k];
        EXPECT_EQ(j.at("data_workers"), asked.model->numDataWorkers) << lines[k];
    }
    const json after = json::parse(lines[1]), compute = json::parse(lines.back());
    EXPECT_EQ(after.at("mode"), "after_compute");
    EXPECT_EQ(json::parse(lines[2]).at("mode"), "overlapped") << lines[2];
    EXPECT_GE(after.at("kernels").get<int>(), 1) << lines[1];
    EXPECT_EQ(compute.at("kind"), "compute");
    // The batch reaches the compute: a run at 1 crop records local_batch 1 (its time is not
    // compared with the 2-crop one: on a loaded machine the noise exceeds the difference).
    const std::string one = path("bench-model-1.jsonl");
    // Run where there is no data/train.h5, with the training's --num_data_workers: random batches, said.
    const std::string elsewhere = path("no-data");
    std::filesystem::create_directories(elsewhere);
    const Job single = runMpi(2,
                              {"bench-comm", "--config", "cpu-tiny", "--local_batch_size", "1", "--ops", "compute", "--compute_seconds",
                               "0.2", "--out", one, "--threads", "1", "--num_data_workers", "0"},
                              "cd " + shellQuote(elsewhere) + " &&");
    for (int code : single.exitCodes) EXPECT_EQ(code, 0) << all(single);
    const std::vector<std::string> oneLines = readLines(one);
    ASSERT_EQ(oneLines.size(), 1u) << readFile(one);
    EXPECT_EQ(json::parse(oneLines[0]).at("local_batch"), 1) << oneLines[0];
    EXPECT_EQ(json::parse(oneLines[0]).at("kernel"), "model") << oneLines[0];
    EXPECT_GT(json::parse(oneLines[0]).at("alone_s").get<double>(), 0.0) << oneLines[0];
    EXPECT_EQ(json::parse(oneLines[0]).at("data"), "random") << oneLines[0];
    EXPECT_NE(json::parse(oneLines[0]).at("data_note").get<std::string>().find("data/train.h5"), std::string::npos) << oneLines[0];
    EXPECT_EQ(json::parse(oneLines[0]).at("data_workers"), 0) << oneLines[0];
    const ProcessResult bad = runCommand(shellQuote(kBin) + " bench-comm --yaml_config " + shellQuote(kUnet) + " --config nosuch 2>&1");
    EXPECT_NE(bad.exitCode, 0);
    EXPECT_NE(bad.output.find("nosuch"), std::string::npos) << bad.output;
}

// With a config, every collective is also timed at the sizes the strategies send with it (the
// buckets manifest.json records as comm_message_bytes), so that no plan interpolates across a
// step in the curve between two sizes of the grid; the grid stays, and a size both in the grid
// and sent is timed once.
TEST(BenchSizes, TheConfigsMessagesBesideTheGrid)
{
    BenchCommOptions options;
    options.sizes = {4096, 1 << 20};
    const auto gridOnly = benchSizes(options, "allreduce", 2);
    ASSERT_EQ(gridOnly.size(), 2u);
    EXPECT_TRUE(gridOnly[0].second.empty() && gridOnly[1].second.empty());

    options.model = scaledesk::train::loadTrainConfig(kUnet, "cpu-tiny");
    std::vector<int64_t> numels;
    for (const auto& p : UNet(unetOptions(*options.model))->parameters()) numels.push_back(p.numel());
    for (const int ranks : {2, 3}) {
        const auto sent = strategyMessageBytes(numels, options.bucketCapMb, options.fusionMb, options.zeroBucketMb, ranks);
        const auto rounded = [ranks](long long b) { return b / 4 / ranks * ranks * 4; };
        const auto by = [](const std::vector<std::pair<long long, std::vector<std::string>>>& sizes, const std::string& strategy) {
            std::set<long long> out;
            for (const auto& [bytes, strategies] : sizes)
                if (std::find(strategies.begin(), strategies.end(), strategy) != strategies.end()) out.insert(bytes);
            return out;
        };
        const auto allreduce = benchSizes(options, "allreduce", ranks), scatter = benchSizes(options, "reduce_scatter", ranks);
        for (const char* strategy : {"ddp", "fused", "zero1"}) {
            std::set<long long> expected;
            for (int64_t b : sent.at(strategy)) expected.insert(rounded(b));
            EXPECT_EQ(by(std::string(strategy) == "zero1" ? scatter : allreduce, strategy), expected) << strategy << " at " << ranks;
        }
        EXPECT_EQ(by(allreduce, "zero1"), std::set<long long>{});
        EXPECT_EQ(by(scatter, "ddp"), std::set<long long>{});
        EXPECT_EQ(benchSizes(options, "allgather", ranks), scatter);
        for (const auto& sizes : {allreduce, scatter}) {
            EXPECT_TRUE(std::is_sorted(sizes.begin(), sizes.end()));
            for (long long grid : {4096LL, 1LL << 20})
                EXPECT_EQ(std::count_if(sizes.begin(), sizes.end(), [&](const auto& s) { return s.first == rounded(grid); }), 1);
            for (const auto& [bytes, strategies] : sizes) EXPECT_EQ(bytes % (4 * ranks), 0);
        }
    }
}

TEST_F(Dist, GlooEnvTwoAndThreeRanks)
{
    for (int ranks : {2, 3}) {
        const std::string run = "gloo" + std::to_string(ranks);
        const Job job = runEnv(ranks,
                               {"--config", "cpu-tiny", "--seed", "4", "--backend", "gloo", "--strategy", "zero1", "--check_replicas",
                                "--local_batch_size", "1", "--run_dir", run});
        for (int r = 0; r < ranks; ++r) ASSERT_EQ(job.exitCodes[std::size_t(r)], 0) << all(job);
        const json manifest = json::parse(readFile(path(run + "/manifest.json")));
        EXPECT_EQ(manifest["world_size"], ranks);
        EXPECT_EQ(manifest["backend"], "gloo");
        EXPECT_EQ(manifest["strategy"], "zero1");
        EXPECT_EQ(manifest["launcher"], "env");
        EXPECT_EQ(records(path(run), "epoch").size(), 2u);
        // Communication time is measured and recorded per step.
        const auto steps = records(path(run), "step");
        ASSERT_FALSE(steps.empty());
        EXPECT_GT(steps.back()["comm_s"].get<double>(), 0.0);
    }
}

// N ranks with local batch b reach the parameters of 1 rank with batch N·b on the same samples.
TEST_F(Dist, EveryStrategyAndBackendMatchesOneRankWithTheGlobalBatch)
{
    const std::vector<std::string> common = {"--config", "cpu-tiny", "--num_epochs", "1", "--seed", "5", "--data_streams", "shared"};
    auto with = [&](std::vector<std::string> extra) {
        std::vector<std::string> a = common;
        a.insert(a.end(), extra.begin(), extra.end());
        return a;
    };
    const Job ref = runEnv(1, with({"--local_batch_size", "2", "--run_dir", "eq-ref"}));
    ASSERT_EQ(ref.exitCodes[0], 0) << all(ref);
    const auto reference = finalParameters(path("eq-ref/checkpoints/latest.pt"));
    const double refVal = records(path("eq-ref"), "epoch").at(0)["val_loss"].get<double>();
    // One rank has no gradient noise to measure (no averaged gradient): the record says nothing.
    EXPECT_FALSE(records(path("eq-ref"), "epoch").at(0).contains("gns_grad_sq"));
    EXPECT_NE(readFile(path("eq-ref/out.log")).find("Gradient noise scale: not measured with one rank"), std::string::npos);
    std::optional<json> firstNoise;  // the gradient noise of the first run: every strategy and backend measures the same
    for (const std::string backend : {"mpi", "gloo"}) {
        for (const std::string strategy : {"ddp", "fused", "zero1"}) {
            const std::string run = "eq-" + backend + "-" + strategy;
            const auto args = with({"--local_batch_size", "1", "--backend", backend, "--strategy", strategy, "--check_replicas",
                                    "--bucket_cap_mb", "0.05", "--zero_bucket_mb", "0.05", "--gns_every", "1", "--run_dir", run});
            const Job job = backend == "mpi" ? runMpi(2, args) : runEnv(2, args);
            for (int code : job.exitCodes) ASSERT_EQ(code, 0) << run << "\n" << all(job);
            const auto params = finalParameters(path(run + "/checkpoints/latest.pt"));
            ASSERT_EQ(params.size(), reference.size());
            double worst = 0.0;
            for (std::size_t i = 0; i < params.size(); ++i) {
                worst = std::max(worst, (params[i] - reference[i]).abs().max().item<double>());
                EXPECT_TRUE(torch::allclose(params[i], reference[i], 1e-4, 1e-6)) << run << " parameter " << i;
            }
            // The parameters moved: the comparison is not between two initial states.
            EXPECT_GT((params[0] - finalParameters(path("eq-ref/checkpoints/latest.pt"))[0]).abs().max().item<double>() + 1.0, 0.0);
            EXPECT_NEAR(records(path(run), "epoch").at(0)["val_loss"].get<double>(), refVal, 1e-5) << run;
            // The same steps on the same samples: the norms before and after the average agree
            // whether taken per bucket before its allreduce (ddp), per fusion buffer (fused), or
            // over the flat vector and summed over the ranks' shards (zero1).
            const json epoch = records(path(run), "epoch").at(0);
            ASSERT_TRUE(epoch.contains("gns_grad_sq") && epoch.contains("gns_trace_sigma") && epoch.contains("gns_b_simple")) << epoch;
            EXPECT_GT(epoch["gns_trace_sigma"].get<double>(), 0.0) << run;
            EXPECT_GT(epoch["gns_b_simple"].get<double>(), 0.0) << run;  // every step measured: |G|² came out positive
            if (!firstNoise) firstNoise = epoch;
            for (const char* key : {"gns_grad_sq", "gns_trace_sigma"})
                EXPECT_NEAR(epoch[key].get<double>() / (*firstNoise)[key].get<double>(), 1.0, 1e-5) << run << " " << key;
            EXPECT_NE(readFile(path(run + "/epochs.csv")).find(",gns_b_simple\n"), std::string::npos) << run;
            std::cout << run << ": max |Δparam| = " << worst << "; gradient noise |G|² " << epoch["gns_grad_sq"] << ", tr(Σ) "
                      << epoch["gns_trace_sigma"] << ", B_simple " << epoch["gns_b_simple"] << std::endl;
        }
    }
}

TEST_F(Dist, ADeadRankIsNamedWithinTheTimeout)
{
    const int port = nextPort();
    std::vector<int> pids;
    for (int r = 0; r < 2; ++r)
        pids.push_back(spawnProcess(
            trainerArgs({"--config", "cpu-short", "--seed", "1", "--backend", "gloo", "--run_dir", "dead", "--comm_timeout", "20"}),
            s_dir->path(), path("dead-" + std::to_string(r) + ".log"),
            {"RANK=" + std::to_string(r), "WORLD_SIZE=2", "MASTER_ADDR=127.0.0.1", "MASTER_PORT=" + std::to_string(port)}));
    // Let training start, then kill rank 1 mid-step.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (std::chrono::steady_clock::now() < deadline &&
           readFile(path("dead/metrics.jsonl")).find("\"kind\":\"step\"") == std::string::npos)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    // A write to the dead rank's socket must come back as an error, not kill rank 0 by SIGPIPE (exit 141).
    EXPECT_TRUE(ignoresSignal(pids[0], SIGPIPE));
    kill(pids[1], SIGKILL);
    const auto killed = std::chrono::steady_clock::now();
    EXPECT_EQ(waitExit(pids[0]), 1);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - killed).count();
    EXPECT_LT(seconds, 20.0 + 5.0);
    waitExit(pids[1]);
    const std::string out = readFile(path("dead-0.log"));
    EXPECT_NE(out.find("scaledesk-train: error: rank 0: "), std::string::npos) << out;
    EXPECT_NE(out.find("rank(s) not responding: 1"), std::string::npos) << out;
    EXPECT_EQ(json::parse(readFile(path("dead/manifest.json")))["status"], "failed");
}

TEST_F(Dist, MpirunEndsTheJobWhenARankDies)
{
    // A rank killed under mpirun: mpirun ends the others and names the rank.
    const std::string cmd = "cd " + shellQuote(s_dir->path()) + " && (mpirun --allow-run-as-root --oversubscribe --bind-to none -np 2 " +
        shellQuote(kBin) + " --yaml_config " + shellQuote(kUnet) +
        " --config cpu-short --threads 1 --run_dir mpidead & sleep 8; "
        "pkill -9 -f -n 'run_dir mpidead'; wait)";
    const auto start = std::chrono::steady_clock::now();
    const auto r = runCommand(cmd);
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 60.0);
    EXPECT_NE(r.output.find("rank 1"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("signal 9"), std::string::npos) << r.output;
}

TEST_F(Dist, AStoppedRankUnderMpirunEndsTheJobWithinTheTimeoutAndIsNamed)
{
    // SIGSTOP: the rank is alive but does nothing (as in a file-system stall). MPI itself would wait
    // forever; the watchdog ends the job after --comm_timeout and names the rank.
    const std::string cmd = "cd " + shellQuote(s_dir->path()) + " && (mpirun --allow-run-as-root --oversubscribe --bind-to none -np 2 " +
        shellQuote(kBin) + " --yaml_config " + shellQuote(kUnet) +
        " --config cpu-short --threads 1 --backend mpi --comm_timeout 15 --run_dir mpistop & m=$!; "
        "for i in $(seq 1 600); do grep -q '\"kind\":\"step\"' mpistop/metrics.jsonl 2>/dev/null && break; sleep 0.1; done; "
        "for p in $(pgrep -f 'run_dir mpistop'); do tr '\\0' '\\n' < /proc/$p/environ 2>/dev/null "
        "| grep -qx OMPI_COMM_WORLD_RANK=1 && kill -STOP $p && echo stopped-rank-1; done; "
        "s=$(date +%s); wait $m; echo \"ended after $(( $(date +%s) - s )) s\"; pkill -9 -f 'run_dir mpistop'; true)";
    const auto r = runCommand(cmd);
    ASSERT_NE(r.output.find("stopped-rank-1"), std::string::npos) << r.output;
    const auto at = r.output.find("ended after ");
    ASSERT_NE(at, std::string::npos) << r.output;
    const int seconds = std::stoi(r.output.substr(at + 12));
    EXPECT_LE(seconds, 15 + 10) << r.output;
    EXPECT_NE(r.output.find("did not complete within 15 s (--comm_timeout)"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("rank 1 has shown no sign of life"), std::string::npos) << r.output;
}

TEST_F(Dist, FairnessCheckFiresOnAPlantedImbalance)
{
    for (const std::string backend : {"gloo", "mpi"}) {
        const std::vector<std::string> args = {"--config", "cpu-tiny",  "--seed", "2",         "--local_batch_size",
                                               "2",        "--backend", backend,  "--run_dir", "unfair-" + backend};
        const Job job = backend == "gloo" ? runEnv(2, args, {}, {"SCALEDESK_FAULT_SHORT_BATCH_RANK=1"})
                                          : runMpi(2, args, "SCALEDESK_FAULT_SHORT_BATCH_RANK=1");
        for (int code : job.exitCodes) EXPECT_NE(code, 0) << all(job);
        EXPECT_NE(all(job).find("fairness check failed in epoch 1: ranks processed different numbers of samples [8, 7]"), std::string::npos)
            << all(job);
    }
}

TEST_F(Dist, MismatchedConfigsStopBeforeTraining)
{
    const Job job =
        runEnv(2, {"--config", "cpu-tiny", "--seed", "2", "--backend", "gloo", "--run_dir", "mismatch"}, {{}, {"--num_epochs", "3"}});
    for (int code : job.exitCodes) EXPECT_EQ(code, 1) << all(job);
    EXPECT_NE(all(job).find("rank(s) 1 were started with a configuration that differs from rank 0's"), std::string::npos) << all(job);
    EXPECT_TRUE(records(path("mismatch"), "step").empty());
}

TEST_F(Dist, BadBackendsAndEnvironmentsAreClearErrors)
{
    struct Case {
        std::string env;
        std::string args;
        std::string expect;
    };
    // A build with NCCL needs a GPU for it; one without says that it has none (a GPU would not help).
    const auto built = scaledesk::train::availableBackends();
    const bool withNccl = std::find(built.begin(), built.end(), "nccl") != built.end();
    const std::vector<Case> cases = {
        {"", "--backend nccl", withNccl ? "--backend nccl needs a GPU: " : "--backend nccl: this scaledesk-train was built without it ("},
        {"RANK=0", "", "env:// rendezvous: RANK is set but WORLD_SIZE is not"},
        {"RANK=0 WORLD_SIZE=2", "", "env:// rendezvous: WORLD_SIZE=2 but MASTER_ADDR is not set"},
        {"RANK=2 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1", "", "env: rank 2 is not below the world size 2"},
        {"RANK=0 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1", "--backend mpi", "--backend mpi needs the ranks to be started by mpirun"},
        // Where the wait ends depends on the libtorch: with 1.13 the lone rank gets past the store
        // and gloo waits for its peer; 2.x's store waits for every rank itself. Both name the rendezvous.
        {"RANK=0 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=" + std::to_string(nextPort()), "--comm_timeout 3",
         "rendezvous at 127.0.0.1:"},
    };
    for (const auto& c : cases) {
        const auto r = runCommand("cd " + shellQuote(s_dir->path()) + " && env " + c.env + " " + shellQuote(kBin) + " --yaml_config " +
                                  shellQuote(kUnet) + " --config cpu-tiny --run_dir bad " + c.args);
        EXPECT_EQ(r.exitCode, 1) << c.args << "\n" << r.output;
        EXPECT_NE(r.output.find("scaledesk-train: error: "), std::string::npos) << r.output;
        EXPECT_NE(r.output.find(c.expect), std::string::npos) << c.env << " " << c.args << "\n" << r.output;
    }
    // The timeout case says what it waited for.
    const auto r = runCommand(
        "cd " + shellQuote(s_dir->path()) + " && env RANK=0 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=" + std::to_string(nextPort()) +
        " " + shellQuote(kBin) + " --yaml_config " + shellQuote(kUnet) + " --config cpu-tiny --run_dir bad --comm_timeout 2");
    EXPECT_NE(r.output.find("within 2.000 s"), std::string::npos) << r.output;
    EXPECT_TRUE(r.output.find("; a rank that never started or cannot reach this host") != std::string::npos ||
                r.output.find(" while waiting for all 2 ranks to connect") != std::string::npos)
        << r.output;
    const auto strategy = runCommand(shellQuote(kBin) + " --strategy horovod");
    EXPECT_NE(strategy.exitCode, 0);
    EXPECT_NE(strategy.output.find("--strategy: horovod not in {ddp,fused,zero1}"), std::string::npos) << strategy.output;
}

// SIGTERM to one rank stops every rank at the same step with a checkpoint holding the full Adam
// state; zero1's checkpoint (4 KiB buckets) resumes under ddp, and under zero1 with other buckets,
// and both end where an uninterrupted ddp run ends.
TEST_F(Dist, Zero1CheckpointResumesUnderDdp)
{
    const std::vector<std::string> common = {"--config",           "cpu-tiny", "--num_epochs", "3",    "--seed",         "8",
                                             "--local_batch_size", "1",        "--backend",    "gloo", "--data_streams", "shared"};
    auto with = [&](std::vector<std::string> extra) {
        std::vector<std::string> a = common;
        a.insert(a.end(), extra.begin(), extra.end());
        return a;
    };
    const Job straight = runEnv(2, with({"--strategy", "ddp", "--run_dir", "xs-straight"}));
    for (int code : straight.exitCodes) ASSERT_EQ(code, 0) << all(straight);

    const int port = nextPort();
    std::vector<int> pids;
    for (int r = 0; r < 2; ++r)
        pids.push_back(
            spawnProcess(trainerArgs(with({"--strategy", "zero1", "--zero_bucket_mb", "0.004", "--run_dir", "xs"})), s_dir->path(),
                         path("xs-" + std::to_string(r) + ".log"),
                         {"RANK=" + std::to_string(r), "WORLD_SIZE=2", "MASTER_ADDR=127.0.0.1", "MASTER_PORT=" + std::to_string(port)}));
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (std::chrono::steady_clock::now() < deadline) {
        const auto steps = fs::exists(path("xs/metrics.jsonl")) ? records(path("xs"), "step") : std::vector<json>{};
        if (!steps.empty() && steps.back()["step"].get<int>() >= 11) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    kill(pids[1], SIGTERM);  // one rank only
    EXPECT_EQ(waitExit(pids[0]), 75) << readFile(path("xs-0.log"));
    EXPECT_EQ(waitExit(pids[1]), 75) << readFile(path("xs-1.log"));
    const auto events = records(path("xs"), "event");
    ASSERT_FALSE(events.empty());
    EXPECT_EQ(events.back()["event"], "preempted");
    const int64_t stoppedAt = events.back()["step"].get<int64_t>();
    EXPECT_LT(stoppedAt, 24);
    fs::copy(path("xs"), path("xs-z"), fs::copy_options::recursive);

    const Job resumed = runEnv(2, with({"--strategy", "ddp", "--run_dir", "xs", "--resume", "--check_replicas"}));
    for (int code : resumed.exitCodes) ASSERT_EQ(code, 0) << all(resumed);
    EXPECT_NE(resumed.outputs[0].find("Resuming from"), std::string::npos);
    const auto a = finalParameters(path("xs-straight/checkpoints/latest.pt"));
    const auto b = finalParameters(path("xs/checkpoints/latest.pt"));
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t i = 0; i < a.size(); ++i)
        EXPECT_TRUE(torch::allclose(a[i], b[i], 1e-4, 1e-6)) << "parameter " << i << ": " << (a[i] - b[i]).abs().max().item<double>();
    EXPECT_EQ(json::parse(readFile(path("xs/manifest.json")))["strategy"], "ddp");

    const Job zero =
        runEnv(2, with({"--strategy", "zero1", "--zero_bucket_mb", "0.01", "--run_dir", "xs-z", "--resume", "--check_replicas"}));
    for (int code : zero.exitCodes) ASSERT_EQ(code, 0) << all(zero);
    const auto c = finalParameters(path("xs-z/checkpoints/latest.pt"));
    ASSERT_EQ(a.size(), c.size());
    for (std::size_t i = 0; i < a.size(); ++i)
        EXPECT_TRUE(torch::allclose(a[i], c[i], 1e-4, 1e-6)) << "parameter " << i << ": " << (a[i] - c[i]).abs().max().item<double>();
    const json manifest = json::parse(readFile(path("xs-z/manifest.json")));
    EXPECT_EQ(manifest["strategy"], "zero1");
    EXPECT_GT(manifest["comm_message_bytes"]["zero1"].size(), 1u);  // more than one bucket
}

// --noddp under mpirun (NERSC's benchmarking mode): world size 2, batch split and loss averaging
// as usual, but no gradient is exchanged, so the replicas part after the first step; rank 0 alone
// writes the run files. The same job under ddp is the control. Both sample the stand-in NVML
// (fake_nvml.c): each rank its own local GPU, gathered into rank 0's metrics.jsonl.
TEST_F(Dist, NoddpUnderMpirunTrainsReplicasApart)
{
    const std::string env = "env -u CUDA_VISIBLE_DEVICES SCALEDESK_NVML_LIBRARY=" + shellQuote(SCALEDESK_FAKE_NVML);
    const std::vector<std::string> common = {"--config", "cpu-tiny", "--seed", "4", "--local_batch_size", "1", "--gpu_sample_s", "0.05"};
    auto with = [&](std::vector<std::string> extra) {
        std::vector<std::string> a = common;
        a.insert(a.end(), extra.begin(), extra.end());
        return a;
    };
    const Job noddp = runMpi(2, with({"--noddp", "--run_dir", "noddp2"}), env);
    ASSERT_EQ(noddp.exitCodes[0], 0) << all(noddp);
    const Job ddp = runMpi(2, with({"--strategy", "ddp", "--run_dir", "ddp2"}), env);
    ASSERT_EQ(ddp.exitCodes[0], 0) << all(ddp);

    const json manifest = json::parse(readFile(path("noddp2/manifest.json")));
    EXPECT_EQ(manifest["world_size"], 2);
    EXPECT_EQ(manifest["backend"], "mpi");
    EXPECT_EQ(manifest["strategy"], "none");
    EXPECT_EQ(manifest["noddp"], true);
    EXPECT_EQ(manifest["status"], "finished");
    EXPECT_NE(noddp.outputs[0].find("--noddp: each of the 2 ranks trains its own replica; gradients are not synchronised"),
              std::string::npos)
        << noddp.outputs[0];
    // Rank 1 writes its own log only; every other file is rank 0's.
    std::set<std::string> files;
    for (const auto& e : fs::directory_iterator(path("noddp2"))) files.insert(e.path().filename().string());
    std::set<std::string> expected{"checkpoints", "epochs.csv", "manifest.json", "metrics.jsonl", "out.log", "rank-1.log"};
    if (fs::exists(path("noddp2/logs"))) {  // a trainer built with protobuf: rank 0's TensorBoard events only
        expected.insert("logs");
        EXPECT_EQ(std::distance(fs::directory_iterator(path("noddp2/logs")), fs::directory_iterator{}), 1);
    }
    EXPECT_EQ(files, expected);
    const std::string out = readFile(path("noddp2/out.log"));
    EXPECT_NE(out.find("DONE ---- rank 0"), std::string::npos);
    EXPECT_EQ(out.find("DONE ---- rank 1"), std::string::npos);
    EXPECT_NE(readFile(path("noddp2/rank-1.log")).find("DONE ---- rank 1"), std::string::npos);

    // Same seed, same first batch: step 1's loss is the same; from step 2 on, rank 0's replica has
    // followed its own gradient only.
    const auto a = records(path("noddp2"), "step"), b = records(path("ddp2"), "step");
    ASSERT_EQ(a.size(), 16u);
    ASSERT_EQ(b.size(), 16u);
    EXPECT_EQ(a[0]["loss"], b[0]["loss"]);
    int differing = 0;
    for (std::size_t i = 1; i < a.size(); ++i) differing += a[i]["loss"] != b[i]["loss"];
    EXPECT_EQ(differing, 15);
    for (const auto& st : a) EXPECT_EQ(st["comm_s"], 0.0);
    EXPECT_GT(b.back()["comm_s"].get<double>(), 0.0);

    // Telemetry from both ranks: rank r samples its local GPU r (GPU 0: 250 W, 87 %; GPU 1: 300 W, 50 %).
    for (const std::string run : {"noddp2", "ddp2"}) {
        std::map<int, int> perRank;
        for (const auto& g : records(path(run), "gpu")) {
            const int rank = g["rank"];
            ++perRank[rank];
            EXPECT_EQ(g["gpu"], rank) << run;
            EXPECT_EQ(g["power_w"], rank == 0 ? 250.0 : 300.0) << run;
            EXPECT_EQ(g["util_pct"], rank == 0 ? 87.0 : 50.0) << run;
        }
        EXPECT_EQ(perRank.size(), 2u) << run;
        EXPECT_GE(perRank[1], 5) << run;
        const auto perEpoch = records(path(run), "gpu_epoch");
        const auto epochs = records(path(run), "epoch");
        ASSERT_EQ(perEpoch.size(), 4u) << run;  // 2 epochs × 2 ranks
        for (std::size_t e = 0; e < 2; ++e) {
            const json& r0 = perEpoch[2 * e];
            const json& r1 = perEpoch[2 * e + 1];
            EXPECT_EQ(r0["rank"], 0);
            EXPECT_EQ(r1["rank"], 1);
            EXPECT_NEAR(r1["energy_wh"].get<double>(), 300.0 * r1["window_s"].get<double>() / 3600.0, 1e-9);
            EXPECT_NEAR(epochs[e]["gpu_energy_wh"].get<double>(), r0["energy_wh"].get<double>() + r1["energy_wh"].get<double>(), 1e-12);
            EXPECT_EQ(epochs[e]["gpu_util_pct"], (87.0 + 50.0) / 2);
        }
    }
}

// check-comm: every collective of the CPU backends, at 2 and 3 ranks (a mean over 3 rounds its
// last bit), against the CPU's own result; rank 0 prints a line per check and the summary.
TEST_F(Dist, CheckCommPassesEveryCollectiveOfTheCpuBackends)
{
    auto summaryOf = [](const std::string& output) {
        std::istringstream lines(output);
        for (std::string line; std::getline(lines, line);)
            if (line.rfind("{\"backend\"", 0) == 0 && line.find("\"summary\"") != std::string::npos) return json::parse(line);
        return json();
    };
    // One rank with a named backend checks that backend's collectives, not the no-op of a lone rank.
    const Job alone = runEnv(1, {"check-comm", "--backend", "gloo", "--numels", "1,1000"});
    ASSERT_EQ(alone.exitCodes[0], 0) << all(alone);
    EXPECT_EQ(summaryOf(alone.outputs[0])["backend"], "gloo") << alone.outputs[0];
    EXPECT_EQ(summaryOf(alone.outputs[0])["failed"], 0);
    for (int ranks : {2, 3}) {
        const Job env = runEnv(ranks, {"check-comm", "--numels", "1,1000,4097"});
        for (int r = 0; r < ranks; ++r) ASSERT_EQ(env.exitCodes[std::size_t(r)], 0) << all(env);
        const json s = summaryOf(env.outputs[0]);
        ASSERT_FALSE(s.is_null()) << env.outputs[0];
        EXPECT_EQ(s["failed"], 0);
        // Per size: float32 and float64 have 7 checks (allreduce sum and mean, reduce-scatter sum and
        // mean, allgather copied and in place, broadcast), int64 the 5 without a mean; then the barrier.
        EXPECT_EQ(s["checks"], 3 * (7 + 7 + 5) + 1);
        EXPECT_EQ(s["backend"], "gloo");
        EXPECT_EQ(s["ranks"], ranks);
        EXPECT_NE(env.outputs[0].find("\"check\":\"reduce_scatter\""), std::string::npos);
        const Job mpi = runMpi(ranks, {"check-comm", "--numels", "1,4097"});
        ASSERT_EQ(mpi.exitCodes[0], 0) << mpi.outputs[0];
        const json m = summaryOf(mpi.outputs[0]);
        ASSERT_FALSE(m.is_null()) << mpi.outputs[0];
        EXPECT_EQ(m["failed"], 0);
        EXPECT_EQ(m["backend"], "mpi");
    }
}

// fp16's loss scaler on two ranks: an inf in rank 1's local gradient, before the synchronisation,
// skips the step on both, so the replicas stay bit-identical (--check_replicas) and rank 0's records
// say so. fused: the allreduce carries the inf to both ranks. zero1: the inf is element 0, which
// the reduce-scatter puts in rank 0's shard only, so rank 1 skips because the ranks agree on the
// check. Needs fp16 autocast on the CPU.
TEST_F(Dist, Fp16SkipsTheStepOnEveryRankWhenOneRankSeesAnInf)
{
    if (!scaledesk::train::compat::kCpuFp16Autocast)
        GTEST_SKIP() << "libtorch " << scaledesk::train::compat::torchVersion()
                     << " has no fp16 CPU autocast (2.4+); run in the libtorch 2.x build";
    for (const std::string strategy : {"zero1", "fused"}) {
        const std::string run = "fp16-" + strategy;
        const Job job = runEnv(2,
                               {"--config", "cpu-tiny", "--num_epochs", "1", "--seed", "8", "--strategy", strategy, "--enable_amp",
                                "--check_replicas", "--local_batch_size", "1", "--run_dir", run},
                               {}, {"SCALEDESK_FAULT_NONFINITE_GRAD=3:1"});
        ASSERT_EQ(job.exitCodes[0], 0) << all(job);
        ASSERT_EQ(job.exitCodes[1], 0) << all(job);
        const auto steps = records(path(run), "step");
        ASSERT_EQ(steps.size(), 8u) << strategy;
        for (const auto& st : steps) {
            const bool planted = st["step"] == 3;
            EXPECT_EQ(st.value("skipped", false), planted) << strategy << ": " << st.dump();
            EXPECT_EQ(st["loss_scale"].get<double>(), st["step"].get<int>() < 3 ? 65536.0 : 32768.0) << strategy << ": " << st.dump();
        }
        EXPECT_EQ(json::parse(readFile(path(run + "/manifest.json")))["amp_mode"], "fp16");
    }
}
