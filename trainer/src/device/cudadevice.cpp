// The device functions of a CUDA build: the runtime's answer, the device's settings and versions,
// and the step clock of CUDA events. The only trainer source besides dist/comm_nccl.cpp that
// includes CUDA headers.
#include "device/device.h"
#include "device/stepclock.h"

#include <ATen/Context.h>
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAEvent.h>
#include <ATen/detail/CUDAHooksInterface.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#include <cuda_runtime_api.h>
#include <torch/version.h>

#ifdef SCALEDESK_HAVE_NCCL
#include <nccl.h>
#endif

#include <cmath>
#include <cstdlib>
#include <deque>
#include <dlfcn.h>

namespace scaledesk::train {

namespace {

std::string dotted(long v, long major, long minor)
{
    return std::to_string(v / major) + "." + std::to_string((v % major) / minor) + "." + std::to_string(v % minor);
}

std::string cudaRuntimeVersion()
{
    int v = 0;
    if (cudaRuntimeGetVersion(&v) != cudaSuccess) v = CUDART_VERSION;
    return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

std::string cudnnVersion()
{
    try {
        const long v = at::detail::getCUDAHooks().versionCuDNN();  // 90100 → 9.1.0
        return v >= 10000 ? dotted(v, 10000, 100) : dotted(v, 1000, 100);
    } catch (const std::exception&) {
        return {};
    }
}

std::string ncclVersion()
{
#ifdef SCALEDESK_HAVE_NCCL
    int v = 0;
    if (ncclGetVersion(&v) != ncclSuccess) return {};
    return v >= 10000 ? dotted(v, 10000, 100) : dotted(v, 1000, 100);  // NCCL 2.9+: 22203 → 2.22.3
#else
    return {};
#endif
}

bool driverLoadable()
{
    void* h = ::dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (!h) return false;
    ::dlclose(h);
    return true;
}

// Events on the current stream, made once and reused step after step.
class CudaClock : public StepClock {
public:
    int mark() override
    {
        if (m_used == m_events.size()) m_events.emplace_back(cudaEventDefault);
        m_events[m_used].record(at::cuda::getCurrentCUDAStream());
        return int(m_used++);
    }
    void settle() override
    {
        if (m_used > 0) m_events[m_used - 1].synchronize();
    }
    double seconds(int a, int b) const override
    {
        return double(m_events.at(std::size_t(a)).elapsed_time(m_events.at(std::size_t(b)))) / 1000.0;
    }
    void reset() override { m_used = 0; }

private:
    std::deque<at::cuda::CUDAEvent> m_events;  // deque: events do not move
    std::size_t m_used = 0;
};

}  // namespace

CudaStatus probeCuda()
{
    CudaStatus s;
    s.built = true;
    int count = 0;
    const cudaError_t err = cudaGetDeviceCount(&count);
    if (err == cudaSuccess && count > 0) {
        s.visible = count;
        return s;
    }
    cudaGetLastError();  // the runtime keeps the error sticky otherwise
    s.unavailable = describeNoGpu(int(err), cudaGetErrorString(err), driverLoadable(), std::getenv("CUDA_VISIBLE_DEVICES"));
    return s;
}

void configureDevice(const c10::Device& device, bool cudnnBenchmark, bool tf32)
{
    if (!device.is_cuda()) return;
    c10::cuda::set_device(device.index());
    at::globalContext().setBenchmarkCuDNN(cudnnBenchmark);
    at::globalContext().setAllowTF32CuDNN(tf32);
    at::globalContext().setAllowTF32CuBLAS(tf32);
}

DeviceInfo describeDevice(const c10::Device& device)
{
    DeviceInfo info;
    info.device = device.str();
    info.cudaVersion = cudaRuntimeVersion();
    info.ncclVersion = ncclVersion();
    if (!device.is_cuda()) return info;
    info.gpuName = at::cuda::getDeviceProperties(device.index())->name;
    info.cudnnVersion = cudnnVersion();
    info.tf32 = at::globalContext().allowTF32CuBLAS();
    info.cudnnBenchmark = at::globalContext().benchmarkCuDNN();
    return info;
}

std::string whyNoBf16(const c10::Device& device)
{
    if (device.is_cpu()) return whyNoBf16OnCpu();
    const cudaDeviceProp* p = at::cuda::getDeviceProperties(device.index());
    if (p->major >= 8) return {};
    return std::string("bf16 needs a GPU of compute capability 8.0 or later (Ampere), and ") + p->name + " is " + std::to_string(p->major) +
        "." + std::to_string(p->minor) + "; use amp_mode fp16";
}

std::string whyNoFp16(const c10::Device& device) { return device.is_cpu() ? whyNoFp16OnCpu() : std::string(); }

double peakDeviceMemoryMiB(const c10::Device& device)
{
    if (!device.is_cuda()) return std::nan("");
    const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(device.index());
    return double(stats.allocated_bytes[0].peak) / (1024.0 * 1024.0);  // [0]: all pools together
}

std::string buildLibraries()
{
    std::string text = std::string("libtorch ") + TORCH_VERSION + ", CUDA " + std::to_string(CUDART_VERSION / 1000) + "." +
        std::to_string((CUDART_VERSION % 1000) / 10);
#ifdef SCALEDESK_HAVE_NCCL
    text += ", NCCL " + std::to_string(NCCL_MAJOR) + "." + std::to_string(NCCL_MINOR) + "." + std::to_string(NCCL_PATCH);
#else
    text += ", no NCCL";
#endif
    return text;
}

std::unique_ptr<StepClock> makeStepClock(const c10::Device& device)
{
    if (!device.is_cuda()) return makeHostClock();
    return std::make_unique<CudaClock>();
}

}  // namespace scaledesk::train
