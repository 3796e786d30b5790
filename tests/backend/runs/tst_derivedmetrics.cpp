// A command run's metrics made from what its code already writes (runs/derivedmetrics.*,
// config/metricsources.*): the NERSC example's out.log and event file (../shared/fixtures, a copy
// in tests/backend/runs/data) arriving in pieces cut anywhere give the same values as a whole read;
// output patterns; TensorBoard tags as step and epoch fields; and the definitions that are refused.
#include "analysis/epochscsv.h"
#include "analysis/metrics.h"
#include "config/commandrun.h"
#include "eventfile.h"
#include "runs/derivedmetrics.h"
#include "runs/importer.h"

#include <yaml-cpp/yaml.h>

#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>

using namespace scaledesk;

namespace {
const QString kRun = QStringLiteral(SCALEDESK_TEST_DATA "/runs/data/nersc-example-logs/base/1GPU/00");
const QString kEvents = QStringLiteral("events.out.tfevents.1636677146.nid001104.65966.0");

QByteArray read(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}
void append(const QString& path, const QByteArray& bytes)
{
    QDir().mkpath(QFileInfo(path).path());
    QFile f(path);
    QVERIFY(f.open(QIODevice::Append));
    QCOMPARE(f.write(bytes), bytes.size());
}
QList<QJsonObject> records(const QString& mirror)
{
    QList<QJsonObject> out;
    for (const QByteArray& line : read(mirror + QStringLiteral("/metrics.jsonl")).split('\n'))
        if (!line.isEmpty()) out << QJsonDocument::fromJson(line).object();
    return out;
}
MetricSources sources(const QByteArray& yaml)
{
    auto s = parseMetricSources(QStringLiteral("run.yaml"), YAML::Load(yaml.toStdString()));
    if (!s) qWarning("%s", qPrintable(s.error().text()));
    return s ? *s : MetricSources{};
}
}  // namespace

class TestDerivedMetrics : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_tmp;
    int m_n = 0;
    QString mirror() { return m_tmp.filePath(QStringLiteral("m%1").arg(++m_n)); }

private slots:
    void initTestCase() { QVERIFY(m_tmp.isValid()); }

    // The NERSC trainer's out.log as the job's output, arriving in pieces cut mid-line: its epochs,
    // each once its validation lines are there, equal to the importer's whole read.
    void nerscLinesInPiecesGiveTheWholeReadsEpochs()
    {
        const QByteArray log = read(kRun + QStringLiteral("/out.log"));
        QVERIFY(!log.isEmpty());
        const NerscLog whole = parseNerscLog(log, QStringLiteral("out.log"));
        QVERIFY(whole.epochs.size() >= 3);
        const QString m = mirror();
        const MetricSources s = sources("nersc: true\n");
        int pieces = 0;
        for (qsizetype at = 0; at < log.size(); at += 611) {  // 611: cuts inside lines
            append(m + QStringLiteral("/job.out"), log.mid(at, 611));
            QVERIFY(deriveMetrics(m, s, {QStringLiteral("job.out")}, false));
            ++pieces;
        }
        QVERIFY(pieces > 5);
        // Every epoch is complete in this log (its validation time is there): all written, once.
        QVERIFY(deriveMetrics(m, s, {QStringLiteral("job.out")}, true));
        const EpochTable table = loadEpochsCsv(m + QStringLiteral("/epochs.csv"));
        QCOMPARE(table.rows.size(), whole.epochs.size());
        for (int i = 0; i < whole.epochs.size(); ++i) {
            QCOMPARE(table.rows[i].epoch, whole.epochs[i].epoch);
            QCOMPARE(table.rows[i].trainS, whole.epochs[i].trainS);
            QCOMPARE(table.rows[i].samplesGlobal, std::round(whole.epochs[i].trainS * whole.epochs[i].samplesPerS));
            QCOMPARE(table.rows[i].valLoss, whole.epochs[i].valLoss);
            QCOMPARE(table.rows[i].wallS, whole.epochs[i].trainS + whole.epochs[i].valS);
        }
        int epochRecords = 0;
        for (const QJsonObject& r : records(m)) epochRecords += r.value(QStringLiteral("kind")).toString() == QLatin1String("epoch");
        QCOMPARE(epochRecords, whole.epochs.size());
    }

    // An epoch whose validation lines have not come yet waits for them, or for the run's end.
    void aNerscEpochWaitsForItsValidation()
    {
        const QString m = mirror();
        const MetricSources s = sources("nersc: true\n");
        append(m + QStringLiteral("/slurm-7.out"),
               "2021-11-12 00:46:23,492 - root - INFO - Time taken for epoch 1 is 10.5 sec, avg 8.0 samples/sec\n"
               "2021-11-12 00:46:23,492 - root - INFO -   Avg train loss=0.014280\n");
        QVERIFY(deriveMetrics(m, s, {QStringLiteral("slurm-7.out")}, false));
        QVERIFY(!QFile::exists(m + QStringLiteral("/epochs.csv")));
        QVERIFY(deriveMetrics(m, s, {QStringLiteral("slurm-7.out")}, true));
        const EpochTable table = loadEpochsCsv(m + QStringLiteral("/epochs.csv"));
        QCOMPARE(table.rows.size(), 1);
        QCOMPARE(table.rows[0].samplesGlobal, 84.0);
        QCOMPARE(table.rows[0].trainLoss, 0.014280);
        QVERIFY(std::isnan(table.rows[0].valS));
    }

    // The example's event file (SummaryWriter's) grown in pieces cut inside records: only the new
    // complete records are read at each call, a cut record once it completes, and the scalars are
    // those of a whole read, in order.
    void aGrowingEventFileGivesTheWholeReadsScalars()
    {
        const QByteArray bytes = read(kRun + QStringLiteral("/logs/") + kEvents);
        const tb::EventFileContents whole = tb::readEventBytes(bytes.constData(), std::size_t(bytes.size()));
        QVERIFY(whole.scalars.size() > 5);
        const QString m = mirror();
        const MetricSources s = sources("tensorboard: logs\ntags: {loss: Loss/train}\n");
        const QString file = m + QStringLiteral("/logs/") + kEvents;
        qsizetype lastCount = 0;
        bool sawCut = false;
        for (qsizetype at = 0; at < bytes.size(); at += 23) {  // 23: smaller than a record
            append(file, bytes.mid(at, 23));
            QVERIFY(deriveMetrics(m, s, {}, false));
            const qsizetype count = records(m).size();
            sawCut = sawCut || count == lastCount;  // a piece that completed no record
            lastCount = count;
        }
        QVERIFY(sawCut);
        QList<QJsonObject> scalars, steps;
        for (const QJsonObject& r : records(m))
            (r.value(QStringLiteral("kind")).toString() == QLatin1String("scalar") ? scalars : steps) << r;
        QCOMPARE(scalars.size(), qsizetype(whole.scalars.size()));
        int loss = 0;
        for (std::size_t i = 0; i < whole.scalars.size(); ++i) {
            QCOMPARE(scalars[qsizetype(i)].value(QStringLiteral("tag")).toString(), QString::fromStdString(whole.scalars[i].tag));
            QCOMPARE(scalars[qsizetype(i)].value(QStringLiteral("step")).toDouble(), double(whole.scalars[i].step));
            QCOMPARE(scalars[qsizetype(i)].value(QStringLiteral("value")).toDouble(), whole.scalars[i].value);
            loss += whole.scalars[i].tag == "Loss/train";
        }
        // Loss/train, named `loss`, is also a step field: the live loss curve.
        QCOMPARE(steps.size(), loss);
        QVERIFY(steps.first().contains(QStringLiteral("loss")));
        const RunMetrics metrics = loadRunMetrics(m + QStringLiteral("/metrics.jsonl"));
        QVERIFY(metrics.series(QStringLiteral("step/loss")) != nullptr);
        QVERIFY(metrics.series(QStringLiteral("Loss/train")) != nullptr);
    }

    // Patterns over the output: step and epoch records; a line whose value is not a number and a
    // partial last line are not read (the latter on the next call).
    void patternsReadStepsAndEpochs()
    {
        const QString m = mirror();
        const MetricSources s = sources("patterns:\n"
                                        "  - '^step (?<step>\\d+) loss (?<loss>\\S+)'\n"
                                        "  - '^epoch (?<epoch>\\d+): (?<train_time>[0-9.]+) s, (?<samples>\\d+) samples'\n");
        append(m + QStringLiteral("/job.out"),
               "hello\nstep 1 loss 0.5\nstep 2 loss nan?\nstep 3 loss 0.25\nepoch 1: 2.5 s, 640 samples\nstep 4 lo");
        QVERIFY(deriveMetrics(m, s, {QStringLiteral("job.out")}, false));
        QList<QJsonObject> r = records(m);
        QCOMPARE(r.size(), 3);
        QCOMPARE(r[0].value(QStringLiteral("loss")).toDouble(), 0.5);
        QCOMPARE(r[1].value(QStringLiteral("step")).toDouble(), 3.0);
        QCOMPARE(r[2].value(QStringLiteral("kind")).toString(), QStringLiteral("epoch"));
        QCOMPARE(r[2].value(QStringLiteral("samples_per_s")).toDouble(), 256.0);
        QCOMPARE(r[2].value(QStringLiteral("step")).toDouble(), 3.0);  // the last step seen
        append(m + QStringLiteral("/job.out"), "ss 0.125\n");
        QVERIFY(deriveMetrics(m, s, {QStringLiteral("job.out")}, false));
        r = records(m);
        QCOMPARE(r.size(), 4);
        QCOMPARE(r[3].value(QStringLiteral("loss")).toDouble(), 0.125);
        QCOMPARE(loadEpochsCsv(m + QStringLiteral("/epochs.csv")).rows.first().trainS, 2.5);
    }

    // Epoch fields from tags (each tag its own event) make an epoch once all of them are there.
    void epochTagsMakeAnEpochOnceAllAreThere()
    {
        const QString m = mirror();
        QDir().mkpath(m + QStringLiteral("/tb/train"));
        const MetricSources s = sources("tensorboard: tb\ntags: {epoch.train_time: time/epoch, epoch.samples: samples/epoch}\n");
        tb::EventFileWriter w;
        w.open((m + QStringLiteral("/tb/train")).toStdString(), 1.7e9);
        w.addScalar("time/epoch", 1, 12.5, 1.7e9 + 10);
        QVERIFY(deriveMetrics(m, s, {}, false));
        QVERIFY(!QFile::exists(m + QStringLiteral("/epochs.csv")));
        w.addScalar("samples/epoch", 1, 1000, 1.7e9 + 11);
        w.close();
        QVERIFY(deriveMetrics(m, s, {}, false));
        const EpochTable t = loadEpochsCsv(m + QStringLiteral("/epochs.csv"));
        QCOMPARE(t.rows.size(), 1);
        QCOMPARE(t.rows[0].throughput, 80.0);
    }

    void badSourcesAreRefusedNamingTheLine()
    {
        auto refused = [&](const QByteArray& yaml, const QString& where, const QString& words) {
            QFile f(m_tmp.filePath(QStringLiteral("bad.yaml")));
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write("command: [python3, train.py]\nmetrics:\n" + yaml);
            f.close();
            const auto run = loadCommandRun(f.fileName());
            QVERIFY2(!run, yaml.constData());
            QVERIFY2(run.error().location.endsWith(where), qPrintable(run.error().text()));
            QVERIFY2(run.error().message.contains(words), qPrintable(run.error().text()));
        };
        refused("  patterns: ['loss (?<loss>[0-9']\n", QStringLiteral(":3:14"), QStringLiteral("does not compile: missing terminating ]"));
        refused("  patterns: ['loss (?<loss>\\S+)']\n", QStringLiteral(":3:14"), QStringLiteral("(?<step>...) or (?<epoch>...)"));
        refused("  patterns: ['epoch (?<epoch>\\d+) (?<loss>\\S+)']\n", QStringLiteral(":3:14"), QStringLiteral("(?<train_time>...)"));
        refused("  tensorboard: ../elsewhere\n", QStringLiteral(":3:16"), QStringLiteral("inside the run folder"));
        refused("  tags: {loss: Loss/train}\n", QStringLiteral(":3:9"), QStringLiteral("only with tensorboard"));
        refused("  tensorboard: logs\n  tags: {epoch.speed: x}\n", QStringLiteral(":4:10"), QStringLiteral("an epoch has"));
        refused("  stdout: nersc\n", QStringLiteral(":3:3"), QStringLiteral("unknown key"));
        refused("  nersc: false\n", QStringLiteral(":3:3"), QStringLiteral("give tensorboard, nersc or patterns"));
    }
};

QTEST_GUILESS_MAIN(TestDerivedMetrics)
#include "tst_derivedmetrics.moc"
