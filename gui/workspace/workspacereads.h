#pragma once

#include "analysis/planner.h"
#include "analysis/scalingreport.h"
#include "core/progress.h"
#include "runs/importer.h"
#include "runs/mirrorreader.h"
#include "workspace/profileloops.h"

#include <QMap>

#include <optional>
#include <utility>

namespace scaledesk::gui {

/// The newest run launched from a config, and the config as that run resolved it (its run
/// folder's config.yaml): what the editor's "changes since" list compares with.
struct ConfigBaseline {
    QString runId;  ///< empty: no run was launched from this config yet
    QMap<QString, QString> values;
    QString error;  ///< the run's config.yaml could not be resolved
};

// The reads WorkspaceController runs on a pool thread, each opening a store of its own (pool.h).
// They change nothing the window holds; the controller takes their results on its thread.

struct IndexRead {
    QList<RunSummary> runs;
    QString error;
};
IndexRead readIndex(const Workspace& ws);

/// These runs' records and manifests as they are now (the ones that cannot be read are left out).
QList<RunSnapshot> readSnapshots(const Workspace& ws, const QStringList& runIds);

/// A run's first read: its mirror parsed (with `progress`, up to where `stop` says) and its record.
struct LoadedRun {
    MirrorReader* reader = nullptr;  ///< new; the taker owns it
    std::optional<RunSnapshot> snapshot;
};
LoadedRun readRun(const Workspace& ws, const QString& runId, const ProgressFn& progress, const std::function<bool()>& stop);

/// The sweep's scaling report; a workspace that cannot be opened gives a report with that warning.
ScalingReport readReport(const Workspace& ws, const QString& sweep, const ReportOptions& options);

/// scaledesk plan's prediction for a sweep at its own node counts, or (second) why there is none.
std::pair<Plan, QString> readPlan(const Workspace& ws, const QString& sweep);

/// The backend's importRuns, with what to tell the user.
struct ImportOutcome {
    bool ok = false;
    QString text;   ///< "Imported …" with the warnings, or why nothing was
    QString sweep;  ///< the first imported run's sweep, or empty
    QStringList ids;
};
ImportOutcome importInto(const Workspace& ws, const QStringList& paths, const ImportOptions& options, const ProgressFn& progress);

ConfigBaseline readLatestRun(const Workspace& ws, const QString& configFile, const QString& configName);

}  // namespace scaledesk::gui
