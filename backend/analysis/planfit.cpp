// The planner's fits (planparts.h): compute, the collectives and the strategies' messages, the
// base point, the bands, and the learning curve.
#include "analysis/planparts.h"

#include "analysis/axisticks.h"
#include "analysis/curvesteps.h"
#include "analysis/epochscsv.h"
#include "analysis/metrics.h"

#include <QSet>

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

namespace scaledesk::planparts {

namespace {
// Which algorithm each link class's line follows, and how it was chosen: "within a node: ring,
// chosen by the fit (residual 3 %; tree 5 %, recursive doubling 9 %)" or "ring assumed (timed at
// 2 ranks only: a tree fits as well, and the ranges at other rank counts span both)".
QString algorithmText(const AllreduceModel& m)
{
    QStringList parts;
    for (const auto& [fits, ranks, where] :
         {std::tuple{&m.within, &m.withinRanks, "within a node"}, std::tuple{&m.across, &m.acrossRanks, "across nodes"}}) {
        if (fits->isEmpty()) continue;
        QStringList rest;
        for (int i = 1; i < fits->size(); ++i)
            rest << QStringLiteral("%1 %2 %").arg(algorithmName((*fits)[i].algorithm), formatNumber(100 * (*fits)[i].relativeRms, 2));
        QStringList counts;
        for (int n : *ranks) counts << QString::number(n);
        const bool ring = fits->first().algorithm == AllreduceAlgorithm::Ring;
        parts << (ranks->size() >= 2
                      ? QStringLiteral("%1: %2, %6 over timings at %3 ranks (residual %4 %; %5)")
                            .arg(QLatin1String(where), algorithmName(fits->first().algorithm), counts.join(QStringLiteral(", ")),
                                 formatNumber(100 * fits->first().relativeRms, 2), rest.join(QStringLiteral(", ")),
                                 ring ? QStringLiteral("as no other fits clearly better (below 80 % of its residual)")
                                      : QStringLiteral("chosen by the fit"))
                      : QStringLiteral("%1: %2 assumed (timed at %3 rank(s) only, where a tree fits as well: the ranges at other rank "
                                       "counts span both)")
                            .arg(QLatin1String(where), algorithmName(fits->first().algorithm), counts.join(QStringLiteral(", "))));
    }
    if (!m.acrossPerNode.isEmpty()) {
        QStringList each;
        for (const AllreduceModel::PerNodeFit& g : m.acrossPerNode)
            each << QStringLiteral("%1 per node: α = %2 s, β = %3 GB/s")
                        .arg(g.ranksPerNode)
                        .arg(formatNumber(g.fits.first().alphaS), formatNumber(g.fits.first().betaBytesPerS / 1e9));
        parts << QStringLiteral("across nodes by ranks per node (a point reads the nearest): %1").arg(each.join(QStringLiteral(", ")));
    }
    return parts.join(QStringLiteral("; "));
}

// Where a collective's measured curve replaces its α–β line: each (ranks, nodes) with the range
// of sizes timed there.
QString measuredCurveText(const AllreduceModel& m)
{
    std::map<std::pair<int, int>, std::pair<double, double>> range;
    for (const CommSample& c : m.measured) {
        auto [it, fresh] = range.try_emplace({c.ranks, c.nodes}, c.bytes, c.bytes);
        it->second.first = std::min(it->second.first, c.bytes);
        it->second.second = std::max(it->second.second, c.bytes);
    }
    QStringList parts;
    for (const auto& [key, r] : range)
        if (r.second > r.first)
            parts << QStringLiteral("%1 rank(s) on %2 node(s), %3–%4 MiB")
                         .arg(key.first)
                         .arg(key.second)
                         .arg(formatNumber(r.first / (1 << 20)), formatNumber(r.second / (1 << 20)));
    return parts.isEmpty() ? QString()
                           : QStringLiteral("the measured curve (linear between the sizes timed) where timed: %1; the α–β line elsewhere")
                                 .arg(parts.join(QStringLiteral("; ")));
}

}  // namespace

// The validation losses of the runs' epochs, run by run (samples seen, loss, and the gradient
// noise scale the trainer measured over each epoch); the runs that gave any go to `from`.
QList<RunLosses> validationLosses(const std::vector<PlanRunInput>& runs, QStringList* from)
{
    QList<RunLosses> out;
    for (const PlanRunInput& r : runs) {
        RunLosses losses;
        losses.batch = std::isfinite(r.globalBatch) ? r.globalBatch : r.localBatch * r.ranks;
        if (!(r.samplesPerEpoch > 0) || !(losses.batch > 0)) continue;
        for (const EpochRow& e : r.epochs)
            if (e.epoch > 0 && e.valLoss > 0) {
                losses.samples << e.epoch * r.samplesPerEpoch;
                losses.losses << e.valLoss;
                losses.bSimple << e.gnsBSimple;
            }
        if (losses.losses.isEmpty()) continue;
        out << losses;
        *from << r.runId;
    }
    return out;
}

// Compute: affine in the local batch, from every run, each as it would compute alone.
Status fitComputePart(PlanFit& f)
{
    Plan& plan = f.plan;
    const std::vector<PlanRunInput>& used = f.used;
    const QList<CommSample>& benchmark = f.benchmark;
    // Compute: affine in the local batch, from every run, each as it would compute alone (its
    // compute over the contention of its layout, where the benchmark measured it).
    plan.model.cpuRanks = std::all_of(used.begin(), used.end(), [](const PlanRunInput& r) { return r.cpu; });
    for (const CommSample& c : benchmark) {
        if (c.op == CommSample::Op::Compute) plan.model.contentionSamples << c;
        if (c.afterCompute) plan.model.waitSamples << c;
    }
    // The runs of one rank per node computed alone: the contention's reference (PerfModel::contention).
    QList<ComputeSample> solo;
    for (const PlanRunInput& r : used)
        if (r.ranks == r.nodes) solo << ComputeSample{r.localBatch, r.computeS, 0.0, 0.0, 0.0, r.dataWorkers};
    if (!solo.isEmpty())
        if (auto fitted = fitCompute(solo)) plan.model.soloCompute = *fitted;
    QList<ComputeSample> computeSamples;
    QSet<double> batches;
    for (const PlanRunInput& r : used) {
        const double f = plan.model.contention(r.ranks, r.nodes);
        // A zero1 run's optimizer updated its 1/n shard: counted as the whole update would take.
        const double optimizer = std::isfinite(r.optimizerS) ? r.optimizerS : 0.0;
        const double unsharded = r.strategy == QLatin1String("zero1") ? optimizer * (r.ranks - 1) : 0.0;
        computeSamples << ComputeSample{r.localBatch,
                                        (r.computeS + unsharded) / f,
                                        std::isfinite(r.backwardS) ? r.backwardS / f : 0.0,
                                        std::isfinite(r.dataS) ? r.dataS : 0.0,
                                        (optimizer + unsharded) / f,
                                        r.dataWorkers};
        batches.insert(r.localBatch);
    }
    auto compute = fitCompute(computeSamples);
    if (!compute) return compute.error();
    plan.model.compute = *compute;
    f.compute = *compute;
    plan.inputs << QStringLiteral("compute per step: %1 + %2 s per sample of the local batch, fitted on %3 run(s) at local batch(es) %4%5")
                       .arg(formatNumber(compute->fixedS), formatNumber(compute->perSampleS))
                       .arg(used.size())
                       .arg([&] {
                           QList<double> b = batches.values();
                           std::sort(b.begin(), b.end());
                           QStringList t;
                           for (double x : b) t << formatNumber(x);
                           return t.join(QStringLiteral(", "));
                       }())
                       .arg(batches.size() < 2 ? QStringLiteral(" (one local batch: proportional to it, no fixed part)") : QString());
    plan.inputs << QStringLiteral("data wait: %1 s per step%4; backward: %2 % of compute; optimizer: %3 % of compute, of which "
                                  "zero1 does 1/n at n ranks (the runs' step records)")
                       .arg(formatNumber(compute->dataS), formatNumber(100.0 * compute->backwardShare),
                            formatNumber(100.0 * compute->optimizerShare),
                            !compute->loaderWorkers
                                ? QStringLiteral(" (a loader without worker threads, or not recorded: added to the step "
                                                 "as measured)")
                                : std::isfinite(compute->loaderPerSampleS)
                                ? QStringLiteral(" (the loader's workers overlap compute: wait = max(0, %1 s per sample × local batch − "
                                                 "compute))")
                                      .arg(formatNumber(compute->loaderPerSampleS))
                                : QStringLiteral(" (the loader's workers kept up with compute in every run: its wait taken as measured)"));
    if (plan.model.cpuRanks && !plan.model.contentionSamples.isEmpty()) {
        QStringList layouts;
        for (const CommSample& c : std::as_const(plan.model.contentionSamples)) {
            const double between = plan.model.computeBetweenCollectives(c.ranks, c.nodes);
            const bool read = plan.model.contentionSample(c.ranks, c.nodes) == &c;  // a later timing there replaces it
            bool fromRuns = false;
            const double reference = plan.model.contentionReference(c, &fromRuns);
            layouts << QStringLiteral("×%1 at %2 rank(s) on %3 node(s) (%4: %5 s alone, %6 s on every rank at once%7; over %8)%9")
                           .arg(formatNumber((read && between > 0 ? between : c.seconds) / reference))
                           .arg(c.ranks)
                           .arg(c.nodes)
                           .arg(c.kernel, formatNumber(c.aloneS), formatNumber(c.seconds))
                           .arg(read && between > 0 ? QStringLiteral(", %1 s between collectives: the after-compute timings' mean, used")
                                                          .arg(formatNumber(between))
                                                    : QString())
                           .arg(fromRuns ? QStringLiteral("the runs of one rank per node's compute at its local batch, %1 s")
                                               .arg(formatNumber(reference))
                                         : QStringLiteral("its time alone"))
                           .arg(read ? QString() : QStringLiteral(", replaced by a later timing"));
        }
        plan.inputs << QStringLiteral("compute contention (CPU ranks share a node's cores and memory): %1, timed by the benchmark; "
                                      "each run's compute divided by its layout's before the fit, each prediction multiplied by its own")
                           .arg(layouts.join(QStringLiteral("; ")));
    } else if (plan.model.cpuRanks) {
        plan.inputs << QStringLiteral("compute contention: not measured (no compute timing in the benchmark: `scaledesk calibrate` "
                                      "times it): every rank computes as the runs did");
    }

    return Done{};
}

// The arrival wait: what the after-compute timings spent in the collectives beyond the last rank in.
void describeArrivalWait(PlanFit& f)
{
    Plan& plan = f.plan;
    const QList<CommSample>& benchmark = f.benchmark;
    const int barrierLeftOut = f.barrierLeftOut;
    struct WaitLayout {
        int timings = 0;
        double computeS = 0;
        QString kernel;
    };
    QMap<QPair<int, int>, WaitLayout> waitLayouts;  // (ranks, nodes) → what was timed there
    for (const CommSample& c : benchmark)
        if (c.afterCompute) {
            WaitLayout& w = waitLayouts[qMakePair(c.ranks, c.nodes)];
            ++w.timings;
            w.computeS += c.computeS;
            w.kernel = c.kernel;
        }
    if (!waitLayouts.isEmpty()) {
        QStringList layouts;
        for (auto it = waitLayouts.cbegin(); it != waitLayouts.cend(); ++it)
            layouts << QStringLiteral("+%1 % of compute at %2 rank(s) on %3 node(s) (%4 timing(s) after %5 s of compute each, %6)")
                           .arg(formatNumber(100.0 * plan.model.arrivalWait(it.key().first, it.key().second)))
                           .arg(it.key().first)
                           .arg(it.key().second)
                           .arg(it.value().timings)
                           .arg(formatNumber(it.value().computeS / it.value().timings), it.value().kernel);
        plan.inputs << QStringLiteral("collectives timed as training meets them (bench-comm --after_compute: after compute, no barrier), "
                                      "%1 barrier timing(s) of the same collectives left out; arrival wait (the first rank in a step's "
                                      "first collective waits for the last): %2")
                           .arg(barrierLeftOut)
                           .arg(layouts.join(QStringLiteral("; ")));
    } else if (std::any_of(benchmark.begin(), benchmark.end(), [](const CommSample& c) { return c.op != CommSample::Op::Compute; })) {
        plan.inputs << QStringLiteral("collectives timed behind a barrier, the ranks' arrival wait not measured "
                                      "(bench-comm --after_compute times them as training meets them)");
    }
}

// The gradients' size, and each strategy's buckets and overlap.
Status layoutStrategies(PlanFit& f)
{
    Plan& plan = f.plan;
    const std::vector<PlanRunInput>& used = f.used;
    const PlanOptions& options = f.options;
    const QString& sweep = f.sweep;
    double gradientBytes = 0;
    for (const PlanRunInput& r : used)
        if (std::isfinite(r.gradientBytes)) gradientBytes = std::max(gradientBytes, r.gradientBytes);
    if (!(gradientBytes > 0))
        return planError(QStringLiteral("no run of sweep '%1' records its parameter count (manifest.json 'parameters')").arg(sweep));
    plan.model.gradientBytes = gradientBytes;
    QStringList strategies = options.strategies;
    if (strategies.isEmpty())
        for (const PlanRunInput& r : used)
            if (!strategies.contains(r.strategy)) strategies << r.strategy;
    for (const QString& s : strategies) {
        StrategyComm sc;
        sc.bucketBytes = s == QLatin1String("fused") ? 64.0 * (1 << 20) : 25.0 * (1 << 20);
        QList<QPair<double, double>> pairs;
        QStringList from;
        for (const PlanRunInput& r : used) {
            if (r.strategy != s) continue;
            if (std::isfinite(r.bucketBytes) && r.bucketBytes > 0) sc.bucketBytes = r.bucketBytes;
            if (r.ranks > 1 && std::isfinite(r.commS) && r.commS > 0) {
                pairs << qMakePair(r.commS, std::isfinite(r.exposedS) ? r.exposedS : r.commS);
                from << r.runId;
            }
        }
        sc.measuredOverlap = measuredOverlap(pairs);
        // The trainer's layout of this strategy's messages: a run of it, else any run (each
        // records every strategy's layout), if its sizes add up to the gradients.
        QString layoutFrom;
        for (int pass = 0; pass < 2 && layoutFrom.isEmpty(); ++pass)
            for (const PlanRunInput& r : used) {
                const QList<double> m = r.messageBytes.value(s);
                double sum = 0;
                for (double b : m) sum += b;
                if ((pass == 1 || r.strategy == s) && !m.isEmpty() && std::abs(sum - gradientBytes) <= 0.01 * gradientBytes) {
                    sc.messageBytes = m;
                    layoutFrom = r.runId;
                    break;
                }
            }
        plan.model.strategies.insert(s, sc);
        if (s == QLatin1String("zero1")) {
            if (layoutFrom.isEmpty()) {
                plan.inputs << QStringLiteral("zero1: one reduce-scatter of the gradients and one allgather of the parameters per step, "
                                              "after backward (exposed = communication)");
            } else {
                const auto [lo, hi] = std::minmax_element(sc.messageBytes.begin(), sc.messageBytes.end());
                plan.inputs << QStringLiteral("zero1: a reduce-scatter of the gradients and an allgather of the parameters per bucket, "
                                              "%1 bucket(s) of %2–%3 MiB per step (the trainer's layout, in %4's manifest), after "
                                              "backward (exposed = communication)")
                                   .arg(sc.messageBytes.size())
                                   .arg(formatNumber(*lo / (1 << 20)), formatNumber(*hi / (1 << 20)), layoutFrom);
            }
            continue;
        }
        QString buckets = QStringLiteral("buckets of %1 MiB").arg(formatNumber(sc.bucketBytes / (1 << 20)));
        if (!layoutFrom.isEmpty()) {
            const auto [lo, hi] = std::minmax_element(sc.messageBytes.begin(), sc.messageBytes.end());
            buckets = QStringLiteral("%1 message(s) of %2–%3 MiB per step (the trainer's layout, in %4's manifest)")
                          .arg(sc.messageBytes.size())
                          .arg(formatNumber(*lo / (1 << 20)), formatNumber(*hi / (1 << 20)), layoutFrom);
        }
        QString cpuRule;
        if (s == QLatin1String("ddp") && plan.model.cpuRanks) {
            QMap<QPair<int, int>, int> timedBehind;  // (ranks, nodes) → sizes timed behind compute
            for (const CommSample& c : std::as_const(plan.model.overlapSamples)) ++timedBehind[qMakePair(c.ranks, c.nodes)];
            QStringList shares;
            for (auto it = timedBehind.cbegin(); it != timedBehind.cend(); ++it) {
                const double phi = plan.model.overlapShare(it.key().first, it.key().second);
                if (std::isfinite(phi))
                    shares << QStringLiteral("φ = %1 at %2 rank(s) on %3 node(s) (%4 size(s))")
                                  .arg(formatNumber(phi))
                                  .arg(it.key().first)
                                  .arg(it.key().second)
                                  .arg(it.value());
            }
            cpuRule = shares.isEmpty()
                ? QStringLiteral(": CPU ranks, where backward and the buckets share the cores: all exposed")
                : QStringLiteral(": CPU ranks: exposed = max(last bucket, comm − φ·min(comm, backward)), φ the share of an allreduce "
                                 "that hid behind compute in the benchmark (its overlapped timings against its after-compute ones): "
                                 "%1; all exposed where no layout of as many ranks per node was timed so")
                      .arg(shares.join(QStringLiteral("; ")));
        }
        plan.inputs << (std::isfinite(sc.measuredOverlap)
                            ? QStringLiteral("%1: %2; overlap %3 measured in %4")
                                  .arg(s, buckets, formatNumber(sc.measuredOverlap), from.join(QStringLiteral(", ")))
                            : QStringLiteral("%1: %2; overlap by the strategy's rule (no run of it with more than one rank)%3")
                                  .arg(s, buckets, cpuRule));
    }

    f.gradientBytes = gradientBytes;
    f.strategies = strategies;
    return Done{};
}

// The allreduce (and zero1's collectives) fitted to the benchmark and the multi-rank runs' steps.
Status fitCollectives(PlanFit& f)
{
    Plan& plan = f.plan;
    const std::vector<PlanRunInput>& used = f.used;
    const QList<CommSample>& benchmark = f.benchmark;
    const PlanOptions& options = f.options;
    const QStringList& benchmarkSources = f.benchmarkSources;
    const double gradientBytes = f.gradientBytes;
    // The allreduce: the benchmark's timings, and each multi-rank run's per-step communication as
    // its buckets' allreduces, less the arrival wait its steps paid where that was measured (the
    // model adds it once a step).
    QList<CommSample> comm = benchmark;
    QStringList commRuns;
    for (const PlanRunInput& r : used) {
        // zero1's steps time a reduce-scatter and an allgather, not allreduces.
        if (r.ranks < 2 || !(r.commS > 0) || r.strategy == QLatin1String("zero1")) continue;
        const StrategyComm sc = plan.model.strategies.value(r.strategy);
        const double k =
            !sc.messageBytes.isEmpty() ? double(sc.messageBytes.size()) : std::max(1.0, std::ceil(gradientBytes / sc.bucketBytes));
        const double collectives = std::max(0.0, r.commS - plan.model.arrivalWait(r.ranks, r.nodes) * r.computeS);
        if (!(collectives > 0)) continue;
        comm << CommSample{r.ranks, r.nodes, gradientBytes / k, collectives / k};
        commRuns << r.runId;
    }
    int& rpn = f.rpn;
    rpn = options.ranksPerNode;
    for (const PlanRunInput& r : used)
        if (options.ranksPerNode <= 0) rpn = std::max(rpn, std::max(1, r.ranks / std::max(1, r.nodes)));
    bool& needComm = f.needComm;
    needComm = false;
    for (int n : options.nodes) needComm = needComm || n * rpn > 1;
    int allreduces = 0;
    for (const CommSample& c : comm) allreduces += c.op == CommSample::Op::Allreduce;
    if (allreduces > 0) {
        auto fitted = fitCollective(comm, CommSample::Op::Allreduce);
        if (fitted && fitted->bandwidthOnly)
            plan.warnings << QStringLiteral(
                "latency cannot be told from bandwidth (one message size measured, or timings that fit no positive "
                "bandwidth): latency taken as 0 and the bandwidth from the timings; `scaledesk calibrate` (or a "
                "`scaledesk-train bench-comm` file, --comm) times several sizes");
        if (!fitted && needComm) return fitted.error();
        if (fitted) {
            plan.model.comm = *fitted;
            QStringList from;
            if (allreduces > commRuns.size())
                from << QStringLiteral("%1 benchmark timing(s) (%2)")
                            .arg(allreduces - int(commRuns.size()))
                            .arg(benchmarkSources.join(QStringLiteral(", ")));
            if (!commRuns.isEmpty()) from << QStringLiteral("the steps of %1").arg(commRuns.join(QStringLiteral(", ")));
            plan.inputs << QStringLiteral("allreduce within a node: α = %1 s, β = %2 GB/s%3; residual %4 %, from %5")
                               .arg(formatNumber(fitted->alphaS), formatNumber(fitted->betaBytesPerS / 1e9))
                               .arg(fitted->acrossNodesMeasured()
                                        ? QStringLiteral("; across nodes: α = %1 s, β = %2 GB/s")
                                              .arg(formatNumber(fitted->alphaInterS), formatNumber(fitted->betaInterBytesPerS / 1e9))
                                        : QStringLiteral("; across nodes: not measured (a prediction across nodes says so)"))
                               .arg(formatNumber(100.0 * fitted->relativeRms))
                               .arg(from.join(QStringLiteral(" and ")));
            plan.inputs << QStringLiteral("allreduce algorithm: %1").arg(algorithmText(*fitted));
            if (const QString curve = measuredCurveText(*fitted); !curve.isEmpty())
                plan.inputs << QStringLiteral("allreduce: %1").arg(curve);
        }
    } else if (needComm) {
        plan.warnings << QStringLiteral("no collective timed (no calibration and no run of more than one rank): the predictions of "
                                        "more than one rank are not measured; `scaledesk calibrate` times them");
    }
    // ZeRO-1's two collectives, where the benchmark timed them.
    for (auto [op, name, into] : {std::tuple{CommSample::Op::ReduceScatter, "reduce-scatter", &plan.model.reduceScatter},
                                  std::tuple{CommSample::Op::Allgather, "allgather", &plan.model.allgather}}) {
        int n = 0;
        for (const CommSample& c : benchmark) n += c.op == op;
        if (n == 0) continue;
        auto fitted = fitCollective(benchmark, op);
        if (!fitted)
            return Error{fitted.error().code, QStringLiteral("%1: %2").arg(QLatin1String(name), fitted.error().message), QString()};
        *into = *fitted;
        plan.inputs << QStringLiteral("%1 (zero1): as an allreduce of α = %2 s, β = %3 GB/s; residual %4 %, from %5 benchmark timing(s)")
                           .arg(QLatin1String(name), formatNumber(fitted->alphaS), formatNumber(fitted->betaBytesPerS / 1e9),
                                formatNumber(100.0 * fitted->relativeRms))
                           .arg(n);
        if (const QString curve = measuredCurveText(*fitted); !curve.isEmpty())
            plan.inputs << QStringLiteral("%1: %2").arg(QLatin1String(name), curve);
    }
    return Done{};
}

// The sizes the strategies send, and whether the benchmark timed them: where a curve steps (a
// library changing algorithm) between the two sizes it timed around one, interpolating cannot say
// where the step lies, so the exact sizes are asked for.
void checkSizesSent(PlanFit& f)
{
    Plan& plan = f.plan;
    const QStringList& strategies = f.strategies;
    const double gradientBytes = f.gradientBytes;
    const bool needComm = f.needComm;
    {
        QList<QPair<QString, double>> sent;  // (collective, bytes)
        for (const QString& s : strategies) {
            if (s == QLatin1String("zero1")) {
                QList<double> buckets = plan.model.strategies.value(s).messageBytes;
                if (buckets.isEmpty()) buckets = {gradientBytes};
                for (double bytes : buckets)
                    sent << qMakePair(QStringLiteral("reduce-scatter"), bytes) << qMakePair(QStringLiteral("allgather"), bytes);
            } else {
                for (double b : plan.model.strategies.value(s).messageBytes) sent << qMakePair(QStringLiteral("allreduce"), b);
            }
        }
        QStringList steps;
        QList<qint64> sizes;
        for (const auto& [what, bytes] : sent) {
            if (!sizes.contains(qint64(bytes))) sizes << qint64(bytes);
            for (const CurveStep& c : curveStepsAnywhere(plan.model, what, bytes))
                if (!steps.contains(c.describe())) steps << c.describe();
        }
        std::sort(sizes.begin(), sizes.end());
        QStringList list;
        for (qint64 b : sizes) list << QString::number(b);
        if (!list.isEmpty() && needComm)
            plan.inputs << QStringLiteral("message sizes the strategies send (bytes): %1; `scaledesk-train bench-comm --sizes %1` times "
                                          "exactly these")
                               .arg(list.join(QLatin1Char(',')));
        for (const QString& step : steps)
            plan.warnings << QStringLiteral("%1: the curve steps there and the interpolation cannot say where, so the ranges of the "
                                            "points that send it span both sizes' times; time the exact sizes (`scaledesk calibrate "
                                            "--config <the config>` does, or bench-comm --sizes, in 'Where the numbers come from')")
                                 .arg(step);
    }
}

// The largest rank count measured, the base point (the smallest run), weak or strong, and the batch asked for.
void chooseBase(PlanFit& f)
{
    Plan& plan = f.plan;
    const std::vector<PlanRunInput>& used = f.used;
    const QList<CommSample>& benchmark = f.benchmark;
    const PlanOptions& options = f.options;
    int measuredMax = 1;
    for (const PlanRunInput& r : used) measuredMax = std::max(measuredMax, r.ranks);
    for (const CommSample& c : benchmark) measuredMax = std::max(measuredMax, c.ranks);
    plan.measuredMaxRanks = measuredMax;

    // The base point: the smallest run; weak or strong as the sweep ran (or as asked).
    const PlanRunInput* base = &used.front();
    for (const PlanRunInput& r : used)
        if (r.ranks < base->ranks) base = &r;
    plan.baseRanks = base->ranks;
    plan.baseLocalBatch = base->localBatch;
    plan.baseSamplesPerEpoch = base->samplesPerEpoch;
    plan.epochs = options.epochs;
    if (options.scaling == PlanOptions::Scaling::Auto) {
        const PlanRunInput* top = base;
        for (const PlanRunInput& r : used)
            if (r.ranks > top->ranks) top = &r;
        // Strong when the largest run kept the smallest's global batch (and so shrank its local one).
        const double baseGlobal = base->localBatch * base->ranks, topGlobal = top->localBatch * top->ranks;
        plan.weak = top == base || std::abs(topGlobal - baseGlobal) > 0.01 * baseGlobal;
        plan.inputs << (top == base ? QStringLiteral("scaling: weak (one world size measured; NERSC's rule, + one local batch per rank)")
                                    : QStringLiteral("scaling: %1, as the sweep ran (global batch %2 at %3 ranks, %4 at %5)")
                                          .arg(plan.weak ? QStringLiteral("weak") : QStringLiteral("strong"))
                                          .arg(formatNumber(baseGlobal))
                                          .arg(base->ranks)
                                          .arg(formatNumber(topGlobal))
                                          .arg(top->ranks));
    } else {
        plan.weak = options.scaling == PlanOptions::Scaling::Weak;
        plan.inputs << QStringLiteral("scaling: %1, as asked").arg(plan.weak ? QStringLiteral("weak") : QStringLiteral("strong"));
    }
    plan.inputs << QStringLiteral("base point: %1 rank(s), local batch %2, %3 samples per epoch (%4)")
                       .arg(base->ranks)
                       .arg(formatNumber(base->localBatch), formatNumber(base->samplesPerEpoch), base->runId);
    // The batch asked for: the base point's local batch that gives it.
    const double askedLocal = plan.weak ? options.localBatch : options.globalBatch / plan.baseRanks;
    if (askedLocal > 0 && std::abs(askedLocal - plan.baseLocalBatch) > 1e-9 * askedLocal) {
        plan.baseLocalBatch = askedLocal;
        plan.inputs << (plan.weak ? QStringLiteral("predicted at local batch %1 per rank, as asked").arg(formatNumber(askedLocal))
                                  : QStringLiteral("predicted at global batch %1, as asked").arg(formatNumber(options.globalBatch)));
    }

    f.measuredMax = measuredMax;
    f.base = base;
}

// σ of a step: the compute fit's residuals, or the measured epochs' spread where the fit has too
// few points to leave any; the allreduce fit's residuals.
void bandWidths(PlanFit& f)
{
    Plan& plan = f.plan;
    const std::vector<PlanRunInput>& used = f.used;
    const ComputeModel* compute = &f.compute;
    double cv = 0;
    for (const PlanRunInput& r : used)
        if (std::isfinite(r.epochCv)) cv = std::max(cv, r.epochCv);
    const double sigmaCompute = std::max(std::isfinite(compute->relativeRms) && compute->samples >= 3 ? compute->relativeRms : 0.0, cv);
    const double sigmaComm = std::isfinite(plan.model.comm.relativeRms) ? plan.model.comm.relativeRms : 0.0;
    plan.inputs << QStringLiteral("step spread: σ = %1 % of compute (%2) and %3 % of communication (the allreduce fit's residual)")
                       .arg(formatNumber(100 * sigmaCompute))
                       .arg(compute->samples >= 3 ? QStringLiteral("the compute fit's residual or the epochs' spread, the larger")
                                                  : QStringLiteral("the measured epochs' spread"))
                       .arg(formatNumber(100 * sigmaComm));

    f.sigmaCompute = sigmaCompute;
    f.sigmaComm = sigmaComm;
}

// The learning curve, for time-to-target: every run's validation losses (warm-up included).
Status fitCurve(PlanFit& f)
{
    Plan& plan = f.plan;
    const std::vector<PlanRunInput>& runs = f.runs;
    const std::vector<PlanRunInput>& used = f.used;
    const PlanOptions& options = f.options;
    const QString& sweep = f.sweep;
    plan.targetLoss = options.targetLoss;
    QStringList from;
    const QList<RunLosses> losses = validationLosses(runs, &from);
    plan.noiseByLoss = gradientNoiseByLoss(losses);
    for (const RunLosses& r : losses)
        if (!plan.runBatches.contains(r.batch)) plan.runBatches << r.batch;
    std::sort(plan.runBatches.begin(), plan.runBatches.end());
    double sigmaLoss = 0, startupS = 0;
    if (std::isfinite(options.targetLoss)) {
        if (!(options.targetLoss > 0))
            return planError(QStringLiteral("the target loss must be positive (got %1)").arg(options.targetLoss));
        auto curve = fitLearningCurve(losses);
        if (!curve)
            return planError(QStringLiteral("time-to-target: %1 (the validation losses of sweep '%2''s epochs.csv)")
                                 .arg(losses.isEmpty() ? QStringLiteral("no run has a validation loss") : curve.error().message, sweep));
        plan.curve = *curve;
        sigmaLoss = curve->relativeRms;
        QStringList batchText;
        for (double b : curve->batches) batchText << formatNumber(b);
        plan.inputs << (curve->noiseMeasured()
                            ? QStringLiteral("learning curve: validation loss L = L∞ + a·s_eff^−b, ds_eff = ds / (1 + B/B_noise(L)) (s the "
                                             "samples seen at global batch B)")
                            : QStringLiteral("learning curve: validation loss L(s, B) = L∞ + a·(s / (1 + B/B_noise))^−b")) +
                QStringLiteral(" with L∞ = %1, a = %2, b = %3, %4; residual %5 %, from %6 validation losses at global batch(es) %7 (%8)")
                    .arg(formatNumber(curve->lossFloor), formatNumber(curve->amplitude), formatNumber(curve->exponent),
                         curve->noiseMeasured()
                             ? QStringLiteral("B_noise(L) the gradient noise scale the trainer measured (B_simple, %1 epoch(s): "
                                              "%2 at loss %3 to %4 at loss %5; between them log-log, beyond them the nearest)")
                                   .arg(curve->noiseByLoss.size())
                                   .arg(formatNumber(curve->noiseByLoss.last().second), formatNumber(curve->noiseByLoss.last().first),
                                        formatNumber(curve->noiseByLoss.first().second), formatNumber(curve->noiseByLoss.first().first))
                             : curve->batchMeasured()
                             ? QStringLiteral("B_noise = %1 (one constant, fitted to the losses at the global batches)")
                                   .arg(formatNumber(curve->noiseBatch))
                             : QStringLiteral("B_noise not measured (one global batch, or no batch effect seen, and no gradient "
                                              "noise scale from the trainer): the samples to a loss taken as the same at every "
                                              "batch"),
                         formatNumber(100 * sigmaLoss))
                    .arg(curve->samples)
                    .arg(batchText.join(QStringLiteral(", ")), from.join(QStringLiteral(", ")));
        // The first epoch's start-up beyond a steady epoch (allocation, the loader's first fill), as
        // the runs measured it: a run to the target pays it once.
        int firsts = 0;
        for (const PlanRunInput& r : used)
            if (!r.epochs.isEmpty() && std::isfinite(r.epochs.first().trainS) && std::isfinite(r.epochS)) {
                startupS += std::max(0.0, r.epochs.first().trainS - r.epochS);
                ++firsts;
            }
        startupS = firsts > 0 ? startupS / firsts : 0.0;
        plan.inputs << QStringLiteral("time-to-target (validation loss %1): ⌈samples to it / samples per epoch⌉ whole epochs × the "
                                      "predicted epoch, + %2 s of first-epoch start-up (the runs' first epoch beyond their steady one, "
                                      "mean of %3); training time, the target seen at epoch ends; range: the curve's %4 (its residual) "
                                      "with the epoch's range")
                           .arg(formatNumber(options.targetLoss), formatNumber(startupS))
                           .arg(firsts)
                           .arg(planRangeName());
    }

    f.sigmaLoss = sigmaLoss;
    f.startupS = startupS;
    return Done{};
}

}  // namespace scaledesk::planparts
