#pragma once

#include "amp/mixedprecision.h"
#include "device/stepclock.h"
#include "dist/gradsync.h"
#include "model/unet.h"

#include <functional>

namespace scaledesk::train {

/// What one training step did, timed as the device ran it (StepClock).
struct StepOutcome {
    double loss = 0.0;    ///< this rank's loss (before the loss scale)
    bool applied = true;  ///< false: fp16 found an inf or NaN gradient and skipped the update
    double forwardSeconds = 0.0, backwardSeconds = 0.0, optimSeconds = 0.0;
    SyncTimes sync;  ///< the collectives' time, and the part the training stream waited for
};

/// One step of the NERSC loop on a batch already on the device: zero the gradients, forward and
/// loss under autocast, (scaled) backward, the strategy's synchronisation, the fp16 check, the
/// Adam update. The loss is read once at the end: the step's only host synchronisation.
class TrainStep {
public:
    TrainStep(UNet& model, GradientSync& sync, MixedPrecision& amp, Communicator& comm, StepClock& clock, double lambdaRho)
        : m_model(model), m_sync(sync), m_amp(amp), m_comm(comm), m_clock(clock), m_lambdaRho(lambdaRho)
    {}

    StepOutcome run(const torch::Tensor& input, const torch::Tensor& target, double lr);

    /// Test-only fault injection (docs/trainer.md): called after backward, before the
    /// synchronisation, with the model whose gradients it may change.
    void setAfterBackward(std::function<void(UNet&)> hook) { m_afterBackward = std::move(hook); }

private:
    UNet& m_model;
    GradientSync& m_sync;
    MixedPrecision& m_amp;
    Communicator& m_comm;
    StepClock& m_clock;
    double m_lambdaRho;
    std::function<void(UNet&)> m_afterBackward;
};

}  // namespace scaledesk::train
