#include "analysis/scalingreport.h"

#include "analysis/learningcurve.h"

#include "analysis/axisticks.h"

#include "config/configresolve.h"

#include <QDateTime>
#include <QJsonArray>
#include <QSet>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

namespace scaledesk {

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double mean(const QList<double>& v)
{
    double s = 0;
    int n = 0;
    for (double x : v)
        if (std::isfinite(x)) {
            s += x;
            ++n;
        }
    return n ? s / n : kNaN;
}

double stddev(const QList<double>& v)
{
    const double m = mean(v);
    double s = 0;
    int n = 0;
    for (double x : v)
        if (std::isfinite(x)) {
            s += (x - m) * (x - m);
            ++n;
        }
    return n > 1 ? std::sqrt(s / (n - 1)) : (n == 1 ? 0.0 : kNaN);
}

double startOf(const QJsonObject& manifest)
{
    QString s = manifest.value(QStringLiteral("first_start_utc")).toString();
    if (s.isEmpty()) s = manifest.value(QStringLiteral("start_utc")).toString();
    const QDateTime t = QDateTime::fromString(s, Qt::ISODateWithMs);
    return t.isValid() ? t.toMSecsSinceEpoch() / 1000.0 : kNaN;
}

// Numbers for a person (report.md, warnings): at most 4 significant digits; the CSVs keep all.
QString num(double v, int precision = 4) { return formatNumber(v, std::min(precision, 4)); }

// The decimals that give a column `significant` digits at its smallest nonzero magnitude (0 to 4),
// so that its numbers line up: "1.000" beside "1.391", not "1".
int columnDecimals(const QList<double>& values, int significant = 4)
{
    double smallest = std::numeric_limits<double>::infinity();
    for (double v : values)
        if (std::isfinite(v) && v != 0) smallest = std::min(smallest, std::abs(v));
    if (!std::isfinite(smallest)) return 0;
    return std::clamp(significant - 1 - int(std::floor(std::log10(smallest))), 0, 4);
}

QString fixed(double v, int decimals) { return std::isfinite(v) ? QString::number(v, 'f', decimals) : QStringLiteral("–"); }

QString pct(double v) { return std::isnan(v) ? QStringLiteral("–") : QString::number(100 * v, 'f', 1) + QLatin1Char('%'); }

// Runs of the sweep whose measured epochs (after warm-up) ran at the same time on a host they
// both used (manifest.json's hostnames): they shared its cores, and their times say so. One
// warning per such run, naming the others and for how long.
QStringList sharedHostWarnings(const QList<ReportRun>& input, int warmupEpochs)
{
    struct Span {
        QString id;
        QSet<QString> hosts;
        double begin = kNaN, end = kNaN;
    };
    QList<Span> spans;
    for (const ReportRun& in : input) {
        Span s;
        s.id = in.record.id;
        for (const auto& h : in.manifest.value(QStringLiteral("hostnames")).toArray())
            if (!h.toString().isEmpty()) s.hosts.insert(h.toString());
        for (const auto& e : in.epochs.rows) {
            if (e.epoch <= warmupEpochs || !std::isfinite(e.tEnd) || !std::isfinite(e.wallS)) continue;
            s.begin = std::isnan(s.begin) ? e.tEnd - e.wallS : std::min(s.begin, e.tEnd - e.wallS);
            s.end = std::isnan(s.end) ? e.tEnd : std::max(s.end, e.tEnd);
        }
        if (!s.hosts.isEmpty() && std::isfinite(s.begin)) spans << s;
    }
    QStringList warnings;
    for (const Span& a : spans) {
        QStringList others;
        QSet<QString> where;
        for (const Span& b : spans) {
            if (&a == &b) continue;
            const QSet<QString> shared = QSet<QString>(a.hosts).intersect(b.hosts);
            const double overlap = std::min(a.end, b.end) - std::max(a.begin, b.begin);
            if (shared.isEmpty() || overlap < 1.0) continue;  // a second: clocks and rounding
            others << QStringLiteral("%1 (%2 s)").arg(b.id, num(overlap, 3));
            where.unite(shared);
        }
        if (others.isEmpty()) continue;
        QStringList hosts = where.values();
        hosts.sort();
        warnings << QStringLiteral("%1: its measured epochs (%2 s) ran at the same time as %3 on %4: the runs shared the host's "
                                   "cores, so its epoch time, and the speedup and efficiency from it, are distorted; run the "
                                   "points one after another")
                        .arg(a.id, num(a.end - a.begin, 3), others.join(QStringLiteral(", ")), hosts.join(QStringLiteral(", ")));
    }
    return warnings;
}
}  // namespace

ReportRunRow::ReportRunRow()
    : epochS(kNaN), samplesPerEpoch(kNaN), throughput(kNaN), stepsPerEpoch(kNaN), computeS(kNaN), commS(kNaN), dataS(kNaN), otherS(kNaN),
      bestValLoss(kNaN), timeToTargetS(kNaN), validationS(kNaN), energyWh(kNaN), gpuUtilPct(kNaN), computeFraction(kNaN)
{}

ReportGroupRow::ReportGroupRow()
    : epochS(kNaN), epochSStd(kNaN), epochSMin(kNaN), epochSMax(kNaN), samplesPerEpoch(kNaN), throughput(kNaN), speedup(kNaN),
      throughputSpeedup(kNaN), ideal(kNaN), efficiency(kNaN), strongEfficiency(kNaN), weakEfficiency(kNaN), computeS(kNaN), commS(kNaN),
      dataS(kNaN), otherS(kNaN), validationS(kNaN), stepsPerEpoch(kNaN), timeToTargetS(kNaN), energyWh(kNaN), gpuUtilPct(kNaN),
      computeFraction(kNaN)
{}

ScalingReport::ScalingReport() : target(kNaN) {}

namespace {

// A run imported from itwinai (manifest report_definition), whose report follows itwinai's formulas.
bool itwinaiDefined(const QJsonObject& manifest)
{
    return manifest.value(QStringLiteral("report_definition")).toString() == QLatin1String("itwinai");
}

// What an imported itwinai run's manifest says about the whole run: energy (rectangle rule over
// its sampler's interval), mean utilisation of every sample, and the profiler's computation share,
// which splits the epoch into computation and "other" as itwinai's computation-vs-other plot does.
void importedTelemetry(const QJsonObject& manifest, ReportRunRow& row)
{
    auto value = [&](const char* key) {
        const QJsonValue v = manifest.value(QLatin1String(key));
        return v.isDouble() ? v.toDouble() : kNaN;
    };
    if (std::isnan(row.energyWh)) row.energyWh = value("gpu_energy_wh");
    if (std::isnan(row.gpuUtilPct)) row.gpuUtilPct = value("gpu_util_pct_mean");
    row.computeFraction = value("computation_fraction");
    // itwinai's one epoch time has validation in it or not, by version: no part of it is validation.
    if (itwinaiDefined(manifest)) row.validationS = kNaN;
    if (std::isfinite(row.computeFraction) && std::isnan(row.computeS) && row.used) {
        row.computeS = row.computeFraction * row.epochS;
        row.otherS = row.epochS - row.computeS;
    }
}

// One run's row: its epochs after warm-up averaged (training time, or with validation), its
// best validation loss and its energy; what was left out and why goes to `warnings`.
ReportRunRow runRow(const ReportRun& in, const ReportOptions& options, QStringList& warnings)
{
    const RunRecord& r = in.record;
    ReportRunRow row;
    row.runId = r.id;
    row.strategy = r.strategy;
    row.state = runStateName(r.state);
    row.nodes = r.nodes;
    row.ranksPerNode = r.ranksPerNode;
    row.world = r.nodes * r.ranksPerNode;
    row.repetition = r.repetition;
    for (const QString& w : in.epochs.warnings) warnings << r.id + QStringLiteral(": ") + w;
    const bool usable = r.state == RunState::Completed || r.state == RunState::Running || r.state == RunState::Requeued;
    if (!usable) {
        warnings << QStringLiteral("%1: %2; left out of the averages").arg(r.id, runStateName(r.state));
    } else if (in.epochs.rows.isEmpty()) {
        // The user's own code that ended without an epoch record never called scaledesk_metrics.epoch().
        const bool command = r.task == QLatin1String("command") && r.state == RunState::Completed;
        warnings << (command ? QStringLiteral("%1: your code recorded no epochs (scaledesk_metrics.epoch(); docs/own-code.md); left out")
                             : QStringLiteral("%1: no epochs yet; left out"))
                        .arg(r.id);
    } else {
        if (r.task == QLatin1String("command") &&
            std::none_of(in.epochs.rows.begin(), in.epochs.rows.end(), [](const EpochRow& e) { return std::isfinite(e.samplesGlobal); }))
            warnings << QStringLiteral("%1: your code's epochs record no samples (scaledesk_metrics.epoch(..., samples=N)): no "
                                       "throughput or efficiency")
                            .arg(r.id);
        if (r.state != RunState::Completed)
            warnings << QStringLiteral("%1: still %2; its finished epochs are used").arg(r.id, runStateName(r.state));
        double fullSteps = 0;
        for (const auto& e : in.epochs.rows)
            if (std::isfinite(e.steps)) fullSteps = std::max(fullSteps, e.steps);
        QList<double> wall, samples, steps, compute, comm, data, validation, util;
        bool noTrainTime = false;
        for (const auto& e : in.epochs.rows) {
            if (e.epoch <= options.warmupEpochs || (!std::isfinite(e.wallS) && !std::isfinite(e.trainS))) continue;
            if (std::isfinite(e.steps) && e.steps < fullSteps) {
                warnings << QStringLiteral("%1: epoch %2 ran %3 of %4 steps (resumed mid-way); left out")
                                .arg(r.id)
                                .arg(e.epoch)
                                .arg(e.steps)
                                .arg(fullSteps);
                continue;
            }
            // The epoch's time: training alone (train_s), or with validation (wall_s). A file
            // without train_s (an older trainer) gives wall_s − val_s, or wall_s, said once.
            double train = e.trainS;
            if (!std::isfinite(train)) {
                noTrainTime = true;
                train = std::isfinite(e.valS) ? e.wallS - e.valS : e.wallS;
            }
            wall << (options.includeValidation && std::isfinite(e.wallS) ? e.wallS : train);
            // Validation's time: recorded, or the wall time's rest; unknown (–) when neither was written.
            validation << (std::isfinite(e.valS) ? e.valS : std::isfinite(e.wallS) ? std::max(0.0, e.wallS - train) : kNaN);
            samples << e.samplesGlobal;
            steps << e.steps;
            compute << e.computeS;
            comm << e.allreduceWaitS;
            data << e.dataWaitS;
            util << e.gpuUtilPct;
        }
        if (wall.isEmpty()) {
            warnings << QStringLiteral("%1: only %2 epoch(s), all warm-up (%3 left out); not used")
                            .arg(r.id)
                            .arg(in.epochs.rows.size())
                            .arg(options.warmupEpochs);
        } else {
            row.used = true;
            row.epochsUsed = int(wall.size());
            row.epochS = mean(wall);
            row.samplesPerEpoch = mean(samples);
            row.throughput = row.samplesPerEpoch / row.epochS;
            row.stepsPerEpoch = mean(steps);
            row.computeS = mean(compute);
            row.commS = mean(comm);
            row.dataS = mean(data);
            row.validationS = mean(validation);
            row.gpuUtilPct = mean(util);
            // What the measured parts of training leave (with validation in epochS, it is apart too).
            row.otherS = row.epochS - row.computeS - row.commS - row.dataS - (options.includeValidation ? row.validationS : 0.0);
            if (noTrainTime && !options.includeValidation)
                warnings << QStringLiteral("%1: epochs.csv has no train_s; epoch time is wall_s − val_s").arg(r.id);
            if (std::isfinite(row.stepsPerEpoch) && row.stepsPerEpoch < options.minStepsPerEpoch)
                warnings << QStringLiteral("%1: %2 steps per epoch per rank (under %3): timings are dominated by start-up and noise")
                                .arg(r.id)
                                .arg(row.stepsPerEpoch)
                                .arg(options.minStepsPerEpoch);
        }
    }
    for (const auto& e : in.epochs.rows) {
        if (std::isfinite(e.valLoss) && !(e.valLoss >= row.bestValLoss)) row.bestValLoss = e.valLoss;
        // Energy is the run's whole cost, warm-up included (itwinai reports the total).
        if (std::isfinite(e.gpuEnergyWh)) row.energyWh = (std::isnan(row.energyWh) ? 0.0 : row.energyWh) + e.gpuEnergyWh;
    }
    importedTelemetry(in.manifest, row);
    return row;
}

// The target (given, or the lowest validation loss every run reached) and each used run's time to it.
void timesToTarget(ScalingReport& rep, const QList<ReportRun>& input, const ReportOptions& options)
{
    if (options.targetLoss) {
        rep.target = *options.targetLoss;
        rep.targetSource = QStringLiteral("given");
        rep.targetGiven = true;
    } else {
        // The lowest loss every run reached (the highest of their best losses), so that every
        // group has a time-to-target; a target only the smallest runs reached left the others
        // without bars in a short sweep.
        for (const auto& row : rep.runs)
            if (row.used && std::isfinite(row.bestValLoss) && !(row.bestValLoss <= rep.target)) rep.target = row.bestValLoss;
        rep.targetSource = QStringLiteral("the lowest every run reached");
    }
    for (int i = 0; i < rep.runs.size(); ++i) {
        ReportRunRow& row = rep.runs[i];
        if (!row.used || std::isnan(rep.target)) continue;
        const double start = startOf(input[i].manifest);
        double elapsed = 0;
        for (const auto& e : input[i].epochs.rows) {
            elapsed += std::isfinite(e.wallS) ? e.wallS : 0;
            if (std::isfinite(e.valLoss) && e.valLoss <= rep.target) {
                row.timeToTargetS = std::isfinite(start) && std::isfinite(e.tEnd) ? e.tEnd - start : elapsed;
                break;
            }
        }
        if (std::isnan(row.timeToTargetS))
            rep.warnings << QStringLiteral("%1: never reached the target validation loss %2").arg(row.runId, num(rep.target));
        else if (input[i].manifest.contains(QStringLiteral("first_start_utc")))
            rep.warnings << QStringLiteral("%1: was resumed; its time-to-target includes the time it waited to resume").arg(row.runId);
    }
}

// A (strategy, world size) group over its repetitions: means of the used runs, and warnings for
// missing repetitions, differing configs and unequal samples. `maxRep`: the repetitions a launched
// sweep planned for every group; 0 for imported runs (itwinai's), where a group has the runs that
// were made and only those left out are missing.
ReportGroupRow groupRow(const QString& strategy, int world, const QList<int>& members, const QList<ReportRunRow>& runs,
                        const QList<ReportRun>& input, int maxRep, QStringList& warnings)
{
    ReportGroupRow g;
    g.strategy = strategy;
    g.world = world;
    QList<double> t, x, s, c, m, d, o, v, st, ttt, en, ut, cf;
    QList<QMap<QString, QString>> configs;
    QStringList configIds;
    for (int i : members) {
        const auto& row = runs[i];
        g.nodes = row.nodes;
        if (!row.used) continue;
        ++g.repetitions;
        t << row.epochS;
        x << row.throughput;
        s << row.samplesPerEpoch;
        c << row.computeS;
        m << row.commS;
        d << row.dataS;
        o << row.otherS;
        v << row.validationS;
        st << row.stepsPerEpoch;
        en << row.energyWh;
        ut << row.gpuUtilPct;
        cf << row.computeFraction;
        if (std::isfinite(row.timeToTargetS)) {
            ttt << row.timeToTargetS;
            ++g.reachedTarget;
        }
        QMap<QString, QString> cfg = input[i].config;
        cfg.insert(QStringLiteral("(run) local batch"), QString::number(input[i].record.localBatch));
        configs << cfg;
        configIds << row.runId;
    }
    const int expected = maxRep > 0 ? maxRep : int(members.size());
    if (g.repetitions < expected)
        warnings << QStringLiteral("%1 at %2 ranks: %3 of %4 repetitions have data")
                        .arg(g.strategy)
                        .arg(g.world)
                        .arg(g.repetitions)
                        .arg(expected);
    if (configs.size() > 1) {
        const QStringList diff = differingKeys(configs);
        if (!diff.isEmpty())
            warnings << QStringLiteral("%1 at %2 ranks: the repetitions' configs differ in %3")
                            .arg(g.strategy)
                            .arg(g.world)
                            .arg(diff.join(QStringLiteral(", ")));
    }
    QList<double> sFinite;
    for (double v : s)
        if (std::isfinite(v)) sFinite << v;
    if (!sFinite.isEmpty() && *std::max_element(sFinite.begin(), sFinite.end()) != *std::min_element(sFinite.begin(), sFinite.end()))
        warnings << QStringLiteral("%1 at %2 ranks: the repetitions processed different numbers of samples per epoch")
                        .arg(g.strategy)
                        .arg(g.world);
    g.epochS = mean(t);
    g.epochSStd = stddev(t);
    if (!t.isEmpty()) {
        g.epochSMin = *std::min_element(t.begin(), t.end());
        g.epochSMax = *std::max_element(t.begin(), t.end());
    }
    g.samplesPerEpoch = mean(s);
    g.throughput = g.samplesPerEpoch / g.epochS;  // X = global samples per epoch / T̄ (§7.4)
    g.computeS = mean(c);
    g.commS = mean(m);
    g.dataS = mean(d);
    g.validationS = mean(v);
    g.stepsPerEpoch = mean(st);
    g.otherS = mean(o);
    g.timeToTargetS = mean(ttt);
    g.energyWh = mean(en);
    g.gpuUtilPct = mean(ut);
    g.computeFraction = mean(cf);
    // An itwinai group's breakdown is its profiler share of the group's epoch time (its repetitions
    // may not all have profiled), so report.md's columns and the share agree.
    if (std::isfinite(g.computeFraction) && std::isnan(g.commS) && std::isnan(g.dataS)) {
        g.computeS = g.computeFraction * g.epochS;
        g.otherS = g.epochS - g.computeS;
    }
    return g;
}

// Weak or strong as launched (the records) and as measured against each strategy's baseline.
void measuredScaling(ScalingReport& rep, const QList<ReportRun>& input, const QMap<QString, int>& baseline)
{
    // Weak or strong, from what the runs did: the global batch per step (samples per epoch / steps
    // per epoch) growing with the ranks is weak scaling, staying put is strong.
    for (const auto& in : input)
        if (!in.record.scaling.isEmpty()) rep.scalingLaunched = in.record.scaling;
    QSet<QString> kinds;
    for (const auto& g : rep.groups) {
        if (!baseline.contains(g.strategy) || std::isnan(g.epochS)) continue;
        const ReportGroupRow& b = rep.groups[baseline.value(g.strategy)];
        if (g.world == b.world) continue;
        const double batch = g.samplesPerEpoch / g.stepsPerEpoch, baseBatch = b.samplesPerEpoch / b.stepsPerEpoch;
        const double ratio = batch / baseBatch, ideal = double(g.world) / b.world;
        if (!std::isfinite(ratio)) continue;
        kinds << (std::abs(ratio - ideal) <= 0.05 * ideal ? QStringLiteral("weak")
                      : std::abs(ratio - 1) <= 0.05       ? QStringLiteral("strong")
                                                          : QStringLiteral("mixed"));
    }
    rep.scalingMeasured = kinds.size() == 1 ? *kinds.begin() : kinds.isEmpty() ? QString() : QStringLiteral("mixed");
    if (!rep.scalingLaunched.isEmpty() && !rep.scalingMeasured.isEmpty() && rep.scalingMeasured != rep.scalingLaunched)
        rep.warnings << QStringLiteral("the sweep was launched as %1 scaling, but its runs' global batch per step %2: that is %3 scaling")
                            .arg(rep.scalingLaunched,
                                 rep.scalingMeasured == QLatin1String("strong") ? QStringLiteral("stayed the same at every size")
                                     : rep.scalingMeasured == QLatin1String("weak")
                                     ? QStringLiteral("grew with the ranks")
                                     : QStringLiteral("neither stayed put nor grew with the ranks"),
                                 rep.scalingMeasured);
}

// Speedup, ideal and efficiencies against each strategy's baseline group.
void speedups(ScalingReport& rep, const QMap<QString, int>& baseline)
{
    QSet<QString> unequalWarned;
    for (auto& g : rep.groups) {
        if (!baseline.contains(g.strategy) || std::isnan(g.epochS)) continue;
        const ReportGroupRow& b = rep.groups[baseline.value(g.strategy)];
        g.ideal = double(g.world) / b.world;
        g.speedup = b.epochS / g.epochS;
        g.throughputSpeedup = g.throughput / b.throughput;
        g.strongEfficiency = g.speedup / g.ideal;
        g.weakEfficiency = b.epochS / g.epochS;
        g.efficiency = g.throughputSpeedup / g.ideal;
        // Runs that do not record their samples (itwinai's): the strong-scaling S / (n / n_min).
        if (std::isnan(g.efficiency)) g.efficiency = g.strongEfficiency;
        // Fixed samples per epoch (strong) or samples ∝ ranks (weak); anything else is suspicious.
        const double ratio = g.samplesPerEpoch / b.samplesPerEpoch;
        if (std::isfinite(ratio) && std::abs(ratio - 1) > 0.01 && std::abs(ratio - g.ideal) > 0.01 * g.ideal &&
            !unequalWarned.contains(g.strategy)) {
            unequalWarned.insert(g.strategy);
            rep.warnings << QStringLiteral(
                                "%1: samples per epoch are neither equal nor proportional to the ranks (%2 at %3 ranks, %4 at %5)")
                                .arg(g.strategy)
                                .arg(b.samplesPerEpoch)
                                .arg(b.world)
                                .arg(g.samplesPerEpoch)
                                .arg(g.world);
        }
    }
}

// The runs' global batches and the gradient noise scale their epochs measured, against the loss
// (the points need each epoch's validation loss and B_simple only).
void gradientNoise(ScalingReport& rep, const QList<ReportRun>& input)
{
    QList<RunLosses> runs;
    for (const ReportRun& in : input) {
        RunLosses r;
        r.batch = in.manifest.value(QStringLiteral("global_batch_size")).toDouble();
        if (!(r.batch > 0)) continue;
        if (!rep.globalBatches.contains(r.batch)) rep.globalBatches << r.batch;
        for (const EpochRow& e : in.epochs.rows)
            if (e.valLoss > 0) {
                r.losses << e.valLoss;
                r.bSimple << e.gnsBSimple;
            }
        runs << r;
    }
    std::sort(rep.globalBatches.begin(), rep.globalBatches.end());
    rep.noiseByLoss = gradientNoiseByLoss(runs);
}

}  // namespace

ScalingReport buildScalingReport(const QString& sweep, const QList<ReportRun>& input, const ReportOptions& options)
{
    ScalingReport rep;
    rep.sweep = sweep;
    const bool itwinai =
        !input.isEmpty() && std::all_of(input.begin(), input.end(), [](const ReportRun& r) { return itwinaiDefined(r.manifest); });
    if (itwinai) rep.definition = QStringLiteral("itwinai");
    ReportOptions resolved = options;
    if (resolved.warmupEpochs < 0) resolved.warmupEpochs = itwinai ? 0 : 1;
    rep.warmupEpochs = resolved.warmupEpochs;
    rep.includesValidation = options.includeValidation;
    if (input.isEmpty()) {
        rep.warnings << QStringLiteral("sweep '%1' has no runs").arg(sweep);
        return rep;
    }
    for (const ReportRun& in : input) rep.runs << runRow(in, resolved, rep.warnings);
    timesToTarget(rep, input, resolved);

    std::map<std::pair<QString, int>, QList<int>> byGroup;
    int maxRep = 0;
    for (int i = 0; i < rep.runs.size(); ++i) {
        maxRep = std::max(maxRep, rep.runs[i].repetition);
        byGroup[{rep.runs[i].strategy, rep.runs[i].world}] << i;
    }
    for (const auto& [key, members] : byGroup)
        rep.groups << groupRow(key.first, key.second, members, rep.runs, input, itwinai ? 0 : maxRep, rep.warnings);
    // Speedup and efficiency against each strategy's smallest world size that has data.
    QMap<QString, int> baseline;
    for (int i = 0; i < rep.groups.size(); ++i) {
        const auto& g = rep.groups[i];
        if (std::isnan(g.epochS)) continue;
        if (!baseline.contains(g.strategy) || g.world < rep.groups[baseline.value(g.strategy)].world) baseline.insert(g.strategy, i);
    }
    measuredScaling(rep, input, baseline);
    speedups(rep, baseline);
    rep.warnings << sharedHostWarnings(input, resolved.warmupEpochs);
    gradientNoise(rep, input);
    return rep;
}

QString ScalingReport::runsCsv() const
{
    QStringList lines{QStringLiteral("run_id,strategy,nodes,ranks_per_node,world_size,repetition,state,used,epochs_used,epoch_s,"
                                     "samples_per_epoch,throughput_samples_s,steps_per_epoch,compute_s,exposed_comm_s,data_wait_s,"
                                     "other_s,best_val_loss,time_to_target_s,validation_s,gpu_energy_wh,gpu_util_pct")};
    for (const auto& r : runs)
        lines << QStringList{csvField(r.runId),
                             csvField(r.strategy),
                             QString::number(r.nodes),
                             QString::number(r.ranksPerNode),
                             QString::number(r.world),
                             QString::number(r.repetition),
                             r.state,
                             r.used ? QStringLiteral("1") : QStringLiteral("0"),
                             QString::number(r.epochsUsed),
                             csvNumber(r.epochS),
                             csvNumber(r.samplesPerEpoch),
                             csvNumber(r.throughput),
                             csvNumber(r.stepsPerEpoch),
                             csvNumber(r.computeS),
                             csvNumber(r.commS),
                             csvNumber(r.dataS),
                             csvNumber(r.otherS),
                             csvNumber(r.bestValLoss),
                             csvNumber(r.timeToTargetS),
                             csvNumber(r.validationS),
                             csvNumber(r.energyWh),
                             csvNumber(r.gpuUtilPct)}
                     .join(QLatin1Char(','));
    return lines.join(QLatin1Char('\n')) + QLatin1Char('\n');
}

QString ScalingReport::groupsCsv() const
{
    QStringList lines{QStringLiteral("strategy,world_size,nodes,repetitions,epoch_s_mean,epoch_s_std,epoch_s_min,epoch_s_max,"
                                     "samples_per_epoch,throughput_samples_s,speedup,throughput_speedup,ideal_speedup,efficiency,"
                                     "strong_efficiency,weak_efficiency,compute_s,exposed_comm_s,data_wait_s,other_s,"
                                     "time_to_target_s,reached_target,validation_s,gpu_energy_wh,gpu_util_pct")};
    for (const auto& g : groups)
        lines << QStringList{csvField(g.strategy),
                             QString::number(g.world),
                             QString::number(g.nodes),
                             QString::number(g.repetitions),
                             csvNumber(g.epochS),
                             csvNumber(g.epochSStd),
                             csvNumber(g.epochSMin),
                             csvNumber(g.epochSMax),
                             csvNumber(g.samplesPerEpoch),
                             csvNumber(g.throughput),
                             csvNumber(g.speedup),
                             csvNumber(g.throughputSpeedup),
                             csvNumber(g.ideal),
                             csvNumber(g.efficiency),
                             csvNumber(g.strongEfficiency),
                             csvNumber(g.weakEfficiency),
                             csvNumber(g.computeS),
                             csvNumber(g.commS),
                             csvNumber(g.dataS),
                             csvNumber(g.otherS),
                             csvNumber(g.timeToTargetS),
                             QString::number(g.reachedTarget),
                             csvNumber(g.validationS),
                             csvNumber(g.energyWh),
                             csvNumber(g.gpuUtilPct)}
                     .join(QLatin1Char(','));
    return lines.join(QLatin1Char('\n')) + QLatin1Char('\n');
}

TimeShares timeShares(const ReportGroupRow& g, bool includesValidation)
{
    const double val = std::isfinite(g.validationS) ? g.validationS : 0.0;
    const double e = includesValidation ? g.epochS : g.epochS + val;
    return TimeShares{g.computeS / e, g.commS / e, g.dataS / e, std::isnan(g.otherS) ? kNaN : std::max(0.0, g.otherS / e),
                      std::isnan(g.validationS) ? kNaN : val / e};
}

namespace {

// GPU energy, utilisation and the profiler's computation share, where any run has them.
QStringList energySection(const QList<ReportGroupRow>& groups, const QString& definition)
{
    auto any = [&](double ReportGroupRow::*field) {
        return std::any_of(groups.begin(), groups.end(), [&](const ReportGroupRow& g) { return std::isfinite(g.*field); });
    };
    const bool computation = any(&ReportGroupRow::computeFraction);
    if (!any(&ReportGroupRow::energyWh) && !any(&ReportGroupRow::gpuUtilPct) && !computation) return {};
    QStringList md{QString(), QStringLiteral("## GPU energy and utilisation"), QString()};
    md << (definition == QLatin1String("itwinai")
               ? QStringLiteral("Energy: itwinai's rectangle rule, Σ power (W) × probing interval (s) / 3600 over every sample of every "
                                "GPU of a run, in Wh; the mean per run over repetitions. Utilisation: the mean of every sample of every "
                                "GPU, then the mean over repetitions.")
               : QStringLiteral("Energy: NVML power integrated over each epoch on every rank's GPU, summed over the ranks and the run's "
                                "epochs (warm-up included), in Wh, as itwinai reports it; the mean over repetitions. Utilisation: "
                                "NVML's GPU utilisation, the mean over the ranks and the epochs after warm-up."));
    md << QString()
       << QStringLiteral("| strategy | ranks | reps | energy per run (Wh) | GPU utilisation |") +
            (computation ? QStringLiteral(" computation share |") : QString())
       << QStringLiteral("|---|---|---|---|---|") + (computation ? QStringLiteral("---|") : QString());
    QList<double> energy, util;
    for (const auto& g : groups) {
        energy << g.energyWh;
        util << g.gpuUtilPct;
    }
    const int energyDecimals = columnDecimals(energy), utilDecimals = columnDecimals(util, 3);
    for (const auto& g : groups)
        md << QStringLiteral("| %1 | %2 | %3 | %4 | %5 |")
                    .arg(g.strategy)
                    .arg(g.world)
                    .arg(g.repetitions)
                    .arg(fixed(g.energyWh, energyDecimals),
                         std::isfinite(g.gpuUtilPct) ? fixed(g.gpuUtilPct, utilDecimals) + QStringLiteral(" %") : QStringLiteral("–")) +
                (computation ? QStringLiteral(" %1 |").arg(pct(g.computeFraction)) : QString());
    return md;
}

// How a report of runs imported from itwinai reads them, and where ScaleDesk's own view differs.
QStringList itwinaiSection(int warmupEpochs)
{
    return {QString(),
            QStringLiteral("## Runs imported from itwinai"),
            QString(),
            QStringLiteral("These runs were imported from itwinai's scalability files, and the numbers above follow its report's "
                           "formulas. Where ScaleDesk's own view differs:"),
            QString(),
            warmupEpochs == 0 ? QStringLiteral("- Epoch time averages every epoch, the first included, as itwinai does. ScaleDesk "
                                               "leaves the first (warm-up) epoch out of its own runs, because it carries start-up "
                                               "costs; `--warmup 1` reads these runs that way.")
                              : QStringLiteral("- Epoch time leaves the first %1 epoch(s) out (`--warmup`); itwinai's report averages "
                                               "every epoch, the first included (`--warmup 0`).")
                                    .arg(warmupEpochs),
            QStringLiteral("- Repetitions: itwinai averages every epoch of every run of a strategy and GPU count together; here each "
                           "run is averaged, then the runs (the same when they ran as many epochs)."),
            QStringLiteral("- Speedup is against each strategy's smallest GPU count, as in itwinai. itwinai records no sample counts, so "
                           "efficiency is S / (n / n_min) and throughput and time-to-target are empty."),
            QStringLiteral("- Energy: itwinai sums the energy of repeated runs; here it is the mean per run (itwinai's figure is this "
                           "times the repetitions)."),
            QStringLiteral("- Computation share: the profiler's device time as itwinai computes it, shown as compute and other in the "
                           "time breakdown. itwinai's own caveat holds: it ignores overlap, so compare GPU counts within a strategy, "
                           "not strategies.")};
}

}  // namespace

QString ScalingReport::markdown() const
{
    QStringList md;
    md << QStringLiteral("# Scaling report: %1").arg(sweep) << QString();
    if (!scalingMeasured.isEmpty() || !scalingLaunched.isEmpty())
        md << QStringLiteral("Scaling: %1 (launched as %2; measured from the runs' global batch per step, which %3).")
                  .arg(scalingMeasured.isEmpty() ? scalingLaunched : scalingMeasured,
                       scalingLaunched.isEmpty() ? QStringLiteral("a single size or unknown") : scalingLaunched,
                       scalingMeasured == QLatin1String("weak")         ? QStringLiteral("grows with the ranks")
                           : scalingMeasured == QLatin1String("strong") ? QStringLiteral("stays the same")
                           : scalingMeasured.isEmpty()                  ? QStringLiteral("needs two sizes to tell")
                                                                        : QStringLiteral("neither stays put nor grows with the ranks"))
           << QString();
    const QString averaged = warmupEpochs > 0 ? QStringLiteral("epochs after the first %1 (warm-up)").arg(warmupEpochs)
                                              : QStringLiteral("epochs, every one (no warm-up left out)");
    md << (includesValidation
               ? QStringLiteral("Epoch time is training plus validation (`wall_s`, `--include-validation`): the mean over each run's "
                                "%1")
               : QStringLiteral("Epoch time is the training time of an epoch (`train_s`; validation, `val_s`, is its own column), as the "
                                "NERSC trainer's \"Time taken for epoch\" and itwinai's report define it: the mean over each run's "
                                "%1"))
                .arg(averaged) +
            QStringLiteral(", then the mean over repetitions (± sample standard deviation). Speedup = T̄(n_min) / T̄(n) against each "
                           "strategy's smallest "
                           "run; ideal = n / n_min; efficiency = X(n) / (X(n_min) · n / n_min) with X the throughput in samples/s "
                           "(it equals the strong-scaling S / (n / n_min) when the samples per epoch are fixed, and the weak-scaling "
                           "T̄(n_min) / T̄(n) when they grow with n). ") +
            (std::isnan(target) ? QStringLiteral("Time-to-target: no run recorded a validation loss.")
                                : QStringLiteral("Time-to-target: wall time from the run's first start to the end of the first epoch "
                                                 "whose validation loss is at most %1 (%2).")
                                      .arg(num(target), targetSource))
       << QString();
    md << QStringLiteral("The breakdown columns are shares of each epoch's training + validation time, as in time_breakdown.png; "
                         "validation (s) is its time per epoch.")
       << QString();
    md << QStringLiteral("| strategy | ranks | nodes | reps | epoch time (s) | throughput (samples/s) | speedup | ideal | efficiency | "
                         "compute | exposed comm | data wait | other | validation | validation (s) | time-to-target (s) |")
       << QStringLiteral("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    QList<double> epochTimes;
    for (const auto& g : groups) epochTimes << g.epochS;
    const int epochDecimals = columnDecimals(epochTimes);
    for (const auto& g : groups) {
        const TimeShares t = timeShares(g, includesValidation);
        // One repetition has no spread to show; more show the sample standard deviation.
        const QString epoch =
            fixed(g.epochS, epochDecimals) + (g.repetitions > 1 ? QStringLiteral(" ± ") + fixed(g.epochSStd, epochDecimals) : QString());
        md << QStringLiteral("| %1 | %2 | %3 | %4 | %5 | %6 | %7 | %8 | %9 | %10 | %11 | %12 | %13 | %14 | %15 | %16 |")
                  .arg(g.strategy)
                  .arg(g.world)
                  .arg(g.nodes)
                  .arg(g.repetitions)
                  .arg(epoch, num(g.throughput), num(g.speedup, 3), num(g.ideal, 3), pct(g.efficiency), pct(t.compute), pct(t.comm),
                       pct(t.data), pct(t.other))
                  .arg(pct(t.validation), num(g.validationS),
                       g.reachedTarget ? QStringLiteral("%1 (%2/%3)").arg(num(g.timeToTargetS)).arg(g.reachedTarget).arg(g.repetitions)
                                       : QStringLiteral("not reached"));
    }
    md << energySection(groups, definition);
    if (definition == QLatin1String("itwinai")) md << itwinaiSection(warmupEpochs);
    md << QString() << QStringLiteral("## Runs") << QString();
    md << QStringLiteral("| run | state | used | epochs | epoch time (s) | best val loss | time-to-target (s) |")
       << QStringLiteral("|---|---|---|---|---|---|---|");
    for (const auto& r : runs)
        md << QStringLiteral("| %1 | %2 | %3 | %4 | %5 | %6 | %7 |")
                  .arg(r.runId, r.state, r.used ? QStringLiteral("yes") : QStringLiteral("no"))
                  .arg(r.epochsUsed)
                  .arg(num(r.epochS), num(r.bestValLoss), num(r.timeToTargetS));
    md << QString() << QStringLiteral("## Warnings") << QString();
    if (warnings.isEmpty()) md << QStringLiteral("None.");
    for (const QString& w : warnings) md << QStringLiteral("- ") + w;
    return md.join(QLatin1Char('\n')) + QLatin1Char('\n');
}

}  // namespace scaledesk
