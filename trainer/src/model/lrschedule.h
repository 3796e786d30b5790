#pragma once

#include <cstdint>
#include <string>

namespace scaledesk::train {

/// LR scaling rule against the base batch size (NERSC `lr_schedule.scaling`).
enum class LrScaling { None, Linear, Sqrt };

/// Parses "none", "linear" or "sqrt"; returns false for anything else.
bool parseLrScaling(const std::string& text, LrScaling& out);
const char* lrScalingName(LrScaling scaling);

/// The NERSC learning-rate schedule (utils.lr_schedule), evaluated before every step.
struct LrSchedule {
    LrScaling scaling = LrScaling::Sqrt;
    double startLr = 2.0e-4;
    double endLr = 0.0;
    int64_t warmupSteps = 128;  ///< 0: no warm-up
    int64_t totSteps = 0;       ///< num_epochs × ⌊Nsamples / global_batch_size⌋
    int64_t globalBatch = 64;
    int64_t baseBatch = 64;

    /// Learning rate after scaling by the global batch size, before warm-up and decay.
    double initLr() const;
    /// Learning rate for global step `iternum` (the first step is 1).
    double at(int64_t iternum) const;
};

}  // namespace scaledesk::train
