#pragma once

#include "analysis/comparison.h"
#include "analysis/scalingreport.h"
#include "runs/runstore.h"

#include <QJsonObject>

#include <vector>

namespace scaledesk {

/// The scaling report of a sweep from the workspace's mirrors (no network): each run's record,
/// epochs.csv, manifest.json and resolved config. Problems reading a run become report warnings.
ScalingReport loadSweepReport(const RunStore& store, const QString& sweep, const ReportOptions& options = {});

/// Runs for a comparison, from the mirrors: record, parsed metrics (their warnings added to
/// `warnings` with the run, file and line) and resolved config.
Expected<std::vector<CompareRun>> loadCompareRuns(const RunStore& store, const QStringList& runIds, QStringList* warnings);

/// The run's config, resolved: the copy in its mirror, else the file it was launched from.
QMap<QString, QString> loadRunConfig(const Workspace& ws, const RunRecord& r, QStringList* warnings);

/// The configuration block of a NERSC out.log (the manifest's `nersc_config`) as config keys: a
/// nested mapping as Python printed it (`ordereddict([('start_lr', 0.0002), …])`) becomes dotted
/// keys (`lr_schedule.start_lr`) as a resolved YAML config has them; the log's "Configuration
/// file/name" lines are not keys and are left out.
QMap<QString, QString> nerscLogConfig(const QJsonObject& block);

}  // namespace scaledesk
