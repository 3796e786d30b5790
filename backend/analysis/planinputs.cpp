// The planner's inputs: the benchmark's timings (comm.jsonl), a profile's calibrations, and what each
// run of a sweep tells (its manifest, epochs.csv and step records; a command run's own times).
#include "analysis/planner.h"

#include "analysis/planparts.h"

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
#include <QSet>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <tuple>

namespace scaledesk {

namespace {
using planparts::kNaN;
using planparts::planError;

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
/// The bytes of one gradient element of a dtype as the user's code names it (torch's names, with or
/// without "torch."); 0 when unknown.
// What a model kernel's batches were (bench-comm's "data"): its config's loader, or random batches
// and why; nothing for a timing from before bench-comm said.
QString kernelData(const QJsonObject& o)
{
    const QString data = o.value(QLatin1String("data")).toString();
    if (data == QLatin1String("loader"))
        return QStringLiteral(", on its loader's batches (%1 worker thread(s))").arg(o.value(QLatin1String("data_workers")).toInt());
    if (data == QLatin1String("random"))
        return QStringLiteral(", on random batches without its loader (%1)").arg(o.value(QLatin1String("data_note")).toString());
    return {};
}

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

}  // namespace

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
        const bool modelKernel = o.value(QLatin1String("kernel")).toString() == QLatin1String("model");
        s.kernelLocalBatch = modelKernel ? o.value(QLatin1String("local_batch")).toDouble(0) : 0.0;
        if (modelKernel && o.value(QLatin1String("data")).toString() == QLatin1String("loader"))
            s.kernelLoaders = o.value(QLatin1String("data_workers")).toInt(0);
        s.threads = o.value(QLatin1String("threads")).toInt(0);
        s.hostCpus = o.value(QLatin1String("host_cpus")).toInt(0);
        s.kernel = modelKernel ? QStringLiteral("config %1's own training step at local batch %2%3")
                                     .arg(o.value(QLatin1String("config")).toString())
                                     .arg(o.value(QLatin1String("local_batch")).toInt())
                                     .arg(kernelData(o))
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

Expected<std::vector<PlanRunInput>> loadPlanInputs(const RunStore& store, const QString& sweep, int warmupEpochs, QStringList* warnings)
{
    const QList<RunSummary> rows = store.list(sweep);
    if (rows.isEmpty()) return planError(QStringLiteral("no runs in sweep '%1'").arg(sweep));
    return loadPlanInputsOf(store, rows, warmupEpochs, warnings);
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
        r.config = m.value(QLatin1String("config")).toString();
        if (auto record = store.load(row.id); record && !record->configFile.isEmpty() &&
            QDir::cleanPath(record->configFile) != QDir::cleanPath(store.workspace().root() + QStringLiteral("/configs/unet.yaml")))
            r.configFile = record->configFile;
        r.ranks = m.value(QLatin1String("world_size")).toInt(row.nodes * row.ranksPerNode);
        r.nodes = m.value(QLatin1String("nodes")).toInt(row.nodes);
        r.localBatch = m.value(QLatin1String("local_batch_size")).toDouble(kNaN);
        const double stepsPerEpoch = m.value(QLatin1String("steps_per_epoch")).toDouble(kNaN);
        r.globalBatch = m.value(QLatin1String("global_batch_size")).toDouble(kNaN);
        r.samplesPerEpoch = stepsPerEpoch * r.globalBatch;
        r.gradientBytes = 4.0 * m.value(QLatin1String("parameters")).toDouble(kNaN);
        r.cpu = m.value(QLatin1String("device")).toString() == QLatin1String("cpu");
        r.dataWorkers = m.value(QLatin1String("num_data_workers")).toInt(-1);
        r.threadsPerRank = m.value(QLatin1String("threads_per_rank")).toInt(0);
        r.hostCpus = m.value(QLatin1String("host_cpus")).toInt(0);
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

}  // namespace scaledesk
