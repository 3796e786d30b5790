#pragma once

#include <cstdint>

namespace scaledesk::train {

/// The gradient noise scale of McCandlish et al. 2018 ("An Empirical Model of Large-Batch
/// Training", appendix A.1), from the squared norms of the gradient of one batch at two sizes.
/// A batch gradient of B samples has E|G_B|² = |G|² + tr(Σ)/B (G the true gradient, Σ the
/// per-sample gradients' covariance), so two sizes B_small < B_big give the unbiased estimates
///     |G|²  ≈ (B_big·|G_big|² − B_small·|G_small|²) / (B_big − B_small)
///     tr(Σ) ≈ (|G_small|² − |G_big|²) / (1/B_small − 1/B_big)
/// and B_simple = tr(Σ) / |G|². Under data parallelism each rank's gradient before the average is
/// a batch of B_local, the average one of B_global = n·B_local: no extra pass. Each of the two
/// estimates is averaged over steps first (`smallSq`, `bigSq` are those means), then divided, as
/// the paper advises: the ratio of single-step estimates is biased and noisy.
struct GradientNoise {
    double gradSq = 0;      ///< |G|² estimate
    double traceSigma = 0;  ///< tr(Σ) estimate
    double bSimple = 0;     ///< tr(Σ)/|G|²; NaN where |G|² came out ≤ 0 (the noise hides the signal)
};
GradientNoise estimateGradientNoise(double smallSq, double bigSq, double bSmall, double bBig);

}  // namespace scaledesk::train
