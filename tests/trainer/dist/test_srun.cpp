// 2-rank jobs under the real SLURM sandbox (tests/sandbox/slurm-sandbox.sh, started by CTest).
#include "testutil.h"

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

using namespace scaledesk::test;
using json = nlohmann::json;

namespace {
const std::string kBin = SCALEDESK_TRAIN_BIN;
const std::string kUnet = std::string(SCALEDESK_SOURCE_DIR) + "/configs/unet.yaml";

class Srun : public ::testing::Test {
protected:
    void SetUp() override
    {
        ASSERT_NE(std::getenv("SLURM_CONF"), nullptr) << "run through ctest, which starts the sandbox";
        const auto r = makeTestData(kBin, m_dir.path());
        ASSERT_EQ(r.exitCode, 0) << r.output;
    }
    ProcessResult srun(const std::string& srunArgs, const std::string& trainArgs)
    {
        return runCommand("cd " + shellQuote(m_dir.path()) + " && timeout 300 srun " + srunArgs + " " + shellQuote(kBin) +
                          " --yaml_config " + shellQuote(kUnet) + " --threads 1 " + trainArgs);
    }
    TempDir m_dir;
};
}  // namespace

TEST_F(Srun, PmixLaunchUsesMpi)
{
    const auto r = srun("--mpi=pmix -n 2",
                        "--config cpu-tiny --local_batch_size 1 --seed 3 --strategy ddp --check_replicas "
                        "--run_dir pmix");
    ASSERT_EQ(r.exitCode, 0) << r.output;
    const json manifest = json::parse(readFile(m_dir.file("pmix/manifest.json")));
    EXPECT_EQ(manifest["world_size"], 2);
    EXPECT_EQ(manifest["backend"], "mpi");
    EXPECT_EQ(manifest["launcher"], "mpi");
    EXPECT_FALSE(manifest["slurm_job_id"].get<std::string>().empty());
    EXPECT_EQ(manifest["status"], "finished");
    EXPECT_NE(readFile(m_dir.file("pmix/rank-1.log")).find("DONE ---- rank 1"), std::string::npos);
}

TEST_F(Srun, PlainSrunFindsRanksFromSlurmAndUsesGloo)
{
    const auto r = srun("-n 2",
                        "--config cpu-tiny --local_batch_size 1 --seed 3 --strategy fused --check_replicas "
                        "--run_dir plain");
    ASSERT_EQ(r.exitCode, 0) << r.output;
    const json manifest = json::parse(readFile(m_dir.file("plain/manifest.json")));
    EXPECT_EQ(manifest["world_size"], 2);
    EXPECT_EQ(manifest["backend"], "gloo");
    EXPECT_EQ(manifest["launcher"], "slurm");
    EXPECT_EQ(manifest["strategy"], "fused");
    EXPECT_EQ(readLines(m_dir.file("plain/epochs.csv")).size(), 3u);
}
