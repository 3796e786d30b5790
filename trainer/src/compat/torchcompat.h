// The libtorch API differences between the versions scaledesk-train builds against (Debian 12's 1.13,
// Debian 13's 2.6, the PyTorch wheels' 2.x), in one place: call sites use these and never test the
// version themselves.
#pragma once

#include <ATen/ATen.h>
#include <ATen/autocast_mode.h>
#include <c10/core/DeviceType.h>
#include <torch/optim/optimizer.h>
#include <torch/version.h>

#include <string>

#if TORCH_VERSION_MAJOR < 2
#include <c10/util/StringUtil.h>
#endif

namespace scaledesk::train::compat {

/// The key of a parameter in Optimizer::state(): 1.13 keys by the TensorImpl's address printed as
/// text, 2.x by the address itself.
#if TORCH_VERSION_MAJOR < 2
using OptimizerStateKey = std::string;
inline OptimizerStateKey optimizerStateKey(const at::Tensor& p) { return c10::guts::to_string(p.unsafeGetTensorImpl()); }
#else
using OptimizerStateKey = void*;
inline OptimizerStateKey optimizerStateKey(const at::Tensor& p) { return p.unsafeGetTensorImpl(); }
#endif

/// Autocast state of one device type (CPU or CUDA). 2.4 made these per-device calls; 1.13 to 2.3
/// have one pair of functions for each of the two.
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
inline bool autocastEnabled(c10::DeviceType d) { return at::autocast::is_autocast_enabled(d); }
inline void setAutocastEnabled(c10::DeviceType d, bool on) { at::autocast::set_autocast_enabled(d, on); }
inline at::ScalarType autocastDtype(c10::DeviceType d) { return at::autocast::get_autocast_dtype(d); }
inline void setAutocastDtype(c10::DeviceType d, at::ScalarType t) { at::autocast::set_autocast_dtype(d, t); }
#else
inline bool autocastEnabled(c10::DeviceType d)
{
    return d == c10::DeviceType::CUDA ? at::autocast::is_enabled() : at::autocast::is_cpu_enabled();
}
inline void setAutocastEnabled(c10::DeviceType d, bool on)
{
    if (d == c10::DeviceType::CUDA)
        at::autocast::set_enabled(on);
    else
        at::autocast::set_cpu_enabled(on);
}
inline at::ScalarType autocastDtype(c10::DeviceType d)
{
    return d == c10::DeviceType::CUDA ? at::autocast::get_autocast_gpu_dtype() : at::autocast::get_autocast_cpu_dtype();
}
inline void setAutocastDtype(c10::DeviceType d, at::ScalarType t)
{
    if (d == c10::DeviceType::CUDA)
        at::autocast::set_autocast_gpu_dtype(t);
    else
        at::autocast::set_autocast_cpu_dtype(t);
}
#endif

/// One Adam step over lists of CUDA float tensors in a single fused kernel (PyTorch's
/// Adam(fused=True)), where libtorch has it (2.0+): returns false when it does not, and the caller
/// takes the per-tensor path. `steps` holds each parameter's 1-based step count.
inline bool fusedCudaAdam(at::TensorList params, at::TensorList grads, at::TensorList expAvgs, at::TensorList expAvgSqs,
                          at::TensorList steps, double lr, double beta1, double beta2, double eps)
{
#if TORCH_VERSION_MAJOR >= 2
    at::_fused_adam_(params, grads, expAvgs, expAvgSqs, /*max_exp_avg_sqs=*/{}, steps, lr, beta1, beta2, /*weight_decay=*/0.0, eps,
                     /*amsgrad=*/false, /*maximize=*/false);
    return true;
#else
    (void)params, (void)grads, (void)expAvgs, (void)expAvgSqs, (void)steps, (void)lr, (void)beta1, (void)beta2, (void)eps;
    return false;
#endif
}

/// TCPStore's server loop: 2.4+ default to the libuv one, which libtorch builds without libuv
/// (Debian 13's) refuse with "use_libuv was requested but PyTorch was build without libuv support".
/// The plain socket loop is in every version and serves a job's ranks as well.
/// (Which versions have the switch is told by the options struct itself, not by a version number.)
namespace detail {
template <typename Options>
auto plainTcpStore(Options& options, int) -> decltype(options.useLibUV = false, void())
{
    options.useLibUV = false;
}
template <typename Options>
void plainTcpStore(Options&, long)
{}
}  // namespace detail
template <typename Options>
void usePlainTcpStore(Options& options)
{
    detail::plainTcpStore(options, 0);
}

/// CPU mixed precision that this libtorch computes correctly. 1.13's oneDNN bf16 Conv3d returns
/// weight gradients that differ from call to call and hold NaN for small volumes (a 4³ input of 16
/// to 128 channels, stride 2; tests/trainer/run/bf16conv_probe.py shows it; 2.6 computes them
/// exactly): a U-Net trained in bf16 with it diverges to NaN within steps.
constexpr bool kCpuBf16ConvolutionGradientsCorrect = TORCH_VERSION_MAJOR >= 2;
/// CPU autocast to float16: 1.13 refuses any CPU autocast dtype but bf16; 2.4+ accepts float16.
constexpr bool kCpuFp16Autocast = TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4);

/// "1.13.1", "2.6.0": the libtorch this binary was built against.
inline std::string torchVersion() { return TORCH_VERSION; }

}  // namespace scaledesk::train::compat
