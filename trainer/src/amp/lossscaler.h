#pragma once

#include <cstdint>

namespace scaledesk::train {

/// The loss scale of fp16 training, as torch.cuda.amp.GradScaler keeps it with its defaults (the
/// NERSC trainer's): the loss is multiplied by scale() before backward; after each step, update()
/// is told whether any gradient was inf or NaN. Such a step is skipped and the scale backs off
/// (×0.5); after `growthInterval` clean steps in a row it grows (×2). Host-side state only: the
/// caller finds the non-finite gradients (MixedPrecision).
class LossScaler {
public:
    struct Options {
        double initScale = 65536.0;  ///< 2^16
        double growthFactor = 2.0;
        double backoffFactor = 0.5;
        int64_t growthInterval = 2000;
    };

    LossScaler() : LossScaler(Options{}) {}
    explicit LossScaler(Options options);

    double scale() const { return m_scale; }
    /// Clean steps since the last growth or back-off (GradScaler's growth tracker).
    int64_t growthTracker() const { return m_tracker; }
    int64_t skippedSteps() const { return m_skipped; }

    /// After a step's gradients were checked. Returns whether the optimizer step is to be taken
    /// (false: a gradient was inf or NaN, the step is skipped).
    bool update(bool foundNonFinite);

    /// A resumed run continues with the scale it had.
    void restore(double scale, int64_t growthTracker);

private:
    Options m_options;
    double m_scale;
    int64_t m_tracker = 0;
    int64_t m_skipped = 0;
};

}  // namespace scaledesk::train
