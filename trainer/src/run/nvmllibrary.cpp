#include "run/nvmllibrary.h"

#include "run/nvmlabi.h"

#include <cstdlib>
#include <dlfcn.h>
#include <sstream>
#include <type_traits>

namespace scaledesk::train {

struct NvmlLibrary::Api {
    nvmlInit_v2_fn init = nullptr;
    nvmlShutdown_fn shutdown = nullptr;
    nvmlDeviceGetCount_v2_fn getCount = nullptr;
    nvmlDeviceGetHandleByIndex_v2_fn handleByIndex = nullptr;
    nvmlDeviceGetHandleByUUID_fn handleByUuid = nullptr;
    nvmlDeviceGetIndex_fn getIndex = nullptr;
    nvmlDeviceGetPowerUsage_fn power = nullptr;
    nvmlDeviceGetUtilizationRates_fn utilization = nullptr;
    nvmlDeviceGetMemoryInfo_fn memory = nullptr;
    nvmlErrorString_fn errorString = nullptr;
};

std::string NvmlLibrary::defaultPath()
{
    const char* overridden = std::getenv("SCALEDESK_NVML_LIBRARY");
    return overridden && *overridden ? overridden : "libnvidia-ml.so.1";
}

std::unique_ptr<NvmlLibrary> NvmlLibrary::open(const std::string& path, std::string& why)
{
    void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        const char* error = ::dlerror();
        why = error ? error : path + ": cannot be loaded";
        return nullptr;
    }
    auto api = std::make_unique<Api>();
    std::string missing;
    auto resolve = [&](auto& fn, const char* name) {
        fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(::dlsym(handle, name));
        if (!fn) missing += (missing.empty() ? "" : ", ") + std::string(name);
    };
    resolve(api->init, "nvmlInit_v2");
    resolve(api->shutdown, "nvmlShutdown");
    resolve(api->getCount, "nvmlDeviceGetCount_v2");
    resolve(api->handleByIndex, "nvmlDeviceGetHandleByIndex_v2");
    resolve(api->handleByUuid, "nvmlDeviceGetHandleByUUID");
    resolve(api->getIndex, "nvmlDeviceGetIndex");
    resolve(api->power, "nvmlDeviceGetPowerUsage");
    resolve(api->utilization, "nvmlDeviceGetUtilizationRates");
    resolve(api->memory, "nvmlDeviceGetMemoryInfo");
    resolve(api->errorString, "nvmlErrorString");
    if (!missing.empty()) {
        why = path + " lacks " + missing;
        ::dlclose(handle);
        return nullptr;
    }
    const nvmlReturn_t rc = api->init();
    if (rc != SCALEDESK_NVML_SUCCESS) {
        const char* text = api->errorString(rc);
        why = "nvmlInit_v2 failed: " + std::string(text ? text : "error " + std::to_string(rc));
        ::dlclose(handle);
        return nullptr;
    }
    return std::unique_ptr<NvmlLibrary>(new NvmlLibrary(handle, std::move(api)));
}

NvmlLibrary::NvmlLibrary(void* handle, std::unique_ptr<Api> api) : m_handle(handle), m_api(std::move(api)) {}

NvmlLibrary::~NvmlLibrary()
{
    m_api->shutdown();
    ::dlclose(m_handle);
}

std::string NvmlLibrary::errorText(int code) const
{
    const char* text = m_api->errorString(code);
    return text ? text : "NVML error " + std::to_string(code);
}

unsigned NvmlLibrary::deviceCount() const
{
    unsigned count = 0;
    return m_api->getCount(&count) == SCALEDESK_NVML_SUCCESS ? count : 0;
}

bool NvmlLibrary::selectIndex(unsigned index, std::string& why)
{
    const unsigned count = deviceCount();
    if (index >= count) {
        why = "NVML sees " + std::to_string(count) + " GPU(s), none with index " + std::to_string(index);
        return false;
    }
    nvmlDevice_t device = nullptr;
    if (const nvmlReturn_t rc = m_api->handleByIndex(index, &device); rc != SCALEDESK_NVML_SUCCESS) {
        why = "GPU " + std::to_string(index) + ": " + errorText(rc);
        return false;
    }
    m_device = device;
    m_index = index;
    return true;
}

bool NvmlLibrary::selectCudaDevice(int cudaIndex, const char* visibleDevices, std::string& why)
{
    if (cudaIndex < 0) {
        why = "no CUDA device index";
        return false;
    }
    if (!visibleDevices) return selectIndex(unsigned(cudaIndex), why);
    // NVML ignores CUDA_VISIBLE_DEVICES: CUDA's device i is the i-th entry of the list.
    std::vector<std::string> entries;
    std::stringstream list(visibleDevices);
    for (std::string entry; std::getline(list, entry, ',');) entries.push_back(entry);
    if (std::size_t(cudaIndex) >= entries.size() || entries[std::size_t(cudaIndex)].empty()) {
        why = "CUDA_VISIBLE_DEVICES='" + std::string(visibleDevices) + "' has no entry " + std::to_string(cudaIndex);
        return false;
    }
    const std::string& entry = entries[std::size_t(cudaIndex)];
    if (entry.rfind("GPU-", 0) == 0 || entry.rfind("MIG-", 0) == 0) {
        nvmlDevice_t device = nullptr;
        if (const nvmlReturn_t rc = m_api->handleByUuid(entry.c_str(), &device); rc != SCALEDESK_NVML_SUCCESS) {
            why = "CUDA_VISIBLE_DEVICES entry " + entry + ": " + errorText(rc);
            return false;
        }
        unsigned index = 0;
        if (const nvmlReturn_t rc = m_api->getIndex(device, &index); rc != SCALEDESK_NVML_SUCCESS) {
            why = "CUDA_VISIBLE_DEVICES entry " + entry + ": no NVML index: " + errorText(rc);
            return false;
        }
        m_device = device;
        m_index = index;
        return true;
    }
    char* end = nullptr;
    const long index = std::strtol(entry.c_str(), &end, 10);
    if (*end != '\0' || index < 0) {
        why = "CUDA_VISIBLE_DEVICES entry '" + entry + "' is neither an index nor a GPU-/MIG- UUID";
        return false;
    }
    return selectIndex(unsigned(index), why);
}

GpuReading NvmlLibrary::read() const
{
    GpuReading r;
    unsigned milliwatts = 0;
    if (const nvmlReturn_t rc = m_api->power(m_device, &milliwatts); rc == SCALEDESK_NVML_SUCCESS)
        r.powerW = milliwatts / 1000.0;
    else
        r.failures.push_back("power: " + errorText(rc));
    nvmlUtilization_t util{};
    if (const nvmlReturn_t rc = m_api->utilization(m_device, &util); rc == SCALEDESK_NVML_SUCCESS)
        r.utilPct = double(util.gpu);
    else
        r.failures.push_back("utilisation: " + errorText(rc));
    nvmlMemory_t memory{};
    if (const nvmlReturn_t rc = m_api->memory(m_device, &memory); rc == SCALEDESK_NVML_SUCCESS) {
        r.memUsedMiB = double(memory.used) / (1024.0 * 1024.0);
        r.memTotalMiB = double(memory.total) / (1024.0 * 1024.0);
    } else {
        r.failures.push_back("memory: " + errorText(rc));
    }
    return r;
}

}  // namespace scaledesk::train
