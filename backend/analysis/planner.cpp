// makePlan() from its parts (planparts.h), and the plans the commands and the window ask for: of a
// sweep, and before a launch.
#include "analysis/planner.h"

#include "analysis/planparts.h"

#include "analysis/axisticks.h"
#include "analysis/epochscsv.h"
#include "analysis/metrics.h"
#include "analysis/plangaps.h"
#include "runs/runstore.h"
#include "runs/sweep.h"

#include <QDir>
#include <QJsonObject>
#include <QSet>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <tuple>

namespace scaledesk {

using namespace planparts;

namespace {
/// A plan that could not be made says why its runs were left out (what a run of the user's code
/// lacks, most of all).
Error withRunWarnings(Error e, const QStringList& warnings)
{
    if (!warnings.isEmpty()) e.message += QStringLiteral("; ") + warnings.join(QStringLiteral("; "));
    return e;
}

}  // namespace

PlanRunInput::PlanRunInput()
    : localBatch(kNaN), samplesPerEpoch(kNaN), computeS(kNaN), backwardS(kNaN), dataS(kNaN), commS(kNaN), exposedS(kNaN), optimizerS(kNaN),
      epochS(kNaN), epochCv(kNaN), gradientBytes(kNaN), bucketBytes(kNaN), globalBatch(kNaN)
{}

PlanOptions::PlanOptions() : gpuHourPrice(kNaN), targetLoss(kNaN), localBatch(kNaN), globalBatch(kNaN) {}

PlanPoint::PlanPoint()
    : localBatch(kNaN), stepS(kNaN), computeS(kNaN), exposedCommS(kNaN), epochS(kNaN), epochLowS(kNaN), epochHighS(kNaN), throughput(kNaN),
      speedup(kNaN), efficiency(kNaN), efficiencyLow(kNaN), efficiencyHigh(kNaN), nodeHours(kNaN), gpuHours(kNaN), cost(kNaN),
      measuredEpochS(kNaN), measuredEfficiency(kNaN), globalBatch(kNaN), epochsToTarget(kNaN), epochsToTargetLow(kNaN),
      epochsToTargetHigh(kNaN), timeToTargetS(kNaN), timeToTargetLowS(kNaN), timeToTargetHighS(kNaN), nodeHoursToTarget(kNaN),
      measuredTimeToTargetS(kNaN)
{}

Plan::Plan() : baseLocalBatch(kNaN), baseSamplesPerEpoch(kNaN), targetLoss(kNaN) {}

namespace {
// makePlan() at each ranks per node of `shapes` (→ its node counts), the points merged in one plan.
Expected<Plan> makePlans(const QString& sweep, const std::vector<PlanRunInput>& inputs, const QList<CommSample>& bench,
                         const QStringList& sources, PlanOptions options, const std::map<int, QSet<int>>& shapes)
{
    Expected<Plan> merged = planError(QStringLiteral("no points to predict"));
    for (const auto& [rpn, nodes] : shapes) {
        options.ranksPerNode = rpn;
        options.nodes = nodes.values();
        std::sort(options.nodes.begin(), options.nodes.end());
        auto plan = makePlan(sweep, inputs, bench, sources, options);
        if (!plan) return plan.error();
        if (!merged) {
            merged = *plan;
            options.heldOut = plan->heldOut;  // the same runs and timings: held out once, not per shape
            continue;
        }
        merged->points << plan->points;
        for (const QString& w : plan->warnings)
            if (!merged->warnings.contains(w)) merged->warnings << w;
    }
    if (merged && shapes.size() > 1)  // by strategy, then ranks
        std::stable_sort(merged->points.begin(), merged->points.end(), [](const PlanPoint& a, const PlanPoint& b) {
            return a.strategy != b.strategy ? a.strategy < b.strategy : a.ranks < b.ranks;
        });
    return merged;
}
}  // namespace

Expected<SweepPlanInputs> loadSweepPlanInputs(const RunStore& store, const QString& sweep, int warmupEpochs,
                                              const QStringList& benchmarkFiles)
{
    SweepPlanInputs in;
    auto inputs = loadPlanInputs(store, sweep, warmupEpochs, &in.warnings);
    if (!inputs) return inputs.error();
    in.runs = std::move(*inputs);
    // The strategies to predict: the trainer's, or any the sweep ran (a command sweep's variants).
    in.strategies = QStringList{QStringLiteral("ddp"), QStringLiteral("fused"), QStringLiteral("zero1")};
    for (const RunSummary& r : store.list(sweep)) {
        if (!r.profile.isEmpty()) in.profile = r.profile;
        if (!r.strategy.isEmpty() && !in.strategies.contains(r.strategy)) in.strategies << r.strategy;
    }
    if (benchmarkFiles.isEmpty() && !in.profile.isEmpty()) {
        auto calibration = loadCalibration(store, in.profile, &in.sources);
        if (!calibration) return calibration.error();
        in.timings = *calibration;
    }
    for (const QString& file : benchmarkFiles) {
        auto samples = loadCommSamples(file);
        if (!samples) return samples.error();
        in.timings << *samples;
        in.sources << file;
    }
    return in;
}

Expected<Plan> planForSweep(const RunStore& store, const QString& sweep, int warmupEpochs, const QStringList& benchmarkFiles,
                            PlanOptions options)
{
    auto loaded = loadSweepPlanInputs(store, sweep, warmupEpochs, benchmarkFiles);
    if (!loaded) return loaded.error();
    const QStringList& warnings = loaded->warnings;
    const std::vector<PlanRunInput>& inputs = loaded->runs;
    const QList<CommSample>& bench = loaded->timings;
    const QStringList& sources = loaded->sources;
    for (const QString& s : options.strategies)
        if (!loaded->strategies.contains(s))
            return planError(QStringLiteral("strategy '%1' is neither the trainer's nor one sweep '%2' ran; there are %3")
                                 .arg(s, sweep, loaded->strategies.join(QStringLiteral(", "))));
    if (options.profile.isEmpty()) options.profile = loaded->profile;
    // With no node counts asked for: every (nodes, ranks per node) the sweep's runs had.
    std::map<int, QSet<int>> shapes;  // ranks per node → node counts
    if (options.nodes.isEmpty())
        for (const PlanRunInput& r : inputs)
            shapes[options.ranksPerNode > 0 ? options.ranksPerNode : r.ranks / std::max(1, r.nodes)].insert(r.nodes);
    else
        shapes[options.ranksPerNode] = QSet<int>(options.nodes.begin(), options.nodes.end());
    auto plan = makePlans(sweep, inputs, bench, sources, options, shapes);
    if (!plan) return withRunWarnings(plan.error(), warnings);
    plan->warnings = warnings + plan->warnings;
    return plan;
}

Expected<Plan> makePlan(const QString& sweep, const std::vector<PlanRunInput>& runs, const QList<CommSample>& timings,
                        const QStringList& benchmarkSources, const PlanOptions& options)
{
    Plan plan;
    // The collectives as training meets them (after compute, no barrier) where they were so timed.
    // The allreduces timed behind compute are no timing of a collective: kept aside for ddp's overlap.
    int barrierLeftOut = 0;
    QList<CommSample> alone;
    for (const CommSample& c : timings)
        if (c.overlapped)
            plan.model.overlapSamples << c;
        else
            alone << c;
    const QList<CommSample> benchmark = preferAfterCompute(alone, &barrierLeftOut);
    plan.sweep = sweep;
    std::vector<PlanRunInput> used;
    for (const PlanRunInput& r : runs)
        if (r.steps > 0 && r.computeS > 0 && r.localBatch > 0 && r.samplesPerEpoch > 0) used.push_back(r);
    if (used.empty())
        return planError(
            QStringLiteral("no run of sweep '%1' has step records with a compute time, a local batch and samples per epoch to fit")
                .arg(sweep));
    if (options.nodes.isEmpty()) return planError(QStringLiteral("no node counts to predict (--nodes)"));

    PlanFit f(plan, sweep, runs, used, benchmark, benchmarkSources, options, barrierLeftOut);
    f.timings = &timings;
    if (auto ok = fitComputePart(f); !ok) return ok.error();
    describeArrivalWait(f);
    for (auto part : {layoutStrategies, fitCollectives})
        if (auto ok = part(f); !ok) return ok.error();
    checkSizesSent(f);
    chooseBase(f);
    bandWidths(f);
    if (auto ok = fitCurve(f); !ok) return ok.error();
    crossValidate(f);
    bootstrapParameters(f);
    describeRanges(f);
    const bool superlinear = measuredSuperlinear(used, *f.base);
    for (const QString& s : f.strategies)
        for (int nodes : options.nodes) plan.points << predictPoint(f, s, nodes, superlinear);
    planWarnings(f);
    return plan;
}

Expected<Plan> planForLaunch(const RunStore& store, const QString& profile, const QString& configName, const QList<RunPoint>& points,
                             const QString& task)
{
    // The finished training runs of this config on this profile, whatever sweep they were in.
    QList<RunSummary> rows;
    QStringList ids;
    for (const RunSummary& row : store.list()) {
        if (row.profile != profile || row.state != RunState::Completed || !row.origin.isEmpty()) continue;
        auto r = store.load(row.id);
        if (!r || r->task != task || r->configName != configName) continue;
        rows << row;
        ids << row.id;
    }
    if (rows.isEmpty())
        return planError(
            task == QLatin1String("command")
                ? QStringLiteral("no completed run of run definition '%1' on profile '%2' to fit the model to (a 1-rank run gives "
                                 "the compute: its step time)")
                      .arg(configName, profile)
                : QStringLiteral("no completed run of config '%1' on profile '%2' to fit the model to").arg(configName, profile));
    QStringList warnings;
    auto inputs = loadPlanInputsOf(store, rows, 1, &warnings);
    if (!inputs) return inputs.error();
    QStringList sources;
    auto calibration = loadCalibration(store, profile, &sources);
    if (!calibration) return calibration.error();
    // Each point's strategy at its nodes and ranks per node.
    std::map<int, QSet<int>> shapes;
    PlanOptions o;
    o.profile = profile;
    for (const RunPoint& p : points) {
        shapes[p.ranksPerNode].insert(p.nodes);
        if (!o.strategies.contains(p.strategy)) o.strategies << p.strategy;
    }
    o.scaling =
        !points.isEmpty() && points.first().scaling == QLatin1String("strong") ? PlanOptions::Scaling::Strong : PlanOptions::Scaling::Weak;
    // The points' batch: a weak sweep's local batch per rank, a strong one's global batch.
    if (!points.isEmpty() && points.first().localBatch > 0) {
        const RunPoint& p = points.first();
        if (o.scaling == PlanOptions::Scaling::Strong)
            o.globalBatch = double(p.localBatch) * p.worldSize();
        else
            o.localBatch = p.localBatch;
    }
    auto merged = makePlans(configName, *inputs, *calibration, sources, o, shapes);
    if (!merged) return withRunWarnings(merged.error(), warnings);
    merged->inputs.prepend(QStringLiteral("fitted to %1 completed run(s) of %2 on %3: %4")
                               .arg(ids.size())
                               .arg(configName, profile, ids.join(QStringLiteral(", "))));
    merged->warnings = warnings + merged->warnings;
    return merged;
}

}  // namespace scaledesk
