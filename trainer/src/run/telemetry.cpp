#include "run/telemetry.h"

#include "dist/comm.h"
#include "run/config.h"
#include "run/nvmllibrary.h"
#include "run/recorder.h"
#include "run/runfiles.h"

#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include <cstdlib>

namespace scaledesk::train {

using json = nlohmann::json;

void Telemetry::start(double intervalSeconds, const std::string& nvmlPath, const c10::Device& device, int localRank)
{
    if (intervalSeconds <= 0) {
        m_status = "off";
        m_log.info("GPU telemetry: off (--gpu_sample_s 0)");
        return;
    }
    m_status = "unavailable";
    std::string why;
    auto nvml = NvmlLibrary::open(nvmlPath.empty() ? NvmlLibrary::defaultPath() : nvmlPath, why);
    if (!nvml) {
        m_log.info("no GPU telemetry: no NVML (" + why + "); nothing recorded");
        return;
    }
    // A CPU run samples the GPU its local rank would use: on a GPU node that shows it idle.
    const int cudaIndex = device.is_cuda() ? int(device.index()) : localRank;
    if (!nvml->selectCudaDevice(cudaIndex, std::getenv("CUDA_VISIBLE_DEVICES"), why)) {
        m_log.info("no GPU telemetry: no GPU to sample (" + why + "); nothing recorded");
        return;
    }
    const std::string every = " every " + pythonFloatRepr(intervalSeconds) + " s";
    const std::string index = std::to_string(nvml->selectedIndex());
    if (device.is_cuda())
        m_log.info("GPU telemetry: sampling GPU " + index + " (cuda:" + std::to_string(cudaIndex) + ")" + every);
    else
        m_log.info("GPU telemetry: CPU run; sampling GPU " + index + " of this node, which this trainer does not use," + every);
    m_gpu = std::make_unique<GpuSampler>(std::move(nvml), intervalSeconds, [this](const std::string& m) { m_log.warning(m); });
    m_status = "sampling";
}

void Telemetry::writeSamples(int rank, const std::vector<GpuSample>& samples, int gpuIndex)
{
    for (const GpuSample& s : samples)
        m_recorder.write(json{{"kind", "gpu"},
                              {"t", s.t},
                              {"step", s.step},
                              {"rank", rank},
                              {"gpu", gpuIndex},
                              {"power_w", jsonNumber(s.powerW)},
                              {"util_pct", jsonNumber(s.utilPct)},
                              {"mem_used_mib", jsonNumber(s.memUsedMiB)},
                              {"mem_total_mib", jsonNumber(s.memTotalMiB)}});
}

void Telemetry::flush()
{
    std::vector<GpuSample> mine = m_gpu ? m_gpu->takeSamples() : std::vector<GpuSample>{};
    if (m_comm.size() == 1) {
        if (!mine.empty()) writeSamples(0, mine, gpuIndex());
        return;
    }
    torch::Tensor counts = torch::zeros({m_comm.size()}, torch::kLong);
    m_comm.allgather(counts, torch::full({1}, int64_t(mine.size()), torch::kLong));
    const int64_t longest = counts.max().item<int64_t>();
    if (longest == 0) return;
    constexpr int64_t kFields = 7;
    torch::Tensor packed = torch::zeros({longest * kFields}, torch::kDouble);
    auto* p = packed.data_ptr<double>();
    for (const GpuSample& s : mine) {
        for (double v : {s.t, double(s.step), double(m_gpu->gpu()), s.powerW, s.utilPct, s.memUsedMiB, s.memTotalMiB}) *p++ = v;
    }
    torch::Tensor all = torch::zeros({m_comm.size() * longest * kFields}, torch::kDouble);
    m_comm.allgather(all, packed);
    if (m_comm.rank() != 0) return;
    const double* a = all.data_ptr<double>();
    for (int r = 0; r < m_comm.size(); ++r) {
        std::vector<GpuSample> theirs;
        int gpuIndex = -1;
        for (int64_t i = 0; i < counts[r].item<int64_t>(); ++i) {
            const double* f = a + (int64_t(r) * longest + i) * kFields;
            GpuSample s;
            s.t = f[0];
            s.step = int64_t(f[1]);
            gpuIndex = int(f[2]);
            s.powerW = f[3];
            s.utilPct = f[4];
            s.memUsedMiB = f[5];
            s.memTotalMiB = f[6];
            theirs.push_back(s);
        }
        writeSamples(r, theirs, gpuIndex);
    }
}

Telemetry::EpochTotals Telemetry::endEpoch(int64_t epoch, int64_t step)
{
    const bool have = m_gpu != nullptr;
    const GpuWindow w = have ? m_gpu->endWindow() : GpuWindow{};
    flush();
    constexpr int64_t kFields = 8;
    const std::vector<double> mine = {
        double(have),   have ? double(m_gpu->gpu()) : -1.0, double(w.samples), w.seconds, w.energyWh, w.meanPowerW, w.meanUtilPct,
        w.maxMemUsedMiB};
    torch::Tensor all = torch::tensor(mine, torch::kDouble);
    if (m_comm.size() > 1) {
        torch::Tensor gathered = torch::zeros({m_comm.size() * kFields}, torch::kDouble);
        m_comm.allgather(gathered, all);
        all = gathered;
    }
    EpochTotals totals;
    if (m_comm.rank() != 0) return totals;
    const double* a = all.data_ptr<double>();
    double utilSum = 0.0;
    int utilRanks = 0;
    for (int r = 0; r < m_comm.size(); ++r) {
        const double* f = a + int64_t(r) * kFields;
        if (f[0] == 0.0) continue;
        ++totals.ranks;
        if (!std::isnan(f[4])) totals.energyWh = (std::isnan(totals.energyWh) ? 0.0 : totals.energyWh) + f[4];
        if (!std::isnan(f[6])) {
            utilSum += f[6];
            ++utilRanks;
        }
        m_recorder.write(json{{"kind", "gpu_epoch"},
                              {"t", unixNow()},
                              {"step", step},
                              {"epoch", epoch + 1},
                              {"rank", r},
                              {"gpu", int(f[1])},
                              {"samples", int64_t(f[2])},
                              {"window_s", f[3]},
                              {"energy_wh", jsonNumber(f[4])},
                              {"mean_power_w", jsonNumber(f[5])},
                              {"mean_util_pct", jsonNumber(f[6])},
                              {"max_mem_used_mib", jsonNumber(f[7])}});
    }
    if (utilRanks > 0) totals.meanUtilPct = utilSum / double(utilRanks);
    return totals;
}

int Telemetry::gpuIndex() const { return m_gpu ? int(m_gpu->gpu()) : -1; }

void Telemetry::beginEpoch()
{
    if (m_gpu) m_gpu->beginWindow();
}

void Telemetry::atStep(int64_t step)
{
    if (!m_gpu) return;
    m_gpu->setStep(step);
    // Rank 0's own samples as they come (other ranks' arrive at the epoch's end).
    if (m_comm.rank() == 0) writeSamples(0, m_gpu->takeSamples(), gpuIndex());
}

void Telemetry::finish()
{
    if (m_gpu) m_gpu->stop();
    flush();
}

}  // namespace scaledesk::train
