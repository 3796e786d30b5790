#include "analysis/learningcurve.h"

#include <QSet>
#include <QString>

#include <algorithm>
#include <cmath>
#include <limits>

namespace scaledesk {

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

Error curveError(const QString& message) { return Error{ErrorCode::Usage, message, QString()}; }

struct Trial {
    double cost = kInf, lossFloor = kNaN, amplitude = kNaN;
};

// For one exponent b and noise batch B_noise (inf: none): L∞ and a by weighted linear least squares
// of L ≈ L∞ + a·x, x = (s / (1 + B/B_noise))^(−b), each row weighted by 1/L. Samples are scaled by
// `unit` (the largest count) so that x stays near 1; the caller scales a back.
Trial solve(const QList<LossSample>& losses, double unit, double b, double noiseBatch)
{
    double sw = 0, swx = 0, swxx = 0, swy = 0, swxy = 0;
    QList<double> xs;
    xs.reserve(losses.size());
    for (const LossSample& p : losses) {
        const double x = std::pow(p.samples / unit / (1.0 + p.batch / noiseBatch), -b);
        const double w = 1.0 / (p.loss * p.loss);
        xs << x;
        sw += w;
        swx += w * x;
        swxx += w * x * x;
        swy += w * p.loss;
        swxy += w * x * p.loss;
    }
    Trial t;
    const double det = sw * swxx - swx * swx;
    if (!(det > 1e-14 * sw * swxx)) return t;
    t.lossFloor = (swy * swxx - swx * swxy) / det;
    t.amplitude = (sw * swxy - swx * swy) / det;
    if (t.lossFloor < 0) {  // a floor below zero is no loss: through the origin instead
        t.lossFloor = 0;
        t.amplitude = swxy / swxx;
    }
    if (!(t.amplitude > 0) || !std::isfinite(t.amplitude)) return Trial{};
    double cost = 0;
    for (int i = 0; i < losses.size(); ++i) cost += std::pow((t.lossFloor + t.amplitude * xs[i] - losses[i].loss) / losses[i].loss, 2);
    t.cost = cost;
    return t;
}
}  // namespace

LearningCurve::LearningCurve() : lossFloor(kNaN), amplitude(kNaN), exponent(kNaN), noiseBatch(kInf), relativeRms(kNaN), maxSamples(kNaN) {}

bool LearningCurve::batchMeasured() const { return std::isfinite(noiseBatch) || !noiseByLoss.isEmpty(); }

double LearningCurve::loss(double samples, double batch) const
{
    if (noiseByLoss.isEmpty()) return lossFloor + amplitude * std::pow(samples / (1.0 + batch / noiseBatch), -exponent);
    // samplesTo() falls as the loss rises: bisection on log(L − L∞).
    double lo = std::log(amplitude) - 50, hi = std::log(amplitude) + 50;
    for (int i = 0; i < 200 && hi - lo > 1e-12; ++i) {
        const double mid = (lo + hi) / 2;
        (samplesTo(lossFloor + std::exp(mid), batch) > samples ? lo : hi) = mid;
    }
    return lossFloor + std::exp((lo + hi) / 2);
}

double LearningCurve::noiseAt(double loss) const
{
    if (noiseByLoss.isEmpty()) return noiseBatch;
    if (!(loss > noiseByLoss.first().first)) return noiseByLoss.first().second;
    if (!(loss < noiseByLoss.last().first)) return noiseByLoss.last().second;
    int i = 1;
    while (noiseByLoss[i].first < loss) ++i;
    const auto& [l0, b0] = noiseByLoss[i - 1];
    const auto& [l1, b1] = noiseByLoss[i];
    if (!(l1 > l0)) return b1;
    const double f = std::log(loss / l0) / std::log(l1 / l0);
    return std::exp(std::log(b0) + f * (std::log(b1) - std::log(b0)));
}

double LearningCurve::samplesTo(double target, double batch) const
{
    if (!(target > lossFloor)) return kInf;
    const double effective = std::pow((target - lossFloor) / amplitude, -1.0 / exponent);
    if (noiseByLoss.isEmpty()) return effective * (1.0 + batch / noiseBatch);
    // ∫ (1 + B/B_noise(L(s))) ds over the effective samples, on a log grid from 10⁻⁶ of them (the
    // stretch below it at its first point's rate).
    const auto rate = [&](double s) { return 1.0 + batch / noiseAt(lossFloor + amplitude * std::pow(s, -exponent)); };
    const int n = 512;
    const double from = effective * 1e-6;
    double sum = from * rate(from), prevS = from, prevR = rate(from);
    for (int i = 1; i <= n; ++i) {
        const double s = from * std::pow(1e6, double(i) / n), r = rate(s);
        sum += (s - prevS) * (r + prevR) / 2;
        prevS = s;
        prevR = r;
    }
    return sum;
}

namespace {
// The loss epoch i's gradients were measured along: the mean of the validation losses before and
// after it (a first epoch's own).
double lossDuring(const RunLosses& r, qsizetype i) { return ((i > 0 ? r.losses[i - 1] : r.losses[i]) + r.losses[i]) / 2; }
}  // namespace

QList<QPair<double, double>> gradientNoiseByLoss(const QList<RunLosses>& runs)
{
    QList<QPair<double, double>> points;
    for (const RunLosses& r : runs)
        for (qsizetype i = 0; i < r.losses.size() && i < r.bSimple.size(); ++i) {
            const double at = lossDuring(r, i);
            if (r.bSimple[i] > 0 && std::isfinite(r.bSimple[i]) && at > 0 && std::isfinite(at)) points << qMakePair(at, r.bSimple[i]);
        }
    std::sort(points.begin(), points.end());
    return points;
}

Expected<LearningCurve> fitLearningCurve(const QList<RunLosses>& runs)
{
    QList<LossSample> plain;
    for (const RunLosses& r : runs)
        for (qsizetype i = 0; i < r.losses.size() && i < r.samples.size(); ++i) plain << LossSample{r.samples[i], r.batch, r.losses[i]};
    QSet<double> counts;
    for (const LossSample& p : plain) counts.insert(p.samples);
    const QList<QPair<double, double>> noise = gradientNoiseByLoss(runs);
    // Too few sample counts is the plain fit's error: effective samples would differ by batch alone.
    if (noise.isEmpty() || counts.size() < 3) return fitLearningCurve(plain);
    LearningCurve pooled;
    pooled.noiseByLoss = noise;
    QList<LossSample> effective;
    for (const RunLosses& r : runs) {
        double s = 0, seen = 0;
        for (qsizetype i = 0; i < r.losses.size() && i < r.samples.size(); ++i) {
            const double measured = i < r.bSimple.size() ? r.bSimple[i] : kNaN;
            const double bNoise = measured > 0 && std::isfinite(measured) ? measured : pooled.noiseAt(lossDuring(r, i));
            s += (r.samples[i] - seen) / (1.0 + r.batch / bNoise);
            seen = r.samples[i];
            effective << LossSample{s, r.batch, r.losses[i]};
        }
    }
    // The batch is in the effective samples already: fitted as one batch (no B_noise of its own).
    QList<LossSample> oneBatch = effective;
    for (LossSample& p : oneBatch) p.batch = 1;
    auto curve = fitLearningCurve(oneBatch);
    if (!curve) return curve;
    curve->noiseBatch = kInf;
    curve->noiseByLoss = noise;
    QSet<double> batches;
    double most = 0;
    for (const LossSample& p : plain) {
        batches.insert(p.batch);
        most = std::max(most, p.samples);
    }
    curve->batches = batches.values();
    std::sort(curve->batches.begin(), curve->batches.end());
    curve->maxSamples = most;
    return curve;
}

Expected<LearningCurve> fitLearningCurve(const QList<LossSample>& losses)
{
    QSet<double> counts, batchSet;
    double unit = 0, minBatch = kInf, maxBatch = 0;
    for (const LossSample& p : losses) {
        if (!(p.samples > 0) || !(p.batch > 0) || !(p.loss > 0) || !std::isfinite(p.samples + p.batch + p.loss))
            return curveError(QStringLiteral("a validation loss needs positive samples seen, global batch and loss (got %1 samples, "
                                             "batch %2, loss %3)")
                                  .arg(p.samples)
                                  .arg(p.batch)
                                  .arg(p.loss));
        counts.insert(p.samples);
        batchSet.insert(p.batch);
        unit = std::max(unit, p.samples);
        minBatch = std::min(minBatch, p.batch);
        maxBatch = std::max(maxBatch, p.batch);
    }
    if (counts.size() < 3)
        return curveError(QStringLiteral("%1 validation loss(es) at %2 distinct sample count(s): a learning curve needs 3 or more")
                              .arg(losses.size())
                              .arg(counts.size()));
    const bool withBatch = batchSet.size() >= 2 && losses.size() >= 4;

    // The search is over p = ln b and q = ln B_noise; q's range reaches 1000× beyond the batches
    // measured, where (1 + B/B_noise) no longer tells batches apart.
    const double pLo = std::log(0.01), pHi = std::log(5.0);
    const double qLo = std::log(minBatch / 1000), qHi = std::log(maxBatch * 1000);
    auto costAt = [&](double p, double q, Trial* t) {
        *t = solve(losses, unit, std::exp(p), withBatch ? std::exp(q) : kInf);
        return t->cost;
    };
    double bestP = 0, bestQ = qHi, best = kInf;
    Trial trial;
    const int grid = 60;
    for (int i = 0; i <= grid; ++i)
        for (int j = 0; j <= (withBatch ? grid : 0); ++j) {
            const double p = pLo + (pHi - pLo) * i / grid, q = withBatch ? qLo + (qHi - qLo) * j / grid : qHi;
            if (const double c = costAt(p, q, &trial); c < best) {
                best = c;
                bestP = p;
                bestQ = q;
            }
        }
    if (!std::isfinite(best))
        return curveError(QStringLiteral("the validation losses fit no falling curve (they do not decrease with the samples seen)"));
    // Compass search around the grid's best point, halving the step where no neighbour is better.
    double hp = (pHi - pLo) / grid, hq = withBatch ? (qHi - qLo) / grid : 0;
    while (hp > 1e-9) {
        bool moved = false;
        for (int dp = -1; dp <= 1; ++dp)
            for (int dq = -1; dq <= 1; ++dq) {
                if ((dp == 0 && dq == 0) || (!withBatch && dq != 0)) continue;
                const double p = std::clamp(bestP + dp * hp, pLo, pHi), q = std::clamp(bestQ + dq * hq, qLo, qHi);
                if (const double c = costAt(p, q, &trial); c < best) {
                    best = c;
                    bestP = p;
                    bestQ = q;
                    moved = true;
                }
            }
        if (!moved) {
            hp /= 2;
            hq /= 2;
        }
    }
    costAt(bestP, bestQ, &trial);
    LearningCurve c;
    c.exponent = std::exp(bestP);
    // A noise batch at the top of the range (1000× the largest batch) makes no difference between
    // the batches measured: no batch effect measured.
    c.noiseBatch = withBatch && bestQ < qHi - 1e-6 ? std::exp(bestQ) : kInf;
    c.lossFloor = trial.lossFloor;
    c.amplitude = trial.amplitude * std::pow(unit, c.exponent);
    c.relativeRms = std::sqrt(best / losses.size());
    c.samples = int(losses.size());
    c.batches = batchSet.values();
    std::sort(c.batches.begin(), c.batches.end());
    c.maxSamples = unit;
    return c;
}

}  // namespace scaledesk
