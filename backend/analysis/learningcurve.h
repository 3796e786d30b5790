#pragma once

#include "core/expected.h"

#include <QList>

namespace scaledesk {

/// One validation loss of a run: after `samples` training samples seen at global batch `batch`.
struct LossSample {
    double samples = 0;
    double batch = 0;
    double loss = 0;
};

/// Validation loss against samples seen, with the global batch as a factor:
///     L(s, B) = L∞ + a · (s / (1 + B/B_noise))^(−b)
/// A power law in the samples seen, where a larger global batch B needs (1 + B/B_noise) times the
/// samples to reach the same loss (McCandlish et al., "An Empirical Model of Large-Batch Training",
/// 2018: E = E_min·(1 + B/B_noise)); B_noise is the batch above which adding ranks (weak scaling)
/// stops cutting the steps to a loss. With one global batch measured, B_noise cannot be told from a
/// and is infinite: the samples to a loss do not depend on the batch (optimistic above that batch).
struct LearningCurve {
    double lossFloor, amplitude, exponent, noiseBatch;  ///< L∞, a, b, B_noise (inf: not measured)
    double relativeRms;                                 ///< the fit's root-mean-square relative residual
    int samples = 0;                                    ///< validation losses fitted
    QList<double> batches;                              ///< the distinct global batches among them, ascending
    double maxSamples;                                  ///< the most samples any of them had seen
    LearningCurve();
    bool batchMeasured() const;
    /// The loss after `samples` samples at global batch `batch`.
    double loss(double samples, double batch) const;
    /// The samples at global batch `batch` after which the curve is at `loss`; inf at or below L∞.
    double samplesTo(double loss, double batch) const;
};

/// Least squares of the curve on the losses, each weighted by 1/loss (relative residuals, so the
/// late, small losses count as much as the first epochs' large ones): L∞ and a linearly for each
/// b and B_noise, those two by a grid search refined around its best point. L∞ is kept ≥ 0.
/// An error when a loss, a sample count or a batch is not positive, or with fewer than 3 losses at
/// distinct sample counts (B_noise needs 2 global batches and 4 losses besides).
Expected<LearningCurve> fitLearningCurve(const QList<LossSample>& losses);

}  // namespace scaledesk
