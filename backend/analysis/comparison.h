#pragma once

#include "analysis/metrics.h"
#include "runs/runrecord.h"

#include <QMap>
#include <QStringList>

#include <vector>

namespace scaledesk {

/// A run as the comparison reads it (from the local mirror).
struct CompareRun {
    RunRecord record;
    RunMetrics metrics;
    QMap<QString, QString> config;  ///< resolved and flattened; empty if unknown
};

/// The final and the best (lowest finite) value of one tag.
struct TagSummary {
    double finalValue, finalStep, bestValue, bestStep;
    TagSummary();
};

/// The runs side by side: for each run and tag, final and best; and the config keys whose values
/// differ between the runs, with each run's value.
struct Comparison {
    QStringList tags;
    QList<QString> runIds;
    QList<QMap<QString, TagSummary>> summaries;  ///< per run, by tag
    QStringList differingKeys;
    QList<QMap<QString, QString>> configs;  ///< per run
    QStringList warnings;

    /// One row per run: run, strategy, world size, state, then final/best(step) per tag, then the
    /// differing config keys.
    QString csv() const;
};

Comparison compareRuns(const std::vector<CompareRun>& runs,
                       const QStringList& tags = {QStringLiteral("Loss/train"), QStringLiteral("Loss/valid")});

/// Legend labels for runs shown together: what tells them apart. Run ids split at '-' into the same
/// number of parts (a sweep's `<sweep>-<strategy>-<nodes>x<ranks>-r<k>`) keep only the parts that
/// differ ("ddp 1x1", "fused 1x2"); other ids lose the prefix and suffix they all share. One run, or
/// labels that would be empty or repeat, keep the ids.
QStringList distinguishingLabels(const QStringList& runIds);

/// x of a point on an axis: the step, seconds since the run's first record, or Unix time.
double xOf(XAxis axis, const Series& s, std::size_t i, double runStart);

/// A series as a chart shows it: on `axis`, raw or smoothed (TensorBoard weight; 0 = raw), only
/// the points with x0 ≤ x ≤ x1; as CSV rows "run,x,value" (NaN as empty, ±inf spelled out).
QString seriesCsv(const QList<const CompareRun*>& runs, const QString& tag, XAxis axis, double smoothing, double x0, double x1);

/// The rows of one series for seriesCsv (and a chart's CSV export): "name,x,value" for every point
/// with x0 ≤ x ≤ x1, every point of the data, not the decimated ones drawn, at full precision.
void appendSeriesCsvRows(QStringList& lines, const QString& name, const Series& s, XAxis axis, double runStart, double smoothing, double x0,
                         double x1);

}  // namespace scaledesk
