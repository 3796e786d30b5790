// What the planner says it does not know (backend/analysis/plangaps.cpp, planpoints.cpp): a point
// that needs a quantity never measured is "not measured" with the command that measures it, and the
// efficiency range is clipped at 100 % unless superlinear scaling was measured.
#include "planfixture.h"

#include "analysis/plangaps.h"
#include "analysis/planner.h"

#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>

using namespace scaledesk;
using namespace scaledesk::planfixture;

class TestPlanGaps : public QObject {
    Q_OBJECT
private slots:
    // The config the runs trained, for the command that calibrates with its own step: named when
    // all agree, with the YAML only where it is not the workspace's (PlanRunInput::configFile).
    void theCommandNamesTheRunsConfig()
    {
        PlanRunInput a = oneRankRun(), b = oneRankRun();
        QCOMPARE(calibrateConfigFlags({a, b}), QString());  // not recorded
        a.config = b.config = QStringLiteral("cpu-short");
        QCOMPARE(calibrateConfigFlags({a, b}), QStringLiteral("--config cpu-short"));
        b.configFile = QStringLiteral("/data/u/unet.yaml");  // launched from two YAMLs
        QCOMPARE(calibrateConfigFlags({a, b}), QString());
        a.configFile = b.configFile;
        QCOMPARE(calibrateConfigFlags({a, b}), QStringLiteral("--config cpu-short --config-file /data/u/unet.yaml"));
        QCOMPARE(calibrateConfigFlags({}), QString());
        // A path the shell would split is quoted, so that the command pastes as it reads.
        a.configFile = b.configFile = QStringLiteral("/data/my runs/unet.yaml");
        QCOMPARE(calibrateConfigFlags({a, b}), QStringLiteral("--config cpu-short --config-file '/data/my runs/unet.yaml'"));
    }

    // Say what is known: the base point's efficiency is 100 % with no range; ranges past 100 % are
    // cut there and marked, unless a run scaled superlinearly; across nodes without an across-node
    // timing is "not measured" (no stand-in of the within-node bandwidth); zero1 without its own
    // collectives timed likewise.
    void whatWasNeverMeasuredIsSaid()
    {
        QTemporaryDir dir;
        const QString bench = dir.filePath(QStringLiteral("comm.jsonl"));
        QFile f(bench);
        QVERIFY(f.open(QIODevice::WriteOnly));
        for (double s : {1e6, 4e7}) f.write(line("allreduce", s, ring(1e-4, 2e9, 2, s)));
        f.close();
        auto samples = loadCommSamples(bench);
        QVERIFY(samples);
        PlanOptions o;
        o.nodes = {1, 2};
        o.ranksPerNode = 1;
        o.strategies = {QStringLiteral("ddp"), QStringLiteral("zero1")};
        auto plan = makePlan(QStringLiteral("s"), {oneRankRun()}, *samples, {bench}, o);
        QVERIFY2(plan, plan ? "" : qPrintable(plan.error().text()));
        QCOMPARE(plan->points.size(), 4);
        const PlanPoint &ddp1 = plan->points[0], &ddp2 = plan->points[1], &zero1 = plan->points[2], &zero2 = plan->points[3];
        // 1 rank on 1 node is the base: 100 % by definition.
        QCOMPARE(ddp1.efficiency, 1.0);
        QCOMPARE(ddp1.efficiencyLow, 1.0);
        QCOMPARE(ddp1.efficiencyHigh, 1.0);
        QVERIFY(ddp1.notMeasured.isEmpty());
        QCOMPARE(zero1.efficiency, 1.0);
        // 2 nodes with within-node timings only: not measured, with the command.
        QCOMPARE(ddp2.notMeasured.size(), 1);
        QVERIFY(ddp2.notMeasured.first().startsWith(QStringLiteral("communication across nodes")));
        QCOMPARE(ddp2.measureWith.first(), QStringLiteral("scaledesk calibrate --nodes 2 --ranks-per-node 1"));
        QVERIFY(std::isnan(ddp2.epochS));
        // zero1 across nodes: both gaps.
        QCOMPARE(zero2.notMeasured.size(), 2);
        QVERIFY(zero2.measureWith.last().endsWith(QStringLiteral("--ops reduce_scatter,allgather")));
        QVERIFY(plan->markdown().contains(QStringLiteral("## What to measure")));
        // Runs of one named config: the command times that config's own step as the compute.
        PlanRunInput named = oneRankRun();
        named.config = QStringLiteral("cpu-demo");
        named.configFile = QStringLiteral("/home/u/my.yaml");
        auto withConfig = makePlan(QStringLiteral("s"), {named}, *samples, {bench}, o);
        QVERIFY2(withConfig, withConfig ? "" : qPrintable(withConfig.error().text()));
        QCOMPARE(withConfig->points[1].measureWith.first(),
                 QStringLiteral("scaledesk calibrate --nodes 2 --ranks-per-node 1 --config cpu-demo --config-file /home/u/my.yaml"));
        PlanRunInput other = named;
        other.config = QStringLiteral("cpu-bench");  // two configs: no one config to name
        auto mixed = makePlan(QStringLiteral("s"), {named, other}, *samples, {bench}, o);
        QVERIFY2(mixed, mixed ? "" : qPrintable(mixed.error().text()));
        QCOMPARE(mixed->points[1].measureWith.first(), QStringLiteral("scaledesk calibrate --nodes 2 --ranks-per-node 1"));

        // 2 ranks on one node, measured: the ±2σ band of a 1 %-noisy compute reaches past 100 %
        // only where the point is near it; cut there and said.
        PlanRunInput noisy = oneRankRun();
        noisy.epochCv = 0.3;
        PlanOptions two = twoRanksOnOneNode(QStringLiteral("ddp"));
        auto clipped = makePlan(QStringLiteral("s"), {noisy}, *samples, {bench}, two);
        QVERIFY2(clipped, clipped ? "" : qPrintable(clipped.error().text()));
        const PlanPoint& p = clipped->points.first();
        QVERIFY(p.notMeasured.isEmpty());
        QVERIFY(p.efficiencyClipped);
        QCOMPARE(p.efficiencyHigh, 1.0);
        QVERIFY(p.efficiency < 1.0);
        QVERIFY2(clipped->markdown().contains(QStringLiteral("), clipped at 100 %")), qPrintable(clipped->markdown()));
        // A run that measured superlinear scaling lifts the cut.
        PlanRunInput fast = noisy;
        fast.runId = QStringLiteral("two-ranks");
        fast.ranks = 2;
        fast.epochS = noisy.epochS / 2.2;
        auto lifted = makePlan(QStringLiteral("s"), {noisy, fast}, *samples, {bench}, two);
        QVERIFY2(lifted, lifted ? "" : qPrintable(lifted.error().text()));
        QVERIFY(!lifted->points.first().efficiencyClipped);
    }

    void whatIsMissingIsSaid()
    {
        QTemporaryDir dir;
        const QString bench = dir.filePath(QStringLiteral("bad.jsonl"));
        QFile f(bench);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(line("allreduce", 1e6, 1e-3) + "{\"kind\":\"allreduce\",\"ranks\":2,\"nodes\":1,\"bytes\":1e6,\"seconds\":-1}\n");
        f.close();
        auto samples = loadCommSamples(bench);
        QVERIFY(!samples);
        QCOMPARE(samples.error().location, bench + QStringLiteral(":2"));
        QVERIFY2(samples.error().message.contains(QStringLiteral("'seconds'")), qPrintable(samples.error().message));
        QVERIFY(!loadCommSamples(dir.filePath(QStringLiteral("missing.jsonl"))));

        PlanRunInput base = oneRankRun();
        PlanOptions o;
        o.nodes = {1};
        o.ranksPerNode = 4;
        o.profile = QStringLiteral("lab");
        // One 1-rank run and no collective timed: 4 ranks are "not measured", with no number the
        // model could only guess, and the command that measures what is missing.
        auto noComm = makePlan(QStringLiteral("s"), {base}, {}, {}, o);
        QVERIFY2(noComm, noComm ? "" : qPrintable(noComm.error().text()));
        QCOMPARE(noComm->points.size(), 1);
        const PlanPoint& four = noComm->points.first();
        QCOMPARE(four.notMeasured.size(), 1);
        QVERIFY2(four.notMeasured.first().startsWith(QStringLiteral("communication (no collective timed")),
                 qPrintable(four.notMeasured.first()));
        QCOMPARE(four.measureWith, QStringList{QStringLiteral("scaledesk calibrate --profile lab --nodes 1 --ranks-per-node 4")});
        QVERIFY(std::isnan(four.epochS) && std::isnan(four.efficiency) && std::isnan(four.nodeHours));
        const QString md = noComm->markdown();
        QVERIFY2(md.contains(QStringLiteral("| ddp | 1 | 4 | not measured |")), qPrintable(md));
        QVERIFY(md.contains(QStringLiteral("- `scaledesk calibrate --profile lab --nodes 1 --ranks-per-node 4`")));
        QVERIFY(noComm->csv().contains(QStringLiteral("scaledesk calibrate --profile lab --nodes 1 --ranks-per-node 4")));
        // writePlan: an unknown format, or images without a renderer, before anything is written.
        o.ranksPerNode = 1;
        auto onePoint = makePlan(QStringLiteral("s"), {base}, {}, {}, o);
        QVERIFY2(onePoint, onePoint ? "" : qPrintable(onePoint.error().text()));
        const QString out = dir.filePath(QStringLiteral("out"));
        const Status gif = writePlan(*onePoint, out, {QStringLiteral("csv"), QStringLiteral("gif")}, {}, nullptr);
        QVERIFY(!gif);
        QVERIFY2(gif.error().message.contains(QStringLiteral("unknown plan format 'gif'")), qPrintable(gif.error().message));
        const Status png = writePlan(*onePoint, out, {QStringLiteral("md"), QStringLiteral("png")}, {}, nullptr);
        QVERIFY(!png);
        QVERIFY2(png.error().message.contains(QStringLiteral("without charts")), qPrintable(png.error().message));
        QVERIFY(!QFileInfo::exists(out));
        QStringList written;
        QVERIFY(writePlan(*onePoint, out, {QStringLiteral("csv"), QStringLiteral("md")}, {}, &written));
        QCOMPARE(written.size(), 2);
        o.ranksPerNode = 4;
        base.steps = 0;
        auto noSteps = makePlan(QStringLiteral("s"), {base}, {}, {}, o);
        QVERIFY(!noSteps);
        QVERIFY2(noSteps.error().message.contains(QStringLiteral("step records")), qPrintable(noSteps.error().message));
    }
};

QTEST_GUILESS_MAIN(TestPlanGaps)
#include "tst_plangaps.moc"
