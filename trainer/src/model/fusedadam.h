#pragma once

#include <torch/optim/adam.h>

namespace scaledesk::train {

/// One Adam step with the update of torch::optim::Adam (and of torch.optim.Adam: bias-corrected
/// moments, eps added to the corrected root), computed in a single pass instead of libtorch's seven
/// tensor ops and two temporaries: a parallel loop over each CPU parameter, or one fused kernel over
/// all CUDA parameters (libtorch 2.x's _fused_adam_, as Adam(fused=True)). It reads and updates the
/// optimizer's own AdamParamState, so checkpoints, `optimizer.save()` and a later plain `step()`
/// see the same state. Weight decay and AMSGrad are not used by the U-Net and are refused.
/// Results equal torch::optim::Adam up to float rounding order.
void fusedAdamStep(torch::optim::Adam& optimizer);

/// The same update on raw float arrays (one parallel pass), shared with ZeRO-1's shard step.
/// `step` is the 1-based step count of these moments.
void adamUpdate(float* param, const float* grad, float* expAvg, float* expAvgSq, int64_t n, int64_t step, double lr, double beta1,
                double beta2, double eps);

/// The same update on one flat tensor and its moments, wherever they live (ZeRO-1's shard): the
/// raw loop on the CPU, the fused kernel on a GPU, libtorch's op sequence otherwise.
void adamUpdate(const torch::Tensor& param, const torch::Tensor& grad, const torch::Tensor& expAvg, const torch::Tensor& expAvgSq,
                int64_t step, double lr, double beta1, double beta2, double eps);

}  // namespace scaledesk::train
