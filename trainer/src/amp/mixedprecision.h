#pragma once

#include "amp/ampmode.h"
#include "amp/lossscaler.h"

#include <ATen/Tensor.h>
#include <c10/core/DeviceType.h>

#include <vector>

namespace scaledesk::train {

class Communicator;

/// A run's mixed precision, as the NERSC trainer's `autocast` + `GradScaler`: the autocast region
/// of the forward pass, and for fp16 the loss scale. After the gradients are synchronised, fp16
/// unscales them and decides whether the step is taken (none of them inf or NaN); bf16 and none
/// always step.
class MixedPrecision {
public:
    MixedPrecision(AmpMode mode, c10::DeviceType device, LossScaler::Options scaler = {});

    AmpMode mode() const { return m_mode; }
    const LossScaler& scaler() const { return m_scaler; }
    LossScaler& scaler() { return m_scaler; }
    /// The autocast region of this run (a no-op for none).
    c10::DeviceType deviceType() const { return m_device; }

    /// What backward starts from: the loss times the scale (fp16), else the loss.
    at::Tensor scaleLoss(const at::Tensor& loss) const;

    /// fp16: divides `gradients` by the scale in place, and returns whether the optimizer step is
    /// to be taken, updating the scale (GradScaler.unscale_ + step + update). `shardedOver`: the
    /// gradients are this rank's shard (zero1), so the ranks agree on the check through it. Other
    /// modes: true, nothing touched.
    bool unscaleAndUpdate(const std::vector<at::Tensor>& gradients, Communicator* shardedOver);

private:
    AmpMode m_mode;
    c10::DeviceType m_device;
    LossScaler m_scaler;
};

/// Whether any of `tensors` holds an inf or NaN, after dividing all of them by `scale` in place:
/// one fused kernel on a GPU, tensor ops elsewhere. The flag stays on the tensors' device.
at::Tensor unscaleAndFindNonFinite(const std::vector<at::Tensor>& tensors, double scale);

}  // namespace scaledesk::train
