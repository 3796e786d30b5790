#include "runs/sweep.h"

#include "config/configresolve.h"
#include "runs/runstore.h"

#include <QRegularExpression>

#include <algorithm>

namespace scaledesk {

namespace {
Error invalid(const QString& field, const QString& what)
{
    return Error{ErrorCode::SweepInvalid, QStringLiteral("%1: %2").arg(field, what), QString()};
}
}  // namespace

Status checkSweepCounts(const SweepSpec& spec)
{
    if (spec.nodes.isEmpty()) return invalid(QStringLiteral("nodes"), QStringLiteral("give at least one node count"));
    if (spec.ranksPerNode.isEmpty()) return invalid(QStringLiteral("ranks per node"), QStringLiteral("give at least one count"));
    if (spec.repetitions < 1) return invalid(QStringLiteral("repetitions"), QStringLiteral("must be at least 1"));
    for (int n : spec.nodes)
        if (n < 1) return invalid(QStringLiteral("nodes"), QStringLiteral("%1 is not a positive count").arg(n));
    for (int r : spec.ranksPerNode)
        if (r < 1) return invalid(QStringLiteral("ranks per node"), QStringLiteral("%1 is not a positive count").arg(r));
    return Done{};
}

Expected<QList<RunPoint>> expandSweep(const SweepSpec& spec)
{
    // Run ids become folder and job names: keep them to a portable alphabet.
    static const QRegularExpression safe(QStringLiteral("^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"));
    if (!safe.match(spec.name).hasMatch())
        return invalid(QStringLiteral("name"), QStringLiteral("'%1' must be 1-64 letters, digits, '.', '_' or '-'").arg(spec.name));
    if (auto ok = checkSweepCounts(spec); !ok) return ok.error();
    if (spec.strategies.isEmpty()) return invalid(QStringLiteral("strategies"), QStringLiteral("give at least one"));
    for (const auto& s : spec.strategies) {
        if (!spec.variants.isEmpty() && !spec.variants.contains(s))
            return invalid(QStringLiteral("strategies"),
                           QStringLiteral("the run definition has no variant '%1' (%2)").arg(s, spec.variants.join(QStringLiteral(", "))));
        if (spec.variants.isEmpty() && s != QLatin1String("ddp") && s != QLatin1String("fused") && s != QLatin1String("zero1"))
            return invalid(QStringLiteral("strategies"), QStringLiteral("unknown strategy '%1' (ddp, fused, zero1)").arg(s));
    }
    if (spec.scaling == SweepSpec::Scaling::Strong && spec.globalBatch < 1)
        return invalid(QStringLiteral("global batch"), QStringLiteral("strong scaling needs a fixed global batch"));

    QList<RunPoint> points;
    for (const auto& strategy : spec.strategies) {
        for (int nodes : spec.nodes) {
            for (int rpn : spec.ranksPerNode) {
                for (int k = 1; k <= spec.repetitions; ++k) {
                    RunPoint p;
                    p.sweep = spec.name;
                    p.strategy = strategy;
                    p.nodes = nodes;
                    p.ranksPerNode = rpn;
                    p.repetition = k;
                    if (!spec.variants.isEmpty()) p.task = QStringLiteral("command");
                    p.scaling = spec.scaling == SweepSpec::Scaling::Strong ? QStringLiteral("strong") : QStringLiteral("weak");
                    p.runId = QStringLiteral("%1-%2-%3x%4-r%5").arg(spec.name, strategy).arg(nodes).arg(rpn).arg(k);
                    if (spec.scaling == SweepSpec::Scaling::Strong) {
                        if (spec.globalBatch % p.worldSize() != 0)
                            return invalid(QStringLiteral("global batch"),
                                           QStringLiteral("%1 does not divide over %2 ranks (%3)")
                                               .arg(spec.globalBatch)
                                               .arg(p.worldSize())
                                               .arg(p.runId));
                        p.localBatch = spec.globalBatch / p.worldSize();
                    } else {
                        p.localBatch = spec.localBatch;
                    }
                    points << p;
                }
            }
        }
    }
    return points;
}

int weakSweepLocalBatch(const RunStore& store, const QString& name)
{
    if (name.isEmpty()) return 0;
    for (const auto& row : store.list(name)) {
        auto r = store.load(row.id);
        if (r && r->scaling == QLatin1String("weak") && r->localBatch > 0) return r->localBatch;
    }
    return 0;
}

Status fillWeakLocalBatch(SweepSpec& spec, const QString& configFile, const QString& configName, int sweepLocalBatch)
{
    if (spec.scaling != SweepSpec::Scaling::Weak || spec.localBatch > 0) return Done{};
    if (sweepLocalBatch > 0) {
        spec.localBatch = sweepLocalBatch;
        return Done{};
    }
    if (auto ok = checkSweepCounts(spec); !ok) return ok.error();  // the batch divides over counts that make sense
    auto values = resolvedConfigWithSources(configFile, configName);
    if (!values) return values.error();
    const ConfigValue batch = values->value(QStringLiteral("global_batch_size"));
    if (batch.value.trimmed().isEmpty())
        return Error{
            ErrorCode::Usage,
            QStringLiteral("weak scaling needs the config's global_batch_size (or --local-batch); config '%1' has none").arg(configName),
            configFile};
    bool ok = false;
    const int global = batch.value.trimmed().toInt(&ok);
    if (!ok || global < 1)
        return Error{ErrorCode::ConfigInvalid,
                     QStringLiteral("key 'global_batch_size' of config '%1': '%2' is not a positive integer").arg(configName, batch.value),
                     QStringLiteral("%1:%2").arg(configFile).arg(batch.line)};
    const int smallest =
        *std::min_element(spec.nodes.begin(), spec.nodes.end()) * *std::min_element(spec.ranksPerNode.begin(), spec.ranksPerNode.end());
    if (smallest < 1 || global % smallest != 0)
        return Error{ErrorCode::Usage,
                     QStringLiteral("weak scaling: global_batch_size %1 of config '%2' does not divide over the smallest point's %3 ranks; "
                                    "give --local-batch")
                         .arg(global)
                         .arg(configName)
                         .arg(smallest),
                     configFile};
    spec.localBatch = global / smallest;
    return Done{};
}

}  // namespace scaledesk
