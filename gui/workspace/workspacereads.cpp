#include "workspace/workspacereads.h"

#include "analysis/analysisinputs.h"
#include "config/configresolve.h"

#include <QObject>

namespace scaledesk::gui {

IndexRead readIndex(const Workspace& ws)
{
    IndexRead out;
    auto store = RunStore::open(ws);
    if (!store)
        out.error = store.error().text();
    else
        out.runs = (*store)->list();
    return out;
}

QList<RunSnapshot> readSnapshots(const Workspace& ws, const QStringList& runIds)
{
    QList<RunSnapshot> out;
    if (auto store = RunStore::open(ws))
        for (const QString& id : runIds)
            if (auto r = (*store)->load(id)) out << snapshotOf(ws, *r);
    return out;
}

LoadedRun readRun(const Workspace& ws, const QString& runId, const ProgressFn& progress, const std::function<bool()>& stop)
{
    LoadedRun out;
    out.reader = new MirrorReader(ws.runDir(runId));
    out.reader->read({}, progress, stop);
    if (auto store = RunStore::open(ws))
        if (auto r = (*store)->load(runId)) out.snapshot = snapshotOf(ws, *r);
    return out;
}

ScalingReport readReport(const Workspace& ws, const QString& sweep, const ReportOptions& options)
{
    auto store = RunStore::open(ws);
    if (!store) {
        ScalingReport failed;
        failed.warnings << store.error().text();
        return failed;
    }
    return loadSweepReport(**store, sweep, options);
}

std::pair<Plan, QString> readPlan(const Workspace& ws, const QString& sweep)
{
    auto store = RunStore::open(ws);
    if (!store) return {Plan(), store.error().text()};
    auto plan = planForSweep(**store, sweep, 1, {}, PlanOptions());
    if (!plan) return {Plan(), plan.error().text()};
    return {*plan, QString()};
}

ImportOutcome importInto(const Workspace& ws, const QStringList& paths, const ImportOptions& options, const ProgressFn& progress)
{
    ImportOutcome o;
    auto store = RunStore::open(ws);
    if (!store) {
        o.text = store.error().text();
        return o;
    }
    auto imported = importRuns(**store, paths, options, progress);
    if (!imported) {
        o.text = imported.error().text();
        return o;
    }
    o.ok = true;
    QStringList lines, warnings;
    for (const ImportedRun& r : *imported) {
        o.ids << r.id;
        if (o.sweep.isEmpty()) o.sweep = r.sweep;
        lines << QStringLiteral("%1 (%2)").arg(r.id, r.kind);
        for (const QString& w : r.warnings) warnings << r.id + QStringLiteral(": ") + w;
    }
    o.text = QObject::tr("Imported %1").arg(lines.join(QStringLiteral(", ")));
    if (!warnings.isEmpty())
        o.text += QObject::tr(" (%n warning(s): %1)", nullptr, int(warnings.size())).arg(warnings.join(QStringLiteral("; ")));
    return o;
}

ConfigBaseline readLatestRun(const Workspace& ws, const QString& configFile, const QString& configName)
{
    ConfigBaseline b;
    auto store = RunStore::open(ws);
    if (store) b.runId = (*store)->latestRunOf(configFile, configName);
    if (b.runId.isEmpty()) return b;
    auto values = resolvedConfig(ws.runDir(b.runId) + QStringLiteral("/config.yaml"), configName);
    if (values)
        b.values = *values;
    else
        b.error = values.error().text();
    return b;
}

}  // namespace scaledesk::gui
