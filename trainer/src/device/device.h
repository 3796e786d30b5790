#pragma once

#include <c10/core/Device.h>

#include <stdexcept>
#include <string>

namespace scaledesk::train {

/// A device that cannot be used as asked: one line saying why (no CUDA in this build, no GPU
/// visible, no driver, more ranks than GPUs on a node).
class DeviceError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// --device: auto (a GPU when this process sees one and the build has CUDA), cpu or cuda.
enum class DeviceRequest { Auto, Cpu, Cuda };
bool parseDeviceRequest(const std::string& text, DeviceRequest& out);

/// What CUDA this build and this process have.
struct CudaStatus {
    bool built = false;       ///< libtorch was built with CUDA
    int visible = 0;          ///< GPUs this process sees
    std::string unavailable;  ///< when visible is 0: why, in one clause
};

/// Asks the CUDA runtime (CUDA builds) or says the build has none.
CudaStatus probeCuda();

/// Why a CUDA build sees no GPU, from the runtime's answer to cudaGetDeviceCount: the driver is
/// missing (libcuda.so.1 not loadable), CUDA_VISIBLE_DEVICES hides every GPU, or none is installed.
std::string describeNoGpu(int cudaError, const std::string& cudaErrorText, bool driverLoadable, const char* cudaVisibleDevices);

/// The GPU of a rank: with one GPU visible, that one (the launcher bound a GPU to each task, as
/// srun --gpus-per-task does); otherwise the rank's own among the node's, by local rank. More
/// ranks on a node than GPUs is an error naming both counts and the node.
int cudaIndexForRank(int localRank, int localSize, int visible, const std::string& node);

/// The device a rank trains on, or DeviceError naming the reason. `gpuNeededBy` names what needs a
/// GPU whatever the request ("--backend nccl"); empty when nothing does.
c10::Device chooseDevice(DeviceRequest request, const CudaStatus& cuda, int localRank, int localSize, const std::string& node,
                         const std::string& gpuNeededBy = {});

/// Makes `device` the current one and sets what the NERSC trainer set on it: cuDNN benchmark mode
/// and TF32 for convolutions and matrix products (fp32 runs on GPUs that have it). CPU: nothing.
void configureDevice(const c10::Device& device, bool cudnnBenchmark, bool tf32);

/// Why `device` cannot train in bf16, or empty when it can: a CPU without AVX-512 or AMX (oneDNN's
/// bf16 kernels) or with a libtorch whose bf16 convolutions are wrong (1.13), a GPU older than
/// compute capability 8.0.
std::string whyNoBf16(const c10::Device& device);
/// Why `device` cannot train in fp16 with a loss scaler, or empty when it can: a CPU with a
/// libtorch whose CPU autocast has no float16 (before 2.4). GPUs all can.
std::string whyNoFp16(const c10::Device& device);

/// The CPU halves of the two (device.cpp): the reason, or empty.
std::string whyNoBf16OnCpu();
std::string whyNoFp16OnCpu();

/// What a run records about its device (manifest.json, metadata): empty where it does not apply.
struct DeviceInfo {
    std::string device;  ///< cpu, cuda:0
    std::string gpuName;
    std::string cudaVersion;   ///< the CUDA runtime libtorch was built with
    std::string cudnnVersion;  ///< the cuDNN loaded
    std::string ncclVersion;   ///< the NCCL linked (CUDA builds with NCCL)
    bool tf32 = false;
    bool cudnnBenchmark = false;
};
DeviceInfo describeDevice(const c10::Device& device);

/// The most memory the caching allocator has held on a GPU since the start, in MiB (NaN on the CPU).
double peakDeviceMemoryMiB(const c10::Device& device);

/// The libraries of this build, for --version: "libtorch 2.6.0, CUDA 12.4, cuDNN 9.1.0, NCCL 2.22.3"
/// or "libtorch 1.13.1, CPU only".
std::string buildLibraries();

}  // namespace scaledesk::train
