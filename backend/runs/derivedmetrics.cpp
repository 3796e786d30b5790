#include "runs/derivedmetrics.h"

#include "analysis/epochscsv.h"
#include "eventfile.h"
#include "runs/importer.h"

#include <QDateTime>
#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSaveFile>

#include <cmath>

namespace scaledesk {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double nowS() { return double(QDateTime::currentMSecsSinceEpoch()) / 1000.0; }

/// What has been read of each source, kept beside the mirror (.derived.json).
struct State {
    QJsonObject out;      ///< output file -> offset read
    QJsonObject nersc;    ///< output file -> NERSC epochs written
    QJsonObject tb;       ///< event file (mirror path) -> offset read
    QJsonObject pending;  ///< epoch (from tags) -> fields so far
    double lastStep = kNaN;

    static State load(const QString& path)
    {
        State s;
        QFile f(path);
        if (!f.open(QIODevice::ReadOnly)) return s;
        const QJsonObject o = QJsonDocument::fromJson(f.readAll()).object();
        s.out = o.value(QStringLiteral("out")).toObject();
        s.nersc = o.value(QStringLiteral("nersc")).toObject();
        s.tb = o.value(QStringLiteral("tb")).toObject();
        s.pending = o.value(QStringLiteral("pending")).toObject();
        s.lastStep = o.value(QStringLiteral("last_step")).toDouble(kNaN);
        return s;
    }
    bool save(const QString& path) const
    {
        QJsonObject o{{QStringLiteral("out"), out},
                      {QStringLiteral("nersc"), nersc},
                      {QStringLiteral("tb"), tb},
                      {QStringLiteral("pending"), pending}};
        if (std::isfinite(lastStep)) o.insert(QStringLiteral("last_step"), lastStep);
        QSaveFile f(path);
        return f.open(QIODevice::WriteOnly) && f.write(QJsonDocument(o).toJson(QJsonDocument::Compact)) >= 0 && f.commit();
    }
};

/// The records and epochs one call appends.
struct Out {
    QByteArray lines;
    QList<EpochRow> epochs;
    State* state = nullptr;

    void step(double step, double t, const QJsonObject& fields)
    {
        QJsonObject o{{QStringLiteral("kind"), QStringLiteral("step")}, {QStringLiteral("step"), step}, {QStringLiteral("t"), t}};
        for (auto it = fields.begin(); it != fields.end(); ++it) o.insert(it.key(), it.value());
        lines += QJsonDocument(o).toJson(QJsonDocument::Compact) + '\n';
        if (!(state->lastStep >= step)) state->lastStep = step;
    }
    /// An epoch as scaledesk_metrics.epoch() writes it: a record and a row of epochs.csv.
    void epoch(int epoch, double t, QJsonObject f)
    {
        const double trainS = f.take(QStringLiteral("train_time")).toDouble(kNaN);
        const double samples = f.take(QStringLiteral("samples")).toDouble(kNaN);
        const double valS = f.take(QStringLiteral("val_time")).toDouble(kNaN);
        const double step = std::isfinite(state->lastStep) ? state->lastStep : epoch;
        QJsonObject o{{QStringLiteral("kind"), QStringLiteral("epoch")},
                      {QStringLiteral("epoch"), epoch},
                      {QStringLiteral("step"), step},
                      {QStringLiteral("t"), t}};
        auto put = [&](const char* key, double v) {
            if (std::isfinite(v)) o.insert(QLatin1String(key), v);
        };
        put("epoch_s", trainS);
        put("samples", samples);
        put("samples_per_s", trainS > 0 ? samples / trainS : kNaN);
        put("val_s", valS);
        for (auto it = f.begin(); it != f.end(); ++it) o.insert(it.key(), it.value());
        lines += QJsonDocument(o).toJson(QJsonDocument::Compact) + '\n';
        EpochRow row;
        row.epoch = epoch;
        row.step = step;
        row.trainS = trainS;
        row.samplesGlobal = samples;
        row.throughput = trainS > 0 ? samples / trainS : kNaN;
        row.valS = valS;
        row.wallS = std::isfinite(valS) ? trainS + valS : kNaN;
        row.trainLoss = f.value(QStringLiteral("train_loss")).toDouble(kNaN);
        row.valLoss = f.value(QStringLiteral("val_loss")).toDouble(kNaN);
        row.lr = f.value(QStringLiteral("lr")).toDouble(kNaN);
        row.tEnd = t;
        epochs << row;
    }
};

/// The new complete lines of an output file through the patterns.
void readPatterns(const QString& path, const QString& name, const MetricSources& sources, Out& out)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return;
    qint64 offset = qint64(out.state->out.value(name).toDouble());
    if (f.size() < offset) offset = 0;  // the file started again
    if (!f.seek(offset)) return;
    const QByteArray bytes = f.readAll();
    const qsizetype end = bytes.lastIndexOf('\n');
    if (end < 0) return;  // a partial line waits
    const double t = nowS();
    for (QByteArray line : bytes.left(end).split('\n')) {
        if (line.endsWith('\r')) line.chop(1);
        const QString text = QString::fromUtf8(line);
        for (const MetricSources::Pattern& p : sources.patterns) {
            const QRegularExpressionMatch m = p.re.match(text);
            if (!m.hasMatch()) continue;
            QJsonObject fields;
            bool ok = true;
            for (const QString& g : p.re.namedCaptureGroups()) {
                if (g.isEmpty() || g == QLatin1String("step") || g == QLatin1String("epoch") || m.captured(g).isEmpty()) continue;
                const double v = m.captured(g).toDouble(&ok);
                if (!ok || !std::isfinite(v)) break;
                fields.insert(g, v);
            }
            if (!ok) continue;  // a value that is no number: the line is not this pattern's after all
            if (p.epoch)
                out.epoch(m.captured(QStringLiteral("epoch")).toInt(), t, fields);
            else
                out.step(m.captured(QStringLiteral("step")).toDouble(), t, fields);
            break;
        }
    }
    out.state->out.insert(name, double(offset + end + 1));
}

/// The NERSC epochs of an output file not written yet (the whole file is read again: a job's
/// output is small, and an epoch's lines may come over several polls).
void readNersc(const QString& path, const QString& name, bool ended, Out& out)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return;
    const NerscLog log = parseNerscLog(f.readAll(), name);
    int written = out.state->nersc.value(name).toInt();
    if (written > log.epochs.size()) written = 0;  // the file started again
    for (int i = written; i < log.epochs.size(); ++i) {
        const NerscLog::Epoch& e = log.epochs[i];
        const bool complete = std::isfinite(e.valS) || i + 1 < log.epochs.size() || ended;
        if (!complete) break;
        QJsonObject fields{{QStringLiteral("train_time"), e.trainS}};
        if (std::isfinite(e.samplesPerS)) fields.insert(QStringLiteral("samples"), std::round(e.trainS * e.samplesPerS));
        if (std::isfinite(e.trainLoss)) fields.insert(QStringLiteral("train_loss"), e.trainLoss);
        if (std::isfinite(e.valLoss)) fields.insert(QStringLiteral("val_loss"), e.valLoss);
        if (std::isfinite(e.valS)) fields.insert(QStringLiteral("val_time"), e.valS);
        const QDateTime at = e.end.isValid() ? e.end : e.trainEnd;
        out.epoch(e.epoch, at.isValid() ? double(at.toMSecsSinceEpoch()) / 1000.0 : nowS(), fields);
        written = i + 1;
    }
    out.state->nersc.insert(name, written);
}

/// The new complete records of one event file.
void readEvents(const QString& path, const QString& name, const MetricSources& sources, Out& out)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return;
    qint64 offset = qint64(out.state->tb.value(name).toDouble());
    if (f.size() < offset) offset = 0;
    if (f.size() == offset || !f.seek(offset)) return;
    const QByteArray bytes = f.readAll();
    tb::EventStreamReader reader;
    const tb::EventFileContents c = reader.feed(bytes.constData(), std::size_t(bytes.size()));
    QHash<QString, QString> byTag;  // tag -> ScaleDesk name
    for (auto it = sources.tags.cbegin(); it != sources.tags.cend(); ++it) byTag.insert(it.value(), it.key());
    for (const tb::ScalarPoint& s : c.scalars) {
        const QString tag = QString::fromStdString(s.tag);
        QJsonObject o{{QStringLiteral("kind"), QStringLiteral("scalar")},
                      {QStringLiteral("tag"), tag},
                      {QStringLiteral("step"), double(s.step)},
                      {QStringLiteral("t"), s.wallTime}};
        if (std::isfinite(s.value)) o.insert(QStringLiteral("value"), s.value);
        out.lines += QJsonDocument(o).toJson(QJsonDocument::Compact) + '\n';
        const QString as = byTag.value(tag);
        if (as.isEmpty() || !std::isfinite(s.value)) continue;
        if (!as.startsWith(QLatin1String("epoch."))) {
            out.step(double(s.step), s.wallTime, {{as, s.value}});
            continue;
        }
        // An epoch's tags come as separate events: gathered until each named one is there.
        const QString key = QString::number(s.step);
        QJsonObject fields = out.state->pending.value(key).toObject();
        fields.insert(as.mid(6), s.value);
        bool whole = true;
        for (auto it = sources.tags.cbegin(); it != sources.tags.cend(); ++it)
            if (it.key().startsWith(QLatin1String("epoch.")) && !fields.contains(it.key().mid(6))) whole = false;
        if (whole) {
            out.state->pending.remove(key);
            out.epoch(int(s.step), s.wallTime, fields);
        } else {
            out.state->pending.insert(key, fields);
        }
    }
    out.state->tb.insert(name, double(offset + qint64(reader.consumed())));
}

}  // namespace

Status deriveMetrics(const QString& mirrorDir, const MetricSources& sources, const QStringList& outputs, bool ended)
{
    const QString statePath = mirrorDir + QStringLiteral("/.derived.json");
    State state = State::load(statePath);
    Out out;
    out.state = &state;
    for (const QString& name : outputs) {
        const QString path = mirrorDir + QLatin1Char('/') + name;
        if (!sources.patterns.isEmpty()) readPatterns(path, name, sources, out);
        if (sources.nersc) readNersc(path, name, ended, out);
    }
    if (!sources.tensorboard.isEmpty()) {
        QStringList files;
        QDirIterator it(mirrorDir + QLatin1Char('/') + sources.tensorboard, {QStringLiteral("events.out.tfevents.*")}, QDir::Files,
                        QDirIterator::Subdirectories);
        while (it.hasNext()) files << it.next();
        files.sort();
        for (const QString& path : files) readEvents(path, path.mid(mirrorDir.size() + 1), sources, out);
    }
    if (!out.lines.isEmpty()) {
        QFile metrics(mirrorDir + QStringLiteral("/metrics.jsonl"));
        if (!metrics.open(QIODevice::Append) || metrics.write(out.lines) != out.lines.size())
            return Error{ErrorCode::StoreIo, QStringLiteral("cannot append the run's metrics: ") + metrics.errorString(),
                         metrics.fileName()};
    }
    if (!out.epochs.isEmpty()) {
        const QString csv = mirrorDir + QStringLiteral("/epochs.csv");
        QList<EpochRow> rows = QFileInfo::exists(csv) ? loadEpochsCsv(csv).rows : QList<EpochRow>();
        rows << out.epochs;
        QSaveFile f(csv);
        const QByteArray bytes = writeEpochsCsv(rows);
        if (!f.open(QIODevice::WriteOnly) || f.write(bytes) != bytes.size() || !f.commit())
            return Error{ErrorCode::StoreIo, QStringLiteral("cannot write the run's epochs: ") + f.errorString(), csv};
    }
    if (!state.save(statePath))
        return Error{ErrorCode::StoreIo, QStringLiteral("cannot save what was read of the run's metrics"), statePath};
    return Done{};
}

}  // namespace scaledesk
