// NvmlLibrary and GpuSampler against the stand-in NVML of fake_nvml.c (fixed readings: GPU 0
// 250 W, 87 %, 40 GiB of 80 GiB; GPU 1 300 W, 50 %, 20 GiB).
#include "run/gpusampler.h"
#include "run/nvmllibrary.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <mutex>
#include <thread>

using namespace scaledesk::train;

namespace {

const std::string kFake = SCALEDESK_FAKE_NVML;

std::unique_ptr<NvmlLibrary> openFake(int cudaIndex = 0, const char* visible = nullptr)
{
    std::string why;
    auto nvml = NvmlLibrary::open(kFake, why);
    EXPECT_TRUE(nvml) << why;
    if (!nvml) return nullptr;
    EXPECT_TRUE(nvml->selectCudaDevice(cudaIndex, visible, why)) << why;
    return nvml;
}

// Warnings arrive from the sampler thread.
struct Warnings {
    std::mutex mutex;
    std::vector<std::string> lines;
    GpuSampler::Warn sink()
    {
        return [this](const std::string& line) {
            std::lock_guard<std::mutex> lock(mutex);
            lines.push_back(line);
        };
    }
};

void sleepFor(double seconds) { std::this_thread::sleep_for(std::chrono::duration<double>(seconds)); }

}  // namespace

TEST(NvmlLibrary, ReadsTheSelectedDevice)
{
    auto nvml = openFake();
    ASSERT_TRUE(nvml);
    EXPECT_EQ(nvml->deviceCount(), 2u);
    EXPECT_EQ(nvml->selectedIndex(), 0u);
    const GpuReading r = nvml->read();
    EXPECT_TRUE(r.failures.empty());
    EXPECT_DOUBLE_EQ(r.powerW.value_or(-1), 250.0);  // 250000 mW
    EXPECT_DOUBLE_EQ(r.utilPct.value_or(-1), 87.0);
    EXPECT_DOUBLE_EQ(r.memUsedMiB.value_or(-1), 40.0 * 1024);  // bytes to MiB
    EXPECT_DOUBLE_EQ(r.memTotalMiB.value_or(-1), 80.0 * 1024);
}

// NVML numbers GPUs by itself; CUDA_VISIBLE_DEVICES renumbers them for CUDA.
TEST(NvmlLibrary, CudaVisibleDevicesMapsCudaIndicesToNvml)
{
    struct Row {
        int cudaIndex;
        const char* visible;
        int expectIndex;  ///< -1: refused
        const char* expectWhy;
    };
    const Row rows[] = {
        {0, nullptr, 0, ""},
        {1, nullptr, 1, ""},
        {0, "1", 1, ""},
        {1, "1,0", 0, ""},
        {1, "0,GPU-fake-1", 1, ""},
        {0, "GPU-fake-0", 0, ""},
        {5, nullptr, -1, "NVML sees 2 GPU(s), none with index 5"},
        {2, "0,1", -1, "CUDA_VISIBLE_DEVICES='0,1' has no entry 2"},
        {0, "", -1, "CUDA_VISIBLE_DEVICES='' has no entry 0"},
        {0, "GPU-other", -1, "CUDA_VISIBLE_DEVICES entry GPU-other: Not Found"},
        {0, "first", -1, "neither an index nor a GPU-/MIG- UUID"},
    };
    for (const Row& row : rows) {
        std::string why;
        auto nvml = NvmlLibrary::open(kFake, why);
        ASSERT_TRUE(nvml) << why;
        const std::string name = std::to_string(row.cudaIndex) + " with " + (row.visible ? std::string("'") + row.visible + "'" : "unset");
        const bool ok = nvml->selectCudaDevice(row.cudaIndex, row.visible, why);
        if (row.expectIndex < 0) {
            EXPECT_FALSE(ok) << name;
            EXPECT_NE(why.find(row.expectWhy), std::string::npos) << name << ": " << why;
        } else {
            ASSERT_TRUE(ok) << name << ": " << why;
            EXPECT_EQ(nvml->selectedIndex(), unsigned(row.expectIndex)) << name;
            EXPECT_DOUBLE_EQ(nvml->read().powerW.value_or(-1), row.expectIndex == 0 ? 250.0 : 300.0) << name;
        }
    }
}

TEST(NvmlLibrary, SaysWhyItCannotOpen)
{
    std::string why;
    EXPECT_FALSE(NvmlLibrary::open("/nonexistent/libnvidia-ml.so.1", why));
    EXPECT_NE(why.find("/nonexistent/libnvidia-ml.so.1"), std::string::npos) << why;
    EXPECT_NE(why.find("No such file"), std::string::npos) << why;

    why.clear();
    EXPECT_FALSE(NvmlLibrary::open("libm.so.6", why));  // loads, but is not NVML
    EXPECT_NE(why.find("libm.so.6 lacks nvmlInit_v2"), std::string::npos) << why;

    setenv("FAKE_NVML_INIT_FAIL", "1", 1);
    why.clear();
    EXPECT_FALSE(NvmlLibrary::open(kFake, why));
    unsetenv("FAKE_NVML_INIT_FAIL");
    EXPECT_EQ(why, "nvmlInit_v2 failed: Driver Not Loaded");
}

TEST(NvmlLibrary, DefaultPathFollowsTheEnvironment)
{
    unsetenv("SCALEDESK_NVML_LIBRARY");
    EXPECT_EQ(NvmlLibrary::defaultPath(), "libnvidia-ml.so.1");
    setenv("SCALEDESK_NVML_LIBRARY", "/opt/x/libnvidia-ml.so.1", 1);
    EXPECT_EQ(NvmlLibrary::defaultPath(), "/opt/x/libnvidia-ml.so.1");
    unsetenv("SCALEDESK_NVML_LIBRARY");
}

TEST(GpuSampler, SamplesAtTheIntervalWithTheStepOfTheMoment)
{
    Warnings warnings;
    GpuSampler sampler(openFake(0, "1"), 0.02, warnings.sink());
    EXPECT_EQ(sampler.gpu(), 1u);
    sleepFor(0.15);
    sampler.setStep(7);
    sleepFor(0.25);
    sampler.stop();
    const std::vector<GpuSample> samples = sampler.takeSamples();
    // 0.4 s at 20 ms: ~20 samples; a loaded machine may delay some, never add any.
    ASSERT_GE(samples.size(), 8u);
    EXPECT_LE(samples.size(), 22u);
    std::vector<double> gaps;
    for (std::size_t i = 0; i < samples.size(); ++i) {
        EXPECT_DOUBLE_EQ(samples[i].powerW, 300.0);
        EXPECT_DOUBLE_EQ(samples[i].utilPct, 50.0);
        EXPECT_DOUBLE_EQ(samples[i].memUsedMiB, 20.0 * 1024);
        if (i > 0) gaps.push_back(samples[i].t - samples[i - 1].t);
    }
    std::sort(gaps.begin(), gaps.end());
    EXPECT_NEAR(gaps[gaps.size() / 2], 0.02, 0.01);  // the median gap
    EXPECT_EQ(samples.front().step, 0);
    EXPECT_EQ(samples.back().step, 7);
    EXPECT_TRUE(sampler.takeSamples().empty());  // taken once
    EXPECT_TRUE(warnings.lines.empty());
}

// Constant power: the window's energy is exactly power × its length, whatever the sample times.
TEST(GpuSampler, WindowEnergyIsPowerTimesTime)
{
    GpuSampler sampler(openFake(), 0.02, [](const std::string&) {});
    sleepFor(0.05);
    sampler.beginWindow();
    sleepFor(0.3);
    const GpuWindow w = sampler.endWindow();
    EXPECT_NEAR(w.seconds, 0.3, 0.1);
    EXPECT_GE(w.samples, 5);
    EXPECT_NEAR(w.energyWh, 250.0 * w.seconds / 3600.0, 1e-9);
    EXPECT_NEAR(w.meanPowerW, 250.0, 1e-6);
    EXPECT_DOUBLE_EQ(w.meanUtilPct, 87.0);
    EXPECT_DOUBLE_EQ(w.maxMemUsedMiB, 40.0 * 1024);
    // A closed window stays closed.
    EXPECT_EQ(sampler.endWindow().samples, 0);
}

// An epoch shorter than the interval holds no sample of its own: the latest reading stands in.
TEST(GpuSampler, AWindowWithoutASampleHoldsTheLatestReading)
{
    GpuSampler sampler(openFake(), 30.0, [](const std::string&) {});
    sleepFor(0.1);  // the first sample is taken at start
    sampler.beginWindow();
    sleepFor(0.1);
    const GpuWindow w = sampler.endWindow();
    EXPECT_EQ(w.samples, 0);
    EXPECT_NEAR(w.energyWh, 250.0 * w.seconds / 3600.0, 1e-9);
    EXPECT_TRUE(std::isnan(w.meanUtilPct));
}

TEST(GpuSampler, AQuantityTheDeviceLacksIsSaidOnceAndLeftEmpty)
{
    setenv("FAKE_NVML_NO_POWER", "1", 1);
    Warnings warnings;
    {
        GpuSampler sampler(openFake(), 0.01, warnings.sink());
        sampler.beginWindow();
        sleepFor(0.15);
        const GpuWindow w = sampler.endWindow();
        sampler.stop();
        const auto samples = sampler.takeSamples();
        ASSERT_GE(samples.size(), 5u);
        for (const auto& s : samples) {
            EXPECT_TRUE(std::isnan(s.powerW));
            EXPECT_DOUBLE_EQ(s.utilPct, 87.0);
        }
        EXPECT_TRUE(std::isnan(w.energyWh));
        EXPECT_DOUBLE_EQ(w.meanUtilPct, 87.0);
    }
    unsetenv("FAKE_NVML_NO_POWER");
    ASSERT_EQ(warnings.lines.size(), 1u);
    EXPECT_EQ(warnings.lines[0], "GPU telemetry: GPU 0: power: Not Supported");
}

TEST(GpuSampler, StopIsPromptAndIdempotent)
{
    GpuSampler sampler(openFake(), 60.0, [](const std::string&) {});
    sleepFor(0.05);
    const auto t0 = std::chrono::steady_clock::now();
    sampler.stop();
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 1.0);
    sampler.stop();
    EXPECT_EQ(sampler.takeSamples().size(), 1u);  // the one taken at start, none after the stop
}

TEST(GpuSampler, KeepsAtMostMaxPendingSamples)
{
    Warnings warnings;
    GpuSampler sampler(openFake(), 0.01, warnings.sink(), 4);
    sleepFor(0.2);
    sampler.stop();
    EXPECT_LE(sampler.takeSamples().size(), 4u);
    ASSERT_EQ(warnings.lines.size(), 1u);
    EXPECT_EQ(warnings.lines[0], "GPU telemetry: GPU 0: more than 4 samples waiting; dropping the oldest");
}
