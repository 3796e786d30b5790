// The extrapolation protocol (plancheck.h): each size of a sweep predicted from its smaller runs.
#include "analysis/plancheck.h"

#include "analysis/axisticks.h"
#include "analysis/epochscsv.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

namespace scaledesk {

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double median(std::vector<double> v)
{
    if (v.empty()) return kNaN;
    std::sort(v.begin(), v.end());
    const size_t m = v.size() / 2;
    return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

QString percent(double v) { return std::isfinite(v) ? QStringLiteral("%1 %").arg(formatNumber(100 * v, 3)) : QStringLiteral("–"); }

// One strategy at one size, from the smaller runs on one node.
PlanCheckPoint checkOne(const QString& sweep, const std::vector<PlanRunInput>& runs, const QList<CommSample>& timings,
                        const QStringList& sources, const PlanRunInput& smallest, const QString& s, int ranks, int nodes)
{
    std::vector<PlanRunInput> fitted;
    QList<int> fittedRanks;
    double localBatch = kNaN;
    for (const PlanRunInput& r : runs) {
        if (r.ranks == ranks && r.nodes == nodes && r.strategy == s && std::isfinite(r.epochS)) localBatch = r.localBatch;
        if (2 * r.ranks <= ranks && r.nodes == 1) {
            fitted.push_back(r);
            if (!fittedRanks.contains(r.ranks)) fittedRanks << r.ranks;
        }
    }
    // Strong where this size kept the smallest run's global batch, else weak.
    const double global = localBatch * ranks, smallestGlobal = smallest.localBatch * smallest.ranks;
    PlanOptions o;
    o.scaling = ranks != smallest.ranks && std::abs(global - smallestGlobal) <= 0.01 * smallestGlobal ? PlanOptions::Scaling::Strong
                                                                                                      : PlanOptions::Scaling::Weak;
    PlanCheckPoint c;
    static_cast<HeldOutPoint&>(c) = predictHeldOut(sweep, fitted, runs, s, ranks, nodes, timings, sources, o);
    if (fitted.empty()) c.why = QStringLiteral("no run at %1 ranks or fewer on one node").arg(ranks / 2);
    std::sort(fittedRanks.begin(), fittedRanks.end());
    QStringList text;
    for (int n : fittedRanks) text << QString::number(n);
    c.fittedOn = text.join(QStringLiteral(", "));
    return c;
}
}  // namespace

bool PlanCheckPoint::covered() const { return predicted() && lowS <= measuredS && measuredS <= highS; }
double PlanCheckPoint::relativeHalfWidth() const { return predicted() ? (highS - lowS) / 2 / predictedS : kNaN; }
bool PlanCheckPoint::flagged() const { return predicted() && !outsideModel.isEmpty(); }
bool PlanCheckPoint::withinOrFlagged() const { return predicted() && (std::abs(error()) <= kPlanCheckTolerance || flagged()); }

int PlanCheck::predictedCount() const
{
    return int(std::count_if(points.begin(), points.end(), [](const auto& p) { return p.predicted(); }));
}
int PlanCheck::coveredCount() const
{
    return int(std::count_if(points.begin(), points.end(), [](const auto& p) { return p.covered(); }));
}
int PlanCheck::flaggedCount() const
{
    return int(std::count_if(points.begin(), points.end(), [](const auto& p) { return p.flagged(); }));
}
int PlanCheck::withinOrFlaggedCount() const
{
    return int(std::count_if(points.begin(), points.end(), [](const auto& p) { return p.withinOrFlagged(); }));
}
double PlanCheck::coverage() const { return predictedCount() > 0 ? double(coveredCount()) / predictedCount() : kNaN; }

double PlanCheck::medianHalfWidth() const
{
    std::vector<double> v;
    for (const PlanCheckPoint& p : points)
        if (p.predicted()) v.push_back(p.relativeHalfWidth());
    return median(v);
}

double PlanCheck::medianAbsoluteError() const
{
    std::vector<double> v;
    for (const PlanCheckPoint& p : points)
        if (p.predicted()) v.push_back(std::abs(p.error()));
    return median(v);
}

QString PlanCheck::markdown() const
{
    QStringList md{QStringLiteral("# Plan check: %1").arg(sweep),
                   QString(),
                   QStringLiteral("Each size of the sweep predicted from its runs at half the ranks or fewer on one node (and the "
                                  "profile's timings), with the plan's %1, beside what the size measured.")
                       .arg(planRangeName()),
                   QString(),
                   QStringLiteral("| strategy | nodes | ranks | fitted on ranks | predicted | range | measured | error | in range | "
                                  "outside the model |"),
                   QStringLiteral("|---|---|---|---|---|---|---|---|---|---|")};
    for (const PlanCheckPoint& p : points)
        md << (p.predicted() ? QStringLiteral("| %1 | %2 | %3 | %4 | %5 | %6–%7 | %8 | %9 | %10 | %11 |")
                                   .arg(p.strategy)
                                   .arg(p.nodes)
                                   .arg(p.ranks)
                                   .arg(p.fittedOn, formatDuration(p.predictedS), formatDuration(p.lowS), formatDuration(p.highS),
                                        formatDuration(p.measuredS), formatChange(p.error()),
                                        p.covered() ? QStringLiteral("yes") : QStringLiteral("no"),
                                        p.flagged() ? p.outsideModel.join(QStringLiteral("; ")) : QStringLiteral("–"))
                             : QStringLiteral("| %1 | %2 | %3 | %4 | not predicted: %5 | | %6 | | | |")
                                   .arg(p.strategy)
                                   .arg(p.nodes)
                                   .arg(p.ranks)
                                   .arg(p.fittedOn.isEmpty() ? QStringLiteral("–") : p.fittedOn, p.why, formatDuration(p.measuredS)));
    md << QString()
       << QStringLiteral("%1 of %2 predicted point(s) in their %3 (coverage %4); median relative half-width %5; median |error| %6; "
                         "%7 point(s) not predicted")
              .arg(coveredCount())
              .arg(predictedCount())
              .arg(planRangeName(), percent(coverage()), percent(medianHalfWidth()), percent(medianAbsoluteError()))
              .arg(points.size() - predictedCount())
       << QString()
       << QStringLiteral("%1 of %2 predicted point(s) within %3 of the measurement or flagged as outside the model beforehand (%4 "
                         "flagged)")
              .arg(withinOrFlaggedCount())
              .arg(predictedCount())
              .arg(percent(kPlanCheckTolerance))
              .arg(flaggedCount());
    return md.join(QLatin1Char('\n')) + QLatin1Char('\n');
}

QString PlanCheck::csv() const
{
    QStringList lines{QStringLiteral("sweep,strategy,nodes,ranks,fitted_on_ranks,predicted_epoch_s,epoch_low_s,epoch_high_s,"
                                     "measured_epoch_s,error,in_range,relative_half_width,not_predicted,outside_model")};
    for (const PlanCheckPoint& p : points)
        lines << QStringList{csvField(sweep),
                             csvField(p.strategy),
                             QString::number(p.nodes),
                             QString::number(p.ranks),
                             csvField(p.fittedOn),
                             csvNumber(p.predictedS),
                             csvNumber(p.lowS),
                             csvNumber(p.highS),
                             csvNumber(p.measuredS),
                             csvNumber(p.error()),
                             p.predicted() ? (p.covered() ? QStringLiteral("yes") : QStringLiteral("no")) : QString(),
                             csvNumber(p.relativeHalfWidth()),
                             csvField(p.why),
                             csvField(p.outsideModel.join(QStringLiteral("; ")))}
                     .join(QLatin1Char(','));
    return lines.join(QLatin1Char('\n')) + QLatin1Char('\n');
}

PlanCheck checkPlan(const QString& sweep, const std::vector<PlanRunInput>& runs, const QList<CommSample>& timings,
                    const QStringList& timingSources)
{
    PlanCheck check;
    check.sweep = sweep;
    std::vector<PlanRunInput> used;
    for (const PlanRunInput& r : runs)
        if (r.steps > 0 && r.computeS > 0 && r.localBatch > 0 && r.samplesPerEpoch > 0) used.push_back(r);
    if (used.empty()) return check;
    const PlanRunInput* smallest = &used.front();
    for (const PlanRunInput& r : used)
        if (r.ranks < smallest->ranks) smallest = &r;
    // Each size beyond the smallest rank count, by ranks then nodes, with its strategies.
    std::map<std::pair<int, int>, QStringList> sizes;
    for (const PlanRunInput& r : used)
        if (r.ranks > smallest->ranks && r.nodes > 0 && r.ranks % r.nodes == 0 && !sizes[{r.ranks, r.nodes}].contains(r.strategy))
            sizes[{r.ranks, r.nodes}] << r.strategy;
    for (auto& [size, strategies] : sizes) {
        strategies.sort();
        for (const QString& s : strategies)
            check.points << checkOne(sweep, used, timings, timingSources, *smallest, s, size.first, size.second);
    }
    return check;
}

Expected<PlanCheck> checkSweepPlan(const RunStore& store, const QString& sweep, int warmupEpochs, const QStringList& benchmarkFiles)
{
    auto loaded = loadSweepPlanInputs(store, sweep, warmupEpochs, benchmarkFiles);
    if (!loaded) return loaded.error();
    PlanCheck check = checkPlan(sweep, loaded->runs, loaded->timings, loaded->sources);
    if (check.points.isEmpty())
        return Error{ErrorCode::Usage,
                     QStringLiteral("sweep '%1' has no run with step records beyond its smallest rank count: nothing to predict from "
                                    "smaller runs%2")
                         .arg(sweep,
                              loaded->warnings.isEmpty()
                                  ? QString()
                                  : QStringLiteral(" (") + loaded->warnings.join(QStringLiteral("; ")) + QLatin1Char(')')),
                     QString()};
    return check;
}

}  // namespace scaledesk
