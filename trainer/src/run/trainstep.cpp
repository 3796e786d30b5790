#include "run/trainstep.h"

#include "amp/autocast.h"

#include <torch/torch.h>

#include <algorithm>

namespace scaledesk::train {

StepOutcome TrainStep::run(const torch::Tensor& input, const torch::Tensor& target, double lr)
{
    m_clock.reset();
    const int begin = m_clock.mark();
    m_sync.zeroGrad();
    torch::Tensor loss;
    {
        AutocastGuard autocast(m_amp.mode(), m_amp.deviceType());
        loss = computeLoss(m_model->forward(input).to(torch::kFloat), target, m_lambdaRho);
    }
    const int forwardDone = m_clock.mark();
    m_amp.scaleLoss(loss).backward();
    const int backwardDone = m_clock.mark();
    if (m_afterBackward) m_afterBackward(m_model);
    m_sync.afterBackward();
    StepOutcome out;
    const double scale = m_amp.mode() == AmpMode::Fp16 ? m_amp.scaler().scale() : 1.0;  // before the update changes it
    out.applied = m_amp.unscaleAndUpdate(m_sync.gradients(), m_sync.shardedGradients() ? &m_comm : nullptr);
    m_sync.countNoiseStep(out.applied ? 1.0 / (scale * scale) : 0.0);
    if (out.applied) m_sync.step(lr);
    const int end = m_clock.mark();
    out.loss = loss.item<double>();
    m_clock.settle();
    out.forwardSeconds = m_clock.seconds(begin, forwardDone);
    out.backwardSeconds = m_clock.seconds(forwardDone, backwardDone);
    out.sync = m_sync.takeTimes();
    out.optimSeconds = std::max(0.0, m_clock.seconds(backwardDone, end) - out.sync.exposedSeconds);
    return out;
}

}  // namespace scaledesk::train
