#include "amp/mixedprecision.h"

#include "dist/comm.h"

#include <ATen/ATen.h>

namespace scaledesk::train {

MixedPrecision::MixedPrecision(AmpMode mode, c10::DeviceType device, LossScaler::Options scaler)
    : m_mode(mode), m_device(device), m_scaler(scaler)
{}

at::Tensor MixedPrecision::scaleLoss(const at::Tensor& loss) const { return m_mode == AmpMode::Fp16 ? loss * m_scaler.scale() : loss; }

at::Tensor unscaleAndFindNonFinite(const std::vector<at::Tensor>& tensors, double scale)
{
    at::NoGradGuard noGrad;
    const auto options = tensors.front().options().dtype(at::kFloat);
    at::Tensor found = at::zeros({1}, options);
    const bool cuda = tensors.front().is_cuda();
    if (cuda) {
        // GradScaler's own kernel: unscale and check every tensor in one pass.
        const at::Tensor invScale = at::full({1}, 1.0 / scale, options);
        at::_amp_foreach_non_finite_check_and_unscale_(tensors, found, invScale);
        return found;
    }
    for (const at::Tensor& t : tensors) {
        t.mul_(1.0 / scale);
        found.logical_or_(at::isfinite(t).logical_not().any());
    }
    return found;
}

bool MixedPrecision::unscaleAndUpdate(const std::vector<at::Tensor>& gradients, Communicator* shardedOver)
{
    if (m_mode != AmpMode::Fp16 || gradients.empty()) return true;
    at::Tensor found = unscaleAndFindNonFinite(gradients, m_scaler.scale());
    if (shardedOver && shardedOver->size() > 1) shardedOver->allreduce(found);  // any shard's inf skips every rank's step
    return m_scaler.update(found.item<float>() > 0);
}

}  // namespace scaledesk::train
