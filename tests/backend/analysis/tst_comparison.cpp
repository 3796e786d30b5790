// Run comparison: final and best values, the config keys that differ (merge keys resolved), and a
// series exported exactly as a chart shows it (axis, smoothing, range).
#include "analysis/comparison.h"
#include "analysis/minmaxindex.h"
#include "config/configresolve.h"

#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>

using namespace scaledesk;

namespace {
CompareRun makeRun(const QString& id, const QList<double>& valLosses, double t0)
{
    CompareRun r;
    r.record.id = id;
    r.record.strategy = QStringLiteral("ddp");
    r.record.nodes = 1;
    r.record.ranksPerNode = 2;
    r.record.configName = QStringLiteral("c");
    r.metrics.noteTime(t0);
    int step = 0;
    for (double v : valLosses) {
        step += 10;
        r.metrics.ensureSeries(QStringLiteral("Loss/valid")).append(step, t0 + step, v);
        r.metrics.ensureSeries(QStringLiteral("Loss/train")).append(step, t0 + step, v + 0.1);
    }
    return r;
}
}  // namespace

class TestComparison : public QObject {
    Q_OBJECT
private slots:
    // Legend labels: what tells the runs apart.
    void labelsSayWhatDiffers()
    {
        QCOMPARE(
            distinguishingLabels({QStringLiteral("demo-ddp-1x1-r1"), QStringLiteral("demo-fused-1x2-r1"), QStringLiteral("demo-ddp-1x2-r1"),
                                  QStringLiteral("demo-fused-1x1-r1")}),
            (QStringList{QStringLiteral("ddp 1x1"), QStringLiteral("fused 1x2"), QStringLiteral("ddp 1x2"), QStringLiteral("fused 1x1")}));
        QCOMPARE(distinguishingLabels({QStringLiteral("s-ddp-1x1-r1"), QStringLiteral("s-ddp-1x1-r2")}),
                 (QStringList{QStringLiteral("r1"), QStringLiteral("r2")}));
        // Ids of other shapes lose what they share at both ends.
        QCOMPARE(distinguishingLabels({QStringLiteral("base-1GPU-00"), QStringLiteral("base-4GPU-00"), QStringLiteral("base-x-4GPU-00")}),
                 (QStringList{QStringLiteral("1GPU"), QStringLiteral("4GPU"), QStringLiteral("x-4GPU")}));
        // One run: its id.
        QCOMPARE(distinguishingLabels({QStringLiteral("only")}), QStringList{QStringLiteral("only")});
    }

    void resolvedConfigFollowsMergeKeys()
    {
        QTemporaryDir dir;
        QFile f(dir.filePath(QStringLiteral("c.yaml")));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("base: &base\n  lr: 0.1\n  sched: {warmup: 5, end: 0}\n  name: base\n"
                "extra: &extra\n  lr: 0.3\n  depth: 4\n"
                "derived:\n  <<: [*base, *extra]\n  name: derived\n  sched: {warmup: 9}\n");
        f.close();
        auto cfg = resolvedConfig(f.fileName(), QStringLiteral("derived"));
        QVERIFY2(cfg, qPrintable(cfg ? QString() : cfg.error().text()));
        QCOMPARE(cfg->value(QStringLiteral("lr")), QStringLiteral("0.1"));  // earlier source wins
        QCOMPARE(cfg->value(QStringLiteral("depth")), QStringLiteral("4"));
        QCOMPARE(cfg->value(QStringLiteral("name")), QStringLiteral("derived"));  // own key wins
        QCOMPARE(cfg->value(QStringLiteral("sched.warmup")), QStringLiteral("9"));
        QVERIFY(!cfg->contains(QStringLiteral("sched.end")));  // a mapping replaced as a whole, as YAML merges do
        auto missing = resolvedConfig(f.fileName(), QStringLiteral("nope"));
        QVERIFY(!missing);
        QVERIFY(missing.error().text().contains(QStringLiteral("no config named 'nope'")));
    }

    void finalBestAndDifferingKeys()
    {
        std::vector<CompareRun> runs;
        runs.push_back(makeRun(QStringLiteral("a"), {0.5, 0.3, 0.4}, 1000));
        runs.push_back(makeRun(QStringLiteral("b, 'q'"), {0.6, std::nan(""), 0.2}, 2000));
        runs[0].config = {{QStringLiteral("lr"), QStringLiteral("0.1")}, {QStringLiteral("seed"), QStringLiteral("1")}};
        runs[1].config = {{QStringLiteral("lr"), QStringLiteral("0.2")}, {QStringLiteral("seed"), QStringLiteral("1")}};
        runs[1].record.ranksPerNode = 4;
        const Comparison c = compareRuns(runs);
        const TagSummary a = c.summaries[0].value(QStringLiteral("Loss/valid"));
        QCOMPARE(a.finalValue, 0.4);
        QCOMPARE(a.bestValue, 0.3);
        QCOMPARE(a.bestStep, 20.0);
        const TagSummary b = c.summaries[1].value(QStringLiteral("Loss/valid"));
        QCOMPARE(b.bestValue, 0.2);  // the NaN is skipped for "best"
        QCOMPARE(c.differingKeys, (QStringList{QStringLiteral("(run) world size"), QStringLiteral("lr")}));
        const QStringList lines = c.csv().trimmed().split(QLatin1Char('\n'));
        QCOMPARE(lines.size(), 3);
        QVERIFY(lines[0].endsWith(QStringLiteral(",(run) world size,lr")));
        QVERIFY2(lines[2].startsWith(QStringLiteral("\"b, 'q'\",")), qPrintable(lines[2]));  // CSV quoting
        QVERIFY(lines[2].endsWith(QStringLiteral(",4,0.2")));
    }

    void seriesExportedAsShown()
    {
        const CompareRun a = makeRun(QStringLiteral("a"), {1, 2, 3, 4}, 1000);
        const QString raw = seriesCsv({&a}, QStringLiteral("Loss/valid"), XAxis::RelativeTime, 0, 15, 35);
        QCOMPARE(raw, QStringLiteral("run_id,x,Loss/valid\na,20,2\na,30,3\n"));
        const QString smooth = seriesCsv({&a}, QStringLiteral("Loss/valid"), XAxis::Step, 0.5, 0, 1e9);
        const std::vector<double> expect = smoothTensorBoard({1, 2, 3, 4}, 0.5);
        const QStringList rows = smooth.trimmed().split(QLatin1Char('\n'));
        QCOMPARE(rows.size(), 5);
        QVERIFY(rows[0].contains(QStringLiteral("smoothed 0.5")));
        for (int i = 0; i < 4; ++i) QCOMPARE(rows[i + 1].section(QLatin1Char(','), 2).toDouble(), expect[std::size_t(i)]);
        const QString wall = seriesCsv({&a}, QStringLiteral("Loss/valid"), XAxis::WallTime, 0, 0, 1e12);
        QVERIFY(wall.contains(QStringLiteral("a,1010,1\n")));
    }
};

QTEST_GUILESS_MAIN(TestComparison)
#include "tst_comparison.moc"
