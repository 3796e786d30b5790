// scaledesk import of itwinai's scalability files (runs/itwinaiimport.h) in its three layouts, and
// the report read from them: every expected number is worked out by hand from the fixture files
// (data/itwinai, written for this test from itwinai-scaling.md §3: see its README.md).
#include "analysis/analysisinputs.h"
#include "runs/importer.h"
#include "runs/itwinaiimport.h"
#include "runs/mlflowstore.h"
#include "runs/rundata.h"

#include <QDir>
#include <QFile>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>

using namespace scaledesk;

namespace {
const QString kData = QStringLiteral(SCALEDESK_TEST_DATA "/runs/data/itwinai");

bool near(double a, double b) { return std::abs(a - b) < 1e-9 * std::max(1.0, std::abs(b)); }
#define QNEAR(a, b)                                                                                                                        \
    QVERIFY2(near((a), (b)),                                                                                                               \
             qPrintable(QStringLiteral("%1 is %2, expected %3").arg(QStringLiteral(#a)).arg((a), 0, 'g', 12).arg((b), 0, 'g', 12)))

const ReportGroupRow* group(const ScalingReport& rep, const QString& strategy, int world)
{
    for (const auto& g : rep.groups)
        if (g.strategy == strategy && g.world == world) return &g;
    return nullptr;
}

QStringList importedIds(const QList<ImportedRun>& runs)
{
    QStringList ids;
    for (const auto& r : runs) ids << r.id;
    ids.sort();
    return ids;
}

void copyTree(const QString& from, const QString& to)
{
    QDir().mkpath(to);
    for (const QFileInfo& e : QDir(from).entryInfoList(QDir::Dirs | QDir::Files | QDir::NoDotAndDotDot)) {
        if (e.isDir())
            copyTree(e.filePath(), to + QLatin1Char('/') + e.fileName());
        else
            QFile::copy(e.filePath(), to + QLatin1Char('/') + e.fileName());
    }
}
}  // namespace

class TestItwinaiImport : public QObject {
    Q_OBJECT
    std::unique_ptr<QTemporaryDir> m_tmp;
    std::unique_ptr<RunStore> m_store;
    Workspace ws() const { return Workspace(m_tmp->path()); }
    // Imports `path` (under the fixtures) into this test's fresh workspace, in `sweep` when given.
    Expected<QList<ImportedRun>> importFixture(const QString& path, const QString& sweep = {})
    {
        ImportOptions o;
        o.sweep = sweep;
        return importRuns(*m_store, {kData + path}, o);
    }

private slots:
    void init()
    {
        m_tmp = std::make_unique<QTemporaryDir>();
        auto store = RunStore::open(ws());
        QVERIFY(store);
        m_store = std::move(*store);
    }

    // PR #262: scalability-metrics/{epoch-time,gpu-energy-data,communication-data}.
    void importsThePr262Layout()
    {
        auto imported = importFixture(QStringLiteral("/pr262/scalability-metrics"), QStringLiteral("p262"));
        QVERIFY2(imported, qPrintable(imported ? QString() : imported.error().text()));
        // The world size comes from the GPU files (ddp_4.csv on node 0; ddp_8.csv on nodes 0 and 1).
        QCOMPARE(importedIds(*imported),
                 (QStringList{QStringLiteral("p262-ddp-1x4-r1"), QStringLiteral("p262-ddp-2x4-r1"), QStringLiteral("p262-horovod-1x4-r1"),
                              QStringLiteral("p262-horovod-2x4-r1")}));
        for (const auto& r : *imported) {
            QCOMPARE(r.kind, QStringLiteral("itwinai"));
            QVERIFY2(r.warnings.isEmpty(), qPrintable(r.warnings.join(QLatin1Char('\n'))));
        }
        const ScalingReport rep = loadSweepReport(*m_store, QStringLiteral("p262"));
        QCOMPARE(rep.definition, QStringLiteral("itwinai"));
        QCOMPARE(rep.warmupEpochs, 0);  // itwinai averages every epoch
        QVERIFY2(rep.warnings.isEmpty(), qPrintable(rep.warnings.join(QLatin1Char('\n'))));
        QCOMPARE(rep.groups.size(), 4);
        const ReportGroupRow *ddp4 = group(rep, QStringLiteral("ddp"), 4), *ddp8 = group(rep, QStringLiteral("ddp"), 8),
                             *hvd4 = group(rep, QStringLiteral("horovod"), 4), *hvd8 = group(rep, QStringLiteral("horovod"), 8);
        QVERIFY(ddp4 && ddp8 && hvd4 && hvd8);
        QCOMPARE(ddp8->nodes, 2);
        // Epoch time: (12 + 10 + 8) / 3 = 10 and (7 + 5 + 6) / 3 = 6; horovod (14 + 12 + 10) / 3 = 12, (8 + 6 + 7) / 3 = 7.
        QNEAR(ddp4->epochS, 10.0);
        QNEAR(ddp8->epochS, 6.0);
        QNEAR(hvd4->epochS, 12.0);
        QNEAR(hvd8->epochS, 7.0);
        // Speedup against each strategy's smallest count: 10 / 6 and 12 / 7; efficiency S / (8 / 4).
        QNEAR(ddp8->speedup, 10.0 / 6.0);
        QNEAR(hvd8->speedup, 12.0 / 7.0);
        QNEAR(ddp8->efficiency, 10.0 / 6.0 / 2.0);
        QNEAR(ddp8->ideal, 2.0);
        // Energy, Σ power × interval / 3600: ddp_4 = 4 GPUs × 2 samples × 200 W × 1 s = 1600 J;
        // ddp_8 = 8 × 2 × 250 W × 2 s = 8000 J; horovod_4 = 4 × 3 × 180 × 1 = 2160 J, horovod_8 twice that.
        QNEAR(ddp4->energyWh, 1600.0 / 3600);
        QNEAR(ddp8->energyWh, 8000.0 / 3600);
        QNEAR(hvd4->energyWh, 2160.0 / 3600);
        QNEAR(hvd8->energyWh, 4320.0 / 3600);
        // Utilisation, the mean of every sample: 50 and 60 → 55; 40 and 50 → 45; horovod 30 + GPU index.
        QNEAR(ddp4->gpuUtilPct, 55.0);
        QNEAR(ddp8->gpuUtilPct, 45.0);
        QNEAR(hvd4->gpuUtilPct, 31.5);  // (30 + 31 + 32 + 33) / 4
        QNEAR(hvd8->gpuUtilPct, 33.5);  // (30 + … + 37) / 8
        // Computation / (computation + communication) over both ranks' files: aten 600 + 500 against
        // the AllReduce kernels 200 + 100 and cudaStreamSynchronize 100 (the Memcpy row is neither).
        QNEAR(ddp4->computeFraction, 1100.0 / 1500.0);
        QNEAR(ddp4->computeS, 10.0 * 1100.0 / 1500.0);
        QVERIFY(std::isnan(ddp8->computeFraction));
        // No sample counts in itwinai's files: throughput and time-to-target stay empty, said so.
        QVERIFY(std::isnan(ddp4->throughput));
        QVERIFY(std::isnan(rep.target));
        const QString md = rep.markdown();
        QVERIFY(md.contains(QStringLiteral("## Runs imported from itwinai")));
        QVERIFY(md.contains(QStringLiteral("itwinai sums the energy of repeated runs")));
        QVERIFY(md.contains(QStringLiteral("`--warmup 1`")));
        // The source files are kept in the run.
        QVERIFY(
            QFileInfo::exists(ws().runDir(QStringLiteral("p262-ddp-1x4-r1")) + QStringLiteral("/itwinai/communication-data/ddp_4_1.csv")));
        // --warmup 1 reads them as ScaleDesk reads its own: epochs 2 and 3, (10 + 8) / 2 = 9.
        ReportOptions one;
        one.warmupEpochs = 1;
        const ScalingReport skipped = loadSweepReport(*m_store, QStringLiteral("p262"), one);
        QNEAR(group(skipped, QStringLiteral("ddp"), 4)->epochS, 9.0);
        QVERIFY(skipped.markdown().contains(QStringLiteral("`--warmup 0`")));
    }

    // The unified layout: scalability-metrics/<run_id>/…; two run ids are two repetitions.
    void importsTheUnifiedLayout()
    {
        auto imported = importFixture(QStringLiteral("/unified/scalability-metrics"));
        QVERIFY2(imported, qPrintable(imported ? QString() : imported.error().text()));
        // No --sweep: the sweep "itwinai". r-a is repetition 1, r-b repetition 2.
        QCOMPARE(importedIds(*imported),
                 (QStringList{QStringLiteral("itwinai-deepspeed-1x4-r1"), QStringLiteral("itwinai-deepspeed-1x4-r2"),
                              QStringLiteral("itwinai-deepspeed-2x4-r1"), QStringLiteral("itwinai-deepspeed-2x4-r2")}));
        // Nothing gives the 2-node runs' GPU count: nodes × 4 (--gpus-per-node), said once per run.
        int sized = 0;
        for (const auto& r : *imported) {
            QCOMPARE(r.sweep, QStringLiteral("itwinai"));
            for (const QString& w : r.warnings) sized += w.contains(QStringLiteral("2 node(s) × 4 GPUs per node (--gpus-per-node) = 8"));
        }
        QCOMPARE(sized, 2);
        const ScalingReport rep = loadSweepReport(*m_store, QStringLiteral("itwinai"));
        const ReportGroupRow *one = group(rep, QStringLiteral("deepspeed"), 4), *two = group(rep, QStringLiteral("deepspeed"), 8);
        QVERIFY(one && two);
        QCOMPARE(one->repetitions, 2);
        // itwinai concatenates the run ids' epochs: (20 + 16 + 18 + 22 + 18 + 20) / 6 = 19; the mean
        // of the runs' means, (18 + 20) / 2, is the same. Two nodes: (10 + 12) / 2 = 11.
        QNEAR(one->epochS, 19.0);
        QNEAR(two->epochS, 11.0);
        QNEAR(two->speedup, 19.0 / 11.0);
        QNEAR(one->epochSStd, std::sqrt(2.0));
        // Energy per run: 4 GPUs × 3 samples × 300 W = 1 Wh, and × 330 W = 1.1 Wh; the mean 1.05
        // (itwinai's sum, 2.1, is the mean × 2 repetitions).
        QNEAR(one->energyWh, 1.05);
        QVERIFY(std::isnan(two->energyWh));
        QNEAR(one->gpuUtilPct, 77.5);  // 70 + 5 × GPU index, four GPUs
        // Computation vs other (r-a's file): aten 300 + autograd 100 + c10 50 over every row but
        // ProfilerStep#1: 1700 − 1000 = 700.
        QNEAR(one->computeFraction, 450.0 / 700.0);
        // The breakdown is the share of the group's epoch time, so report.md's columns agree with it.
        const TimeShares shares = timeShares(*one, rep.includesValidation);
        QNEAR(shares.compute, 450.0 / 700.0);
        QNEAR(shares.other, 1 - 450.0 / 700.0);
    }

    // The MLflow file store: a training run per job, its workers as child runs.
    void importsTheMlflowLayout()
    {
        auto imported = importFixture(QStringLiteral("/mlflow/mllogs/mlflow"), QStringLiteral("ml"));
        QVERIFY2(imported, qPrintable(imported ? QString() : imported.error().text()));
        // Five training runs; the deleted one (lifecycle_stage: deleted) is not imported, and the
        // empty Default experiment is named in a warning.
        QCOMPARE(importedIds(*imported),
                 (QStringList{QStringLiteral("ml-ddp-1x2-r1"), QStringLiteral("ml-ddp-1x2-r2"), QStringLiteral("ml-ddp-1x4-r1"),
                              QStringLiteral("ml-horovod-1x2-r1"), QStringLiteral("ml-horovod-1x4-r1")}));
        QVERIFY(imported->first().warnings.join(QLatin1Char('\n')).contains(QStringLiteral("/mlflow/0: no epoch times")));
        const ScalingReport rep = loadSweepReport(*m_store, QStringLiteral("ml"));
        // ddp at 2 workers ran twice, the others once: what was made, nothing missing, no warning.
        QVERIFY2(rep.warnings.isEmpty(), qPrintable(rep.warnings.join(QLatin1Char('\n'))));
        const ReportGroupRow *ddp2 = group(rep, QStringLiteral("ddp"), 2), *ddp4 = group(rep, QStringLiteral("ddp"), 4),
                             *hvd2 = group(rep, QStringLiteral("horovod"), 2), *hvd4 = group(rep, QStringLiteral("horovod"), 4);
        QVERIFY(ddp2 && ddp4 && hvd2 && hvd4);
        // epoch_time_s at steps 0, 1, 2: (9 + 7 + 8) / 3 = 8 and (11 + 9 + 10) / 3 = 10 → 9; 5; 11; 6.
        QCOMPARE(ddp2->repetitions, 2);
        QNEAR(ddp2->epochS, 9.0);
        QNEAR(ddp4->epochS, 5.0);
        QNEAR(hvd2->epochS, 11.0);
        QNEAR(hvd4->epochS, 6.0);
        QNEAR(ddp4->speedup, 9.0 / 5.0);
        QNEAR(hvd4->speedup, 11.0 / 6.0);
        // Each worker logs gpu_power_W 100, 200, 300 at a 1 s probing interval: 600 J = 1/6 Wh.
        QNEAR(ddp2->energyWh, 2.0 / 6.0);
        QNEAR(ddp4->energyWh, 4.0 / 6.0);
        // Worker k's utilisation is 40, 60, 80 plus 10k: 60 + 10k on average.
        QNEAR(ddp2->gpuUtilPct, 65.0);
        QNEAR(hvd4->gpuUtilPct, 75.0);
        // The first ddp run's workers have the profiling artifact: aten::addmm 800 each over
        // (800 + 500 + 200) − ProfilerStep#2 500, per worker; only that repetition has one.
        QNEAR(ddp2->computeFraction, 0.8);
        // The epochs carry MLflow's timestamps: the first run started at 1733400000 s and logged
        // epoch 1 ten seconds later.
        const EpochTable epochs = loadEpochsCsv(ws().runDir(QStringLiteral("ml-ddp-1x2-r1")) + QStringLiteral("/epochs.csv"));
        QCOMPARE(epochs.rows.size(), 3);
        QCOMPARE(epochs.rows.first().epoch, 1);
        QNEAR(epochs.rows.first().tEnd, 1733400010.0);
        const QJsonObject manifest = readRunManifest(ws().runDir(QStringLiteral("ml-ddp-1x2-r1")));
        QCOMPARE(manifest.value(QStringLiteral("start_utc")).toString(), QStringLiteral("2024-12-05T12:00:00.000Z"));
        QCOMPARE(manifest.value(QStringLiteral("strategy")).toString(), QStringLiteral("ddp"));
        QCOMPARE(manifest.value(QStringLiteral("itwinai_run")).toString(), QStringLiteral("scalability-ddp"));

        // compare reads them like native runs: their epoch records, no warning.
        QStringList warnings;
        auto runs = loadCompareRuns(*m_store, {QStringLiteral("ml-ddp-1x2-r1"), QStringLiteral("ml-horovod-1x4-r1")}, &warnings);
        QVERIFY(runs);
        QVERIFY2(warnings.isEmpty(), qPrintable(warnings.join(QLatin1Char('\n'))));
        QCOMPARE(runs->size(), std::size_t(2));
        const Series* epochTime = runs->at(0).metrics.series(QStringLiteral("epoch/epoch_s"));
        QVERIFY(epochTime);
        QCOMPARE(epochTime->size(), std::size_t(3));
    }

    // A file without one of itwinai's columns is refused, naming the file and the column, and
    // nothing is written; a bad MLflow metric line is a warning naming file:line.
    void badFilesAreNamed()
    {
        QTemporaryDir src;
        const QString root = src.filePath(QStringLiteral("scalability-metrics"));
        copyTree(kData + QStringLiteral("/pr262/scalability-metrics"), root);
        QFile f(root + QStringLiteral("/gpu-energy-data/ddp_4.csv"));
        QVERIFY(f.open(QIODevice::ReadOnly));
        QByteArray bytes = f.readAll();
        f.close();
        bytes.replace("probing_interval", "interval");
        QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
        f.write(bytes);
        f.close();
        auto refused = importRuns(*m_store, {root});
        QVERIFY(!refused);
        QCOMPARE(refused.error().code, ErrorCode::ImportSource);
        QCOMPARE(refused.error().location, root + QStringLiteral("/gpu-energy-data/ddp_4.csv:1"));
        QVERIFY2(refused.error().text().contains(QStringLiteral("missing column(s) probing_interval")), qPrintable(refused.error().text()));
        QVERIFY(m_store->list().isEmpty());

        const QString exp = src.filePath(QStringLiteral("mlflow"));
        copyTree(kData + QStringLiteral("/mlflow/mllogs/mlflow/421983"), exp);
        const QString metric = exp + QStringLiteral("/020123456789abcdef0123456789abcd/metrics/epoch_time_s");
        QFile m(metric);
        QVERIFY(m.open(QIODevice::Append));
        m.write("1733400040000 eleven 3\n");
        m.close();
        auto read = mlflow::readExperiment(exp);
        QVERIFY(read);
        QCOMPARE(read->name, QStringLiteral("unnamed-experiment"));
        QCOMPARE(read->warnings.size(), 1);
        QVERIFY2(read->warnings.first().startsWith(metric + QStringLiteral(":4: ")), qPrintable(read->warnings.first()));
        QCOMPARE(read->runs.size(), 19);  // 5 training runs and their 14 workers; the deleted one left out
    }
};

QTEST_GUILESS_MAIN(TestItwinaiImport)
#include "tst_itwinaiimport.moc"
