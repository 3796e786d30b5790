#include "runs/sweep.h"

#include <QFile>
#include <QTemporaryDir>
#include <QTest>

using namespace scaledesk;

class TestSweep : public QObject {
    Q_OBJECT
private slots:
    // A weak sweep without a per-rank batch keeps the smallest point's per-rank batch (the config's
    // global batch over the smallest world size) and so grows the global batch with the ranks.
    void weakScalingGrowsTheGlobalBatch()
    {
        QTemporaryDir dir;
        const QString yaml = dir.filePath(QStringLiteral("c.yaml"));
        QFile f(yaml);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(
            "base: &base\n  global_batch_size: 8\n  num_epochs: 1\nodd:\n  <<: *base\n  global_batch_size: 6\nnone:\n  num_epochs: 2\n");
        f.close();
        SweepSpec spec;
        spec.name = QStringLiteral("w");
        spec.nodes = {1};
        spec.ranksPerNode = {2, 4, 1};
        QVERIFY(fillWeakLocalBatch(spec, yaml, QStringLiteral("base")));
        QCOMPARE(spec.localBatch, 8);  // the 1-rank point keeps 8; 2 ranks train 16 per step, 4 ranks 32
        auto points = expandSweep(spec);
        QVERIFY(points);
        for (const RunPoint& p : *points) QCOMPARE(p.localBatch, 8);
        // From 2 ranks up: 8 / 2 = 4 per rank.
        spec.localBatch = 0;
        spec.ranksPerNode = {2, 4};
        QVERIFY(fillWeakLocalBatch(spec, yaml, QStringLiteral("base")));
        QCOMPARE(spec.localBatch, 4);
        // A given per-rank batch and strong scaling are left alone.
        spec.localBatch = 3;
        QVERIFY(fillWeakLocalBatch(spec, yaml, QStringLiteral("base")));
        QCOMPARE(spec.localBatch, 3);
        spec.localBatch = 0;
        spec.scaling = SweepSpec::Scaling::Strong;
        QVERIFY(fillWeakLocalBatch(spec, yaml, QStringLiteral("base")));
        QCOMPARE(spec.localBatch, 0);
        // Errors name the config and the key.
        spec.scaling = SweepSpec::Scaling::Weak;
        spec.ranksPerNode = {4, 8};
        auto odd = fillWeakLocalBatch(spec, yaml, QStringLiteral("odd"));
        QVERIFY(!odd);
        QVERIFY2(odd.error().text().contains(QStringLiteral("global_batch_size 6")) &&
                     odd.error().text().contains(QStringLiteral("c.yaml")),
                 qPrintable(odd.error().text()));
        auto none = fillWeakLocalBatch(spec, yaml, QStringLiteral("none"));
        QVERIFY(!none);
        QVERIFY2(none.error().text().contains(QStringLiteral("global_batch_size")), qPrintable(none.error().text()));
    }

    void expandsNodesRanksStrategiesRepetitions()
    {
        SweepSpec spec;
        spec.name = QStringLiteral("scal");
        spec.nodes = {1, 2, 4};
        spec.ranksPerNode = {1, 2};
        spec.strategies = {QStringLiteral("ddp"), QStringLiteral("fused")};
        spec.repetitions = 3;
        spec.localBatch = 2;
        const auto points = expandSweep(spec);
        QVERIFY2(points.hasValue(), qPrintable(points.hasValue() ? QString() : points.error().text()));
        QCOMPARE(points->size(), 3 * 2 * 2 * 3);
        QCOMPARE(points->first().runId, QStringLiteral("scal-ddp-1x1-r1"));
        QCOMPARE(points->last().runId, QStringLiteral("scal-fused-4x2-r3"));
        QSet<QString> ids;
        for (const auto& p : *points) {
            ids.insert(p.runId);
            QCOMPARE(p.localBatch, 2);  // weak scaling: global = ranks × local
        }
        QCOMPARE(ids.size(), points->size());
        QCOMPARE((*points)[7].worldSize(), (*points)[7].nodes * (*points)[7].ranksPerNode);
    }
    void strongScalingSplitsTheGlobalBatch()
    {
        SweepSpec spec;
        spec.name = QStringLiteral("strong");
        spec.nodes = {1, 2, 4};
        spec.ranksPerNode = {2};
        spec.scaling = SweepSpec::Scaling::Strong;
        spec.globalBatch = 64;
        const auto points = expandSweep(spec);
        QVERIFY(points.hasValue());
        QCOMPARE((*points)[0].localBatch, 32);
        QCOMPARE((*points)[2].localBatch, 8);
        spec.globalBatch = 12;
        spec.nodes = {4};
        const auto bad = expandSweep(spec);
        QVERIFY(!bad.hasValue());
        QCOMPARE(bad.error().message, QStringLiteral("global batch: 12 does not divide over 8 ranks (strong-ddp-4x2-r1)"));
    }
    void badSpecsNameTheField_data()
    {
        QTest::addColumn<QString>("field");
        QTest::addColumn<QString>("expect");
        QTest::newRow("hostile name") << QStringLiteral("name") << QStringLiteral("name: '$(touch x)' must be 1-64 letters");
        QTest::newRow("no nodes") << QStringLiteral("nodes") << QStringLiteral("nodes: give at least one node count");
        QTest::newRow("zero ranks") << QStringLiteral("ranks") << QStringLiteral("ranks per node: 0 is not a positive count");
        QTest::newRow("strategy") << QStringLiteral("strategy") << QStringLiteral("strategies: unknown strategy 'horovod'");
        QTest::newRow("repetitions") << QStringLiteral("reps") << QStringLiteral("repetitions: must be at least 1");
    }
    void badSpecsNameTheField()
    {
        QFETCH(QString, field);
        QFETCH(QString, expect);
        SweepSpec spec;
        spec.name = QStringLiteral("ok");
        if (field == QLatin1String("name")) spec.name = QStringLiteral("$(touch x)");
        if (field == QLatin1String("nodes")) spec.nodes.clear();
        if (field == QLatin1String("ranks")) spec.ranksPerNode = {0};
        if (field == QLatin1String("strategy")) spec.strategies = {QStringLiteral("horovod")};
        if (field == QLatin1String("reps")) spec.repetitions = 0;
        const auto r = expandSweep(spec);
        QVERIFY(!r.hasValue());
        QVERIFY2(r.error().message.startsWith(expect), qPrintable(r.error().message));
    }
};

QTEST_GUILESS_MAIN(TestSweep)
#include "tst_sweep.moc"
