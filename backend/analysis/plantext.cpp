// A plan as text and files: plan.csv, plan.md, and writePlan() with the plots.
#include "analysis/planner.h"

#include "analysis/planparts.h"

#include "analysis/axisticks.h"
#include "analysis/epochscsv.h"

#include <QDir>
#include <QRegularExpression>
#include <QSaveFile>

#include <algorithm>
#include <cmath>
#include <limits>

namespace scaledesk {

namespace {
using planparts::kNaN;
using planparts::planError;
}  // namespace

QString Plan::csv() const
{
    QStringList lines{
        QStringLiteral("strategy,nodes,ranks,local_batch,step_s,compute_s,exposed_comm_s,epoch_s,epoch_low_s,epoch_high_s,"
                       "throughput_samples_s,speedup,efficiency,efficiency_low,efficiency_high,node_hours,gpu_hours,cost,"
                       "measured_epoch_s,measured_efficiency,extrapolated,global_batch,epochs_to_target,"
                       "epochs_to_target_low,epochs_to_target_high,time_to_target_s,time_to_target_low_s,"
                       "time_to_target_high_s,node_hours_to_target,measured_time_to_target_s,target_beyond_curve,efficiency_clipped,"
                       "not_measured,measure_with,range_notes,range_sigma,extrapolation_weight,outside_model")};
    for (const PlanPoint& p : points)
        lines << QStringList{csvField(p.strategy),
                             QString::number(p.nodes),
                             QString::number(p.ranks),
                             csvNumber(p.localBatch),
                             csvNumber(p.stepS),
                             csvNumber(p.computeS),
                             csvNumber(p.exposedCommS),
                             csvNumber(p.epochS),
                             csvNumber(p.epochLowS),
                             csvNumber(p.epochHighS),
                             csvNumber(p.throughput),
                             csvNumber(p.speedup),
                             csvNumber(p.efficiency),
                             csvNumber(p.efficiencyLow),
                             csvNumber(p.efficiencyHigh),
                             csvNumber(p.nodeHours),
                             csvNumber(p.gpuHours),
                             csvNumber(p.cost),
                             csvNumber(p.measuredEpochS),
                             csvNumber(p.measuredEfficiency),
                             p.extrapolated ? QStringLiteral("yes") : QStringLiteral("no"),
                             csvNumber(p.globalBatch),
                             csvNumber(p.epochsToTarget),
                             csvNumber(p.epochsToTargetLow),
                             csvNumber(p.epochsToTargetHigh),
                             csvNumber(p.timeToTargetS),
                             csvNumber(p.timeToTargetLowS),
                             csvNumber(p.timeToTargetHighS),
                             csvNumber(p.nodeHoursToTarget),
                             csvNumber(p.measuredTimeToTargetS),
                             std::isfinite(targetLoss) ? (p.targetBeyondCurve ? QStringLiteral("yes") : QStringLiteral("no")) : QString(),
                             p.efficiencyClipped ? QStringLiteral("yes") : QStringLiteral("no"),
                             csvField(p.notMeasured.join(QStringLiteral("; "))),
                             csvField(p.measureWith.join(QStringLiteral("; "))),
                             csvField(p.rangeNotes.join(QStringLiteral("; "))),
                             csvNumber(p.rangeSigma),
                             csvNumber(p.extrapolationWeight),
                             csvField(p.outsideModel.join(QStringLiteral("; ")))}
                     .join(QLatin1Char(','));
    return lines.join(QLatin1Char('\n')) + QLatin1Char('\n');
}

namespace {
// Each size of the runs left out and predicted from the rest: the model-form part of the ranges.
QStringList heldOutTable(const QList<HeldOutPoint>& heldOut)
{
    if (heldOut.isEmpty()) return {};
    QStringList md{QString(), QStringLiteral("## Held out: each size predicted without its runs"), QString(),
                   QStringLiteral("| strategy | nodes | ranks | predicted | measured | error |"),
                   QStringLiteral("|---|---|---|---|---|---|")};
    for (const HeldOutPoint& h : heldOut)
        md << QStringLiteral("| %1 | %2 | %3 | %4 | %5 | %6 |")
                  .arg(h.strategy)
                  .arg(h.nodes)
                  .arg(h.ranks)
                  .arg(std::isfinite(h.predictedS) ? formatDuration(h.predictedS) : QStringLiteral("not predictable: ") + h.why,
                       formatDuration(h.measuredS), formatChange(h.error()));
    return md;
}
}  // namespace

QString Plan::rangeSummary() const
{
    return QStringLiteral("Ranges: %1 (nominal), from the step's spread, the parameters' and, where no run measured the point, the "
                          "model's form: %2, widened with each doubling beyond the runs. Measured: %3.")
        .arg(planRangeName(),
             modelSigmaMeasured ? QStringLiteral("σ %1 from %2 held-out prediction(s) and the assumed %3")
                                      .arg(formatNumber(modelSigma, 2))
                                      .arg(std::count_if(heldOut.begin(), heldOut.end(),
                                                         [](const HeldOutPoint& h) { return std::isfinite(h.logError()); }))
                                      .arg(formatNumber(planparts::kAssumedModelSigma))
                                : QStringLiteral("σ %1 assumed (no size of the runs could be held out)").arg(formatNumber(modelSigma, 2)),
             planRangeCoverageMeasured());
}

QString Plan::markdown() const
{
    auto num = [](double v) { return std::isfinite(v) ? formatNumber(v) : QStringLiteral("–"); };
    QStringList md;
    md << QStringLiteral("# Scaling plan: %1").arg(sweep) << QString()
       << QStringLiteral("Predicted by the performance model (docs/planner.md) from what the sweep measured; ranges are %1s (nominal: "
                         "what they hold is under \"Where the numbers come from\").")
              .arg(planRangeName())
       << QString();
    const bool cost = !points.isEmpty() && std::isfinite(points.first().cost);
    md << QStringLiteral("| strategy | nodes | ranks | epoch | range | efficiency | speedup | node-hours%1 | measured | |")
              .arg(cost ? QStringLiteral(" | cost") : QString())
       << QStringLiteral("|---|---|---|---|---|---|---|---|%1---|---|").arg(cost ? QStringLiteral("---|") : QString());
    for (const PlanPoint& p : points) {
        if (!p.notMeasured.isEmpty()) {  // no number the model only guessed
            md << QStringLiteral("| %1 | %2 | %3 | not measured | | | | |%4 %5 | %6 |")
                      .arg(p.strategy)
                      .arg(p.nodes)
                      .arg(p.ranks)
                      .arg(cost ? QStringLiteral(" |") : QString(),
                           std::isfinite(p.measuredEpochS) ? formatDuration(p.measuredEpochS) : QStringLiteral("–"),
                           p.notMeasured.join(QStringLiteral("; ")));
            continue;
        }
        md << QStringLiteral("| %1 | %2 | %3 | %4 | %5–%6 | %7%8 | %9 | %10%11 | %12 | %13 |")
                  .arg(p.strategy)
                  .arg(p.nodes)
                  .arg(p.ranks)
                  .arg(formatDuration(p.epochS), formatDuration(p.epochLowS), formatDuration(p.epochHighS),
                       formatWithRange(100 * p.efficiency, 100 * p.efficiencyLow, 100 * p.efficiencyHigh, QStringLiteral(" %")),
                       p.efficiencyClipped ? QStringLiteral(", clipped at 100 %") : QString(), num(p.speedup), num(p.nodeHours))
                  .arg(cost ? QStringLiteral(" | ") + num(p.cost) : QString())
                  .arg(std::isfinite(p.measuredEpochS) ? formatDuration(p.measuredEpochS) : QStringLiteral("–"))
                  .arg(QStringList{p.extrapolated ? QStringLiteral("extrapolated") : QString(), p.rangeNotes.join(QStringLiteral("; ")),
                                   p.outsideModel.isEmpty()
                                       ? QString()
                                       : QStringLiteral("**outside the model**: ") + p.outsideModel.join(QStringLiteral("; "))}
                           .filter(QRegularExpression(QStringLiteral(".")))
                           .join(QStringLiteral("; ")));
    }
    if (std::isfinite(targetLoss)) {
        auto time = [](double v) { return std::isinf(v) ? QStringLiteral("never") : formatDuration(v); };
        md << QString() << QStringLiteral("## Time to a validation loss of %1").arg(formatNumber(targetLoss)) << QString()
           << QStringLiteral("| strategy | nodes | global batch | epochs | time | range | node-hours | measured | |")
           << QStringLiteral("|---|---|---|---|---|---|---|---|---|");
        for (const PlanPoint& p : points)
            md << QStringLiteral("| %1 | %2 | %3 | %4 (%5–%6) | %7 | %8–%9 | %10 | %11 | %12 |")
                      .arg(p.strategy)
                      .arg(p.nodes)
                      .arg(num(p.globalBatch), num(p.epochsToTarget), num(p.epochsToTargetLow), num(p.epochsToTargetHigh),
                           time(p.timeToTargetS), time(p.timeToTargetLowS), time(p.timeToTargetHighS), num(p.nodeHoursToTarget),
                           std::isfinite(p.measuredTimeToTargetS) ? formatDuration(p.measuredTimeToTargetS) : QStringLiteral("–"))
                      .arg(p.targetBeyondCurve ? QStringLiteral("beyond the measured curve") : QString());
    }
    QStringList commands;
    for (const PlanPoint& p : points)
        for (const QString& c : p.measureWith)
            if (!commands.contains(c)) commands << c;
    if (!commands.isEmpty()) {
        md << QString() << QStringLiteral("## What to measure") << QString()
           << QStringLiteral("The points marked \"not measured\" need timings the model does not have; these commands take them:")
           << QString();
        for (const QString& c : commands) md << QStringLiteral("- `%1`").arg(c);
    }
    if (std::any_of(points.begin(), points.end(), [](const PlanPoint& p) { return p.efficiencyClipped; }))
        md << QString()
           << QStringLiteral("An efficiency range marked \"clipped\" reached past 100 %: it is cut there, since no run of the sweep "
                             "scaled better than linearly.");
    md << heldOutTable(heldOut);
    md << QString() << QStringLiteral("## Where the numbers come from") << QString();
    for (const QString& i : inputs) md << QStringLiteral("- ") + i;
    if (!warnings.isEmpty()) {
        md << QString() << QStringLiteral("## Warnings") << QString();
        for (const QString& w : warnings) md << QStringLiteral("- ") + w;
    }
    return md.join(QLatin1Char('\n')) + QLatin1Char('\n');
}

Status writePlan(const Plan& plan, const QString& dir, const QStringList& formats, const PlanRenderer& render, QStringList* written)
{
    const auto imageFormats = exportImageFormats(formats, QStringLiteral("plan"), bool(render));
    if (!imageFormats) return imageFormats.error();
    const QStringList& images = *imageFormats;
    if (!QDir().mkpath(dir)) return planError(QStringLiteral("cannot create the folder"), dir);
    QList<std::pair<QString, QString>> texts;
    if (formats.contains(QStringLiteral("csv"))) texts << std::pair{QStringLiteral("plan.csv"), plan.csv()};
    if (formats.contains(QStringLiteral("md"))) texts << std::pair{QStringLiteral("plan.md"), plan.markdown()};
    for (const auto& [name, text] : texts) {
        QSaveFile f(dir + QLatin1Char('/') + name);
        if (!f.open(QIODevice::WriteOnly) || f.write(text.toUtf8()) < 0 || !f.commit())
            return planError(QStringLiteral("cannot write (%1)").arg(f.errorString()), f.fileName());
        if (written) *written << f.fileName();
    }
    if (!images.isEmpty()) return render(plan, dir, images, written);
    return Done{};
}

}  // namespace scaledesk
