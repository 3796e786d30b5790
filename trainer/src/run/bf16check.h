#pragma once

#include "run/config.h"

#include <string>

namespace scaledesk::train {

/// Whether bf16 on this CPU computes the config's model correctly: one forward and backward of the
/// config's U-Net on a random crop of its size (batch 1), in fp32 and under bf16 autocast, compared
/// parameter by parameter (relative L2 norm of the difference). bf16 rounding alone moves the
/// gradients of a freshly initialised model by 0.5 % (the outer layers) to about 20 % (the deep
/// layers, whose gradients are tiny then: cpu-tiny, libtorch 2.6, AVX512-BF16); a kernel that computes
/// them wrong (1.13's oneDNN Conv3d weight gradients: NaN; a sign or scale error) moves them by more. Returns what it found. Costs about two training steps of one sample, once, before training starts.
struct Bf16Check {
    double worst = 0.0;          ///< the largest relative difference of a parameter's gradient (inf: NaN or inf)
    std::string worstParameter;  ///< whose gradient that was
    std::string refusal;         ///< empty: bf16 is computed correctly here; else why it must be refused
};
Bf16Check bf16GradientCheck(const TrainConfig& config);

/// The largest relative difference bf16 may make to a gradient before it counts as computed wrong.
inline constexpr double kBf16GradientTolerance = 0.5;

}  // namespace scaledesk::train
