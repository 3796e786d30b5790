#include "analysis/plangaps.h"

#include "analysis/curvesteps.h"
#include "scheduler/shellquote.h"

#include <QStringList>

#include <algorithm>

namespace scaledesk {

QList<PlanGap> planGaps(const PerfModel& model, const QString& strategy, int ranks, int nodes, const QString& profile,
                        const QString& configFlags)
{
    QList<PlanGap> gaps;
    if (ranks <= 1) return gaps;
    const int perNode = std::max(1, ranks / std::max(1, nodes));
    auto calibrate = [&](int nodeCount, const QString& extra) { return calibrateCommand(profile, nodeCount, perNode, extra, configFlags); };
    // The collectives the model reads this strategy's messages with (curvesteps.h): zero1's own
    // where both were timed, else the allreduce.
    const bool ownCollectives = !messageCollectives(model, strategy).contains(QStringLiteral("allreduce"));
    if (model.comm.samples == 0 && !ownCollectives) {
        gaps << PlanGap{QStringLiteral("communication (no collective timed: no calibration and no run of more than one rank)"),
                        calibrate(nodes > 1 ? 2 : 1, {})};
        return gaps;  // the rest needs this first
    }
    if (nodes > 1 && !model.comm.acrossNodesMeasured())
        gaps << PlanGap{QStringLiteral("communication across nodes (only within a node was timed)"), calibrate(2, {})};
    if (strategy == QLatin1String("zero1") && !ownCollectives)
        gaps << PlanGap{QStringLiteral("zero1's reduce-scatter and allgather (not timed; a library's can be far slower than half an "
                                       "allreduce)"),
                        calibrate(std::min(nodes, 2), QStringLiteral("--ops reduce_scatter,allgather"))};
    return gaps;
}

QString calibrateCommand(const QString& profile, int nodes, int ranksPerNode, const QString& extra, const QString& configFlags)
{
    QStringList c{QStringLiteral("scaledesk calibrate")};
    if (!profile.isEmpty()) c << QStringLiteral("--profile ") + shellWord(profile);
    c << QStringLiteral("--nodes %1 --ranks-per-node %2").arg(nodes).arg(ranksPerNode);
    if (!extra.isEmpty()) c << extra;
    if (!configFlags.isEmpty()) c << configFlags;
    return c.join(QLatin1Char(' '));
}

QString calibrateConfigFlags(const std::vector<PlanRunInput>& runs)
{
    if (runs.empty()) return {};
    const PlanRunInput& first = runs.front();
    for (const PlanRunInput& r : runs)
        if (r.config != first.config || r.configFile != first.configFile) return {};
    if (first.config.isEmpty()) return {};
    QString flags = QStringLiteral("--config ") + shellWord(first.config);
    if (!first.configFile.isEmpty()) flags += QStringLiteral(" --config-file ") + shellWord(first.configFile);
    return flags;
}

}  // namespace scaledesk
