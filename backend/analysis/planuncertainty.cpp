// The plan's ranges from what was measured (planparts.h): the model's form from each size of the
// runs left out and predicted from the rest, the parameters' spread from a bootstrap over repeated
// measurements, and how far a point lies beyond what the runs measured.
#include "analysis/planparts.h"

#include "analysis/axisticks.h"

#include <QSet>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>

namespace scaledesk {

using planparts::kNaN;

QString planRangeName() { return QStringLiteral("%1 % range").arg(qRound(100 * kPlanRangeCoverage)); }

QString planRangeCoverageMeasured()
{
    return QStringLiteral("on the coverage benchmark they held 29 of 30 runs predicted without them (12 of 12 on one node, 17 of 18 "
                          "on a two-node sandbox; a 2-core VM, 2026-12-07, docs/planner.md)");
}

HeldOutPoint::HeldOutPoint() : predictedS(kNaN), lowS(kNaN), highS(kNaN), measuredS(kNaN) {}
bool HeldOutPoint::predicted() const { return std::isfinite(predictedS) && std::isfinite(measuredS); }
double HeldOutPoint::error() const { return predicted() ? predictedS / measuredS - 1 : kNaN; }
double HeldOutPoint::logError() const { return predictedS > 0 && measuredS > 0 ? std::log(predictedS / measuredS) : kNaN; }

HeldOutPoint predictHeldOut(const QString& sweep, const std::vector<PlanRunInput>& fitted, const std::vector<PlanRunInput>& runs,
                            const QString& s, int ranks, int nodes, const QList<CommSample>& timings, const QStringList& sources,
                            PlanOptions options)
{
    HeldOutPoint h;
    h.strategy = s;
    h.ranks = ranks;
    h.nodes = nodes;
    double sum = 0, localBatch = kNaN;
    int n = 0;
    for (const PlanRunInput& r : runs)
        if (r.strategy == s && r.ranks == ranks && r.nodes == nodes && std::isfinite(r.epochS)) {
            sum += r.epochS;
            localBatch = r.localBatch;
            ++n;
        }
    if (n == 0) return h;
    h.measuredS = sum / n;
    options.nodes = {nodes};
    options.ranksPerNode = ranks / nodes;
    options.strategies = {s};
    if (options.scaling == PlanOptions::Scaling::Strong)
        options.globalBatch = localBatch * ranks;
    else
        options.localBatch = localBatch;
    auto plan = makePlan(sweep, fitted, timings, sources, options);
    if (!plan) {
        h.why = plan.error().message;
    } else if (plan->points.isEmpty() || !plan->points.first().notMeasured.isEmpty()) {
        h.why = plan->points.isEmpty() ? QStringLiteral("no point") : plan->points.first().notMeasured.join(QStringLiteral("; "));
    } else {
        const PlanPoint& p = plan->points.first();
        h.predictedS = p.epochS;
        h.lowS = p.epochLowS;
        h.highS = p.epochHighS;
        h.outsideModel = p.outsideModel;
    }
    return h;
}

namespace planparts {

double rangeZ()
{
    // Φ(z) = (1 + coverage) / 2, by bisection on the normal tail ½·erfc(z/√2).
    const double tail = (1 - kPlanRangeCoverage) / 2;
    double lo = 0, hi = 10;
    for (int i = 0; i < 100; ++i) {
        const double mid = (lo + hi) / 2;
        (0.5 * std::erfc(mid / std::sqrt(2.0)) > tail ? lo : hi) = mid;
    }
    return (lo + hi) / 2;
}

namespace {
// A refit's options: weak or strong as the plan, its profile; nothing refitted in turn.
PlanOptions refitOptions(const PlanFit& f)
{
    PlanOptions o;
    o.scaling = f.plan.weak ? PlanOptions::Scaling::Weak : PlanOptions::Scaling::Strong;
    o.profile = f.options.profile;
    o.crossValidate = false;
    o.bootstrapReplicas = 0;
    return o;
}
}  // namespace

void crossValidate(PlanFit& f)
{
    Plan& plan = f.plan;
    if (f.options.crossValidate && f.options.heldOut) {
        plan.heldOut = *f.options.heldOut;
    } else if (f.options.crossValidate) {
        // The layouts the runs measured beyond the base's, each with its strategies.
        std::map<std::pair<int, int>, QStringList> sizes;
        for (const PlanRunInput& r : f.used)
            if (!(r.ranks == f.base->ranks && r.nodes == f.base->nodes) && r.nodes > 0 && r.ranks % r.nodes == 0 &&
                !sizes[{r.ranks, r.nodes}].contains(r.strategy))
                sizes[{r.ranks, r.nodes}] << r.strategy;
        for (const auto& [size, strategies] : sizes) {
            std::vector<PlanRunInput> rest;
            for (const PlanRunInput& r : f.runs)
                if (!(r.ranks == size.first && r.nodes == size.second)) rest.push_back(r);
            for (const QString& s : strategies) {
                const HeldOutPoint h =
                    predictHeldOut(f.sweep, rest, f.used, s, size.first, size.second, *f.timings, f.benchmarkSources, refitOptions(f));
                if (std::isfinite(h.measuredS)) plan.heldOut << h;
            }
        }
    }
    double squares = 0;
    int k = 0;
    QStringList errors;
    for (const HeldOutPoint& h : plan.heldOut)
        if (const double e = h.logError(); std::isfinite(e)) {
            squares += e * e;
            ++k;
            errors
                << QStringLiteral("%1 at %2 ranks on %3 node(s) %4").arg(h.strategy).arg(h.ranks).arg(h.nodes).arg(formatChange(h.error()));
        }
    plan.modelSigmaMeasured = k > 0;
    const double prior = kModelSigmaPriorWeight * kAssumedModelSigma * kAssumedModelSigma;
    plan.modelSigma = k > 0 ? std::sqrt((squares + prior) / (k + kModelSigmaPriorWeight)) : kAssumedModelSigma;
    if (!f.options.crossValidate) return;
    const int unpredictable = int(plan.heldOut.size()) - k;
    plan.inputs << (k > 0 ? QStringLiteral("model form: σ = %1 (log): the root mean square %2 of %3 held-out prediction(s), each size "
                                           "of the runs left out and predicted from the rest (%4%5), pooled with the assumed %6 "
                                           "counted as %7 prediction(s), σ² = (Σe² + %7·%6²) / (%3 + %7)")
                                .arg(formatNumber(plan.modelSigma, 3), formatNumber(std::sqrt(squares / k), 3))
                                .arg(k)
                                .arg(errors.join(QStringLiteral(", ")),
                                     unpredictable > 0 ? QStringLiteral("; %1 not predictable without it").arg(unpredictable) : QString(),
                                     formatNumber(kAssumedModelSigma))
                                .arg(kModelSigmaPriorWeight)
                          : QStringLiteral("model form: not measured (%1): σ = %2 assumed, the held-out checks' error in docs/planner.md; "
                                           "runs at a second size measure it")
                                .arg(plan.heldOut.isEmpty() ? QStringLiteral("the runs measured one size only")
                                                            : QStringLiteral("no held-out size could be predicted from the rest"))
                                .arg(formatNumber(kAssumedModelSigma)));
}

namespace {
// Groups of the same measurement repeated: the runs of a strategy at a layout; the timings of a
// collective (or kernel) at a size, layout and way of timing it. Indices into `runs` and `timings`.
using Groups = std::map<QString, std::vector<int>>;

Groups runGroups(const std::vector<PlanRunInput>& runs)
{
    Groups g;
    for (int i = 0; i < int(runs.size()); ++i)
        g[QStringLiteral("%1|%2|%3|%4").arg(runs[i].strategy).arg(runs[i].ranks).arg(runs[i].nodes).arg(runs[i].localBatch)].push_back(i);
    return g;
}

Groups timingGroups(const QList<CommSample>& timings)
{
    Groups g;
    for (int i = 0; i < timings.size(); ++i) {
        const CommSample& c = timings[i];
        g[QStringLiteral("%1|%2|%3|%4|%5|%6|%7|%8|%9")
              .arg(int(c.op))
              .arg(c.ranks)
              .arg(c.nodes)
              .arg(c.bytes, 0, 'g', 12)
              .arg(c.afterCompute)
              .arg(c.overlapped)
              .arg(c.kernel)
              .arg(c.kernels)
              .arg(c.computeS, 0, 'g', 6)]
            .push_back(i);
    }
    return g;
}

bool anyRepeated(const Groups& g)
{
    return std::any_of(g.begin(), g.end(), [](const auto& kv) { return kv.second.size() > 1; });
}

// Each group drawn again, as many as it has, with replacement.
template <typename Container>
Container resample(const Container& all, const Groups& groups, std::mt19937& rng)
{
    Container out;
    for (const auto& [key, members] : groups) {
        std::uniform_int_distribution<size_t> pick(0, members.size() - 1);
        for (size_t i = 0; i < members.size(); ++i) out.push_back(all[members[pick(rng)]]);
    }
    return out;
}
}  // namespace

void bootstrapParameters(PlanFit& f)
{
    Plan& plan = f.plan;
    if (f.options.bootstrapReplicas <= 0) return;
    const Groups runs = runGroups(f.runs), timings = timingGroups(*f.timings);
    if (!anyRepeated(runs) && !anyRepeated(timings)) {
        plan.inputs << QStringLiteral("parameters: each run and each timing was measured once, so nothing could be resampled; repetitions "
                                      "(a sweep's --repeat, calibrate again) measure the parameters' spread");
        return;
    }
    std::mt19937 rng(20261206);  // the same plan from the same inputs
    PlanOptions o = refitOptions(f);
    o.nodes = f.options.nodes;
    o.ranksPerNode = f.rpn;
    o.strategies = f.strategies;
    if (plan.weak)
        o.localBatch = plan.baseLocalBatch;
    else
        o.globalBatch = plan.baseLocalBatch * plan.baseRanks;
    std::map<QPair<QString, int>, std::vector<double>> logs;
    int failed = 0;
    for (int r = 0; r < f.options.bootstrapReplicas; ++r) {
        const auto replica = makePlan(f.sweep, resample(f.runs, runs, rng), resample(*f.timings, timings, rng), f.benchmarkSources, o);
        if (!replica) {
            ++failed;
            continue;
        }
        for (const PlanPoint& p : replica->points)
            if (p.epochS > 0) logs[{p.strategy, p.nodes}].push_back(std::log(p.epochS));
    }
    for (const auto& [key, values] : logs) {
        if (values.size() < 2) continue;
        double mean = 0, var = 0;
        for (double v : values) mean += v;
        mean /= double(values.size());
        for (double v : values) var += (v - mean) * (v - mean);
        f.sigmaParameters.insert(key, std::sqrt(var / double(values.size() - 1)));
    }
    plan.bootstrapReplicas = f.options.bootstrapReplicas - failed;
    plan.inputs << QStringLiteral("parameters: σ of each point's prediction over %1 bootstrap refit(s), the repeated runs of a strategy "
                                  "at a layout and the repeated timings of a size resampled%2")
                       .arg(plan.bootstrapReplicas)
                       .arg(failed > 0 ? QStringLiteral(" (%1 replica(s) could not be fitted)").arg(failed) : QString());
}

void describeRanges(PlanFit& f)
{
    f.plan.inputs
        << QStringLiteral(
               "ranges: %1 (nominal; %3): the "
               "prediction ×/÷ e^(%2·σ), σ² = the step's spread² (the allreduce fit's residual on communication only where a "
               "message is not read at its own timing) + the parameters'² + (model form)² × w, w = 0 "
               "where a run of the strategy measured the point (its layout and local batch), else the doublings of rank count beyond the "
               "largest run (at least 1), + 1 across nodes where no run was")
               .arg(planRangeName(), formatNumber(rangeZ(), 4), planRangeCoverageMeasured());
}

double extrapolationWeight(const PlanFit& f, const QString& s, int ranks, int nodes, double localBatch)
{
    int maxRanks = 1, maxNodes = 1;
    for (const PlanRunInput& r : f.used) {
        if (r.strategy == s && r.ranks == ranks && r.nodes == nodes && std::abs(r.localBatch - localBatch) <= 1e-9 * localBatch) return 0;
        maxRanks = std::max(maxRanks, r.ranks);
        maxNodes = std::max(maxNodes, r.nodes);
    }
    return std::max(1.0, std::log2(double(ranks) / maxRanks)) + (nodes > 1 && maxNodes == 1 ? 1.0 : 0.0);
}

}  // namespace planparts
}  // namespace scaledesk
