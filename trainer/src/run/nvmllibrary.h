#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

struct nvmlDevice_st;

namespace scaledesk::train {

/// One reading of a GPU; a quantity the device does not report stays empty.
struct GpuReading {
    std::optional<double> powerW;
    std::optional<double> utilPct;
    std::optional<double> memUsedMiB;
    std::optional<double> memTotalMiB;
    std::vector<std::string> failures;  ///< "power: Not Supported", one per quantity that failed
};

/// NVML, loaded at run time with dlopen (no build dependency on CUDA or NVML; run/nvmlabi.h
/// declares the ABI), initialised, and pointed at one device. Reads may come from any one thread.
class NvmlLibrary {
public:
    /// The library GPU telemetry loads: $SCALEDESK_NVML_LIBRARY when set (tests, unusual
    /// installs), else libnvidia-ml.so.1.
    static std::string defaultPath();

    /// Loads `path` and calls nvmlInit_v2. On failure returns null and says why in `why`
    /// (the dlopen error, a missing symbol, or NVML's own error text).
    static std::unique_ptr<NvmlLibrary> open(const std::string& path, std::string& why);

    ~NvmlLibrary();
    NvmlLibrary(const NvmlLibrary&) = delete;
    NvmlLibrary& operator=(const NvmlLibrary&) = delete;

    /// Devices NVML sees on this node (0 when it cannot tell).
    unsigned deviceCount() const;

    /// Selects the device that CUDA calls `cudaIndex` in this process: CUDA_VISIBLE_DEVICES
    /// (`visibleDevices`, null when unset) maps it to an NVML index or a GPU-/MIG- UUID; unset, the
    /// CUDA index is taken as NVML's (both enumerate in PCI order on a node of identical GPUs). Returns
    /// false with `why` when there is no such device.
    bool selectCudaDevice(int cudaIndex, const char* visibleDevices, std::string& why);

    /// NVML's index of the selected device (what telemetry records as `gpu`).
    unsigned selectedIndex() const { return m_index; }

    /// Power, utilisation and memory of the selected device (after selectCudaDevice succeeded).
    GpuReading read() const;

private:
    struct Api;
    NvmlLibrary(void* handle, std::unique_ptr<Api> api);
    std::string errorText(int code) const;
    bool selectIndex(unsigned index, std::string& why);

    void* m_handle = nullptr;
    std::unique_ptr<Api> m_api;
    nvmlDevice_st* m_device = nullptr;
    unsigned m_index = 0;
};

}  // namespace scaledesk::train
