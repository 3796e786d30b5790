// The GPU path's host-side rules, which need no GPU: the device of a rank, every "no GPU" reason in
// one line, NCCL failures in words, and what this build says about itself.
#include "compat/torchcompat.h"
#include "device/device.h"
#include "device/stepclock.h"
#include "dist/comm.h"
#include "dist/commerrors.h"

#include <gtest/gtest.h>

#include <thread>

using namespace scaledesk::train;

namespace {
const c10::Device kCpu(c10::DeviceType::CPU);

CudaStatus gpus(int n)
{
    CudaStatus s;
    s.built = true;
    s.visible = n;
    if (n == 0) s.unavailable = "the NVIDIA driver is missing (libcuda.so.1 cannot be loaded)";
    return s;
}

std::string errorOf(const std::function<void()>& f)
{
    try {
        f();
    } catch (const std::exception& e) {
        return e.what();
    }
    return "(no error)";
}
}  // namespace

TEST(Device, EachRankGetsTheGpuOfItsLocalRank)
{
    EXPECT_EQ(cudaIndexForRank(0, 4, 4, "nid001"), 0);
    EXPECT_EQ(cudaIndexForRank(3, 4, 4, "nid001"), 3);
    EXPECT_EQ(cudaIndexForRank(1, 2, 8, "nid001"), 1);
    // srun --gpus-per-task=1 shows each task its own GPU only.
    EXPECT_EQ(cudaIndexForRank(3, 4, 1, "nid001"), 0);
}

TEST(Device, MoreRanksThanGpusOnANodeIsOneLineNamingBothCounts)
{
    const std::string e = errorOf([] { cudaIndexForRank(2, 8, 4, "nid007"); });
    EXPECT_NE(e.find("8 ranks on node nid007 but only 4 GPUs visible"), std::string::npos) << e;
    EXPECT_EQ(e.find('\n'), std::string::npos);
    // Every rank of that node says so, not only the ones past the last GPU.
    EXPECT_NE(errorOf([] { cudaIndexForRank(0, 8, 4, "nid007"); }).find("8 ranks on node nid007"), std::string::npos);
}

TEST(Device, AutoTakesAGpuWhenThereIsOneAndTheCpuOtherwise)
{
    EXPECT_EQ(chooseDevice(DeviceRequest::Auto, gpus(4), 2, 4, "n"), c10::Device(c10::DeviceType::CUDA, 2));
    EXPECT_EQ(chooseDevice(DeviceRequest::Auto, gpus(0), 2, 4, "n"), kCpu);
    EXPECT_EQ(chooseDevice(DeviceRequest::Auto, CudaStatus{}, 0, 1, "n"), kCpu);  // a CPU-only build
    EXPECT_EQ(chooseDevice(DeviceRequest::Cpu, gpus(4), 0, 1, "n"), kCpu);
}

TEST(Device, EveryReasonForNoGpuIsOneLineNamingWhoAsked)
{
    const std::string cpuBuild = errorOf([] { chooseDevice(DeviceRequest::Auto, CudaStatus{}, 0, 1, "n", "--backend nccl"); });
    EXPECT_EQ(cpuBuild.rfind("--backend nccl needs a GPU: this scaledesk-train was built against a CPU-only libtorch", 0), 0u) << cpuBuild;
    const std::string noDriver = errorOf([] { chooseDevice(DeviceRequest::Cuda, gpus(0), 0, 1, "n"); });
    EXPECT_EQ(noDriver, "--device cuda needs a GPU: the NVIDIA driver is missing (libcuda.so.1 cannot be loaded)");
    const std::string cpuAsked = errorOf([] { chooseDevice(DeviceRequest::Cpu, gpus(2), 0, 1, "n", "--backend nccl"); });
    EXPECT_EQ(cpuAsked, "--backend nccl needs a GPU, and --device cpu was given");
    for (const std::string& e : {cpuBuild, noDriver, cpuAsked}) EXPECT_EQ(e.find('\n'), std::string::npos) << e;
}

TEST(Device, TheRuntimesAnswerBecomesAReason)
{
    EXPECT_EQ(describeNoGpu(35, "CUDA driver version is insufficient", false, nullptr),
              "the NVIDIA driver is missing (libcuda.so.1 cannot be loaded)");
    EXPECT_EQ(describeNoGpu(100, "no CUDA-capable device is detected", true, ""),
              "no GPU is visible: CUDA_VISIBLE_DEVICES='' hides them all");
    EXPECT_EQ(describeNoGpu(100, "no CUDA-capable device is detected", true, "-1"),
              "no GPU is visible: CUDA_VISIBLE_DEVICES='-1' hides them all");
    EXPECT_EQ(describeNoGpu(100, "no CUDA-capable device is detected", true, nullptr),
              "no GPU is visible to this process (CUDA error 100: no CUDA-capable device is detected)");
}

TEST(Device, RequestsParse)
{
    DeviceRequest r = DeviceRequest::Cpu;
    ASSERT_TRUE(parseDeviceRequest("cuda", r));
    EXPECT_EQ(r, DeviceRequest::Cuda);
    ASSERT_TRUE(parseDeviceRequest("auto", r));
    EXPECT_EQ(r, DeviceRequest::Auto);
    EXPECT_FALSE(parseDeviceRequest("gpu", r));
    EXPECT_EQ(r, DeviceRequest::Auto);
}

// This machine has no GPU: the build says what it is, and the probe says why there is no GPU.
TEST(Device, ThisBuildAndThisMachine)
{
    const CudaStatus s = probeCuda();
    EXPECT_EQ(s.visible, 0) << "a GPU is visible: this test assumes a machine without one";
    EXPECT_FALSE(s.unavailable.empty());
    EXPECT_EQ(s.unavailable.find('\n'), std::string::npos);
    const std::string libs = buildLibraries();
    EXPECT_EQ(libs.rfind("libtorch " + compat::torchVersion(), 0), 0u) << libs;
    if (s.built) {
        EXPECT_NE(libs.find(", CUDA "), std::string::npos) << libs;
    } else {
        EXPECT_EQ(libs, "libtorch " + compat::torchVersion() + ", CPU only");
        EXPECT_NE(s.unavailable.find("CPU-only libtorch"), std::string::npos) << s.unavailable;
    }
    const DeviceInfo info = describeDevice(kCpu);
    EXPECT_EQ(info.device, "cpu");
    EXPECT_TRUE(info.gpuName.empty());
    EXPECT_TRUE(whyNoFp16(kCpu).empty() == compat::kCpuFp16Autocast) << whyNoFp16(kCpu);
}

TEST(Device, TheHostClockTimesBetweenMarks)
{
    auto clock = makeStepClock(kCpu);
    const int a = clock->mark();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const int b = clock->mark();
    clock->settle();
    EXPECT_GE(clock->seconds(a, b), 0.019);
    EXPECT_LT(clock->seconds(a, b), 5.0);
    clock->reset();
    EXPECT_EQ(clock->mark(), 0);
}

TEST(Nccl, FailuresAreOneLineWithRankOperationAndCause)
{
    const std::string timeout = describeNcclFailure(
        1, "allreduce",
        "[Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=7, OpType=ALLREDUCE, NumelIn=1) ran for 300041 "
        "milliseconds before timing out.\nException raised from checkTimeout",
        "300.0 s", "; rank(s) not responding: 0");
    EXPECT_EQ(timeout.rfind("rank 1: allreduce timed out (limit 300.0 s): [Rank 1] Watchdog caught", 0), 0u) << timeout;
    EXPECT_NE(timeout.find("; rank(s) not responding: 0"), std::string::npos);
    EXPECT_EQ(timeout.find('\n'), std::string::npos);
    const std::string dup =
        describeNcclFailure(0, "allreduce", "Duplicate GPU detected : rank 0 and rank 1 both on CUDA device 1000", "", "");
    EXPECT_NE(dup.find("two ranks were given the same GPU"), std::string::npos) << dup;
    const std::string aborted = describeNcclFailure(2, "reduce-scatter", "NCCL communicator was aborted on rank 2.", "", "");
    EXPECT_NE(aborted.find("rank 2: reduce-scatter the NCCL communicator was aborted after an earlier failure"), std::string::npos)
        << aborted;
    const std::string other = describeNcclFailure(0, "broadcast", "unhandled system error", "", "");
    EXPECT_EQ(other, "rank 0: broadcast failed: unhandled system error");
}

TEST(Nccl, TheBackendIsListedExactlyWhenBuilt)
{
    const auto backends = availableBackends();
    const bool nccl = std::find(backends.begin(), backends.end(), "nccl") != backends.end();
    EXPECT_EQ(nccl, buildLibraries().find(", NCCL ") != std::string::npos) << buildLibraries();
    // A CPU rank never gets nccl from auto, and asking for it on the CPU is refused in one line.
    const std::string e = errorOf([] {
        DistEnv two;
        two.size = 2;
        makeCommunicator("nccl", two, std::chrono::seconds(1), kCpu);
    });
    EXPECT_EQ(e.find('\n'), std::string::npos);
    EXPECT_NE(e.find("--backend nccl"), std::string::npos) << e;
}
