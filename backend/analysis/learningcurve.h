#pragma once

#include "core/expected.h"

#include <QList>
#include <QPair>

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
///
/// Where the trainer measured the gradient noise scale (B_simple per epoch, `gns_b_simple`), B_noise
/// is no constant: it grows as the loss falls (McCandlish et al.), and the curve is
///     L = L∞ + a · s_eff^(−b),  ds_eff = ds / (1 + B/B_noise(L))
/// with B_noise(L) read off the measured (loss, B_simple) points (noiseAt()).
struct LearningCurve {
    double lossFloor, amplitude, exponent, noiseBatch;  ///< L∞, a, b, B_noise (inf: not measured; unused with noiseByLoss)
    double relativeRms;                                 ///< the fit's root-mean-square relative residual
    int samples = 0;                                    ///< validation losses fitted
    QList<double> batches;                              ///< the distinct global batches among them, ascending
    double maxSamples;                                  ///< the most samples any of them had seen
    /// The measured gradient noise scale: (validation loss, B_simple), loss ascending; empty: none
    /// measured (B_noise is the constant `noiseBatch`).
    QList<QPair<double, double>> noiseByLoss;
    LearningCurve();
    bool batchMeasured() const;
    bool noiseMeasured() const { return !noiseByLoss.isEmpty(); }
    /// B_noise at a validation loss: `noiseBatch` without measured points; else linear in
    /// log(loss) and log(B) between the two points around it, the nearest point's value beyond them.
    double noiseAt(double loss) const;
    /// The loss after `samples` samples at global batch `batch`.
    double loss(double samples, double batch) const;
    /// The samples at global batch `batch` after which the curve is at `loss`; inf at or below L∞.
    double samplesTo(double loss, double batch) const;
};

/// One run's validation losses in epoch order: after `samples[i]` samples at global batch `batch`
/// the loss was `losses[i]`; `bSimple[i]` the gradient noise scale the trainer measured over that
/// epoch (NaN: not measured).
struct RunLosses {
    double batch = 0;
    QList<double> samples, losses, bSimple;
};

/// The measured gradient noise scale of the runs' epochs as (loss, B_simple), loss ascending: each
/// epoch's B_simple at the mean of the validation losses before and after it (its own for a first
/// epoch), the loss the gradients were measured along.
QList<QPair<double, double>> gradientNoiseByLoss(const QList<RunLosses>& runs);

/// The learning curve of the runs: with a measured gradient noise scale, each validation loss at
/// its effective samples (Σ over the epochs before it of samples / (1 + B/B_noise), B_noise the
/// epoch's own B_simple where measured, else noiseAt() of the pooled points) and L = L∞ + a·s_eff^−b
/// fitted; without, fitLearningCurve() of the losses as they are.
Expected<LearningCurve> fitLearningCurve(const QList<RunLosses>& runs);

/// Least squares of the curve on the losses, each weighted by 1/loss (relative residuals, so the
/// late, small losses count as much as the first epochs' large ones): L∞ and a linearly for each
/// b and B_noise, those two by a grid search refined around its best point. L∞ is kept ≥ 0.
/// An error when a loss, a sample count or a batch is not positive, or with fewer than 3 losses at
/// distinct sample counts (B_noise needs 2 global batches and 4 losses besides).
Expected<LearningCurve> fitLearningCurve(const QList<LossSample>& losses);

}  // namespace scaledesk
