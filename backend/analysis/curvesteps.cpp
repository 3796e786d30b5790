#include "analysis/curvesteps.h"

#include "analysis/axisticks.h"

#include <algorithm>

namespace scaledesk {

namespace {

// What a collective's time counts in a step, as its curve stores it: an allreduce as it is, a
// reduce-scatter or allgather (an allreduce-equivalent of twice its time, PerfModel::step) half.
double weightOf(const QString& collective) { return collective == QLatin1String("allreduce") ? 1.0 : 0.5; }

const AllreduceModel& curveOf(const PerfModel& model, const QString& collective)
{
    if (collective == QLatin1String("reduce-scatter")) return model.reduceScatter;
    if (collective == QLatin1String("allgather")) return model.allgather;
    return model.comm;
}

bool stepAt(const AllreduceModel& m, const QString& collective, int ranks, int nodes, double bytes, CurveStep* out)
{
    const double weight = weightOf(collective);
    const auto [lo, hi] = m.curveAround(ranks, nodes, bytes);
    if (!lo || !hi || lo == hi || !timingsJump(*lo, *hi)) return false;
    out->collective = collective;
    out->bytes = bytes;
    out->below = lo;
    out->above = hi;
    out->interpolatedS = m.time(ranks, nodes, bytes);
    out->upS = weight * std::max(0.0, hi->seconds - out->interpolatedS);
    out->downS = weight * std::max(0.0, out->interpolatedS - lo->seconds);
    return true;
}

}  // namespace

bool timingsJump(const CommSample& below, const CommSample& above)
{
    return below.seconds > 0 && below.bytes > 0 && above.seconds / below.seconds > 3 * above.bytes / below.bytes;
}

QString CurveStep::describe() const
{
    const double weight = weightOf(collective);
    return QStringLiteral("%1 of %2 MiB lies where the timings jump from %3 s at %4 MiB to %5 s at %6 MiB")
        .arg(collective, formatNumber(bytes / (1 << 20)), formatNumber(weight * below->seconds), formatNumber(below->bytes / (1 << 20)),
             formatNumber(weight * above->seconds), formatNumber(above->bytes / (1 << 20)));
}

QStringList messageCollectives(const PerfModel& model, const QString& strategy)
{
    if (strategy == QLatin1String("zero1") && model.reduceScatter.samples > 0 && model.allgather.samples > 0)
        return {QStringLiteral("reduce-scatter"), QStringLiteral("allgather")};
    return {QStringLiteral("allreduce")};
}

QList<CurveStep> curveStepsCrossed(const PerfModel& model, const QString& strategy, int ranks, int nodes)
{
    QList<CurveStep> steps;
    if (ranks < 2) return steps;
    const QStringList collectives = messageCollectives(model, strategy);
    for (const double bytes : model.strategies.value(strategy).messageBytes)
        for (const QString& collective : collectives)
            if (CurveStep s; stepAt(curveOf(model, collective), collective, ranks, nodes, bytes, &s)) steps << s;
    return steps;
}

bool messagesReadAtTheirTimings(const PerfModel& model, const QString& strategy, int ranks, int nodes)
{
    const QList<double> messages = model.strategies.value(strategy).messageBytes;
    if (ranks < 2 || messages.isEmpty()) return false;
    const QStringList collectives = messageCollectives(model, strategy);
    return std::all_of(messages.begin(), messages.end(), [&](double bytes) {
        return std::all_of(collectives.begin(), collectives.end(), [&](const QString& collective) {
            const auto [below, above] = curveOf(model, collective).curveAround(ranks, nodes, bytes);
            return below && below == above;
        });
    });
}

QList<CurveStep> curveStepsAnywhere(const PerfModel& model, const QString& collective, double bytes)
{
    const AllreduceModel& m = curveOf(model, collective);
    CurveStep found, s;
    bool any = false;
    for (const CommSample& c : m.measured)
        if (stepAt(m, collective, c.ranks, c.nodes, bytes, &s)) {
            found = s;
            any = true;
        }
    return any ? QList<CurveStep>{found} : QList<CurveStep>{};
}

}  // namespace scaledesk
