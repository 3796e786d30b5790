// A CPU-only libtorch: the device functions that CUDA builds implement in cudadevice.cpp.
#include "device/device.h"
#include "device/stepclock.h"

#include <torch/version.h>

#include <cmath>

namespace scaledesk::train {

CudaStatus probeCuda()
{
    CudaStatus s;
    s.unavailable = std::string("this scaledesk-train was built against a CPU-only libtorch (") + TORCH_VERSION + "): no CUDA";
    return s;
}

void configureDevice(const c10::Device&, bool, bool) {}

DeviceInfo describeDevice(const c10::Device& device)
{
    DeviceInfo info;
    info.device = device.str();
    return info;
}

std::string whyNoBf16(const c10::Device&) { return whyNoBf16OnCpu(); }
std::string whyNoFp16(const c10::Device&) { return whyNoFp16OnCpu(); }

double peakDeviceMemoryMiB(const c10::Device&) { return std::nan(""); }

std::string buildLibraries() { return std::string("libtorch ") + TORCH_VERSION + ", CPU only"; }

std::unique_ptr<StepClock> makeStepClock(const c10::Device& device)
{
    if (device.is_cuda()) throw DeviceError("this scaledesk-train has no CUDA: it cannot time a GPU");
    return makeHostClock();
}

}  // namespace scaledesk::train
