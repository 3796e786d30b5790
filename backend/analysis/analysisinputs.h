#pragma once

#include "analysis/comparison.h"
#include "analysis/scalingreport.h"
#include "runs/runstore.h"

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

}  // namespace scaledesk
