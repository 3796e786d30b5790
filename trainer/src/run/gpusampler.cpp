#include "run/gpusampler.h"

#include "run/nvmllibrary.h"
#include "run/runfiles.h"

#include <cmath>

namespace scaledesk::train {

GpuSampler::GpuSampler(std::unique_ptr<NvmlLibrary> nvml, double intervalSeconds, Warn warn, std::size_t maxPending)
    : m_nvml(std::move(nvml)), m_interval(intervalSeconds), m_warn(std::move(warn)), m_maxPending(std::max<std::size_t>(1, maxPending)),
      m_gpu(m_nvml->selectedIndex()), m_thread([this] { loop(); })
{}

GpuSampler::~GpuSampler() { stop(); }

void GpuSampler::stop()
{
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        m_stop = true;
    }
    m_wake.notify_all();
    if (m_thread.joinable()) m_thread.join();
}

void GpuSampler::loop()
{
    auto next = Clock::now();
    std::unique_lock<std::mutex> lock(m_mutex);
    while (!m_stop) {
        lock.unlock();
        // NVML outside the lock: the training thread never waits for a device query.
        const GpuReading reading = m_nvml->read();
        const auto at = Clock::now();
        GpuSample s;
        s.t = unixNow();
        s.step = m_step.load(std::memory_order_relaxed);
        if (reading.powerW) s.powerW = *reading.powerW;
        if (reading.utilPct) s.utilPct = *reading.utilPct;
        if (reading.memUsedMiB) s.memUsedMiB = *reading.memUsedMiB;
        if (reading.memTotalMiB) s.memTotalMiB = *reading.memTotalMiB;
        std::vector<std::string> toSay;
        lock.lock();
        for (const auto& failure : reading.failures)
            if (m_failuresSaid.insert(failure).second) toSay.push_back(failure);
        if (m_pending.size() >= m_maxPending) {
            m_pending.erase(m_pending.begin(), m_pending.begin() + std::ptrdiff_t(m_pending.size() / 2));
            if (!m_droppedSaid) toSay.push_back("more than " + std::to_string(m_maxPending) + " samples waiting; dropping the oldest");
            m_droppedSaid = true;
        }
        record(s, at);
        if (!toSay.empty()) {
            lock.unlock();
            for (const auto& message : toSay) m_warn("GPU telemetry: GPU " + std::to_string(m_gpu) + ": " + message);
            lock.lock();
        }
        // A fixed cadence; after a stall (a slow NVML call) the next sample is one interval later.
        next += std::chrono::duration_cast<Clock::duration>(m_interval);
        if (next <= Clock::now()) next = Clock::now() + std::chrono::duration_cast<Clock::duration>(m_interval);
        m_wake.wait_until(lock, next, [this] { return m_stop; });
    }
}

// Called with m_mutex held.
void GpuSampler::record(const GpuSample& s, Clock::time_point at)
{
    m_pending.push_back(s);
    if (!std::isnan(s.powerW)) m_latestPower = s.powerW;
    if (!m_windowOpen) return;
    ++m_windowSamples;
    if (!std::isnan(s.powerW)) {
        m_energyJ += s.powerW * std::chrono::duration<double>(at - m_lastPowerAt).count();
        m_lastPower = s.powerW;
        m_lastPowerAt = at;
        m_windowHasPower = true;
    }
    if (!std::isnan(s.utilPct)) {
        m_utilSum += s.utilPct;
        ++m_utilCount;
    }
    if (!std::isnan(s.memUsedMiB)) m_maxMem = std::isnan(m_maxMem) ? s.memUsedMiB : std::max(m_maxMem, s.memUsedMiB);
}

std::vector<GpuSample> GpuSampler::takeSamples()
{
    std::vector<GpuSample> out;
    std::lock_guard<std::mutex> lock(m_mutex);
    out.swap(m_pending);
    return out;
}

void GpuSampler::beginWindow()
{
    std::lock_guard<std::mutex> lock(m_mutex);
    m_windowOpen = true;
    m_windowStart = m_lastPowerAt = Clock::now();
    m_lastPower = std::numeric_limits<double>::quiet_NaN();
    m_energyJ = m_utilSum = 0.0;
    m_maxMem = std::numeric_limits<double>::quiet_NaN();
    m_windowSamples = m_utilCount = 0;
    m_windowHasPower = false;
}

GpuWindow GpuSampler::endWindow()
{
    std::lock_guard<std::mutex> lock(m_mutex);
    GpuWindow w;
    if (!m_windowOpen) return w;
    const auto now = Clock::now();
    w.samples = m_windowSamples;
    w.seconds = std::chrono::duration<double>(now - m_windowStart).count();
    if (m_windowHasPower || !std::isnan(m_latestPower)) {
        // A window shorter than the interval may hold no reading: the latest one before it stands in.
        const double held = m_windowHasPower ? m_lastPower : m_latestPower;
        const double energyJ = m_energyJ + held * std::chrono::duration<double>(now - m_lastPowerAt).count();
        w.energyWh = energyJ / 3600.0;
        if (w.seconds > 0) w.meanPowerW = energyJ / w.seconds;
    }
    if (m_utilCount > 0) w.meanUtilPct = m_utilSum / double(m_utilCount);
    w.maxMemUsedMiB = m_maxMem;
    m_windowOpen = false;
    return w;
}

}  // namespace scaledesk::train
