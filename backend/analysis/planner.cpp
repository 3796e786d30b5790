#include "analysis/planner.h"

#include "analysis/curvesteps.h"
#include "analysis/plangaps.h"

#include "analysis/axisticks.h"
#include "analysis/epochscsv.h"
#include "analysis/metrics.h"
#include "runs/runstore.h"
#include "runs/sweep.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QSaveFile>
#include <QSet>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <tuple>

namespace scaledesk {

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

Error planError(const QString& message, const QString& location = QString()) { return Error{ErrorCode::Usage, message, location}; }

// Mean of a step series' values after step `after` (all of them when none is later).
double meanAfter(const RunMetrics& m, const char* tag, double after, int* count = nullptr)
{
    const Series* s = m.series(QLatin1String(tag));
    if (!s || s->empty()) return kNaN;
    double sum = 0;
    int n = 0;
    for (int pass = 0; pass < 2 && n == 0; ++pass)
        for (std::size_t i = 0; i < s->size(); ++i)
            if ((pass == 1 || s->steps()[i] > after) && std::isfinite(s->values()[i])) {
                sum += s->values()[i];
                ++n;
            }
    if (count) *count = n;
    return n > 0 ? sum / n : kNaN;
}
/// A plan that could not be made says why its runs were left out (what a run of the user's code
/// lacks, most of all).
Error withRunWarnings(Error e, const QStringList& warnings)
{
    if (!warnings.isEmpty()) e.message += QStringLiteral("; ") + warnings.join(QStringLiteral("; "));
    return e;
}

/// The bytes of one gradient element of a dtype as the user's code names it (torch's names, with or
/// without "torch."); 0 when unknown.
double dtypeBytes(QString dtype)
{
    dtype = dtype.trimmed().toLower();
    if (dtype.startsWith(QLatin1String("torch."))) dtype = dtype.mid(6);
    if (dtype == QLatin1String("float32") || dtype == QLatin1String("float") || dtype == QLatin1String("fp32")) return 4;
    if (dtype == QLatin1String("bfloat16") || dtype == QLatin1String("float16") || dtype == QLatin1String("half") ||
        dtype == QLatin1String("bf16") || dtype == QLatin1String("fp16"))
        return 2;
    if (dtype == QLatin1String("float64") || dtype == QLatin1String("double")) return 8;
    return 0;
}

/// A run of the user's own code has no breakdown of its steps: its step time is its epochs'
/// training time over their steps (the steps the epochs record, else its step records), which at
/// 1 rank is compute alone; its gradient size is its parameter count times its dtype's bytes
/// (scaledesk_metrics.init(parameters=, dtype=)). A run that lacks either is left out, and the
/// warning names what is missing. A multi-rank run's step time holds communication it does not
/// time apart: its compute is left to the 1-rank runs (the collectives come from calibrate).
bool commandRunTimes(const QJsonObject& m, const RunMetrics& metrics, int warmupEpochs, PlanRunInput& r, QStringList* warnings)
{
    QStringList missing;
    const double parameters = m.value(QLatin1String("parameters")).toDouble(kNaN);
    const QString dtype = m.value(QLatin1String("gradient_dtype")).toString();
    if (!(parameters > 0))
        missing << QStringLiteral("the gradient size (call scaledesk_metrics.init(parameters=N, dtype=\"float32\"))");
    else if (dtypeBytes(dtype) == 0)
        missing << QStringLiteral("the gradient dtype ('%1' is none the planner knows: float32, bfloat16, float16, float64)").arg(dtype);
    double trainS = 0, steps = 0;
    for (int pass = 0; pass < 2 && steps == 0; ++pass)
        for (const EpochRow& e : r.epochs)
            if ((pass == 1 || e.epoch > warmupEpochs) && std::isfinite(e.trainS) && std::isfinite(e.steps) && e.steps > 0) {
                trainS += e.trainS;
                steps += e.steps;
            }
    if (steps == 0) {  // epochs without their steps (a NERSC line, a pattern): the step records count them
        std::size_t records = 0;
        for (const QString& tag : metrics.tags())
            if (tag.startsWith(QLatin1String("step/"))) records = std::max(records, metrics.series(tag)->size());
        double all = 0;
        for (const EpochRow& e : r.epochs)
            if (std::isfinite(e.trainS)) all += e.trainS;
        if (records > 0 && all > 0) {
            trainS = all;
            steps = double(records);
        }
    }
    if (!(r.localBatch > 0))
        missing << QStringLiteral("the local batch (launch with --local-batch, given to the command as {local_batch})");
    if (steps == 0)
        missing << QStringLiteral("the step time (epochs with their training time, and their steps or step records: "
                                  "scaledesk_metrics.log(step, ...) and epoch(...))");
    if (!missing.isEmpty()) {
        if (warnings)
            *warnings << QStringLiteral("%1: your code's run does not give the planner %2; left out")
                             .arg(r.runId, missing.join(QStringLiteral(" or ")));
        return false;
    }
    r.gradientBytes = parameters * dtypeBytes(dtype);
    r.steps = int(steps);
    if (!std::isfinite(r.samplesPerEpoch)) {
        double samples = 0;
        int n = 0;
        for (const EpochRow& e : r.epochs)
            if (std::isfinite(e.samplesGlobal)) {
                samples += e.samplesGlobal;
                ++n;
            }
        if (n > 0) r.samplesPerEpoch = samples / n;
    }
    if (r.ranks == 1) {
        r.computeS = trainS / steps;
        r.commS = r.exposedS = 0;
    } else if (warnings) {
        *warnings << QStringLiteral("%1: %2 ranks: its step time (%3 s) includes communication your code does not time apart; the "
                                    "compute is fitted on the 1-rank runs, the collectives on calibrate's timings")
                         .arg(r.runId)
                         .arg(r.ranks)
                         .arg(formatNumber(trainS / steps));
    }
    return true;
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
// The validation losses of the runs' epochs, as (samples seen, global batch, loss); the runs that
// gave any go to `from`.
QList<LossSample> validationLosses(const std::vector<PlanRunInput>& runs, QStringList* from)
{
    QList<LossSample> losses;
    for (const PlanRunInput& r : runs) {
        const double batch = std::isfinite(r.globalBatch) ? r.globalBatch : r.localBatch * r.ranks;
        if (!(r.samplesPerEpoch > 0) || !(batch > 0)) continue;
        const qsizetype before = losses.size();
        for (const EpochRow& e : r.epochs)
            if (e.epoch > 0 && e.valLoss > 0) losses << LossSample{e.epoch * r.samplesPerEpoch, batch, e.valLoss};
        if (losses.size() > before) *from << r.runId;
    }
    return losses;
}

// The training time of a run's epochs up to the first whose validation loss is at or below
// `target`; NaN when none is.
double trainingTimeToTarget(const PlanRunInput& r, double target)
{
    double sum = 0;
    for (const EpochRow& e : r.epochs) {
        if (!std::isfinite(e.trainS)) return kNaN;
        sum += e.trainS;
        if (e.valLoss <= target) return sum;
    }
    return kNaN;
}

// Whole epochs until the one whose validation sees the target: ⌈epochs⌉, at least one; inf stays.
double wholeEpochs(double epochs) { return std::isfinite(epochs) ? std::max(1.0, std::ceil(epochs - 1e-9)) : epochs; }
// Whether a run scaled better than linearly: its throughput per rank above the base run's.
bool measuredSuperlinear(const std::vector<PlanRunInput>& used, const PlanRunInput& base)
{
    const double baseX = base.samplesPerEpoch / base.epochS;
    for (const PlanRunInput& r : used)
        if (r.ranks > base.ranks && std::isfinite(r.epochS) && r.samplesPerEpoch / r.epochS > baseX * r.ranks / base.ranks) return true;
    return false;
}

// The base point's efficiency is 1 by definition (no range); elsewhere the range stops at 100 %
// unless a run measured superlinear scaling, and says so.
void boundEfficiency(PlanPoint& p, const Plan& plan, bool superlinear)
{
    p.base = p.ranks == plan.baseRanks && p.nodes == 1;
    if (p.base) {
        p.speedup = p.efficiency = p.efficiencyLow = p.efficiencyHigh = 1.0;
        return;
    }
    if (superlinear) return;
    if (!(p.efficiencyHigh <= 1.0)) {
        p.efficiencyHigh = 1.0;
        p.efficiencyClipped = true;
    }
    p.efficiency = std::min(p.efficiency, 1.0);
    p.efficiencyLow = std::min(p.efficiencyLow, 1.0);
}

// A point that rests on something never measured: no numbers, only what to measure.
void unmeasured(PlanPoint& p)
{
    for (double* v : {&p.stepS,
                      &p.computeS,
                      &p.exposedCommS,
                      &p.epochS,
                      &p.epochLowS,
                      &p.epochHighS,
                      &p.throughput,
                      &p.speedup,
                      &p.efficiency,
                      &p.efficiencyLow,
                      &p.efficiencyHigh,
                      &p.nodeHours,
                      &p.gpuHours,
                      &p.cost,
                      &p.epochsToTarget,
                      &p.epochsToTargetLow,
                      &p.epochsToTargetHigh,
                      &p.timeToTargetS,
                      &p.timeToTargetLowS,
                      &p.timeToTargetHighS,
                      &p.nodeHoursToTarget})
        *v = kNaN;
    p.efficiencyClipped = false;
}

}  // namespace

PlanRunInput::PlanRunInput()
    : localBatch(kNaN), samplesPerEpoch(kNaN), computeS(kNaN), backwardS(kNaN), dataS(kNaN), commS(kNaN), exposedS(kNaN), optimizerS(kNaN),
      epochS(kNaN), epochCv(kNaN), gradientBytes(kNaN), bucketBytes(kNaN), globalBatch(kNaN)
{}

PlanOptions::PlanOptions() : gpuHourPrice(kNaN), targetLoss(kNaN), localBatch(kNaN), globalBatch(kNaN) {}

PlanPoint::PlanPoint()
    : localBatch(kNaN), stepS(kNaN), computeS(kNaN), exposedCommS(kNaN), epochS(kNaN), epochLowS(kNaN), epochHighS(kNaN), throughput(kNaN),
      speedup(kNaN), efficiency(kNaN), efficiencyLow(kNaN), efficiencyHigh(kNaN), nodeHours(kNaN), gpuHours(kNaN), cost(kNaN),
      measuredEpochS(kNaN), measuredEfficiency(kNaN), globalBatch(kNaN), epochsToTarget(kNaN), epochsToTargetLow(kNaN),
      epochsToTargetHigh(kNaN), timeToTargetS(kNaN), timeToTargetLowS(kNaN), timeToTargetHighS(kNaN), nodeHoursToTarget(kNaN),
      measuredTimeToTargetS(kNaN)
{}

Plan::Plan() : baseLocalBatch(kNaN), baseSamplesPerEpoch(kNaN), targetLoss(kNaN) {}

Expected<QList<CommSample>> loadCommSamples(const QString& path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return planError(QStringLiteral("cannot read (%1)").arg(f.errorString()), path);
    QList<CommSample> samples;
    int line = 0;
    while (!f.atEnd()) {
        ++line;
        const QByteArray text = f.readLine().trimmed();
        if (text.isEmpty()) continue;
        QJsonParseError pe;
        const QJsonDocument doc = QJsonDocument::fromJson(text, &pe);
        if (!doc.isObject())
            return planError(QStringLiteral("not a JSON object (%1)").arg(pe.errorString()), QStringLiteral("%1:%2").arg(path).arg(line));
        const QJsonObject o = doc.object();
        const QString kind = o.value(QLatin1String("kind")).toString();
        CommSample s;
        if (kind == QLatin1String("allreduce"))
            s.op = CommSample::Op::Allreduce;
        else if (kind == QLatin1String("reduce_scatter"))
            s.op = CommSample::Op::ReduceScatter;
        else if (kind == QLatin1String("allgather"))
            s.op = CommSample::Op::Allgather;
        else if (kind == QLatin1String("compute"))
            s.op = CommSample::Op::Compute;
        else
            continue;
        const bool compute = s.op == CommSample::Op::Compute;
        for (const char* key : {"ranks", "nodes", compute ? "alone_s" : "bytes", "seconds"}) {
            const QJsonValue v = o.value(QLatin1String(key));
            if (!v.isDouble() || !(v.toDouble() > 0))
                return planError(QStringLiteral("field '%1' is missing or not a positive number").arg(QLatin1String(key)),
                                 QStringLiteral("%1:%2").arg(path).arg(line));
        }
        s.ranks = o.value(QLatin1String("ranks")).toInt();
        s.nodes = o.value(QLatin1String("nodes")).toInt();
        s.bytes = compute ? 0.0 : o.value(QLatin1String("bytes")).toDouble();
        s.seconds = o.value(QLatin1String("seconds")).toDouble();
        s.aloneS = compute ? o.value(QLatin1String("alone_s")).toDouble() : 0.0;
        s.kernel = o.value(QLatin1String("kernel")).toString() == QLatin1String("model")
            ? QStringLiteral("config %1's own training step at local batch %2")
                  .arg(o.value(QLatin1String("config")).toString())
                  .arg(o.value(QLatin1String("local_batch")).toInt())
            : QStringLiteral("a convolution kernel");
        const QString mode = o.value(QLatin1String("mode")).toString();
        if (!compute && !mode.isEmpty() && mode != QLatin1String("after_compute") && mode != QLatin1String("overlapped"))
            return planError(QStringLiteral("field 'mode' is '%1', not \"after_compute\" or \"overlapped\"").arg(mode),
                             QStringLiteral("%1:%2").arg(path).arg(line));
        if (mode == QLatin1String("overlapped") && s.op != CommSample::Op::Allreduce)
            return planError(QStringLiteral("an overlapped timing of a %1: only allreduces are timed behind compute").arg(kind),
                             QStringLiteral("%1:%2").arg(path).arg(line));
        if (!compute && !mode.isEmpty()) {
            s.afterCompute = mode == QLatin1String("after_compute");
            s.overlapped = !s.afterCompute;
            const QString what = s.overlapped ? QStringLiteral("overlapped") : QStringLiteral("after-compute");
            // An overlapped call has no arrival wait: the ranks wait for it after their compute.
            for (const char* key : {"wait_s", "compute_s"}) {
                const QJsonValue v = o.value(QLatin1String(key));
                if (s.overlapped && QLatin1String(key) == QLatin1String("wait_s")) continue;
                if (!v.isDouble() || !(v.toDouble() >= 0))
                    return planError(
                        QStringLiteral("field '%1' is missing or not a number ≥ 0 (an %2 timing)").arg(QLatin1String(key), what),
                        QStringLiteral("%1:%2").arg(path).arg(line));
            }
            s.waitS = s.overlapped ? 0.0 : o.value(QLatin1String("wait_s")).toDouble();
            s.computeS = o.value(QLatin1String("compute_s")).toDouble();
            const QJsonValue kernels = o.value(QLatin1String("kernels"));
            if (!kernels.isUndefined() &&
                !(kernels.isDouble() && kernels.toDouble() >= 1 && kernels.toDouble() == std::floor(kernels.toDouble())))
                return planError(QStringLiteral("field 'kernels' is not a whole number ≥ 1 (an %1 timing)").arg(what),
                                 QStringLiteral("%1:%2").arg(path).arg(line));
            s.kernels = kernels.isUndefined() ? 1 : kernels.toInt();
        }
        samples << s;
    }
    if (samples.isEmpty())
        return planError(QStringLiteral("no timings (lines of kind \"allreduce\", \"reduce_scatter\", \"allgather\" or \"compute\")"),
                         path);
    return samples;
}

Expected<QList<CommSample>> loadCalibration(const RunStore& store, const QString& profile, QStringList* sources)
{
    QList<CommSample> all;
    QList<RunSummary> rows = store.list();
    std::sort(rows.begin(), rows.end(), [](const RunSummary& a, const RunSummary& b) { return a.created < b.created; });
    for (const RunSummary& row : rows) {
        if (row.profile != profile || row.state != RunState::Completed) continue;
        const QString file = store.workspace().runDir(row.id) + QStringLiteral("/comm.jsonl");
        if (!QFile::exists(file)) continue;
        auto record = store.load(row.id);
        if (!record || record->task != QLatin1String("bench-comm")) continue;
        auto samples = loadCommSamples(file);
        if (!samples) return samples.error();
        all << *samples;
        if (sources) *sources << file;
    }
    return all;
}

namespace {
// makePlan() at each ranks per node of `shapes` (→ its node counts), the points merged in one plan.
Expected<Plan> makePlans(const QString& sweep, const std::vector<PlanRunInput>& inputs, const QList<CommSample>& bench,
                         const QStringList& sources, PlanOptions options, const std::map<int, QSet<int>>& shapes)
{
    Expected<Plan> merged = planError(QStringLiteral("no points to predict"));
    for (const auto& [rpn, nodes] : shapes) {
        options.ranksPerNode = rpn;
        options.nodes = nodes.values();
        std::sort(options.nodes.begin(), options.nodes.end());
        auto plan = makePlan(sweep, inputs, bench, sources, options);
        if (!plan) return plan.error();
        if (!merged) {
            merged = *plan;
            continue;
        }
        merged->points << plan->points;
        for (const QString& w : plan->warnings)
            if (!merged->warnings.contains(w)) merged->warnings << w;
    }
    if (merged && shapes.size() > 1)  // by strategy, then ranks
        std::stable_sort(merged->points.begin(), merged->points.end(), [](const PlanPoint& a, const PlanPoint& b) {
            return a.strategy != b.strategy ? a.strategy < b.strategy : a.ranks < b.ranks;
        });
    return merged;
}
}  // namespace

Expected<Plan> planForSweep(const RunStore& store, const QString& sweep, int warmupEpochs, const QStringList& benchmarkFiles,
                            PlanOptions options)
{
    QStringList warnings;
    auto inputs = loadPlanInputs(store, sweep, warmupEpochs, &warnings);
    if (!inputs) return inputs.error();
    QList<CommSample> bench;
    QStringList sources;
    QString profile;
    // The strategies to predict: the trainer's, or any the sweep ran (a command sweep's variants).
    QStringList known{QStringLiteral("ddp"), QStringLiteral("fused"), QStringLiteral("zero1")};
    for (const RunSummary& r : store.list(sweep)) {
        if (!r.profile.isEmpty()) profile = r.profile;
        if (!r.strategy.isEmpty() && !known.contains(r.strategy)) known << r.strategy;
    }
    for (const QString& s : options.strategies)
        if (!known.contains(s))
            return planError(QStringLiteral("strategy '%1' is neither the trainer's nor one sweep '%2' ran; there are %3")
                                 .arg(s, sweep, known.join(QStringLiteral(", "))));
    if (options.profile.isEmpty()) options.profile = profile;
    if (benchmarkFiles.isEmpty()) {
        if (!profile.isEmpty()) {
            auto calibration = loadCalibration(store, profile, &sources);
            if (!calibration) return calibration.error();
            bench = *calibration;
        }
    }
    for (const QString& file : benchmarkFiles) {
        auto samples = loadCommSamples(file);
        if (!samples) return samples.error();
        bench << *samples;
        sources << file;
    }
    // With no node counts asked for: every (nodes, ranks per node) the sweep's runs had.
    std::map<int, QSet<int>> shapes;  // ranks per node → node counts
    if (options.nodes.isEmpty())
        for (const PlanRunInput& r : *inputs)
            shapes[options.ranksPerNode > 0 ? options.ranksPerNode : r.ranks / std::max(1, r.nodes)].insert(r.nodes);
    else
        shapes[options.ranksPerNode] = QSet<int>(options.nodes.begin(), options.nodes.end());
    auto plan = makePlans(sweep, *inputs, bench, sources, options, shapes);
    if (!plan) return withRunWarnings(plan.error(), warnings);
    plan->warnings = warnings + plan->warnings;
    return plan;
}

namespace {

// What makePlan's parts share while they build one plan, in the order makePlan calls them.
struct PlanFit {
    PlanFit(Plan& p, const QString& sw, const std::vector<PlanRunInput>& all, const std::vector<PlanRunInput>& fitted,
            const QList<CommSample>& bench, const QStringList& sources, const PlanOptions& o, int barriers)
        : plan(p), sweep(sw), runs(all), used(fitted), benchmark(bench), benchmarkSources(sources), options(o), barrierLeftOut(barriers)
    {}
    Plan& plan;
    const QString& sweep;
    const std::vector<PlanRunInput>& runs;  ///< every run (the learning curve reads them all)
    const std::vector<PlanRunInput>& used;  ///< the runs with step records to fit
    const QList<CommSample>& benchmark;     ///< the collectives as training meets them where so timed
    const QStringList& benchmarkSources;
    const PlanOptions& options;
    int barrierLeftOut = 0;
    ComputeModel compute;                    ///< fitCompute
    double gradientBytes = 0;                ///< layoutStrategies
    QStringList strategies;                  ///< layoutStrategies
    int rpn = 1;                             ///< fitCollectives: ranks per node predicted
    bool needComm = false;                   ///< fitCollectives: some point has more than one rank
    int measuredMax = 1;                     ///< chooseBase
    const PlanRunInput* base = nullptr;      ///< chooseBase
    double sigmaCompute = 0, sigmaComm = 0;  ///< bandWidths
    double sigmaLoss = 0, startupS = 0;      ///< fitCurve
};

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
    QList<ComputeSample> computeSamples;
    QSet<double> batches;
    for (const PlanRunInput& r : used) {
        const double f = plan.model.contention(r.ranks, r.nodes);
        // A zero1 run's optimizer updated its 1/n shard: counted as the whole update would take.
        const double optimizer = std::isfinite(r.optimizerS) ? r.optimizerS : 0.0;
        const double unsharded = r.strategy == QLatin1String("zero1") ? optimizer * (r.ranks - 1) : 0.0;
        computeSamples << ComputeSample{r.localBatch, (r.computeS + unsharded) / f, std::isfinite(r.backwardS) ? r.backwardS / f : 0.0,
                                        std::isfinite(r.dataS) ? r.dataS : 0.0, (optimizer + unsharded) / f};
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
    plan.inputs << QStringLiteral("data wait: %1 s per step; backward: %2 % of compute; optimizer: %3 % of compute, of which "
                                  "zero1 does 1/n at n ranks (the runs' step records)")
                       .arg(formatNumber(compute->dataS), formatNumber(100.0 * compute->backwardShare),
                            formatNumber(100.0 * compute->optimizerShare));
    if (plan.model.cpuRanks && !plan.model.contentionSamples.isEmpty()) {
        QStringList layouts;
        for (const CommSample& c : std::as_const(plan.model.contentionSamples)) {
            const double between = plan.model.computeBetweenCollectives(c.ranks, c.nodes);
            const bool read = plan.model.contentionSample(c.ranks, c.nodes) == &c;  // a later timing there replaces it
            layouts << QStringLiteral("×%1 at %2 rank(s) on %3 node(s) (%4: %5 s alone, %6 s on every rank at once%7)%8")
                           .arg(formatNumber((read && between > 0 ? between : c.seconds) / c.aloneS))
                           .arg(c.ranks)
                           .arg(c.nodes)
                           .arg(c.kernel, formatNumber(c.aloneS), formatNumber(c.seconds))
                           .arg(read && between > 0 ? QStringLiteral(", %1 s between collectives: the after-compute timings' mean, used")
                                                          .arg(formatNumber(between))
                                                    : QString())
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
    plan.inputs << QStringLiteral("band: ±2σ, σ = %1 % of compute (%2) and %3 % of communication (the allreduce fit's residual)")
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
    double sigmaLoss = 0, startupS = 0;
    if (std::isfinite(options.targetLoss)) {
        if (!(options.targetLoss > 0))
            return planError(QStringLiteral("the target loss must be positive (got %1)").arg(options.targetLoss));
        QStringList from;
        const QList<LossSample> losses = validationLosses(runs, &from);
        auto curve = fitLearningCurve(losses);
        if (!curve)
            return planError(QStringLiteral("time-to-target: %1 (the validation losses of sweep '%2''s epochs.csv)")
                                 .arg(losses.isEmpty() ? QStringLiteral("no run has a validation loss") : curve.error().message, sweep));
        plan.curve = *curve;
        sigmaLoss = curve->relativeRms;
        QStringList batchText;
        for (double b : curve->batches) batchText << formatNumber(b);
        plan.inputs << QStringLiteral("learning curve: validation loss L(s, B) = L∞ + a·(s / (1 + B/B_noise))^−b with L∞ = %1, a = %2, "
                                      "b = %3, %4; residual %5 %, from %6 validation losses at global batch(es) %7 (%8)")
                           .arg(formatNumber(curve->lossFloor), formatNumber(curve->amplitude), formatNumber(curve->exponent),
                                curve->batchMeasured() ? QStringLiteral("B_noise = %1").arg(formatNumber(curve->noiseBatch))
                                                       : QStringLiteral("B_noise not measured (one global batch, or no batch effect "
                                                                        "seen): the samples to a loss taken as the same at every batch"),
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
                                      "mean of %3); training time, the target seen at epoch ends; range: the curve's ±2σ with the "
                                      "epoch's range")
                           .arg(formatNumber(options.targetLoss), formatNumber(startupS))
                           .arg(firsts);
    }

    f.sigmaLoss = sigmaLoss;
    f.startupS = startupS;
    return Done{};
}

// One predicted point: the model's epoch and step at it, its band, time-to-target, what the runs
// measured there, its efficiency bounds and what it would need that was never measured.
PlanPoint predictPoint(const PlanFit& f, const QString& s, int nodes, bool superlinear)
{
    const Plan& plan = f.plan;
    const std::vector<PlanRunInput>& used = f.used;
    const PlanOptions& options = f.options;
    const PlanRunInput* base = f.base;
    const int rpn = f.rpn, measuredMax = f.measuredMax;
    const double sigmaCompute = f.sigmaCompute, sigmaComm = f.sigmaComm, sigmaLoss = f.sigmaLoss, startupS = f.startupS;
    PlanPoint p;
    p.strategy = s;
    p.nodes = nodes;
    p.ranks = nodes * rpn;
    const EpochPrediction e =
        plan.model.epoch(s, p.ranks, nodes, plan.weak, plan.baseRanks, plan.baseLocalBatch, plan.baseSamplesPerEpoch, options.epochs);
    const StepPrediction st = plan.model.step(s, p.ranks, nodes, e.localBatch);
    p.localBatch = e.localBatch;
    p.stepS = st.stepS;
    p.computeS = st.computeS;
    p.exposedCommS = st.exposedS;
    p.epochS = e.epochS;
    const double sigma = e.steps * std::hypot(sigmaCompute * (st.computeS + st.dataS), sigmaComm * st.exposedS);
    p.epochLowS = std::max(0.0, e.epochS - 2 * sigma);
    p.epochHighS = e.epochS + 2 * sigma;
    // A message read off the curve across a step in it: its time is anything between the two
    // sizes' (all of it counted as exposed: the range's far end).
    for (const CurveStep& c : curveStepsCrossed(plan.model, s, p.ranks, nodes)) {
        p.epochLowS = std::max(0.0, p.epochLowS - e.steps * c.downS);
        p.epochHighS += e.steps * c.upS;
        p.rangeNotes << QStringLiteral("range spans a step in the timings: ") + c.describe();
    }
    p.throughput = e.throughput;
    p.speedup = e.speedup;
    p.efficiency = e.efficiency;
    p.efficiencyLow = e.efficiency * e.epochS / p.epochHighS;
    p.efficiencyHigh = p.epochLowS > 0 ? e.efficiency * e.epochS / p.epochLowS : kNaN;
    p.nodeHours = e.nodeHours;
    p.gpuHours = e.epochS * options.epochs * p.ranks / 3600.0;
    p.cost = p.gpuHours * options.gpuHourPrice;
    p.extrapolated = p.ranks > 8 * measuredMax;
    boundEfficiency(p, plan, superlinear);
    p.globalBatch = e.globalBatch;
    if (std::isfinite(options.targetLoss)) {
        const double target = options.targetLoss, perEpoch = plan.baseSamplesPerEpoch;
        p.epochsToTarget = plan.curve.samplesTo(target, e.globalBatch) / perEpoch;
        p.epochsToTargetLow = plan.curve.samplesTo(target / std::max(1e-9, 1 - 2 * sigmaLoss), e.globalBatch) / perEpoch;
        p.epochsToTargetHigh = plan.curve.samplesTo(target / (1 + 2 * sigmaLoss), e.globalBatch) / perEpoch;
        p.timeToTargetS = wholeEpochs(p.epochsToTarget) * e.epochS + startupS;
        p.timeToTargetLowS = wholeEpochs(p.epochsToTargetLow) * p.epochLowS + startupS;
        p.timeToTargetHighS = wholeEpochs(p.epochsToTargetHigh) * p.epochHighS + startupS;
        p.nodeHoursToTarget = p.timeToTargetS * nodes / 3600.0;
        p.targetBeyondCurve = p.epochsToTarget * perEpoch > plan.curve.maxSamples * (1 + 1e-9);
    }
    double sum = 0, throughput = 0, toTarget = 0;
    int n = 0, reached = 0;
    for (const PlanRunInput& r : used)
        if ((r.strategy == s || r.ranks == 1) && r.ranks == p.ranks && r.nodes == nodes && std::isfinite(r.epochS) &&
            std::abs(r.localBatch - e.localBatch) <= 1e-9 * e.localBatch) {
            sum += r.epochS;
            throughput += r.samplesPerEpoch / r.epochS;
            ++n;
            if (const double t = trainingTimeToTarget(r, options.targetLoss); std::isfinite(t)) {
                toTarget += t;
                ++reached;
            }
        }
    p.measuredEpochS = n > 0 ? sum / n : kNaN;
    p.measuredTimeToTargetS = reached > 0 ? toTarget / reached : kNaN;
    // X(n) / (X(n0) · n/n0), as the scaling report defines it, against the measured base.
    if (n > 0 && std::isfinite(base->epochS) && plan.baseLocalBatch == base->localBatch)
        p.measuredEfficiency = throughput / n / (base->samplesPerEpoch / base->epochS * p.ranks / base->ranks);
    for (const PlanGap& g : planGaps(plan.model, s, p.ranks, nodes, options.profile)) {
        p.notMeasured << g.what;
        p.measureWith << g.command;
    }
    if (!p.notMeasured.isEmpty()) unmeasured(p);
    return p;
}

// What the plan as a whole should warn about: the target never reached or beyond the curve, the
// batch's effect unmeasured, extrapolation.
void planWarnings(PlanFit& f)
{
    Plan& plan = f.plan;
    const PlanOptions& options = f.options;
    const int measuredMax = f.measuredMax;
    if (std::isfinite(options.targetLoss)) {
        bool never = false, beyond = false, otherBatch = false;
        for (const PlanPoint& p : plan.points) {
            never = never || std::isinf(p.epochsToTarget);
            beyond = beyond || p.targetBeyondCurve;
            otherBatch = otherBatch || std::abs(p.globalBatch - plan.baseLocalBatch * plan.baseRanks) > 1e-9 * p.globalBatch;
        }
        if (never)
            plan.warnings << QStringLiteral("the learning curve levels off at a validation loss of %1, above the target %2: never reached")
                                 .arg(formatNumber(plan.curve.lossFloor), formatNumber(options.targetLoss));
        else if (std::isinf(plan.points.isEmpty() ? 0.0 : plan.points.first().epochsToTargetHigh))
            plan.warnings << QStringLiteral("the target %1 lies within the curve's ±2σ of its floor (%2): the upper end of its range is "
                                            "never")
                                 .arg(formatNumber(options.targetLoss), formatNumber(plan.curve.lossFloor));
        if (beyond)
            plan.warnings << QStringLiteral("time-to-target: reaching %1 takes more samples than any run saw (%2): the learning curve is "
                                            "extrapolated, its schedule (warm-up, decay) assumed to go on as it went")
                                 .arg(formatNumber(options.targetLoss), formatNumber(plan.curve.maxSamples));
        if (!plan.curve.batchMeasured() && otherBatch)
            plan.warnings << QStringLiteral("time-to-target: the effect of the global batch on the samples to the target was not "
                                            "measured (%1): taken as none, which is optimistic where the global batch grows (weak "
                                            "scaling); runs at two global batches measure it")
                                 .arg(plan.curve.batches.size() < 2 ? QStringLiteral("one global batch in the runs")
                                                                    : QStringLiteral("no difference between the runs' global batches"));
    }
    for (const PlanPoint& p : plan.points)
        if (p.extrapolated) {
            plan.warnings << QStringLiteral("points beyond %1 ranks (8× the largest measured, %2) are extrapolated: flagged in the tables")
                                 .arg(8 * measuredMax)
                                 .arg(measuredMax);
            break;
        }
}

}  // namespace

Expected<Plan> makePlan(const QString& sweep, const std::vector<PlanRunInput>& runs, const QList<CommSample>& timings,
                        const QStringList& benchmarkSources, const PlanOptions& options)
{
    Plan plan;
    // The collectives as training meets them (after compute, no barrier) where they were so timed.
    // The allreduces timed behind compute are no timing of a collective: kept aside for ddp's overlap.
    int barrierLeftOut = 0;
    QList<CommSample> alone;
    for (const CommSample& c : timings)
        if (c.overlapped)
            plan.model.overlapSamples << c;
        else
            alone << c;
    const QList<CommSample> benchmark = preferAfterCompute(alone, &barrierLeftOut);
    plan.sweep = sweep;
    std::vector<PlanRunInput> used;
    for (const PlanRunInput& r : runs)
        if (r.steps > 0 && r.computeS > 0 && r.localBatch > 0 && r.samplesPerEpoch > 0) used.push_back(r);
    if (used.empty())
        return planError(
            QStringLiteral("no run of sweep '%1' has step records with a compute time, a local batch and samples per epoch to fit")
                .arg(sweep));
    if (options.nodes.isEmpty()) return planError(QStringLiteral("no node counts to predict (--nodes)"));

    PlanFit f(plan, sweep, runs, used, benchmark, benchmarkSources, options, barrierLeftOut);
    if (auto ok = fitComputePart(f); !ok) return ok.error();
    describeArrivalWait(f);
    for (auto part : {layoutStrategies, fitCollectives})
        if (auto ok = part(f); !ok) return ok.error();
    checkSizesSent(f);
    chooseBase(f);
    bandWidths(f);
    if (auto ok = fitCurve(f); !ok) return ok.error();
    const bool superlinear = measuredSuperlinear(used, *f.base);
    for (const QString& s : f.strategies)
        for (int nodes : options.nodes) plan.points << predictPoint(f, s, nodes, superlinear);
    planWarnings(f);
    return plan;
}

QString Plan::csv() const
{
    QStringList lines{
        QStringLiteral("strategy,nodes,ranks,local_batch,step_s,compute_s,exposed_comm_s,epoch_s,epoch_low_s,epoch_high_s,"
                       "throughput_samples_s,speedup,efficiency,efficiency_low,efficiency_high,node_hours,gpu_hours,cost,"
                       "measured_epoch_s,measured_efficiency,extrapolated,global_batch,epochs_to_target,"
                       "epochs_to_target_low,epochs_to_target_high,time_to_target_s,time_to_target_low_s,"
                       "time_to_target_high_s,node_hours_to_target,measured_time_to_target_s,target_beyond_curve,efficiency_clipped,"
                       "not_measured,measure_with,range_notes")};
    for (const PlanPoint& p : points)
        lines << QStringList{csvField(p.strategy),
                             QString::number(p.nodes),
                             QString::number(p.ranks),
                             csvNumber(p.localBatch),
                             csvNumber(p.stepS),
                             csvNumber(p.computeS),
                             csvNumber(p.exposedCommS),
                             csvNumber(p.epochS),
                             csvNumber(p.epochLowS),
                             csvNumber(p.epochHighS),
                             csvNumber(p.throughput),
                             csvNumber(p.speedup),
                             csvNumber(p.efficiency),
                             csvNumber(p.efficiencyLow),
                             csvNumber(p.efficiencyHigh),
                             csvNumber(p.nodeHours),
                             csvNumber(p.gpuHours),
                             csvNumber(p.cost),
                             csvNumber(p.measuredEpochS),
                             csvNumber(p.measuredEfficiency),
                             p.extrapolated ? QStringLiteral("yes") : QStringLiteral("no"),
                             csvNumber(p.globalBatch),
                             csvNumber(p.epochsToTarget),
                             csvNumber(p.epochsToTargetLow),
                             csvNumber(p.epochsToTargetHigh),
                             csvNumber(p.timeToTargetS),
                             csvNumber(p.timeToTargetLowS),
                             csvNumber(p.timeToTargetHighS),
                             csvNumber(p.nodeHoursToTarget),
                             csvNumber(p.measuredTimeToTargetS),
                             std::isfinite(targetLoss) ? (p.targetBeyondCurve ? QStringLiteral("yes") : QStringLiteral("no")) : QString(),
                             p.efficiencyClipped ? QStringLiteral("yes") : QStringLiteral("no"),
                             csvField(p.notMeasured.join(QStringLiteral("; "))),
                             csvField(p.measureWith.join(QStringLiteral("; "))),
                             csvField(p.rangeNotes.join(QStringLiteral("; ")))}
                     .join(QLatin1Char(','));
    return lines.join(QLatin1Char('\n')) + QLatin1Char('\n');
}

QString Plan::markdown() const
{
    auto num = [](double v) { return std::isfinite(v) ? formatNumber(v) : QStringLiteral("–"); };
    QStringList md;
    md << QStringLiteral("# Scaling plan: %1").arg(sweep) << QString()
       << QStringLiteral("Predicted by the performance model (docs/planner.md) from what the sweep measured; ranges are ±2σ.") << QString();
    const bool cost = !points.isEmpty() && std::isfinite(points.first().cost);
    md << QStringLiteral("| strategy | nodes | ranks | epoch | range | efficiency | speedup | node-hours%1 | measured | |")
              .arg(cost ? QStringLiteral(" | cost") : QString())
       << QStringLiteral("|---|---|---|---|---|---|---|---|%1---|---|").arg(cost ? QStringLiteral("---|") : QString());
    for (const PlanPoint& p : points) {
        if (!p.notMeasured.isEmpty()) {  // no number the model only guessed
            md << QStringLiteral("| %1 | %2 | %3 | not measured | | | | |%4 %5 | %6 |")
                      .arg(p.strategy)
                      .arg(p.nodes)
                      .arg(p.ranks)
                      .arg(cost ? QStringLiteral(" |") : QString(),
                           std::isfinite(p.measuredEpochS) ? formatDuration(p.measuredEpochS) : QStringLiteral("–"),
                           p.notMeasured.join(QStringLiteral("; ")));
            continue;
        }
        md << QStringLiteral("| %1 | %2 | %3 | %4 | %5–%6 | %7%8 | %9 | %10%11 | %12 | %13 |")
                  .arg(p.strategy)
                  .arg(p.nodes)
                  .arg(p.ranks)
                  .arg(formatDuration(p.epochS), formatDuration(p.epochLowS), formatDuration(p.epochHighS),
                       formatWithRange(100 * p.efficiency, 100 * p.efficiencyLow, 100 * p.efficiencyHigh, QStringLiteral(" %")),
                       p.efficiencyClipped ? QStringLiteral(", clipped at 100 %") : QString(), num(p.speedup), num(p.nodeHours))
                  .arg(cost ? QStringLiteral(" | ") + num(p.cost) : QString())
                  .arg(std::isfinite(p.measuredEpochS) ? formatDuration(p.measuredEpochS) : QStringLiteral("–"))
                  .arg(QStringList{p.extrapolated ? QStringLiteral("extrapolated") : QString(), p.rangeNotes.join(QStringLiteral("; "))}
                           .filter(QRegularExpression(QStringLiteral(".")))
                           .join(QStringLiteral("; ")));
    }
    if (std::isfinite(targetLoss)) {
        auto time = [](double v) { return std::isinf(v) ? QStringLiteral("never") : formatDuration(v); };
        md << QString() << QStringLiteral("## Time to a validation loss of %1").arg(formatNumber(targetLoss)) << QString()
           << QStringLiteral("| strategy | nodes | global batch | epochs | time | range | node-hours | measured | |")
           << QStringLiteral("|---|---|---|---|---|---|---|---|---|");
        for (const PlanPoint& p : points)
            md << QStringLiteral("| %1 | %2 | %3 | %4 (%5–%6) | %7 | %8–%9 | %10 | %11 | %12 |")
                      .arg(p.strategy)
                      .arg(p.nodes)
                      .arg(num(p.globalBatch), num(p.epochsToTarget), num(p.epochsToTargetLow), num(p.epochsToTargetHigh),
                           time(p.timeToTargetS), time(p.timeToTargetLowS), time(p.timeToTargetHighS), num(p.nodeHoursToTarget),
                           std::isfinite(p.measuredTimeToTargetS) ? formatDuration(p.measuredTimeToTargetS) : QStringLiteral("–"))
                      .arg(p.targetBeyondCurve ? QStringLiteral("beyond the measured curve") : QString());
    }
    QStringList commands;
    for (const PlanPoint& p : points)
        for (const QString& c : p.measureWith)
            if (!commands.contains(c)) commands << c;
    if (!commands.isEmpty()) {
        md << QString() << QStringLiteral("## What to measure") << QString()
           << QStringLiteral("The points marked \"not measured\" need timings the model does not have; these commands take them:")
           << QString();
        for (const QString& c : commands) md << QStringLiteral("- `%1`").arg(c);
    }
    if (std::any_of(points.begin(), points.end(), [](const PlanPoint& p) { return p.efficiencyClipped; }))
        md << QString()
           << QStringLiteral("An efficiency range marked \"clipped\" reached past 100 %: it is cut there, since no run of the sweep "
                             "scaled better than linearly.");
    md << QString() << QStringLiteral("## Where the numbers come from") << QString();
    for (const QString& i : inputs) md << QStringLiteral("- ") + i;
    if (!warnings.isEmpty()) {
        md << QString() << QStringLiteral("## Warnings") << QString();
        for (const QString& w : warnings) md << QStringLiteral("- ") + w;
    }
    return md.join(QLatin1Char('\n')) + QLatin1Char('\n');
}

Expected<std::vector<PlanRunInput>> loadPlanInputs(const RunStore& store, const QString& sweep, int warmupEpochs, QStringList* warnings)
{
    const QList<RunSummary> rows = store.list(sweep);
    if (rows.isEmpty()) return planError(QStringLiteral("no runs in sweep '%1'").arg(sweep));
    return loadPlanInputsOf(store, rows, warmupEpochs, warnings);
}

Expected<Plan> planForLaunch(const RunStore& store, const QString& profile, const QString& configName, const QList<RunPoint>& points,
                             const QString& task)
{
    // The finished training runs of this config on this profile, whatever sweep they were in.
    QList<RunSummary> rows;
    QStringList ids;
    for (const RunSummary& row : store.list()) {
        if (row.profile != profile || row.state != RunState::Completed || !row.origin.isEmpty()) continue;
        auto r = store.load(row.id);
        if (!r || r->task != task || r->configName != configName) continue;
        rows << row;
        ids << row.id;
    }
    if (rows.isEmpty())
        return planError(
            task == QLatin1String("command")
                ? QStringLiteral("no completed run of run definition '%1' on profile '%2' to fit the model to (a 1-rank run gives "
                                 "the compute: its step time)")
                      .arg(configName, profile)
                : QStringLiteral("no completed run of config '%1' on profile '%2' to fit the model to").arg(configName, profile));
    QStringList warnings;
    auto inputs = loadPlanInputsOf(store, rows, 1, &warnings);
    if (!inputs) return inputs.error();
    QStringList sources;
    auto calibration = loadCalibration(store, profile, &sources);
    if (!calibration) return calibration.error();
    // Each point's strategy at its nodes and ranks per node.
    std::map<int, QSet<int>> shapes;
    PlanOptions o;
    o.profile = profile;
    for (const RunPoint& p : points) {
        shapes[p.ranksPerNode].insert(p.nodes);
        if (!o.strategies.contains(p.strategy)) o.strategies << p.strategy;
    }
    o.scaling =
        !points.isEmpty() && points.first().scaling == QLatin1String("strong") ? PlanOptions::Scaling::Strong : PlanOptions::Scaling::Weak;
    // The points' batch: a weak sweep's local batch per rank, a strong one's global batch.
    if (!points.isEmpty() && points.first().localBatch > 0) {
        const RunPoint& p = points.first();
        if (o.scaling == PlanOptions::Scaling::Strong)
            o.globalBatch = double(p.localBatch) * p.worldSize();
        else
            o.localBatch = p.localBatch;
    }
    auto merged = makePlans(configName, *inputs, *calibration, sources, o, shapes);
    if (!merged) return withRunWarnings(merged.error(), warnings);
    merged->inputs.prepend(QStringLiteral("fitted to %1 completed run(s) of %2 on %3: %4")
                               .arg(ids.size())
                               .arg(configName, profile, ids.join(QStringLiteral(", "))));
    merged->warnings = warnings + merged->warnings;
    return merged;
}

Expected<std::vector<PlanRunInput>> loadPlanInputsOf(const RunStore& store, const QList<RunSummary>& rows, int warmupEpochs,
                                                     QStringList* warnings)
{
    std::vector<PlanRunInput> out;
    for (const RunSummary& row : rows) {
        const QString dir = store.workspace().runDir(row.id);
        QFile mf(dir + QStringLiteral("/manifest.json"));
        if (!mf.open(QIODevice::ReadOnly)) {
            if (warnings) *warnings << QStringLiteral("%1: no manifest.json yet; left out").arg(row.id);
            continue;
        }
        const QJsonObject m = QJsonDocument::fromJson(mf.readAll()).object();
        PlanRunInput r;
        r.runId = row.id;
        // The strategy launched (older trainers wrote "none" into a 1-rank run's manifest).
        r.strategy = row.strategy.isEmpty() ? m.value(QLatin1String("strategy")).toString() : row.strategy;
        r.ranks = m.value(QLatin1String("world_size")).toInt(row.nodes * row.ranksPerNode);
        r.nodes = m.value(QLatin1String("nodes")).toInt(row.nodes);
        r.localBatch = m.value(QLatin1String("local_batch_size")).toDouble(kNaN);
        const double stepsPerEpoch = m.value(QLatin1String("steps_per_epoch")).toDouble(kNaN);
        r.globalBatch = m.value(QLatin1String("global_batch_size")).toDouble(kNaN);
        r.samplesPerEpoch = stepsPerEpoch * r.globalBatch;
        r.gradientBytes = 4.0 * m.value(QLatin1String("parameters")).toDouble(kNaN);
        r.cpu = m.value(QLatin1String("device")).toString() == QLatin1String("cpu");
        r.bucketBytes = (r.strategy == QLatin1String("fused") ? m.value(QLatin1String("fusion_mb")).toDouble(kNaN)
                                                              : m.value(QLatin1String("bucket_cap_mb")).toDouble(kNaN)) *
            (1 << 20);
        const QJsonObject layouts = m.value(QLatin1String("comm_message_bytes")).toObject();
        for (auto it = layouts.begin(); it != layouts.end(); ++it) {
            QList<double> sizes;
            for (const QJsonValue& v : it.value().toArray())
                if (v.toDouble() > 0) sizes << v.toDouble();
            if (!sizes.isEmpty()) r.messageBytes.insert(it.key(), sizes);
        }
        if (m.value(QLatin1String("noddp")).toBool()) {
            if (warnings) *warnings << QStringLiteral("%1: a --noddp run (no gradient synchronisation); left out").arg(row.id);
            continue;
        }
        const RunMetrics metrics = loadRunMetrics(dir + QStringLiteral("/metrics.jsonl"));
        const double after = std::isfinite(stepsPerEpoch) ? stepsPerEpoch * warmupEpochs : 0.0;
        r.computeS = meanAfter(metrics, "step/compute_s", after, &r.steps);
        r.backwardS = meanAfter(metrics, "step/backward_s", after);
        r.optimizerS = meanAfter(metrics, "step/optim_s", after);
        r.dataS = meanAfter(metrics, "step/data_s", after);
        r.commS = meanAfter(metrics, "step/comm_s", after);
        r.exposedS = meanAfter(metrics, "step/comm_exposed_s", after);
        const EpochTable epochs = loadEpochsCsv(dir + QStringLiteral("/epochs.csv"));
        r.epochs = epochs.rows;
        QList<double> times;
        for (const EpochRow& e : epochs.rows)
            if (e.epoch > warmupEpochs && std::isfinite(e.trainS)) times << e.trainS;
        if (!times.isEmpty()) {
            double sum = 0, sq = 0;
            for (double t : times) sum += t;
            r.epochS = sum / times.size();
            for (double t : times) sq += (t - r.epochS) * (t - r.epochS);
            r.epochCv = times.size() > 1 ? std::sqrt(sq / (times.size() - 1)) / r.epochS : kNaN;
        }
        if (m.value(QLatin1String("launcher")).toString() == QLatin1String("command")) {
            if (!commandRunTimes(m, metrics, warmupEpochs, r, warnings)) continue;
        } else if (r.steps == 0 && warnings) {
            *warnings << QStringLiteral("%1: no step records; left out of the fit").arg(row.id);
        }
        out.push_back(r);
    }
    return out;
}

Status writePlan(const Plan& plan, const QString& dir, const QStringList& formats, const PlanRenderer& render, QStringList* written)
{
    const auto imageFormats = exportImageFormats(formats, QStringLiteral("plan"), bool(render));
    if (!imageFormats) return imageFormats.error();
    const QStringList& images = *imageFormats;
    if (!QDir().mkpath(dir)) return planError(QStringLiteral("cannot create the folder"), dir);
    QList<std::pair<QString, QString>> texts;
    if (formats.contains(QStringLiteral("csv"))) texts << std::pair{QStringLiteral("plan.csv"), plan.csv()};
    if (formats.contains(QStringLiteral("md"))) texts << std::pair{QStringLiteral("plan.md"), plan.markdown()};
    for (const auto& [name, text] : texts) {
        QSaveFile f(dir + QLatin1Char('/') + name);
        if (!f.open(QIODevice::WriteOnly) || f.write(text.toUtf8()) < 0 || !f.commit())
            return planError(QStringLiteral("cannot write (%1)").arg(f.errorString()), f.fileName());
        if (written) *written << f.fileName();
    }
    if (!images.isEmpty()) return render(plan, dir, images, written);
    return Done{};
}

}  // namespace scaledesk
