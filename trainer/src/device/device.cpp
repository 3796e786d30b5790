// The device rules that need no CUDA: the request, the rank's GPU, the reasons in one line.
#include "device/device.h"

#include "compat/torchcompat.h"

#include <fstream>

namespace scaledesk::train {

bool parseDeviceRequest(const std::string& text, DeviceRequest& out)
{
    if (text == "auto")
        out = DeviceRequest::Auto;
    else if (text == "cpu")
        out = DeviceRequest::Cpu;
    else if (text == "cuda")
        out = DeviceRequest::Cuda;
    else
        return false;
    return true;
}

std::string describeNoGpu(int cudaError, const std::string& cudaErrorText, bool driverLoadable, const char* cudaVisibleDevices)
{
    if (!driverLoadable) return "the NVIDIA driver is missing (libcuda.so.1 cannot be loaded)";
    const std::string visible = cudaVisibleDevices ? cudaVisibleDevices : "";
    if (cudaVisibleDevices && (visible.empty() || visible == "-1" || visible == "none" || visible == "NoDevFiles"))
        return "no GPU is visible: CUDA_VISIBLE_DEVICES='" + visible + "' hides them all";
    std::string why = "no GPU is visible to this process";
    if (cudaError != 0) why += " (CUDA error " + std::to_string(cudaError) + ": " + cudaErrorText + ")";
    return why;
}

int cudaIndexForRank(int localRank, int localSize, int visible, const std::string& node)
{
    if (visible < 1) throw DeviceError("no GPU is visible on " + node);
    if (visible == 1) {
        // One GPU per task bound by the launcher, or several ranks on one GPU: NCCL tells the
        // second case apart when the ranks meet (ranks that share a GPU are named then).
        return 0;
    }
    if (localSize > visible || localRank >= visible)
        throw DeviceError(std::to_string(std::max(localSize, localRank + 1)) + " ranks on node " + node + " but only " +
                          std::to_string(visible) + " GPUs visible: one GPU per rank; start at most " + std::to_string(visible) +
                          " ranks per node (srun --ntasks-per-node, mpirun --npernode) or train on the CPU (--device cpu)");
    return localRank;
}

c10::Device chooseDevice(DeviceRequest request, const CudaStatus& cuda, int localRank, int localSize, const std::string& node,
                         const std::string& gpuNeededBy)
{
    const std::string asker = request == DeviceRequest::Cuda ? "--device cuda" : gpuNeededBy;
    if (request == DeviceRequest::Cpu) {
        if (!gpuNeededBy.empty()) throw DeviceError(gpuNeededBy + " needs a GPU, and --device cpu was given");
        return c10::Device(c10::DeviceType::CPU);
    }
    if (asker.empty() && cuda.visible == 0) return c10::Device(c10::DeviceType::CPU);
    if (!cuda.built)
        throw DeviceError(asker +
                          " needs a GPU: this scaledesk-train was built against a CPU-only libtorch; build it against a "
                          "CUDA libtorch (docs/trainer.md, \"GPU builds\")");
    if (cuda.visible == 0) throw DeviceError(asker + " needs a GPU: " + cuda.unavailable);
    return c10::Device(c10::DeviceType::CUDA, c10::DeviceIndex(cudaIndexForRank(localRank, localSize, cuda.visible, node)));
}

namespace {

bool cpuHasBf16()
{
    std::ifstream cpuinfo("/proc/cpuinfo");
    std::string line;
    while (std::getline(cpuinfo, line)) {
        if (line.rfind("flags", 0) == 0)
            return line.find(" avx512_bf16") != std::string::npos || line.find(" amx_bf16") != std::string::npos ||
                line.find(" avx512bw") != std::string::npos;  // oneDNN emulates bf16 on AVX-512BW
    }
    return false;
}

}  // namespace

std::string whyNoBf16OnCpu()
{
    if (!compat::kCpuBf16ConvolutionGradientsCorrect)
        return "libtorch " + compat::torchVersion() +
            "'s oneDNN computes wrong bf16 Conv3d weight gradients on small volumes (NaN within a few steps; docs/trainer.md, "
            "\"Mixed precision\"): train in fp32 with this build, or build against libtorch 2.x (tests/gpu/build-cuda.sh)";
    if (!cpuHasBf16()) return "bf16 on the CPU needs AVX-512 or AMX, and this CPU has neither";
    return {};
}

std::string whyNoFp16OnCpu()
{
    if (!compat::kCpuFp16Autocast)
        return "fp16 on the CPU needs libtorch 2.4 or later (the CPU autocast of libtorch " + compat::torchVersion() +
            " has bf16 only), or a GPU";
    return {};
}

}  // namespace scaledesk::train
