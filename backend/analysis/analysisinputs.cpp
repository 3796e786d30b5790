#include "analysis/analysisinputs.h"

#include "config/configresolve.h"

#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QRegularExpression>

namespace scaledesk {

QMap<QString, QString> nerscLogConfig(const QJsonObject& block)
{
    // Python's repr of a nested mapping: ordereddict([('scaling', 'sqrt'), ('start_lr', 0.0002)]) or {'a': 1}.
    static const QRegularExpression pair(QStringLiteral(R"(\(\s*'([^']+)'\s*,\s*([^()]*?)\s*\)|'([^']+)'\s*:\s*([^,{}]+))"));
    QMap<QString, QString> out;
    for (auto it = block.begin(); it != block.end(); ++it) {
        const QString value = it.value().toString();
        if (it.key().startsWith(QLatin1String("Configuration "))) continue;  // the log's file and name, not keys
        if (!value.startsWith(QLatin1String("ordereddict(")) && !value.startsWith(QLatin1Char('{'))) {
            out.insert(it.key(), value);
            continue;
        }
        for (auto m = pair.globalMatch(value); m.hasNext();) {
            const auto match = m.next();
            const bool tuple = !match.captured(1).isEmpty();
            QString v = (tuple ? match.captured(2) : match.captured(4)).trimmed();
            if (v.size() >= 2 && v.startsWith(QLatin1Char('\'')) && v.endsWith(QLatin1Char('\''))) v = v.mid(1, v.size() - 2);
            out.insert(it.key() + QLatin1Char('.') + (tuple ? match.captured(1) : match.captured(3)), v);
        }
    }
    return out;
}

QMap<QString, QString> loadRunConfig(const Workspace& ws, const RunRecord& r, QStringList* warnings)
{
    QString file = ws.runDir(r.id) + QStringLiteral("/config.yaml");
    if (!QFileInfo::exists(file) && r.imported()) {
        // A run imported without its YAML: the NERSC log's configuration block where there was one
        // (its values as the log printed them), else nothing to say.
        return nerscLogConfig(readRunManifest(ws.runDir(r.id)).value(QStringLiteral("nersc_config")).toObject());
    }
    // A run of the user's own code has no named config: its run definition (run.yaml) and manifest say what ran.
    if (r.task == QLatin1String("command")) return {};
    if (!QFileInfo::exists(file)) file = r.configFile;
    auto cfg = resolvedConfig(file, r.configName);
    if (!cfg) {
        warnings->append(QStringLiteral("%1: its config could not be read: %2").arg(r.id, cfg.error().text()));
        return {};
    }
    return *cfg;
}

ScalingReport loadSweepReport(const RunStore& store, const QString& sweep, const ReportOptions& options)
{
    const Workspace& ws = store.workspace();
    QList<ReportRun> inputs;
    QStringList extra;
    for (const auto& row : store.list(sweep)) {
        auto r = store.load(row.id);
        if (!r) {
            extra << r.error().text();
            continue;
        }
        ReportRun in;
        in.record = *r;
        in.epochs = loadEpochsCsv(ws.runDir(row.id) + QStringLiteral("/epochs.csv"));
        in.manifest = readRunManifest(ws.runDir(row.id));
        in.config = loadRunConfig(ws, *r, &extra);
        inputs << in;
    }
    ScalingReport rep = buildScalingReport(sweep, inputs, options);
    rep.warnings = extra + rep.warnings;
    return rep;
}

Expected<std::vector<CompareRun>> loadCompareRuns(const RunStore& store, const QStringList& runIds, QStringList* warnings)
{
    std::vector<CompareRun> runs;
    for (const QString& id : runIds) {
        auto r = store.load(id);
        if (!r) return r.error();
        CompareRun c;
        c.record = *r;
        c.metrics = loadRunMetrics(store.workspace().runDir(id) + QStringLiteral("/metrics.jsonl"));
        for (const auto& w : c.metrics.warnings)
            warnings->append(
                QStringLiteral("%1: metrics.jsonl:%2: %3 (%4)").arg(id).arg(w.line).arg(w.message, metricWarningKindName(w.kind)));
        c.config = loadRunConfig(store.workspace(), *r, warnings);
        runs.push_back(std::move(c));
    }
    return runs;
}

}  // namespace scaledesk
