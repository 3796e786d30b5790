// Where a prediction leaves what the model describes (planparts.h: outsideTheModel). A point no run
// measured is flagged when its conditions have no term in the model, or when the part of the model
// that covers them was measured under other conditions than the runs. The point keeps its numbers
// and its range; plan.md, plan.csv, the launch dialog and plan-check show the reasons.
#include "analysis/axisticks.h"
#include "analysis/planparts.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace scaledesk::planparts {

namespace {
// A calibration's lone step this far from the runs' compute at its local batch was timed under
// other conditions (another load on the machine, another clock): the contention it gives is not
// the runs' (docs/planner.md, "Outside the model").
constexpr double kComputeAgreement = 0.10;

// The fewest compute threads per rank the runs and the compute timings had, and the fewest logical
// CPUs their hosts had; 0 where none recorded them.
std::pair<int, int> threadsAndCpus(const PlanFit& f)
{
    int threads = 0, cpus = 0;
    const auto fewest = [](int& now, int seen) {
        if (seen > 0) now = now > 0 ? std::min(now, seen) : seen;
    };
    for (const PlanRunInput& r : f.used) {
        fewest(threads, r.threadsPerRank);
        fewest(cpus, r.hostCpus);
    }
    for (const CommSample& c : f.plan.model.contentionSamples) {
        fewest(threads, c.threads);
        fewest(cpus, c.hostCpus);
    }
    return {threads, cpus};
}

// CPU ranks at `perNode` ranks per node: oversubscribed cores, contention never measured, or
// measured by a calibration whose lone step is not the runs' compute.
QStringList cpuRankLimits(const PlanFit& f, const PlanPoint& p, int perNode)
{
    QStringList why;
    const PerfModel& model = f.plan.model;
    const auto [threads, cpus] = threadsAndCpus(f);
    if (cpus > 0 && perNode * std::max(1, threads) > cpus)
        why << QStringLiteral("%1 ranks per node × %2 thread(s) each on %3 CPUs: the ranks take turns on the cores, which the model "
                              "has no term for")
                   .arg(perNode)
                   .arg(std::max(1, threads))
                   .arg(cpus);
    const CommSample* kernel = model.contentionSample(p.ranks, p.nodes);
    if (!kernel) {
        const QString profile = f.options.profile.isEmpty() ? QString() : QStringLiteral("--profile %1 ").arg(f.options.profile);
        why << QStringLiteral("how ranks that share a node slow each other's compute was never measured (taken as not at all; "
                              "scaledesk calibrate %1--config CONFIG --ranks-per-node %2 measures it)")
                   .arg(profile)
                   .arg(perNode);
        return why;
    }
    if (!(kernel->kernelLocalBatch > 0)) return why;
    const double runs = model.compute.time(kernel->kernelLocalBatch);
    const double off = runs > 0 ? kernel->aloneS / runs - 1 : 0.0;
    if (std::abs(off) > kComputeAgreement)
        why << QStringLiteral("the calibration timed the config's step alone at %1 s, the runs computed %2 s at its local batch %3 "
                              "(%4): the machine was not as it was for the runs, so the contention measured then (×%5) may not be "
                              "theirs; calibrate again right before or after the runs")
                   .arg(formatNumber(kernel->aloneS, 3), formatNumber(runs, 3), formatNumber(kernel->kernelLocalBatch), formatChange(off),
                        formatNumber(model.contention(p.ranks, p.nodes), 3));
    return why;
}
}  // namespace

QStringList outsideTheModel(const PlanFit& f, const PlanPoint& p)
{
    QStringList why;
    if (p.extrapolationWeight <= 0) return why;  // a run measured this point: the model only reads it back
    if (p.extrapolated)
        why << QStringLiteral("more than 8× the largest rank count measured (%1): the collectives' algorithm and the stragglers "
                              "there were never seen")
                   .arg(f.measuredMax);
    const int perNode = std::max(1, p.ranks / std::max(1, p.nodes));
    if (f.plan.model.cpuRanks && perNode > 1) why << cpuRankLimits(f, p, perNode);
    return why;
}

}  // namespace scaledesk::planparts
