// The planner's points (planparts.h): each predicted point with its range, its efficiency bounds,
// time-to-target and what it would need that was never measured; the plan's warnings.
#include "analysis/planparts.h"

#include "analysis/axisticks.h"
#include "analysis/curvesteps.h"
#include "analysis/epochscsv.h"
#include "analysis/plangaps.h"

#include <QSet>

#include <algorithm>
#include <cmath>

namespace scaledesk::planparts {

namespace {
// The training time of a run's epochs up to the first whose validation loss is at or below
// `target`; NaN when none is.
double trainingTimeToTarget(const PlanRunInput& r, double target)
{
    double sum = 0;
    for (const EpochRow& e : r.epochs) {
        if (!std::isfinite(e.trainS)) return kNaN;
        sum += e.trainS;
        if (e.valLoss <= target) return sum;
    }
    return kNaN;
}

// Whole epochs until the one whose validation sees the target: ⌈epochs⌉, at least one; inf stays.
double wholeEpochs(double epochs) { return std::isfinite(epochs) ? std::max(1.0, std::ceil(epochs - 1e-9)) : epochs; }

// The base point's efficiency is 1 by definition (no range); elsewhere the range stops at 100 %
// unless a run measured superlinear scaling, and says so.
void boundEfficiency(PlanPoint& p, const Plan& plan, bool superlinear)
{
    p.base = p.ranks == plan.baseRanks && p.nodes == 1;
    if (p.base) {
        p.speedup = p.efficiency = p.efficiencyLow = p.efficiencyHigh = 1.0;
        return;
    }
    if (superlinear) return;
    if (!(p.efficiencyHigh <= 1.0)) {
        p.efficiencyHigh = 1.0;
        p.efficiencyClipped = true;
    }
    p.efficiency = std::min(p.efficiency, 1.0);
    p.efficiencyLow = std::min(p.efficiencyLow, 1.0);
}

// A point that rests on something never measured: no numbers, only what to measure.
void unmeasured(PlanPoint& p)
{
    for (double* v : {&p.stepS,
                      &p.computeS,
                      &p.exposedCommS,
                      &p.epochS,
                      &p.epochLowS,
                      &p.epochHighS,
                      &p.throughput,
                      &p.speedup,
                      &p.efficiency,
                      &p.efficiencyLow,
                      &p.efficiencyHigh,
                      &p.nodeHours,
                      &p.gpuHours,
                      &p.cost,
                      &p.epochsToTarget,
                      &p.epochsToTargetLow,
                      &p.epochsToTargetHigh,
                      &p.timeToTargetS,
                      &p.timeToTargetLowS,
                      &p.timeToTargetHighS,
                      &p.nodeHoursToTarget})
        *v = kNaN;
    p.efficiencyClipped = false;
}

// The allreduce's algorithm where the timings could not tell it apart (one rank count timed in the
// link class) and the point reads the α–β line: the range spans the epoch a ring and a tree fitted
// to the same timings give, and says so.
void spanAlgorithms(const PlanFit& f, const QString& s, const EpochPrediction& e, PlanPoint& p)
{
    const Plan& plan = f.plan;
    const AllreduceModel& comm = plan.model.comm;
    if (p.ranks <= 1 || comm.samples == 0 || comm.algorithmKnown(p.ranks, p.nodes)) return;
    QStringList each;
    double lo = e.epochS, hi = e.epochS;
    for (AllreduceAlgorithm a : {AllreduceAlgorithm::Ring, AllreduceAlgorithm::Tree}) {
        PerfModel other = plan.model;
        other.comm = comm.withAlgorithm(a, p.nodes);
        const double epoch =
            other.epoch(s, p.ranks, p.nodes, plan.weak, plan.baseRanks, plan.baseLocalBatch, plan.baseSamplesPerEpoch, f.options.epochs)
                .epochS;
        lo = std::min(lo, epoch);
        hi = std::max(hi, epoch);
        each << QStringLiteral("%1 %2").arg(algorithmName(a), formatDuration(epoch));
    }
    if (!(hi - lo > 1e-9 * e.epochS)) return;  // the measured curve, or both the same here
    p.epochLowS = std::min(p.epochLowS, p.epochLowS * lo / e.epochS);
    p.epochHighS = std::max(p.epochHighS, p.epochHighS * hi / e.epochS);
    p.algorithmSpanned = true;
    const QList<int>& timed = comm.timedRanks(p.ranks, p.nodes);
    p.rangeNotes << QStringLiteral("range spans the allreduce algorithms the timings cannot tell apart (timed at %1 rank(s) only%2): %3")
                        .arg(timed.isEmpty() ? QStringLiteral("–") : QString::number(timed.value(0)),
                             p.nodes > 1 && comm.acrossNodesMeasured() ? QStringLiteral(" across nodes") : QString(),
                             each.join(QStringLiteral(", ")));
}

}  // namespace

// Whether a run scaled better than linearly: its throughput per rank above the base run's.
bool measuredSuperlinear(const std::vector<PlanRunInput>& used, const PlanRunInput& base)
{
    const double baseX = base.samplesPerEpoch / base.epochS;
    for (const PlanRunInput& r : used)
        if (r.ranks > base.ranks && std::isfinite(r.epochS) && r.samplesPerEpoch / r.epochS > baseX * r.ranks / base.ranks) return true;
    return false;
}

// One predicted point: the model's epoch and step at it, its band, time-to-target, what the runs
// measured there, its efficiency bounds and what it would need that was never measured.
PlanPoint predictPoint(const PlanFit& f, const QString& s, int nodes, bool superlinear)
{
    const Plan& plan = f.plan;
    const std::vector<PlanRunInput>& used = f.used;
    const PlanOptions& options = f.options;
    const PlanRunInput* base = f.base;
    const int rpn = f.rpn, measuredMax = f.measuredMax;
    const double sigmaCompute = f.sigmaCompute, sigmaComm = f.sigmaComm, sigmaLoss = f.sigmaLoss, startupS = f.startupS;
    PlanPoint p;
    p.strategy = s;
    p.nodes = nodes;
    p.ranks = nodes * rpn;
    const EpochPrediction e =
        plan.model.epoch(s, p.ranks, nodes, plan.weak, plan.baseRanks, plan.baseLocalBatch, plan.baseSamplesPerEpoch, options.epochs);
    const StepPrediction st = plan.model.step(s, p.ranks, nodes, e.localBatch);
    p.localBatch = e.localBatch;
    p.stepS = st.stepS;
    p.computeS = st.computeS;
    p.exposedCommS = st.exposedS;
    p.epochS = e.epochS;
    // The range (planuncertainty.cpp): σ of ln(epoch) from the step's spread, the parameters' and,
    // where no run measured the point, the model's form weighted by how far beyond the runs it lies:
    // its variance grows with each doubling (σ_model·√w, independent errors adding up; docs/planner.md).
    // The α–β line's residual, how far the line misses the timings, is not the error of a point
    // whose messages all read their own timings (theirs is in the model-form term, measured by
    // leaving sizes out).
    const double commSigma = messagesReadAtTheirTimings(plan.model, s, p.ranks, nodes) ? 0.0 : sigmaComm;
    const double stepSigma = e.steps * std::hypot(sigmaCompute * (st.computeS + st.dataS), commSigma * st.exposedS);
    p.extrapolationWeight = extrapolationWeight(f, s, p.ranks, nodes, e.localBatch);
    const double parameters = f.sigmaParameters.value(qMakePair(s, nodes), 0.0), model = plan.modelSigma * std::sqrt(p.extrapolationWeight);
    p.rangeSigma = e.epochS > 0 ? std::sqrt(std::pow(stepSigma / e.epochS, 2) + parameters * parameters + model * model) : kNaN;
    p.epochLowS = e.epochS * std::exp(-rangeZ() * p.rangeSigma);
    p.epochHighS = e.epochS * std::exp(rangeZ() * p.rangeSigma);
    // A message read off the curve across a step in it: its time is anything between the two
    // sizes' (all of it counted as exposed: the range's far end).
    for (const CurveStep& c : curveStepsCrossed(plan.model, s, p.ranks, nodes)) {
        p.epochLowS = std::max(0.0, p.epochLowS - e.steps * c.downS);
        p.epochHighS += e.steps * c.upS;
        p.rangeNotes << QStringLiteral("range spans a step in the timings: ") + c.describe();
    }
    spanAlgorithms(f, s, e, p);
    p.throughput = e.throughput;
    p.speedup = e.speedup;
    p.efficiency = e.efficiency;
    p.efficiencyLow = e.efficiency * e.epochS / p.epochHighS;
    p.efficiencyHigh = p.epochLowS > 0 ? e.efficiency * e.epochS / p.epochLowS : kNaN;
    p.nodeHours = e.nodeHours;
    p.gpuHours = e.epochS * options.epochs * p.ranks / 3600.0;
    p.cost = p.gpuHours * options.gpuHourPrice;
    p.extrapolated = p.ranks > 8 * measuredMax;
    boundEfficiency(p, plan, superlinear);
    p.globalBatch = e.globalBatch;
    if (std::isfinite(options.targetLoss)) {
        const double target = options.targetLoss, perEpoch = plan.baseSamplesPerEpoch;
        p.epochsToTarget = plan.curve.samplesTo(target, e.globalBatch) / perEpoch;
        p.epochsToTargetLow = plan.curve.samplesTo(target / std::max(1e-9, 1 - rangeZ() * sigmaLoss), e.globalBatch) / perEpoch;
        p.epochsToTargetHigh = plan.curve.samplesTo(target / (1 + rangeZ() * sigmaLoss), e.globalBatch) / perEpoch;
        p.timeToTargetS = wholeEpochs(p.epochsToTarget) * e.epochS + startupS;
        p.timeToTargetLowS = wholeEpochs(p.epochsToTargetLow) * p.epochLowS + startupS;
        p.timeToTargetHighS = wholeEpochs(p.epochsToTargetHigh) * p.epochHighS + startupS;
        p.nodeHoursToTarget = p.timeToTargetS * nodes / 3600.0;
        p.targetBeyondCurve = p.epochsToTarget * perEpoch > plan.curve.maxSamples * (1 + 1e-9);
    }
    double sum = 0, throughput = 0, toTarget = 0;
    int n = 0, reached = 0;
    for (const PlanRunInput& r : used)
        if ((r.strategy == s || r.ranks == 1) && r.ranks == p.ranks && r.nodes == nodes && std::isfinite(r.epochS) &&
            std::abs(r.localBatch - e.localBatch) <= 1e-9 * e.localBatch) {
            sum += r.epochS;
            throughput += r.samplesPerEpoch / r.epochS;
            ++n;
            if (const double t = trainingTimeToTarget(r, options.targetLoss); std::isfinite(t)) {
                toTarget += t;
                ++reached;
            }
        }
    p.measuredEpochS = n > 0 ? sum / n : kNaN;
    p.measuredTimeToTargetS = reached > 0 ? toTarget / reached : kNaN;
    // X(n) / (X(n0) · n/n0), as the scaling report defines it, against the measured base.
    if (n > 0 && std::isfinite(base->epochS) && plan.baseLocalBatch == base->localBatch)
        p.measuredEfficiency = throughput / n / (base->samplesPerEpoch / base->epochS * p.ranks / base->ranks);
    for (const PlanGap& g : planGaps(plan.model, s, p.ranks, nodes, options.profile, calibrateConfigFlags(f.runs))) {
        p.notMeasured << g.what;
        p.measureWith << g.command;
    }
    if (!p.notMeasured.isEmpty())
        unmeasured(p);
    else
        p.outsideModel = outsideTheModel(f, p);
    return p;
}

// What the plan as a whole should warn about: the target never reached or beyond the curve, the
// batch's effect unmeasured, extrapolation.
void planWarnings(PlanFit& f)
{
    Plan& plan = f.plan;
    const PlanOptions& options = f.options;
    const int measuredMax = f.measuredMax;
    if (std::isfinite(options.targetLoss)) {
        bool never = false, beyond = false, otherBatch = false;
        for (const PlanPoint& p : plan.points) {
            never = never || std::isinf(p.epochsToTarget);
            beyond = beyond || p.targetBeyondCurve;
            otherBatch = otherBatch || std::abs(p.globalBatch - plan.baseLocalBatch * plan.baseRanks) > 1e-9 * p.globalBatch;
        }
        if (never)
            plan.warnings << QStringLiteral("the learning curve levels off at a validation loss of %1, above the target %2: never reached")
                                 .arg(formatNumber(plan.curve.lossFloor), formatNumber(options.targetLoss));
        else if (std::isinf(plan.points.isEmpty() ? 0.0 : plan.points.first().epochsToTargetHigh))
            plan.warnings << QStringLiteral("the target %1 lies within the curve's %2 of its floor (%3): the upper end of its range is "
                                            "never")
                                 .arg(formatNumber(options.targetLoss), planRangeName(), formatNumber(plan.curve.lossFloor));
        if (beyond)
            plan.warnings << QStringLiteral("time-to-target: reaching %1 takes more samples than any run saw (%2): the learning curve is "
                                            "extrapolated, its schedule (warm-up, decay) assumed to go on as it went")
                                 .arg(formatNumber(options.targetLoss), formatNumber(plan.curve.maxSamples));
        if (!plan.curve.batchMeasured() && otherBatch)
            plan.warnings << QStringLiteral("time-to-target: the effect of the global batch on the samples to the target was not "
                                            "measured (%1): taken as none, which is optimistic where the global batch grows (weak "
                                            "scaling); runs at two global batches measure it")
                                 .arg(plan.curve.batches.size() < 2 ? QStringLiteral("one global batch in the runs")
                                                                    : QStringLiteral("no difference between the runs' global batches"));
    }
    for (const PlanPoint& p : plan.points)
        if (p.extrapolated) {
            plan.warnings << QStringLiteral("points beyond %1 ranks (8× the largest measured, %2) are extrapolated: flagged in the tables")
                                 .arg(8 * measuredMax)
                                 .arg(measuredMax);
            break;
        }
}

}  // namespace scaledesk::planparts
