#include "runs/itwinaiimport.h"

#include "runs/mlflowstore.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QHash>
#include <QMap>
#include <QRegularExpression>
#include <QSet>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace scaledesk::itwinai {

namespace {

// A CSV file as pandas writes it (RFC 4180 quoting), read by column name.
struct Csv {
    QString path;
    QHash<QString, int> column;
    QList<QStringList> rows;
    QList<int> lineOf;  ///< the file's line of each row, for messages
    QString cell(int row, const QString& name) const { return rows[row].value(column.value(name, -1)); }
    double number(int row, const QString& name) const
    {
        bool ok = false;
        const double v = cell(row, name).trimmed().toDouble(&ok);
        return ok ? v : kUnknown;
    }
};

QStringList splitCsvLine(const QString& line)
{
    QStringList out;
    QString cur;
    bool quoted = false;
    for (int i = 0; i < line.size(); ++i) {
        const QChar c = line[i];
        if (quoted) {
            if (c == QLatin1Char('"') && i + 1 < line.size() && line[i + 1] == QLatin1Char('"')) {
                cur += c;
                ++i;
            } else if (c == QLatin1Char('"')) {
                quoted = false;
            } else {
                cur += c;
            }
        } else if (c == QLatin1Char('"')) {
            quoted = true;
        } else if (c == QLatin1Char(',')) {
            out << cur;
            cur.clear();
        } else {
            cur += c;
        }
    }
    out << cur;
    return out;
}

Expected<Csv> readCsv(const QString& path, const QStringList& required, QStringList* warnings)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return Error{ErrorCode::ImportSource, f.errorString(), path};
    Csv t;
    t.path = path;
    const QStringList lines = QString::fromUtf8(f.readAll()).split(QLatin1Char('\n'));
    QStringList header;
    int ln = 0;
    for (QString line : lines) {
        ++ln;
        line = line.trimmed();
        if (line.isEmpty()) continue;
        const QStringList cells = splitCsvLine(line);
        if (header.isEmpty()) {
            header = cells;
            for (int i = 0; i < header.size(); ++i) t.column.insert(header[i].trimmed(), i);
            QStringList missing;
            for (const QString& c : required)
                if (!t.column.contains(c)) missing << c;
            if (!missing.isEmpty())
                return Error{ErrorCode::ImportSource, QStringLiteral("missing column(s) %1").arg(missing.join(QStringLiteral(", "))),
                             path + QStringLiteral(":1")};
            continue;
        }
        if (cells.size() != header.size()) {
            *warnings
                << QStringLiteral("%1:%2: %3 cells for %4 columns; row skipped").arg(path).arg(ln).arg(cells.size()).arg(header.size());
            continue;
        }
        t.rows << cells;
        t.lineOf << ln;
    }
    if (header.isEmpty()) return Error{ErrorCode::ImportSource, QStringLiteral("empty file"), path};
    return t;
}

QStringList csvFilesIn(const QString& dir)
{
    QStringList out;
    for (const QString& name : QDir(dir).entryList({QStringLiteral("*.csv")}, QDir::Files, QDir::Name)) out << QDir(dir).filePath(name);
    return out;
}

double mean(const QList<double>& v)
{
    if (v.isEmpty()) return kUnknown;
    double s = 0;
    for (double x : v) s += x;
    return s / double(v.size());
}

// What a run's GPU sampler wrote: the rectangle-rule energy and the mean utilisation.
struct Telemetry {
    double energyWh = 0, intervalS = kUnknown;
    QList<double> util;
    int samples = 0;
    QSet<QString> nodes;
    QStringList files;
    bool mixedIntervals = false;
    void add(double powerW, double utilPct, double interval)
    {
        if (std::isfinite(powerW) && std::isfinite(interval)) energyWh += powerW * interval / 3600.0;
        if (std::isfinite(utilPct)) util << utilPct;
        if (std::isnan(intervalS))
            intervalS = interval;
        else if (interval != intervalS)
            mixedIntervals = true;
        ++samples;
    }
};

// What the profiler's key_averages() rows give: self device time (µs) by kind.
struct Profile {
    double compute = 0, comm = 0, all = 0, profilerSteps = 0;
    QSet<QString> nodes;
    QStringList files;
    void add(const QString& name, double selfDeviceUs)
    {
        if (!std::isfinite(selfDeviceUs)) return;
        // The #262 communication fraction: NCCL collective kernels and stream waits are communication,
        // ATen operators computation. The current "computation vs other": ATen, at::, c10:: and
        // autograd rows over every row but the ProfilerStep* ones.
        static const QRegularExpression commRe(
            QStringLiteral("AllReduce|Broadcast|Reduce|AllGather|Gather|ReduceScatter|cudaStreamWaitEvent|cudaStreamSynchronize"));
        static const QRegularExpression computeRe(QStringLiteral("aten::|(^|[^a-z])at::|c10::|autograd::"));
        if (name.startsWith(QLatin1String("ProfilerStep"))) profilerSteps += selfDeviceUs;
        all += selfDeviceUs;
        if (computeRe.match(name).hasMatch())
            compute += selfDeviceUs;
        else if (commRe.match(name).hasMatch())
            comm += selfDeviceUs;
    }
    double fraction(Layout layout) const
    {
        if (files.isEmpty()) return kUnknown;
        if (layout == Layout::Pr262) return compute / (compute + comm + 1e-10);
        const double denominator = all - profilerSteps;
        return denominator > 0 ? compute / denominator : kUnknown;
    }
};

QString computeDefinition(Layout layout)
{
    return layout == Layout::Pr262
        ? QStringLiteral("computation / (computation + communication), self device time of every rank's profiled ops (itwinai #262)")
        : QStringLiteral("computation (ATen, at::, c10::, autograd) / every profiled op but ProfilerStep*, self device time of "
                         "every rank (itwinai's computation vs other)");
}

using Key = QPair<QString, int>;  // (strategy, world size)

const QStringList kEpochColumns{QStringLiteral("epoch_id"), QStringLiteral("time"), QStringLiteral("name"), QStringLiteral("nodes")};
const QStringList kGpuColumns{QStringLiteral("sample_idx"), QStringLiteral("utilization"),     QStringLiteral("power"),
                              QStringLiteral("local_rank"), QStringLiteral("node_idx"),        QStringLiteral("num_global_gpus"),
                              QStringLiteral("strategy"),   QStringLiteral("probing_interval")};
const QStringList kProfileColumns{QStringLiteral("name"),     QStringLiteral("node_id"),  QStringLiteral("self_cuda_time_total"),
                                  QStringLiteral("strategy"), QStringLiteral("num_gpus"), QStringLiteral("global_rank")};

void applyTelemetry(Run& run, const Telemetry& t)
{
    run.energyWh = t.energyWh;
    run.utilPct = mean(t.util);
    run.probingIntervalS = t.intervalS;
    run.gpuSamples = t.samples;
    run.files << t.files;
    if (t.mixedIntervals)
        run.warnings << QStringLiteral(
            "the GPU samples have more than one probing interval (itwinai refuses that); each sample's own is used");
}

// The PR #262 and unified layouts: CSV files in epoch-time/, gpu-energy-data/ and
// communication-data/ or computation-data/.
Expected<QList<Run>> readCsvLayout(const Source& s, int gpusPerNode)
{
    QStringList warnings;
    QMap<Key, Telemetry> telemetry;
    for (const QString& path : csvFilesIn(s.dir + QStringLiteral("/gpu-energy-data"))) {
        auto t = readCsv(path, kGpuColumns, &warnings);
        if (!t) return t.error();
        for (int i = 0; i < t->rows.size(); ++i) {
            Telemetry& g = telemetry[Key(t->cell(i, QStringLiteral("strategy")), int(t->number(i, QStringLiteral("num_global_gpus"))))];
            g.add(t->number(i, QStringLiteral("power")), t->number(i, QStringLiteral("utilization")),
                  t->number(i, QStringLiteral("probing_interval")));
            g.nodes.insert(t->cell(i, QStringLiteral("node_idx")));
            if (!g.files.contains(path)) g.files << path;
        }
    }
    QMap<Key, Profile> profiles;
    const QString profileDir =
        s.dir + (s.layout == Layout::Pr262 ? QStringLiteral("/communication-data") : QStringLiteral("/computation-data"));
    for (const QString& path : csvFilesIn(profileDir)) {
        auto t = readCsv(path, kProfileColumns, &warnings);
        if (!t) return t.error();
        for (int i = 0; i < t->rows.size(); ++i) {
            Profile& p = profiles[Key(t->cell(i, QStringLiteral("strategy")), int(t->number(i, QStringLiteral("num_gpus"))))];
            p.add(t->cell(i, QStringLiteral("name")), t->number(i, QStringLiteral("self_cuda_time_total")));
            p.nodes.insert(t->cell(i, QStringLiteral("node_id")));
            if (!p.files.contains(path)) p.files << path;
        }
    }
    const QStringList epochFiles = csvFilesIn(s.dir + QStringLiteral("/epoch-time"));
    if (epochFiles.isEmpty())
        return Error{ErrorCode::ImportSource, QStringLiteral("no epochtime_*.csv in epoch-time/"), s.dir + QStringLiteral("/epoch-time")};
    QList<Run> runs;
    QSet<Key> used;
    for (const QString& path : epochFiles) {
        auto t = readCsv(path, kEpochColumns, &warnings);
        if (!t) return t.error();
        if (t->rows.isEmpty()) {
            warnings << QStringLiteral("%1: no epochs; not imported").arg(path);
            continue;
        }
        Run run;
        run.layout = s.layout;
        run.group = s.layout == Layout::Unified ? QFileInfo(s.dir).fileName() : QString();
        run.strategy = t->cell(0, QStringLiteral("name")).trimmed();
        run.nodes = int(t->number(0, QStringLiteral("nodes")));
        if (run.strategy.isEmpty() || run.nodes < 1)
            return Error{ErrorCode::ImportSource, QStringLiteral("the first row has no name or no node count"),
                         QStringLiteral("%1:%2").arg(path).arg(t->lineOf.first())};
        run.files << path;
        for (int i = 0; i < t->rows.size(); ++i) {
            Run::Epoch e;
            bool ok = false;
            e.epoch = t->cell(i, QStringLiteral("epoch_id")).trimmed().toInt(&ok);
            e.seconds = t->number(i, QStringLiteral("time"));
            if (!ok || !std::isfinite(e.seconds)) {
                run.warnings << QStringLiteral("%1:%2: epoch_id or time is not a number; row skipped").arg(path).arg(t->lineOf[i]);
                continue;
            }
            run.epochs << e;
        }
        // The world size: the GPU sampler's or the profiler's file for this strategy on as many
        // nodes, else nodes × GPUs per node (the epoch-time file records nodes only).
        for (auto it = telemetry.begin(); it != telemetry.end() && run.world == 0; ++it)
            if (it.key().first == run.strategy && it.value().nodes.size() == run.nodes) run.world = it.key().second;
        for (auto it = profiles.begin(); it != profiles.end() && run.world == 0; ++it)
            if (it.key().first == run.strategy && it.value().nodes.size() == run.nodes) run.world = it.key().second;
        if (run.world == 0) {
            run.world = run.nodes * gpusPerNode;
            run.warnings << QStringLiteral("%1: no GPU or profiling file gives the world size: %2 node(s) × %3 GPUs per node "
                                           "(--gpus-per-node) = %4")
                                .arg(path)
                                .arg(run.nodes)
                                .arg(gpusPerNode)
                                .arg(run.world);
        }
        const Key key(run.strategy, run.world);
        used.insert(key);
        if (telemetry.contains(key)) applyTelemetry(run, telemetry.value(key));
        if (profiles.contains(key)) {
            const Profile& p = profiles[key];
            run.computeFraction = p.fraction(s.layout);
            run.computeDefinition = computeDefinition(s.layout);
            run.files << p.files;
        }
        runs << run;
    }
    auto unmatched = [&](const QList<Key>& keys, const QString& what) {
        for (const Key& k : keys)
            if (!used.contains(k))
                warnings << QStringLiteral("%1: %2 at %3 GPUs has no epoch-time file; not imported").arg(what, k.first).arg(k.second);
    };
    unmatched(telemetry.keys(), s.dir + QStringLiteral("/gpu-energy-data"));
    unmatched(profiles.keys(), profileDir);
    if (!runs.isEmpty()) runs.first().warnings << warnings;
    return runs;
}

// Every run under `root` (its children, and theirs), `root` first.
QList<const mlflow::Run*> subtree(const mlflow::Experiment& e, const mlflow::Run& root)
{
    QList<const mlflow::Run*> out{&root};
    for (int i = 0; i < out.size(); ++i)
        for (const mlflow::Run& r : e.runs)
            if (r.parentId == out[i]->id && !out.contains(&r)) out << &r;
    return out;
}

// The MLflow layout: the runs that logged epoch_time_s are main workers; their parent is the
// training run, and its other children are the other workers.
Expected<QList<Run>> readMlflow(const Source& s, int gpusPerNode)
{
    auto exp = mlflow::readExperiment(s.dir);
    if (!exp) return exp.error();
    QHash<QString, const mlflow::Run*> byId;
    for (const mlflow::Run& r : exp->runs) byId.insert(r.id, &r);
    QList<Run> runs;
    for (const mlflow::Run& main : exp->runs) {
        const auto times = main.metrics.find(QStringLiteral("epoch_time_s"));
        if (times == main.metrics.end()) continue;
        const mlflow::Run& training = byId.contains(main.parentId) ? *byId.value(main.parentId) : main;
        Run run;
        run.layout = Layout::MLflow;
        run.group = training.name;
        run.sourceId = training.id;
        run.strategy = main.params.value(QStringLiteral("strategy"));
        run.world = main.params.value(QStringLiteral("global_world_size")).toInt();
        if (run.strategy.isEmpty() || run.world < 1)
            return Error{ErrorCode::ImportSource, QStringLiteral("the worker run has no 'strategy' or 'global_world_size' param"),
                         main.dir + QStringLiteral("/params")};
        run.startUnix = training.startMs > 0 ? training.startMs / 1000.0 : kUnknown;
        run.endUnix = training.endMs > 0 ? training.endMs / 1000.0 : kUnknown;
        run.files << main.dir + QStringLiteral("/metrics/epoch_time_s");
        for (const mlflow::MetricPoint& p : times.value()) {
            Run::Epoch e;
            e.epoch = int(p.step) + 1;  // logged at the 0-based epoch index
            e.seconds = p.value;
            e.endUnix = p.timestampMs / 1000.0;
            run.epochs << e;
        }
        std::sort(run.epochs.begin(), run.epochs.end(), [](const Run::Epoch& a, const Run::Epoch& b) { return a.epoch < b.epoch; });
        Telemetry t;
        Profile prof;
        for (const mlflow::Run* w : subtree(*exp, training)) {
            run.files << w->dir + QStringLiteral("/meta.yaml");
            for (const QString& key : w->params.keys()) run.files << w->dir + QStringLiteral("/params/") + key;
            const QList<mlflow::MetricPoint> power = w->metrics.value(QStringLiteral("gpu_power_W"));
            const QList<mlflow::MetricPoint> util = w->metrics.value(QStringLiteral("gpu_utilization_percent"));
            bool ok = false;
            double interval = w->params.value(QStringLiteral("probing_interval")).toDouble(&ok);
            if (!power.isEmpty() && !ok) {
                interval = 1;
                run.warnings << QStringLiteral("%1: no probing_interval param; 1 s assumed (the sampler's default)").arg(w->dir);
            }
            for (int i = 0; i < std::max(power.size(), util.size()); ++i)
                t.add(i < power.size() ? power[i].value : kUnknown, i < util.size() ? util[i].value : kUnknown, interval);
            if (!power.isEmpty()) t.files << w->dir + QStringLiteral("/metrics/gpu_power_W");
            if (!util.isEmpty()) t.files << w->dir + QStringLiteral("/metrics/gpu_utilization_percent");
            const QString csv = w->dir + QStringLiteral("/artifacts/torch_profiling_averages/torch_profiling_averages.csv");
            if (!QFileInfo::exists(csv)) continue;
            QStringList csvWarnings;
            auto table = readCsv(csv, kProfileColumns, &csvWarnings);
            if (!table) return table.error();
            run.warnings << csvWarnings;
            for (int i = 0; i < table->rows.size(); ++i) {
                prof.add(table->cell(i, QStringLiteral("name")), table->number(i, QStringLiteral("self_cuda_time_total")));
                prof.nodes.insert(table->cell(i, QStringLiteral("node_id")));
            }
            prof.files << csv;
        }
        if (t.samples > 0) applyTelemetry(run, t);
        if (!prof.files.isEmpty()) {
            run.computeFraction = prof.fraction(Layout::MLflow);
            run.computeDefinition = computeDefinition(Layout::MLflow);
            run.files << prof.files;
        }
        run.nodes = !prof.nodes.isEmpty() ? int(prof.nodes.size()) : std::max(1, run.world / gpusPerNode);
        if (prof.nodes.isEmpty())
            run.warnings << QStringLiteral("%1: no profiling file names the nodes: %2 GPU(s) at %3 per node (--gpus-per-node) = %4 node(s)")
                                .arg(training.dir)
                                .arg(run.world)
                                .arg(gpusPerNode)
                                .arg(run.nodes);
        runs << run;
    }
    if (!runs.isEmpty()) runs.first().warnings << exp->warnings;
    return runs;
}

}  // namespace

QString layoutName(Layout layout)
{
    switch (layout) {
    case Layout::Pr262: return QStringLiteral("itwinai scalability-metrics (PR #262 layout)");
    case Layout::Unified: return QStringLiteral("itwinai scalability-metrics/<run_id> (unified layout)");
    case Layout::MLflow: return QStringLiteral("itwinai MLflow file store");
    }
    return {};
}

std::optional<Source> sourceAt(const QString& dir)
{
    const QDir d(dir);
    if (QFileInfo(d.filePath(QStringLiteral("epoch-time"))).isDir()) {
        const bool unified = QFileInfo(d.filePath(QStringLiteral("computation-data"))).isDir() ||
            (d.dirName() != QLatin1String("scalability-metrics") && !QFileInfo(d.filePath(QStringLiteral("communication-data"))).isDir());
        return Source{unified ? Layout::Unified : Layout::Pr262, dir};
    }
    if (mlflow::isExperimentDir(dir)) return Source{Layout::MLflow, dir};
    return std::nullopt;
}

Expected<QList<Run>> readSource(const Source& source, int gpusPerNode)
{
    if (gpusPerNode < 1) gpusPerNode = 4;
    return source.layout == Layout::MLflow ? readMlflow(source, gpusPerNode) : readCsvLayout(source, gpusPerNode);
}

void assignRepetitions(QList<Run>& runs)
{
    QList<int> order(runs.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
        const Run &x = runs[a], &y = runs[b];
        if (x.group != y.group) return x.group < y.group;
        return x.startUnix < y.startUnix;
    });
    QHash<Key, int> count;
    for (int i : order) runs[i].repetition = ++count[Key(runs[i].strategy, runs[i].world)];
}

}  // namespace scaledesk::itwinai
