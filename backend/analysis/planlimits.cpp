// Where a prediction leaves what the model describes (planparts.h: outsideTheModel). A point no run
// measured is flagged when its conditions have no term in the model, or when the part of the model
// that covers them was measured under other conditions than the runs. The point keeps its numbers
// and its range; plan.md, plan.csv, the launch dialog and plan-check show the reasons.
#include "analysis/axisticks.h"
#include "analysis/plangaps.h"
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

// The threads a rank would compute with at `perNode` ranks per node, and the host's logical CPUs
// (the fewest the runs and the compute timings saw); 0 where none recorded them. A run (or timing)
// whose ranks filled its host's CPUs took the trainer's default (usable cores / local ranks), which
// gives max(1, CPUs / perNode) threads here; one that left CPUs idle was given its threads
// (`--threads`), which it would keep. The fewest over them.
std::pair<int, int> threadsAndCpus(const PlanFit& f, int perNode)
{
    int cpus = 0;
    const auto fewest = [](int& now, int seen) {
        if (seen > 0) now = now > 0 ? std::min(now, seen) : seen;
    };
    for (const PlanRunInput& r : f.used) fewest(cpus, r.hostCpus);
    for (const CommSample& c : f.plan.model.contentionSamples) fewest(cpus, c.hostCpus);
    if (cpus <= 0) return {0, 0};
    int threads = 0;
    const auto at = [&](int threadsThere, int perNodeThere, int hostCpus) {
        if (threadsThere <= 0) return;
        const bool filled = hostCpus > 0 && threadsThere * std::max(1, perNodeThere) >= hostCpus;
        fewest(threads, filled ? std::max(1, cpus / perNode) : threadsThere);
    };
    for (const PlanRunInput& r : f.used) at(r.threadsPerRank, r.ranks / std::max(1, r.nodes), r.hostCpus);
    for (const CommSample& c : f.plan.model.contentionSamples) at(c.threads, c.ranks / std::max(1, c.nodes), c.hostCpus);
    return {threads, cpus};
}

// CPU ranks at `perNode` ranks per node: oversubscribed cores where the contention was not timed
// as the point would run (this many ranks per node, threads, loaders), contention never measured,
// or measured over a calibration's lone step (no run of one rank per node) that is not the runs'
// compute.
QStringList cpuRankLimits(const PlanFit& f, const PlanPoint& p, int perNode)
{
    QStringList why;
    const PerfModel& model = f.plan.model;
    const auto [threads, cpus] = threadsAndCpus(f, perNode);
    const CommSample* kernel = model.contentionSample(p.ranks, p.nodes);
    // The loader's worker threads (num_data_workers) prepare batches beside each rank's compute.
    int loaders = 0;
    for (const PlanRunInput& r : f.used) loaders = std::max(loaders, r.dataWorkers);
    if (cpus > 0 && perNode * (std::max(1, threads) + loaders) > cpus) {
        // Ranks that take turns on the cores are what the contention measures, where it was timed
        // with as many threads and loaders as the point's (contentionSample reads a timing at this
        // many ranks per node or none).
        const QString notTimedSo = QStringLiteral("which the contention it reads does not describe (it was timed %1)");
        QString unmodelled;  // empty: the contention was timed as the point would run
        if (!kernel)
            unmodelled = QStringLiteral("which the model has no term for");
        else if (kernel->threads != std::max(1, threads))
            unmodelled = notTimedSo.arg(kernel->threads > 0 ? QStringLiteral("with %1 thread(s) per rank").arg(kernel->threads)
                                                            : QStringLiteral("without recording its threads per rank"));
        else if (loaders > 0 && kernel->kernelLoaders < loaders)
            unmodelled = notTimedSo.arg(QStringLiteral("without the loaders: calibrate --config with --make-data or --data"));
        if (!unmodelled.isEmpty()) {
            const QString shape = QStringLiteral("%1 ranks per node × ").arg(perNode) +
                (loaders > 0 ? QStringLiteral("(%1 compute + %2 loader thread(s))").arg(std::max(1, threads)).arg(loaders)
                             : QStringLiteral("%1 thread(s)").arg(std::max(1, threads))) +
                QStringLiteral(" each on %1 CPUs: the ranks ").arg(cpus) + (loaders > 0 ? QStringLiteral("and their loaders ") : QString());
            why << shape + QStringLiteral("take turns on the cores, ") + unmodelled;
        }
    }
    // The compute fit is per rank as the runs computed it: with fewer threads a rank computes slower.
    int runThreads = 0;
    for (const PlanRunInput& r : f.used) runThreads = std::max(runThreads, r.threadsPerRank);
    if (threads > 0 && threads < runThreads)
        why << QStringLiteral("the runs computed with up to %1 threads per rank, a rank here would get %2 (the trainer's default: "
                              "usable cores / local ranks): the compute fit does not scale with threads (give the runs --threads "
                              "%2)")
                   .arg(runThreads)
                   .arg(threads);
    if (!kernel) {
        // The runs' own config where they share one (as plangaps' commands name it), else a placeholder.
        const QString config = calibrateConfigFlags(f.runs);
        why << QStringLiteral("how ranks that share a node slow each other's compute was never measured (taken as not at all; %1 "
                              "measures it)")
                   .arg(calibrateCommand(f.options.profile, 1, perNode, {}, config.isEmpty() ? QStringLiteral("--config CONFIG") : config));
        return why;
    }
    bool fromRuns = false;
    model.contentionReference(*kernel, &fromRuns);
    if (!(kernel->kernelLocalBatch > 0) || fromRuns) return why;  // the contention is over the runs' own compute
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
