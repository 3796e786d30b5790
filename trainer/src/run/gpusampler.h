#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace scaledesk::train {

class NvmlLibrary;

/// One telemetry sample of this rank's GPU. NaN: the device did not report that quantity.
struct GpuSample {
    double t = 0.0;    ///< Unix seconds
    int64_t step = 0;  ///< the global step when it was taken
    double powerW = std::numeric_limits<double>::quiet_NaN();
    double utilPct = std::numeric_limits<double>::quiet_NaN();
    double memUsedMiB = std::numeric_limits<double>::quiet_NaN();
    double memTotalMiB = std::numeric_limits<double>::quiet_NaN();
};

/// What the GPU did between beginWindow() and endWindow() (an epoch). NaN where no sample said.
struct GpuWindow {
    int64_t samples = 0;
    double seconds = 0.0;
    /// Σ power × the time since the previous reading (or the window's start); the last reading is
    /// held to the window's end (a window with no reading of its own holds the latest one before it).
    /// NVML reports power averaged over about the last second on recent GPUs.
    double energyWh = std::numeric_limits<double>::quiet_NaN();
    double meanPowerW = std::numeric_limits<double>::quiet_NaN();  ///< energy / seconds
    double meanUtilPct = std::numeric_limits<double>::quiet_NaN();
    double maxMemUsedMiB = std::numeric_limits<double>::quiet_NaN();
};

/// Samples one GPU through NVML on a background thread every `interval`, so the training loop
/// never waits for NVML: it only takes the samples (a swap under a mutex) when it writes them.
/// The destructor (or stop()) ends the thread, within one NVML call.
class GpuSampler {
public:
    using Warn = std::function<void(const std::string&)>;

    /// Starts sampling at once. `warn` is called from the sampler thread, once per distinct failure
    /// (e.g. "power: Not Supported"). At most `maxPending` samples wait to be taken; older ones are
    /// dropped with one warning.
    GpuSampler(std::unique_ptr<NvmlLibrary> nvml, double intervalSeconds, Warn warn, std::size_t maxPending = 100000);
    ~GpuSampler();
    GpuSampler(const GpuSampler&) = delete;
    GpuSampler& operator=(const GpuSampler&) = delete;

    /// NVML's index of the sampled GPU.
    unsigned gpu() const { return m_gpu; }
    /// The global step that the following samples belong to.
    void setStep(int64_t step) { m_step.store(step, std::memory_order_relaxed); }
    /// The samples taken since the last call, oldest first.
    std::vector<GpuSample> takeSamples();
    void beginWindow();
    GpuWindow endWindow();
    /// Ends sampling; idempotent.
    void stop();

private:
    using Clock = std::chrono::steady_clock;
    void loop();
    void record(const GpuSample& s, Clock::time_point at);

    std::unique_ptr<NvmlLibrary> m_nvml;
    const std::chrono::duration<double> m_interval;
    const Warn m_warn;
    const std::size_t m_maxPending;
    const unsigned m_gpu;
    std::atomic<int64_t> m_step{0};

    std::mutex m_mutex;  // guards everything below
    std::condition_variable m_wake;
    bool m_stop = false;
    std::vector<GpuSample> m_pending;
    bool m_droppedSaid = false;
    std::set<std::string> m_failuresSaid;
    // The open window.
    bool m_windowOpen = false;
    Clock::time_point m_windowStart, m_lastPowerAt;
    double m_lastPower = std::numeric_limits<double>::quiet_NaN();
    double m_latestPower = std::numeric_limits<double>::quiet_NaN();  ///< of any sample, in a window or not
    double m_energyJ = 0.0, m_utilSum = 0.0, m_maxMem = std::numeric_limits<double>::quiet_NaN();
    int64_t m_windowSamples = 0, m_utilCount = 0;
    bool m_windowHasPower = false;

    std::thread m_thread;  // last: starts after every member above exists
};

}  // namespace scaledesk::train
