// scaledesk import (runs/importer.h): the NERSC tutorial's own run (out.log and its event file),
// TensorBoard log folders, ScaleDesk run folders, and refusals that write nothing.
#include "analysis/analysisinputs.h"
#include "analysis/metrics.h"
#include "eventfile.h"
#include "runs/importer.h"
#include "runs/runactions.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>

using namespace scaledesk;

namespace {
const QString kNersc = QStringLiteral(SCALEDESK_TEST_DATA "/runs/data/nersc-example-logs");
const QString kRun = kNersc + QStringLiteral("/base/1GPU/00");

QStringList runFolders(const Workspace& ws) { return QDir(ws.runsDir()).entryList(QDir::Dirs | QDir::NoDotAndDotDot | QDir::Hidden); }

void writeFile(const QString& path, const QByteArray& bytes)
{
    QDir().mkpath(QFileInfo(path).absolutePath());
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(bytes);
}

// A TensorBoard run as any writer leaves it: one event file with a tag of its own.
void writeTensorBoardRun(const QString& dir, double start, const char* tag, int points)
{
    QDir().mkpath(dir);
    tb::EventFileWriter w;
    w.open(QFile::encodeName(dir).toStdString(), start);
    for (int i = 0; i < points; ++i) w.addScalar(tag, 100 * i, 1.0 / (i + 1), start + 10 * i);
}
}  // namespace

class TestImporter : public QObject {
    Q_OBJECT
private slots:
    // The log's configuration block and its epochs, as the Python trainer printed them.
    void parsesTheNerscLog()
    {
        QFile f(kRun + QStringLiteral("/out.log"));
        QVERIFY(f.open(QIODevice::ReadOnly));
        const NerscLog log = parseNerscLog(f.readAll(), f.fileName());
        QVERIFY(log.recognised);
        QVERIFY2(log.warnings.isEmpty(), qPrintable(log.warnings.join(QLatin1Char('\n'))));
        QCOMPARE(log.config.value(QStringLiteral("Configuration name")), QStringLiteral("base"));
        QCOMPARE(log.config.value(QStringLiteral("global_batch_size")), QStringLiteral("64"));
        QCOMPARE(log.config.value(QStringLiteral("Nsamples")), QStringLiteral("65536"));
        QCOMPARE(log.epochs.size(), 10);
        const NerscLog::Epoch& e1 = log.epochs[0];
        QCOMPARE(e1.epoch, 1);
        QCOMPARE(e1.trainS, 752.9529612064362);
        QCOMPARE(e1.samplesPerS, 87.03863770585806);
        QCOMPARE(e1.trainLoss, 0.014280);
        QCOMPARE(e1.valLoss, 0.007129);
        QCOMPARE(e1.valS, 73.16440415382385);
        QCOMPARE(e1.end.toString(QStringLiteral("HH:mm:ss.zzz")), QStringLiteral("00:47:36.657"));
        QCOMPARE(log.epochs[9].epoch, 10);
    }

    // The tutorial's run becomes a read-only, completed run with its files, its TensorBoard tags
    // under their own names and its epochs, dated by the event files' wall times.
    void importsTheNerscTutorialsRun()
    {
        QTemporaryDir tmp;
        const Workspace ws(tmp.path());
        auto store = RunStore::open(ws);
        QVERIFY(store);
        auto imported = importRuns(**store, {kNersc});
        QVERIFY2(imported, imported ? "" : qPrintable(imported.error().text()));
        QCOMPARE(imported->size(), 1);
        const ImportedRun& r = imported->first();
        QCOMPARE(r.id, QStringLiteral("base-1GPU-00"));
        QCOMPARE(r.kind, QStringLiteral("nersc-python"));
        QCOMPARE(r.source, QDir::cleanPath(kRun));
        QCOMPARE(r.epochs, 10);
        QCOMPARE(r.scalars, 42);
        QCOMPARE(r.tags,
                 (QStringList{QStringLiteral("Avg iters per sec"), QStringLiteral("Learning Rate"), QStringLiteral("Loss/train"),
                              QStringLiteral("Loss/valid")}));
        QVERIFY2(r.warnings.isEmpty(), qPrintable(r.warnings.join(QLatin1Char('\n'))));

        auto rec = (*store)->load(r.id);
        QVERIFY(rec);
        QCOMPARE(rec->state, RunState::Completed);
        QVERIFY(rec->imported());
        QCOMPARE(rec->originKind, QStringLiteral("nersc-python"));
        QCOMPARE(rec->strategy, QStringLiteral("ddp"));
        QCOMPARE(rec->configName, QStringLiteral("base"));
        QCOMPARE(rec->localBatch, 64);
        QVERIFY(rec->jobId.isEmpty());
        QCOMPARE((*store)->list().first().origin, QDir::cleanPath(kRun));
        // Read-only: every action refuses, whoever asks.
        for (RunAction a : {RunAction::Cancel, RunAction::CheckpointStop, RunAction::Requeue}) {
            const ActionCheck check = checkAction(a, *rec);
            QVERIFY(!check.allowed);
            QVERIFY2(check.reason.contains(QStringLiteral("read-only")), qPrintable(check.reason));
        }
        // Its folder: the source files (tensorboard --logdir works on it) and what ScaleDesk reads.
        const QString dir = ws.runDir(r.id);
        for (const char* f :
             {"out.log", "logs/events.out.tfevents.1636677146.nid001104.65966.0", "metrics.jsonl", "epochs.csv", "manifest.json"})
            QVERIFY2(QFile::exists(dir + QLatin1Char('/') + QLatin1String(f)), f);

        const RunMetrics m = loadRunMetrics(dir + QStringLiteral("/metrics.jsonl"));
        QVERIFY2(m.warnings.isEmpty(), m.warnings.isEmpty() ? "" : qPrintable(m.warnings.first().message));
        const Series* valid = m.series(QStringLiteral("Loss/valid"));
        QVERIFY(valid);
        QCOMPARE(valid->size(), std::size_t(11));  // step 0, then every epoch: once, not twice
        QCOMPARE(valid->steps()[1], 1024.0);
        QVERIFY(std::abs(valid->values()[1] - 0.007129) < 5e-7);
        const Series* epochS = m.series(QStringLiteral("epoch/epoch_s"));
        QVERIFY(epochS);
        QCOMPARE(epochS->size(), std::size_t(10));
        QCOMPARE(epochS->values()[0], 752.9529612064362);
        QCOMPARE(epochS->steps()[9], 10240.0);
        // The log's times carry no zone; the events show it was UTC: the run starts at the log's
        // first line, 2021-11-12 00:32:26.118, and epoch 1 ends at its validation's last line.
        QCOMPARE(m.startTime(), 1636677146.118);
        QCOMPARE(epochS->times()[0], 1636678056.657);
        // Wall times of the scalars are the events' own.
        QVERIFY(std::abs(valid->times()[1] - 1636678056.657) < 0.01);

        // The index keeps the origin when it is rebuilt from the run files.
        QVERIFY((*store)->rebuildIndex());
        QCOMPARE((*store)->list().first().origin, QDir::cleanPath(kRun));
    }

    // In a sweep, the report reads it like any other run: epoch time = the mean training time of
    // epochs 2–10 (the first is warm-up), validation apart, throughput from the log.
    void theReportReadsAnImportedRun()
    {
        QTemporaryDir tmp;
        const Workspace ws(tmp.path());
        auto store = RunStore::open(ws);
        QVERIFY(store);
        ImportOptions o;
        o.sweep = QStringLiteral("nersc");
        o.id = QStringLiteral("nersc-1gpu");
        QVERIFY(importRuns(**store, {kRun}, o));
        const ScalingReport rep = loadSweepReport(**store, QStringLiteral("nersc"));
        QCOMPARE(rep.runs.size(), 1);
        QVERIFY2(rep.warnings.isEmpty(), qPrintable(rep.warnings.join(QLatin1Char('\n'))));
        const ReportRunRow& row = rep.runs.first();
        QCOMPARE(row.world, 1);
        QCOMPARE(row.epochsUsed, 9);
        // By hand from out.log's "Time taken for epoch N is T sec", N = 2…10.
        const double train[] = {736.1673448085785, 725.6503672599792, 733.644660949707,  745.0990128517151, 750.1890060901642,
                                746.9029471874237, 748.6173532009125, 749.4797053337097, 763.1262722015381};
        double sum = 0;
        for (double t : train) sum += t;
        QVERIFY(std::abs(row.epochS - sum / 9) < 1e-9);
        QVERIFY(row.validationS > 70 && row.validationS < 87);
        QCOMPARE(row.samplesPerEpoch, 65536.0);
    }

    // A TensorBoard log folder: each folder with event files is a run; any tag keeps its name.
    void importsATensorBoardLogFolder()
    {
        QTemporaryDir tmp, logs;
        writeTensorBoardRun(logs.filePath(QStringLiteral("exp/lr-1e-3")), 1700000000, "accuracy/top1", 5);
        writeTensorBoardRun(logs.filePath(QStringLiteral("exp/lr-1e-4")), 1700001000, "accuracy/top1", 3);
        const Workspace ws(tmp.path());
        auto store = RunStore::open(ws);
        QVERIFY(store);
        ImportOptions o;
        o.ranks = 4;
        auto imported = importRuns(**store, {logs.filePath(QStringLiteral("exp"))}, o);
        QVERIFY2(imported, imported ? "" : qPrintable(imported.error().text()));
        QCOMPARE(imported->size(), 2);
        const QString base = QFileInfo(logs.path()).fileName();
        QCOMPARE(imported->at(0).id, base + QStringLiteral("-exp-lr-1e-3"));
        QCOMPARE(imported->at(0).kind, QStringLiteral("tensorboard"));
        auto rec = (*store)->load(imported->at(1).id);
        QVERIFY(rec);
        QCOMPARE(rec->ranksPerNode, 4);
        const RunMetrics m = loadRunMetrics(ws.runDir(imported->at(0).id) + QStringLiteral("/metrics.jsonl"));
        const Series* top1 = m.series(QStringLiteral("accuracy/top1"));
        QVERIFY(top1);
        QCOMPARE(top1->size(), std::size_t(5));
        QCOMPARE(top1->steps()[4], 400.0);
        QCOMPARE(top1->times()[4] - m.startTime(), 40.0);  // relative time from the event wall times
        QVERIFY(QFile::exists(ws.runDir(imported->at(0).id) + QStringLiteral("/logs")));
    }

    // A ScaleDesk run folder copied from elsewhere keeps its files (not its checkpoints) and its
    // manifest's facts; its Loss/valid lines up with the NERSC run's in a comparison.
    void importsAScaleDeskRunFolderAndComparesIt()
    {
        QTemporaryDir tmp, src;
        const QString run = src.filePath(QStringLiteral("ddp-2r"));
        writeFile(run + QStringLiteral("/manifest.json"),
                  R"({"run_id":"ddp-2r","config":"cpu-tiny","strategy":"fused","world_size":2,"nodes":1,"ranks_per_node":2,
                      "local_batch_size":2,"status":"finished","start_utc":"2026-11-30T10:00:00.000Z"})");
        writeFile(run + QStringLiteral("/metrics.jsonl"),
                  R"({"kind":"initial","t":1764496800,"step":0,"epoch":0,"train_loss":0.3,"val_loss":0.31}
{"kind":"epoch","t":1764496810,"step":16,"epoch":1,"train_loss":0.2,"val_loss":0.21,"epoch_s":9.5,"val_s":0.5}
)");
        writeFile(run + QStringLiteral("/checkpoints/latest.pt"), QByteArray(1024, 'x'));
        const Workspace ws(tmp.path());
        auto store = RunStore::open(ws);
        QVERIFY(store);
        QVERIFY(importRuns(**store, {kRun}));
        auto imported = importRuns(**store, {run});
        QVERIFY2(imported, imported ? "" : qPrintable(imported.error().text()));
        QCOMPARE(imported->first().id, QStringLiteral("ddp-2r"));
        QCOMPARE(imported->first().kind, QStringLiteral("scaledesk"));
        auto rec = (*store)->load(QStringLiteral("ddp-2r"));
        QVERIFY(rec);
        QCOMPARE(rec->strategy, QStringLiteral("fused"));
        QCOMPARE(rec->ranksPerNode, 2);
        QCOMPARE(rec->configName, QStringLiteral("cpu-tiny"));
        QVERIFY(!QFile::exists(ws.runDir(QStringLiteral("ddp-2r")) + QStringLiteral("/checkpoints")));

        QStringList warnings;
        auto runs = loadCompareRuns(**store, {QStringLiteral("base-1GPU-00"), QStringLiteral("ddp-2r")}, &warnings);
        QVERIFY(runs);
        const Comparison c = compareRuns(*runs);
        QCOMPARE(c.runIds.size(), 2);
        QVERIFY(c.summaries[0].contains(QStringLiteral("Loss/valid")));
        QVERIFY(c.summaries[1].contains(QStringLiteral("Loss/valid")));
        QCOMPARE(c.summaries[1].value(QStringLiteral("Loss/valid")).finalValue, 0.21);
        QVERIFY(std::abs(c.summaries[0].value(QStringLiteral("Loss/valid")).bestValue - 0.004844) <
                5e-7);  // out.log: epoch 10, "Avg val loss=0.004844"
        // The NERSC log's nested mappings are keys as a resolved YAML config has them, each once.
        const auto& nersc = c.configs[0];
        QCOMPARE(nersc.value(QStringLiteral("lr_schedule.scaling")), QStringLiteral("sqrt"));
        QCOMPARE(nersc.value(QStringLiteral("lr_schedule.start_lr")), QStringLiteral("0.0002"));
        QCOMPARE(nersc.value(QStringLiteral("lr_schedule.warmup_steps")), QStringLiteral("128"));
        QCOMPARE(nersc.value(QStringLiteral("weight_init.conv_init")), QStringLiteral("normal"));
        QCOMPARE(nersc.value(QStringLiteral("Nsamples")), QStringLiteral("65536"));
        QVERIFY(!nersc.contains(QStringLiteral("lr_schedule")));
        QVERIFY(!nersc.contains(QStringLiteral("Configuration name")));
        QVERIFY(!c.differingKeys.contains(QStringLiteral("lr_schedule")));
    }

    // Folders of scaledesk-train run by hand (<config>/<N>GPU/<num>, the NERSC layout) get the
    // NERSC-style id, so 1GPU/00 and 2GPU/00 do not collide on "00".
    void handRunTrainerFoldersGetDistinctIds()
    {
        QTemporaryDir tmp, src;
        for (const char* n : {"1", "2"}) {
            const QString run = src.filePath(QStringLiteral("runs/cpu-short/%1GPU/00").arg(QLatin1String(n)));
            writeFile(run + QStringLiteral("/manifest.json"),
                      QStringLiteral(R"({"run_id":"00","config":"cpu-short","strategy":"ddp","world_size":%1,"status":"finished"})")
                          .arg(QLatin1String(n))
                          .toUtf8());
            writeFile(run + QStringLiteral("/metrics.jsonl"), R"({"kind":"initial","t":1764496800,"step":0,"train_loss":0.3,"val_loss":0.31}
)");
        }
        const Workspace ws(tmp.path());
        auto store = RunStore::open(ws);
        QVERIFY(store);
        auto imported = importRuns(**store, {src.filePath(QStringLiteral("runs"))});
        QVERIFY2(imported, imported ? "" : qPrintable(imported.error().text()));
        QStringList ids;
        for (const auto& i : *imported) ids << i.id;
        ids.sort();
        QCOMPARE(ids, (QStringList{QStringLiteral("cpu-short-1GPU-00"), QStringLiteral("cpu-short-2GPU-00")}));
        QCOMPARE((*store)->load(QStringLiteral("cpu-short-2GPU-00"))->ranksPerNode, 2);
    }

    // A damaged event file is imported without the damaged record, with its offset in a warning.
    void aDamagedEventFileIsReportedAndSkipped()
    {
        QTemporaryDir tmp, src;
        const QString run = src.filePath(QStringLiteral("nersc/1GPU/00"));
        QFile log(kRun + QStringLiteral("/out.log"));
        QVERIFY(log.open(QIODevice::ReadOnly));
        writeFile(run + QStringLiteral("/out.log"), log.readAll());
        QFile events(kRun + QStringLiteral("/logs/events.out.tfevents.1636677146.nid001104.65966.0"));
        QVERIFY(events.open(QIODevice::ReadOnly));
        QByteArray bytes = events.readAll();
        bytes.chop(7);  // cut inside the last record
        writeFile(run + QStringLiteral("/logs/events.out.tfevents.1636677146.nid001104.65966.0"), bytes);
        const Workspace ws(tmp.path());
        auto store = RunStore::open(ws);
        QVERIFY(store);
        auto imported = importRuns(**store, {run});
        QVERIFY2(imported, imported ? "" : qPrintable(imported.error().text()));
        QCOMPARE(imported->first().scalars, 41);
        QCOMPARE(imported->first().warnings.size(), 1);
        QVERIFY2(imported->first().warnings.first().contains(QStringLiteral("(offset ")) &&
                     imported->first().warnings.first().contains(QStringLiteral("truncated record")),
                 qPrintable(imported->first().warnings.first()));
    }

    // Refusals name the path and write nothing, not even the runs of the batch that were fine.
    void refusalsWriteNothing()
    {
        QTemporaryDir tmp, empty;
        const Workspace ws(tmp.path());
        auto store = RunStore::open(ws);
        QVERIFY(store);
        auto missing = importRuns(**store, {kRun, QStringLiteral("/nonexistent/run")});
        QVERIFY(!missing);
        QCOMPARE(missing.error().code, ErrorCode::ImportSource);
        QCOMPARE(missing.error().location, QStringLiteral("/nonexistent/run"));
        auto nothing = importRuns(**store, {empty.path()});
        QVERIFY(!nothing);
        QCOMPARE(nothing.error().code, ErrorCode::ImportSource);
        QVERIFY2(nothing.error().text().contains(QStringLiteral("no run found")), qPrintable(nothing.error().text()));
        QVERIFY(runFolders(ws).isEmpty());

        QVERIFY(importRuns(**store, {kRun}));
        ImportOptions renamed;
        renamed.id = QStringLiteral("other");
        // The same run again (its id is taken) with a new one: neither is written.
        QTemporaryDir logs;
        writeTensorBoardRun(logs.filePath(QStringLiteral("fresh")), 1700000000, "x", 2);
        auto again = importRuns(**store, {logs.filePath(QStringLiteral("fresh")), kRun});
        QVERIFY(!again);
        QCOMPARE(again.error().code, ErrorCode::RunExists);
        QCOMPARE(runFolders(ws), QStringList{QStringLiteral("base-1GPU-00")});
        QCOMPARE((*store)->list().size(), 1);
        // --id names one run only.
        auto twoWithOneId = importRuns(**store, {logs.filePath(QStringLiteral("fresh")), kRun}, renamed);
        QVERIFY(!twoWithOneId);
        QCOMPARE(twoWithOneId.error().code, ErrorCode::Usage);
        // A file that is neither a log nor an event file.
        auto notARun = importRuns(**store, {kNersc + QStringLiteral("/../README.md")});
        QVERIFY(!notARun);
        QCOMPARE(notARun.error().code, ErrorCode::ImportSource);
        QVERIFY2(notARun.error().text().contains(QStringLiteral("not a run folder")), qPrintable(notARun.error().text()));
        QCOMPARE((*store)->list().size(), 1);
    }
};

QTEST_GUILESS_MAIN(TestImporter)
#include "tst_importer.moc"
