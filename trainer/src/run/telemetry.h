#pragma once

#include "run/gpusampler.h"

#include <c10/core/Device.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <string>

namespace scaledesk::train {

class Communicator;
class RunLog;
class RunRecorder;

/// A run's GPU telemetry (docs/trainer.md): every rank samples its own GPU through NVML, loaded at
/// run time, and rank 0 records every rank's samples (`gpu` records) and one `gpu_epoch` summary
/// per sampling rank and epoch. Each rank says once in its log what it samples, or why nothing.
/// flush(), endEpoch() and finish() are collectives: every rank calls them at the same points,
/// telemetry or not.
class Telemetry {
public:
    /// The energy and utilisation of an epoch over the ranks that sampled.
    struct EpochTotals {
        int ranks = 0;                   ///< ranks that sampled a GPU this epoch
        double energyWh = std::nan("");  ///< summed over those that measured power
        double meanUtilPct = std::nan("");
    };

    Telemetry(Communicator& comm, RunRecorder& recorder, RunLog& log) : m_comm(comm), m_recorder(recorder), m_log(log) {}

    /// Starts sampling the GPU `device` uses (a CPU run: the GPU its local rank would use).
    /// `intervalSeconds` 0 switches telemetry off. `nvmlPath` empty: NvmlLibrary::defaultPath().
    void start(double intervalSeconds, const std::string& nvmlPath, const c10::Device& device, int localRank);
    /// sampling, off or unavailable.
    const std::string& status() const { return m_status; }
    /// The NVML index this rank samples, -1 for none.
    int gpuIndex() const;

    void beginEpoch();
    /// The step now running (what the samples are tagged with); rank 0 records its own samples.
    void atStep(int64_t step);
    /// Rank 0 records the epoch's samples of every rank, and a summary per sampling rank.
    EpochTotals endEpoch(int64_t epoch, int64_t step);
    /// At the end or a stop: the sampler ends, and what it had not handed over is recorded.
    void finish();

private:
    void writeSamples(int rank, const std::vector<GpuSample>& samples, int gpuIndex);
    void flush();

    Communicator& m_comm;
    RunRecorder& m_recorder;
    RunLog& m_log;
    std::unique_ptr<GpuSampler> m_gpu;  ///< null: no telemetry on this rank
    std::string m_status = "off";
};

}  // namespace scaledesk::train
