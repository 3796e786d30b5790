#include "runs/importer.h"

#include "analysis/epochscsv.h"
#include "eventfile.h"
#include "runs/itwinaiimport.h"

#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QSaveFile>
#include <QSet>
#include <QTemporaryDir>
#include <QTimeZone>

#include <algorithm>
#include <cmath>
#include <limits>

namespace scaledesk {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
const QString kNersc = QStringLiteral("nersc-python");
const QString kTensorBoard = QStringLiteral("tensorboard");
const QString kScaleDesk = QStringLiteral("scaledesk");
const QString kItwinai = QStringLiteral("itwinai");

bool isEventFile(const QString& name) { return name.startsWith(QLatin1String("events.out.tfevents.")); }

QStringList eventFilesIn(const QString& dir)
{
    QStringList out;
    for (const QString& name : QDir(dir).entryList(QDir::Files, QDir::Name))
        if (isEventFile(name)) out << QDir(dir).filePath(name);
    return out;
}

bool isScaleDeskRun(const QString& dir)
{
    return QFileInfo::exists(dir + QStringLiteral("/manifest.json")) && QFileInfo::exists(dir + QStringLiteral("/metrics.jsonl"));
}

// One run found under a path, before anything is read.
struct Found {
    QString kind, dir;
    QStringList eventFiles;
    itwinai::Source itwinai{itwinai::Layout::Pr262, {}};  ///< kind itwinai: its layout
};

// The runs under `path`. A ScaleDesk run folder or a folder with out.log is one run (its logs/
// belong to it); an itwinai folder (itwinaiimport.h) holds its runs, and nothing under it is
// looked at again; any other folder with event files is one TensorBoard run.
QList<Found> discover(const QString& path)
{
    QList<Found> out;
    QSet<QString> taken;  // logs/ folders that belong to a NERSC run
    QStringList covered;  // itwinai folders: their subfolders are theirs
    QStringList dirs{path};
    QDirIterator it(path, QDir::Dirs | QDir::NoDotAndDotDot, QDirIterator::Subdirectories);
    while (it.hasNext()) dirs << it.next();
    std::sort(dirs.begin() + 1, dirs.end());
    for (const QString& dir : dirs) {
        if (taken.contains(dir)) continue;
        if (std::any_of(covered.begin(), covered.end(), [&](const QString& c) { return dir.startsWith(c + QLatin1Char('/')); })) continue;
        if (const auto source = itwinai::sourceAt(dir)) {
            out << Found{kItwinai, dir, {}, *source};
            covered << dir;
            continue;
        }
        if (QFileInfo(dir).fileName() == QLatin1String("checkpoints")) continue;
        if (isScaleDeskRun(dir)) {
            out << Found{kScaleDesk, dir, {}};
            taken.insert(dir + QStringLiteral("/logs"));
        } else if (QFileInfo::exists(dir + QStringLiteral("/out.log"))) {
            const QString logs = dir + QStringLiteral("/logs");
            out << Found{kNersc, dir, eventFilesIn(logs) + eventFilesIn(dir)};
            taken.insert(logs);
        } else if (const QStringList events = eventFilesIn(dir); !events.isEmpty()) {
            out << Found{kTensorBoard, dir, events};
        }
    }
    return out;
}

// The run id a folder gets: its last three path components (base/1GPU/00 → base-1GPU-00).
QString idFor(const QString& dir)
{
    QStringList parts = QDir::cleanPath(dir).split(QLatin1Char('/'), Qt::SkipEmptyParts);
    while (parts.size() > 3) parts.removeFirst();
    return parts.join(QLatin1Char('-'));
}

QString jsonLine(const QJsonObject& o) { return QString::fromUtf8(QJsonDocument(o).toJson(QJsonDocument::Compact)); }

double unixOf(const QDateTime& t) { return t.isValid() ? double(t.toMSecsSinceEpoch()) / 1000.0 : kNaN; }

// A run ready to be written: its files (relative path → bytes, or → a source file to copy).
struct Prepared {
    ImportedRun info;
    RunRecord record;
    QMap<QString, QByteArray> files;
    QMap<QString, QString> copies;
};

void copyTree(const QString& from, const QString& into, Prepared* p, const QStringList& skip = {})
{
    QDirIterator it(from, QDir::Files | QDir::Hidden, QDirIterator::Subdirectories);
    while (it.hasNext()) {
        const QString file = it.next();
        const QString rel = QDir(from).relativeFilePath(file);
        if (std::any_of(skip.begin(), skip.end(), [&](const QString& s) { return rel == s || rel.startsWith(s + QLatin1Char('/')); }))
            continue;
        p->copies.insert(into.isEmpty() ? rel : into + QLatin1Char('/') + rel, file);
    }
}

Expected<Prepared> prepareScaleDesk(const Found& f)
{
    Prepared p;
    const QJsonObject manifest = readRunManifest(f.dir);
    if (manifest.isEmpty())
        return Error{ErrorCode::ImportSource, QStringLiteral("manifest.json is not a JSON object"),
                     f.dir + QStringLiteral("/manifest.json")};
    RunRecord& r = p.record;
    // ScaleDesk names a run's folder by its id (the manifest's run_id is the trainer's view of it).
    // A folder of scaledesk-train run by hand is <config>/<N>GPU/<num>, as the NERSC trainer's:
    // its id is those three (cpu-short-2GPU-00), or every hand-run folder would be "00".
    const bool handRun = QRegularExpression(QStringLiteral("^\\d+GPU$")).match(QFileInfo(QFileInfo(f.dir).path()).fileName()).hasMatch();
    r.id = handRun ? idFor(f.dir) : QFileInfo(f.dir).fileName();
    r.configName = manifest.value(QStringLiteral("config")).toString();
    r.strategy = manifest.value(QStringLiteral("strategy")).toString();
    r.nodes = manifest.value(QStringLiteral("nodes")).toInt(1);
    r.ranksPerNode = manifest.value(QStringLiteral("ranks_per_node")).toInt(manifest.value(QStringLiteral("world_size")).toInt(1));
    r.localBatch = manifest.value(QStringLiteral("local_batch_size")).toInt(0);
    copyTree(f.dir, QString(), &p, {QStringLiteral("checkpoints"), QStringLiteral("run.json"), QStringLiteral(".lock")});
    const EpochTable epochs = loadEpochsCsv(f.dir + QStringLiteral("/epochs.csv"));
    p.info.epochs = int(epochs.rows.size());
    return p;
}

// The event files' scalars, in file order (files by name), each with its tag.
struct Scalars {
    std::vector<tb::ScalarPoint> points;
    QSet<QString> tags;
    double firstWallTime = kNaN;
};

Scalars readScalars(const Found& f, Prepared* p)
{
    Scalars s;
    for (const QString& file : f.eventFiles) {
        const tb::EventFileContents c = tb::readEventFile(QFile::encodeName(file).toStdString());
        for (const tb::RecordProblem& problem : c.problems)
            p->info.warnings
                << QStringLiteral("%1 (offset %2): %3").arg(file).arg(problem.offset).arg(QString::fromStdString(problem.message));
        for (const tb::ScalarPoint& point : c.scalars) {
            s.tags.insert(QString::fromStdString(point.tag));
            if (!(point.wallTime >= s.firstWallTime)) s.firstWallTime = point.wallTime;
            s.points.push_back(point);
        }
        // Events are copied where they were: logs/ of a NERSC run, the run folder of a TensorBoard one.
        const QString rel = f.kind == kNersc ? QDir(f.dir).relativeFilePath(file) : QStringLiteral("logs/") + QFileInfo(file).fileName();
        p->copies.insert(rel, file);
    }
    QStringList tags(s.tags.begin(), s.tags.end());
    tags.sort();
    p->info.tags = tags;
    p->info.scalars = int(s.points.size());
    return s;
}

// The zone of out.log's times, which have none: the offset (a multiple of 15 minutes) that puts
// each epoch's last log line nearest the event written for it (the validation loss, at the same
// moment); without events, this machine's zone.
QTimeZone logZone(const NerscLog& log, const Scalars& scalars, QStringList* notes)
{
    std::vector<double> validTimes;
    for (const tb::ScalarPoint& s : scalars.points)
        if (s.tag == "Loss/valid" && s.step > 0) validTimes.push_back(s.wallTime);
    std::vector<double> offsets;
    for (int i = 0; i < log.epochs.size() && i < int(validTimes.size()); ++i) {
        QDateTime asUtc = log.epochs[i].end;
        if (!asUtc.isValid()) continue;
        asUtc.setTimeZone(QTimeZone::utc());
        offsets.push_back(unixOf(asUtc) - validTimes[std::size_t(i)]);
    }
    if (offsets.empty()) {
        *notes << QStringLiteral("out.log's times carry no zone and no event file dates them: read as this machine's local time");
        return QTimeZone::systemTimeZone();
    }
    std::nth_element(offsets.begin(), offsets.begin() + long(offsets.size() / 2), offsets.end());
    const int quarterHours = int(std::lround(offsets[offsets.size() / 2] / 900.0));
    return QTimeZone(quarterHours * 900);
}

Expected<Prepared> prepareLogs(const Found& f, const ImportOptions& options)
{
    Prepared p;
    RunRecord& r = p.record;
    r.id = idFor(f.dir);
    r.ranksPerNode = options.ranks > 0 ? options.ranks : 1;
    const Scalars scalars = readScalars(f, &p);

    // (t, line) of every metrics.jsonl record, sorted by time when written.
    std::vector<std::pair<double, QString>> records;
    double start = scalars.firstWallTime;
    for (const tb::ScalarPoint& s : scalars.points) {
        QJsonObject o{{QStringLiteral("kind"), QStringLiteral("scalar")},
                      {QStringLiteral("tag"), QString::fromStdString(s.tag)},
                      {QStringLiteral("step"), double(s.step)},
                      {QStringLiteral("t"), s.wallTime}};
        o.insert(QStringLiteral("value"), std::isfinite(s.value) ? QJsonValue(s.value) : QJsonValue(QJsonValue::Null));
        records.emplace_back(s.wallTime, jsonLine(o));
    }

    if (f.kind == kNersc) {
        const QString logPath = f.dir + QStringLiteral("/out.log");
        QFile file(logPath);
        if (!file.open(QIODevice::ReadOnly)) return Error{ErrorCode::ImportSource, file.errorString(), logPath};
        const NerscLog log = parseNerscLog(file.readAll(), logPath);
        p.copies.insert(QStringLiteral("out.log"), logPath);
        p.info.warnings << log.warnings;
        QStringList notes;
        const QTimeZone zone = logZone(log, scalars, &notes);
        p.info.warnings << notes;
        auto inZone = [&](QDateTime t) {
            t.setTimeZone(zone);
            return t;
        };
        auto when = [&](const QDateTime& t) { return unixOf(inZone(t)); };
        r.configName = log.config.value(QStringLiteral("Configuration name"));
        r.strategy = QStringLiteral("ddp");  // the NERSC trainer's data parallelism is PyTorch DDP
        const double globalBatch = log.config.value(QStringLiteral("global_batch_size")).toDouble();
        const double nSamples = log.config.value(QStringLiteral("Nsamples")).toDouble();
        const double stepsPerEpoch = globalBatch > 0 ? std::floor(nSamples / globalBatch) : kNaN;
        // The steps at which the events put each epoch's losses, else Nsamples / global batch per epoch.
        std::vector<double> epochSteps;
        for (const tb::ScalarPoint& s : scalars.points)
            if (s.tag == "Loss/train" && s.step > 0) epochSteps.push_back(double(s.step));
        const bool lossesInEvents =
            scalars.tags.contains(QStringLiteral("Loss/train")) || scalars.tags.contains(QStringLiteral("Loss/valid"));
        if (log.start.isValid()) start = std::isnan(start) ? when(log.start) : std::min(start, when(log.start));

        QList<EpochRow> rows;
        for (int i = 0; i < log.epochs.size(); ++i) {
            const NerscLog::Epoch& e = log.epochs[i];
            const double step = i < int(epochSteps.size()) ? epochSteps[std::size_t(i)] : e.epoch * stepsPerEpoch;
            const double end = when(e.end);
            QJsonObject o{{QStringLiteral("kind"), QStringLiteral("epoch")},
                          {QStringLiteral("epoch"), e.epoch},
                          {QStringLiteral("step"), std::isnan(step) ? 0.0 : step},
                          {QStringLiteral("t"), end}};
            auto put = [&](const char* key, double v) {
                if (!std::isnan(v)) o.insert(QLatin1String(key), v);
            };
            put("epoch_s", e.trainS);
            put("val_s", e.valS);
            put("samples_per_s", e.samplesPerS);
            put("samples", nSamples > 0 ? nSamples : kNaN);
            put("steps", stepsPerEpoch);
            if (!lossesInEvents) {  // the events' Loss/train and Loss/valid are the same numbers: not twice
                put("train_loss", e.trainLoss);
                put("val_loss", e.valLoss);
            }
            records.emplace_back(end, jsonLine(o));
            EpochRow row;
            row.epoch = e.epoch;
            row.step = step;
            row.wallS = e.trainS + (std::isnan(e.valS) ? 0.0 : e.valS);
            row.trainS = e.trainS;
            row.valS = e.valS;
            row.samplesGlobal = nSamples > 0 ? nSamples : kNaN;
            row.steps = stepsPerEpoch;
            row.throughput = e.samplesPerS;
            row.trainLoss = e.trainLoss;
            row.valLoss = e.valLoss;
            row.tEnd = end;
            rows << row;
        }
        p.info.epochs = int(log.epochs.size());
        if (!rows.isEmpty()) p.files.insert(QStringLiteral("epochs.csv"), writeEpochsCsv(rows));

        const int world = r.ranksPerNode;
        QJsonObject manifest{{QStringLiteral("run_id"), r.id},
                             {QStringLiteral("config"), r.configName},
                             {QStringLiteral("yaml_config"), log.config.value(QStringLiteral("Configuration file"))},
                             {QStringLiteral("strategy"), r.strategy},
                             {QStringLiteral("world_size"), world},
                             {QStringLiteral("nodes"), 1},
                             {QStringLiteral("ranks_per_node"), world},
                             {QStringLiteral("status"), QStringLiteral("finished")},
                             {QStringLiteral("trainer"), QStringLiteral("NERSC sc21-dl-tutorial train.py (imported)")}};
        if (globalBatch > 0) {
            manifest.insert(QStringLiteral("global_batch_size"), globalBatch);
            manifest.insert(QStringLiteral("local_batch_size"), std::floor(globalBatch / world));
            r.localBatch = int(globalBatch / world);
        }
        if (!std::isnan(stepsPerEpoch)) manifest.insert(QStringLiteral("steps_per_epoch"), stepsPerEpoch);
        for (const char* key : {"Nsamples", "Nsamples_val", "num_epochs", "data_size"})
            if (log.config.contains(QLatin1String(key)))
                manifest.insert(QLatin1String(key), log.config.value(QLatin1String(key)).toDouble());
        if (log.start.isValid()) manifest.insert(QStringLiteral("start_utc"), inZone(log.start).toUTC().toString(Qt::ISODateWithMs));
        if (!log.epochs.isEmpty() && log.epochs.last().end.isValid())
            manifest.insert(QStringLiteral("end_utc"), inZone(log.epochs.last().end).toUTC().toString(Qt::ISODateWithMs));
        // The configuration block, as the log gave it (strings: the Python reprs are kept).
        QJsonObject config;
        for (auto it = log.config.begin(); it != log.config.end(); ++it) config.insert(it.key(), it.value());
        manifest.insert(QStringLiteral("nersc_config"), config);
        p.files.insert(QStringLiteral("manifest.json"), QJsonDocument(manifest).toJson(QJsonDocument::Indented));
    } else {
        QJsonObject manifest{{QStringLiteral("run_id"), r.id},
                             {QStringLiteral("world_size"), r.ranksPerNode},
                             {QStringLiteral("nodes"), 1},
                             {QStringLiteral("ranks_per_node"), r.ranksPerNode},
                             {QStringLiteral("status"), QStringLiteral("finished")}};
        if (!std::isnan(scalars.firstWallTime))
            manifest.insert(
                QStringLiteral("start_utc"),
                QDateTime::fromMSecsSinceEpoch(qint64(scalars.firstWallTime * 1000), QTimeZone::utc()).toString(Qt::ISODateWithMs));
        p.files.insert(QStringLiteral("manifest.json"), QJsonDocument(manifest).toJson(QJsonDocument::Indented));
    }
    if (p.info.scalars == 0 && p.info.epochs == 0)
        return Error{ErrorCode::ImportSource,
                     QStringLiteral("no scalar and no epoch could be read") +
                         (p.info.warnings.isEmpty() ? QString() : QStringLiteral(": ") + p.info.warnings.first()),
                     f.dir};
    std::stable_sort(records.begin(), records.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    QString metrics;
    if (!std::isnan(start))
        metrics += jsonLine(QJsonObject{{QStringLiteral("kind"), QStringLiteral("event")},
                                        {QStringLiteral("event"), QStringLiteral("started")},
                                        {QStringLiteral("step"), 0},
                                        {QStringLiteral("t"), start}}) +
            QLatin1Char('\n');
    for (const auto& rec : records) metrics += rec.second + QLatin1Char('\n');
    p.files.insert(QStringLiteral("metrics.jsonl"), metrics.toUtf8());
    return p;
}

// A name that a run id and a sweep can hold: letters, digits, '.', '_' and '-'.
QString idPart(const QString& s)
{
    QString out = s;
    for (QChar& c : out)
        if (!c.isLetterOrNumber() && c != QLatin1Char('.') && c != QLatin1Char('_') && c != QLatin1Char('-')) c = QLatin1Char('_');
    return out;
}

// One itwinai run as a ScaleDesk run: epochs.csv from its epoch times, the sampler's energy and
// utilisation and the profiler's computation share in manifest.json (the report reads them there),
// epoch records in metrics.jsonl, and the files it came from under itwinai/.
Prepared prepareItwinaiRun(const itwinai::Run& run, const itwinai::Source& source, const QString& sweep)
{
    Prepared p;
    RunRecord& r = p.record;
    r.strategy = run.strategy;
    r.nodes = run.nodes;
    r.ranksPerNode = run.world / run.nodes;
    if (run.world % run.nodes != 0) {
        p.info.warnings << QStringLiteral("%1 GPUs do not divide over %2 nodes; recorded as one node of %1").arg(run.world).arg(run.nodes);
        r.nodes = 1;
        r.ranksPerNode = run.world;
    }
    r.repetition = run.repetition;
    r.sweep = sweep;
    r.id = QStringLiteral("%1-%2-%3x%4-r%5").arg(sweep, idPart(run.strategy)).arg(r.nodes).arg(r.ranksPerNode).arg(run.repetition);
    p.info.warnings << run.warnings;

    // Epoch records and epochs.csv. The CSV layouts keep no clock: times count from the start.
    QList<EpochRow> rows;
    QString metrics;
    const bool clock = std::isfinite(run.startUnix);
    double t = clock ? run.startUnix : 0.0;
    metrics += jsonLine(QJsonObject{{QStringLiteral("kind"), QStringLiteral("event")},
                                    {QStringLiteral("event"), QStringLiteral("started")},
                                    {QStringLiteral("step"), 0},
                                    {QStringLiteral("t"), t}}) +
        QLatin1Char('\n');
    for (const itwinai::Run::Epoch& e : run.epochs) {
        t = std::isfinite(e.endUnix) ? e.endUnix : t + e.seconds;
        EpochRow row;
        row.epoch = e.epoch;
        row.wallS = row.trainS = e.seconds;  // itwinai's epoch time is the one time it has
        row.tEnd = t;
        rows << row;
        metrics += jsonLine(QJsonObject{{QStringLiteral("kind"), QStringLiteral("epoch")},
                                        {QStringLiteral("epoch"), e.epoch},
                                        {QStringLiteral("step"), e.epoch},
                                        {QStringLiteral("t"), t},
                                        {QStringLiteral("epoch_s"), e.seconds}}) +
            QLatin1Char('\n');
    }
    p.info.epochs = int(rows.size());
    p.files.insert(QStringLiteral("epochs.csv"), writeEpochsCsv(rows));
    p.files.insert(QStringLiteral("metrics.jsonl"), metrics.toUtf8());

    QJsonObject m{{QStringLiteral("run_id"), r.id},
                  {QStringLiteral("strategy"), r.strategy},
                  {QStringLiteral("world_size"), run.world},
                  {QStringLiteral("nodes"), r.nodes},
                  {QStringLiteral("ranks_per_node"), r.ranksPerNode},
                  {QStringLiteral("repetition"), run.repetition},
                  {QStringLiteral("status"), QStringLiteral("finished")},
                  {QStringLiteral("trainer"), QStringLiteral("itwinai (imported)")},
                  {QStringLiteral("itwinai_layout"), itwinai::layoutName(source.layout)},
                  {QStringLiteral("report_definition"), QStringLiteral("itwinai")}};
    auto put = [&](const char* key, double v) {
        if (std::isfinite(v)) m.insert(QLatin1String(key), v);
    };
    put("gpu_energy_wh", run.energyWh);
    put("gpu_util_pct_mean", run.utilPct);
    put("gpu_probing_interval_s", run.probingIntervalS);
    if (run.gpuSamples > 0) m.insert(QStringLiteral("gpu_samples"), run.gpuSamples);
    put("computation_fraction", run.computeFraction);
    if (!run.computeDefinition.isEmpty()) m.insert(QStringLiteral("computation_fraction_definition"), run.computeDefinition);
    if (!run.group.isEmpty()) m.insert(QStringLiteral("itwinai_run"), run.group);
    if (!run.sourceId.isEmpty()) m.insert(QStringLiteral("mlflow_run_id"), run.sourceId);
    auto utc = [](double seconds) {
        return QDateTime::fromMSecsSinceEpoch(qint64(seconds * 1000), QTimeZone::utc()).toUTC().toString(Qt::ISODateWithMs);
    };
    if (clock) m.insert(QStringLiteral("start_utc"), utc(run.startUnix));
    if (std::isfinite(run.endUnix)) m.insert(QStringLiteral("end_utc"), utc(run.endUnix));
    p.files.insert(QStringLiteral("manifest.json"), QJsonDocument(m).toJson(QJsonDocument::Indented));
    for (const QString& file : run.files) p.copies.insert(QStringLiteral("itwinai/") + QDir(source.dir).relativeFilePath(file), file);
    return p;
}

// Every itwinai run of the found sources, numbered as repetitions across all of them.
Expected<QList<QPair<Found, Prepared>>> prepareItwinai(const QList<Found>& found, const ImportOptions& options)
{
    QList<itwinai::Run> runs;
    QList<int> sourceOf;
    QStringList empty;
    for (int i = 0; i < found.size(); ++i) {
        auto read = itwinai::readSource(found[i].itwinai, options.gpusPerNode);
        if (!read) return read.error();
        if (read->isEmpty()) {  // an MLflow store's other experiments (its "Default") may hold none
            empty << found[i].dir;
            continue;
        }
        for (const itwinai::Run& r : *read) {
            runs << r;
            sourceOf << i;
        }
    }
    if (runs.isEmpty())
        return Error{ErrorCode::ImportSource,
                     QStringLiteral("%1 with no epoch times (no epochtime_*.csv row, no epoch_time_s metric)")
                         .arg(itwinai::layoutName(found.first().itwinai.layout)),
                     found.first().dir};
    for (const QString& dir : empty) runs.first().warnings << QStringLiteral("%1: no epoch times; nothing imported from it").arg(dir);
    itwinai::assignRepetitions(runs);
    const QString sweep = options.sweep.isEmpty() ? kItwinai : options.sweep;
    QList<QPair<Found, Prepared>> out;
    for (int i = 0; i < runs.size(); ++i)
        out << qMakePair(found[sourceOf[i]], prepareItwinaiRun(runs[i], found[sourceOf[i]].itwinai, sweep));
    return out;
}

Status writeFile(const QString& path, const QByteArray& bytes)
{
    if (!QDir().mkpath(QFileInfo(path).absolutePath()))
        return Error{ErrorCode::ImportIo, QStringLiteral("cannot create the folder"), QFileInfo(path).absolutePath()};
    QSaveFile f(path);
    if (!f.open(QIODevice::WriteOnly) || f.write(bytes) != bytes.size() || !f.commit())
        return Error{ErrorCode::ImportIo, QStringLiteral("cannot write: ") + f.errorString(), path};
    return Done{};
}

// Writes the run into a hidden folder of runs/, renames it into place and records it.
Status commit(RunStore& store, Prepared& p)
{
    const Workspace& ws = store.workspace();
    if (auto ok = ws.ensure(); !ok) return ok;
    QTemporaryDir staging(ws.runsDir() + QStringLiteral("/.import-XXXXXX"));
    if (!staging.isValid()) return Error{ErrorCode::ImportIo, QStringLiteral("cannot create a staging folder"), ws.runsDir()};
    for (auto it = p.files.begin(); it != p.files.end(); ++it)
        if (auto ok = writeFile(staging.filePath(it.key()), it.value()); !ok) return ok;
    for (auto it = p.copies.begin(); it != p.copies.end(); ++it) {
        if (p.files.contains(it.key())) continue;  // written above (a converted file wins over a copy)
        QFile src(it.value());
        if (!src.open(QIODevice::ReadOnly)) return Error{ErrorCode::ImportSource, src.errorString(), it.value()};
        if (auto ok = writeFile(staging.filePath(it.key()), src.readAll()); !ok) return ok;
    }
    const QString dir = ws.runDir(p.record.id);
    if (QFileInfo::exists(dir)) return Error{ErrorCode::RunExists, QStringLiteral("the run's folder exists already"), dir};
    if (!QDir().rename(staging.path(), dir))
        return Error{ErrorCode::ImportIo, QStringLiteral("cannot move the imported run into place"), dir};
    staging.setAutoRemove(false);
    if (auto ok = store.create(p.record); !ok) {
        QDir(dir).removeRecursively();
        return ok;
    }
    return Done{};
}

}  // namespace

NerscLog::Epoch::Epoch() : trainS(kNaN), samplesPerS(kNaN), trainLoss(kNaN), valLoss(kNaN), valS(kNaN) {}

NerscLog parseNerscLog(const QByteArray& bytes, const QString& fileName)
{
    NerscLog out;
    // "2021-11-12 00:46:23,492 - root - INFO - message" (Python logging's default asctime).
    static const QRegularExpression lineRe(
        QStringLiteral("^(\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d),(\\d{3}) - [^-]* - [A-Z]+ - (.*)$"));
    static const QRegularExpression timeRe(
        QStringLiteral("^Time taken for epoch (\\d+) is ([-+0-9.eE]+) sec, avg ([-+0-9.eE]+|nan|inf) samples/sec"));
    static const QRegularExpression trainRe(QStringLiteral("^\\s*Avg train loss=([-+0-9.eE]+|nan|inf)"));
    static const QRegularExpression valRe(QStringLiteral("^\\s*Avg val loss=([-+0-9.eE]+|nan|inf)"));
    static const QRegularExpression valTimeRe(QStringLiteral("^\\s*Total validation time: ([-+0-9.eE]+) sec"));
    bool inConfig = false;
    int lineNo = 0;
    auto number = [](const QString& s) {
        bool ok = false;
        const double v = s.toDouble(&ok);
        return ok ? v : (s == QLatin1String("nan") ? kNaN : s == QLatin1String("inf") ? std::numeric_limits<double>::infinity() : kNaN);
    };
    for (const QByteArray& raw : bytes.split('\n')) {
        ++lineNo;
        const QRegularExpressionMatch m = lineRe.match(QString::fromUtf8(raw).trimmed());
        if (!m.hasMatch()) continue;
        QDateTime when = QDateTime::fromString(m.captured(1), QStringLiteral("yyyy-MM-dd HH:mm:ss"));
        when = when.addMSecs(m.captured(2).toInt());
        if (!out.start.isValid()) out.start = when;
        const QString message = m.captured(3);
        if (message.contains(QLatin1String("-- Configuration --"))) {
            inConfig = true;
            out.recognised = true;
            continue;
        }
        if (inConfig) {
            if (message.startsWith(QLatin1String("----"))) {
                inConfig = false;
                continue;
            }
            const int colon = message.indexOf(QLatin1String(": "));
            if (message.startsWith(QLatin1String("Configuration ")) && colon > 0) {
                out.config.insert(message.left(colon), message.mid(colon + 2).trimmed());
            } else {
                const int space = message.indexOf(QLatin1Char(' '));
                if (space > 0) out.config.insert(message.left(space), message.mid(space + 1).trimmed());
            }
            continue;
        }
        if (const auto t = timeRe.match(message); t.hasMatch()) {
            out.recognised = true;
            NerscLog::Epoch e;
            e.epoch = t.captured(1).toInt();
            e.trainS = number(t.captured(2));
            e.samplesPerS = number(t.captured(3));
            e.trainEnd = e.end = when;
            out.epochs << e;
            continue;
        }
        if (out.epochs.isEmpty()) continue;
        NerscLog::Epoch& e = out.epochs.last();
        if (const auto t = trainRe.match(message); t.hasMatch()) {
            e.trainLoss = number(t.captured(1));
            e.end = when;
        } else if (const auto v = valRe.match(message); v.hasMatch()) {
            e.valLoss = number(v.captured(1));
            e.end = when;
        } else if (const auto vt = valTimeRe.match(message); vt.hasMatch()) {
            e.valS = number(vt.captured(1));
            e.end = when;
        } else if (message.contains(QLatin1String("Time taken for epoch")) || message.contains(QLatin1String("Avg train loss")) ||
                   message.contains(QLatin1String("Avg val loss"))) {
            out.warnings << QStringLiteral("%1:%2: an epoch line that does not read: %3").arg(fileName).arg(lineNo).arg(message.left(80));
        }
    }
    return out;
}

Expected<QList<ImportedRun>> importRuns(RunStore& store, const QStringList& paths, const ImportOptions& options, const ProgressFn& progress)
{
    if (paths.isEmpty())
        return Error{ErrorCode::Usage, QStringLiteral("nothing to import: give a run folder or a TensorBoard log folder"), QString()};
    // 1. Find every run; a path without one refuses the import.
    QList<Found> found;
    for (const QString& raw : paths) {
        const QFileInfo info(raw);
        if (!info.exists()) return Error{ErrorCode::ImportSource, QStringLiteral("no such file or folder"), raw};
        QString path = info.absoluteFilePath();
        if (info.isFile()) {  // an event file or out.log: its folder
            if (!isEventFile(info.fileName()) && info.fileName() != QLatin1String("out.log"))
                return Error{ErrorCode::ImportSource, QStringLiteral("not a run folder, an out.log or a TensorBoard event file"), raw};
            path = info.absolutePath();
            if (isEventFile(info.fileName()) && QFileInfo(path).fileName() == QLatin1String("logs") &&
                QFileInfo::exists(path + QStringLiteral("/../out.log")))
                path = QFileInfo(path + QStringLiteral("/..")).absoluteFilePath();
        }
        const QList<Found> here = discover(QDir::cleanPath(path));
        if (here.isEmpty())
            return Error{
                ErrorCode::ImportSource,
                QStringLiteral("no run found (looked for manifest.json with metrics.jsonl, out.log, and events.out.tfevents.* files)"),
                raw};
        found << here;
    }
    // 2. Read and convert every run, in memory.
    QList<QPair<Found, Prepared>> candidates;
    QList<Found> itwinaiFound;
    for (int i = 0; i < found.size(); ++i) {
        const Found& f = found[i];
        if (progress) progress(ProgressStep(QStringLiteral("reading %1").arg(f.dir), i, found.size(), true));
        if (f.kind == kItwinai) {
            itwinaiFound << f;
            continue;
        }
        auto p = f.kind == kScaleDesk ? prepareScaleDesk(f) : prepareLogs(f, options);
        if (!p) return p.error();
        candidates << qMakePair(f, std::move(*p));
    }
    if (!itwinaiFound.isEmpty()) {
        auto runs = prepareItwinai(itwinaiFound, options);
        if (!runs) return runs.error();
        candidates << *runs;
    }
    if (!options.id.isEmpty() && candidates.size() != 1)
        return Error{ErrorCode::Usage, QStringLiteral("--id names one run, and %1 were found").arg(candidates.size()), QString()};
    QList<Prepared> prepared;
    QSet<QString> ids;
    for (auto& [f, p] : candidates) {
        if (!options.id.isEmpty()) p.record.id = options.id;
        QString why;
        if (!RunStore::validRunId(p.record.id, &why)) return Error{ErrorCode::RunId, why, f.dir};
        const QString retry = f.kind == kItwinai
            ? QStringLiteral("import with another --sweep (its runs are <sweep>-<strategy>-<nodes>x<GPUs per node>-r<repetition>)")
            : QStringLiteral("import with --id");
        if (store.exists(p.record.id) || QFileInfo::exists(store.workspace().runDir(p.record.id)))
            return Error{ErrorCode::RunExists,
                         QStringLiteral("a run with the id '%1' is in the workspace already; %2").arg(p.record.id, retry), f.dir};
        if (ids.contains(p.record.id))
            return Error{ErrorCode::RunExists,
                         QStringLiteral("two runs would get the id '%1'; import them one at a time with --id").arg(p.record.id), f.dir};
        ids.insert(p.record.id);
        RunRecord& r = p.record;
        if (!options.sweep.isEmpty()) r.sweep = options.sweep;
        r.originKind = f.kind;
        r.originPath = f.dir;
        if (r.strategy.isEmpty()) r.strategy = QStringLiteral("unknown");
        r.transition(RunState::Completed, QStringLiteral("imported from %1 (%2)").arg(f.dir, f.kind));
        p.info.id = r.id;
        p.info.kind = f.kind;
        p.info.source = f.dir;
        p.info.sweep = r.sweep;
        prepared << std::move(p);
    }

    // 3. Write them.
    QList<ImportedRun> out;
    for (int i = 0; i < prepared.size(); ++i) {
        if (progress) progress(ProgressStep(QStringLiteral("importing %1").arg(prepared[i].record.id), i, prepared.size(), true));
        if (auto ok = commit(store, prepared[i]); !ok) return ok.error();
        out << prepared[i].info;
    }
    return out;
}

}  // namespace scaledesk
