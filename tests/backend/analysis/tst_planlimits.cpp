// Points outside what the model describes (backend/analysis/planlimits.cpp): oversubscribed CPU
// ranks whose contention was not timed as they run, fewer threads than the runs, calibrations that
// disagree with the runs, and sizes far beyond the largest measured.
#include "planfixture.h"

#include "analysis/planner.h"

#include <QTest>

#include <cmath>

using namespace scaledesk;
using namespace scaledesk::planfixture;

class TestPlanLimits : public QObject {
    Q_OBJECT
private slots:
    // A point no run measured is flagged, before any measurement of it, where the model does not
    // describe its conditions: CPU ranks whose compute contention was never measured at its ranks
    // per node, or measured over a calibration's lone step (no run of one rank per node) that
    // disagrees with the runs' compute (here 0.25 s against the runs' 0.2 s: +25 %), CPU ranks that
    // take turns on the cores where the contention was not timed as they would run (ranks per
    // node, threads, loaders), and any point beyond 8× the largest run. It keeps its
    // numbers; a point a run measured, GPU ranks and an agreeing calibration are not flagged.
    void pointsOutsideTheModelSayWhy()
    {
        PlanRunInput base = oneRankRun();
        base.strategy = QStringLiteral("fused");
        base.cpu = true;
        base.threadsPerRank = 1;
        base.hostCpus = 8;
        QList<CommSample> bench;
        for (double bytes : {1e6, 4e7}) bench << CommSample{2, 1, bytes, ring(1e-4, 2e9, 2, bytes)};
        const PlanOptions o = twoRanksOnOneNode(QStringLiteral("fused"));
        auto flagsOf = [&](const std::vector<PlanRunInput>& runs, const QList<CommSample>& timings, const PlanOptions& options) {
            auto plan = makePlan(QStringLiteral("s"), runs, timings, {}, options);
            if (!plan) qWarning("%s", qPrintable(plan.error().text()));
            return plan ? plan->points.value(0).outsideModel : QStringList{QStringLiteral("no plan")};
        };

        auto never = makePlan(QStringLiteral("s"), {base}, bench, {}, o);
        QVERIFY2(never, never ? "" : qPrintable(never.error().text()));
        const PlanPoint& p = never->points.first();
        QVERIFY(std::isfinite(p.epochS) && std::isfinite(p.epochHighS));  // flagged, not withdrawn
        QCOMPARE(p.outsideModel,
                 QStringList{QStringLiteral("how ranks that share a node slow each other's compute was never measured (taken as not at "
                                            "all; scaledesk calibrate --nodes 1 --ranks-per-node 2 --config CONFIG measures it)")});
        QVERIFY2(never->markdown().contains(QStringLiteral("**outside the model**: how ranks that share a node")),
                 qPrintable(never->markdown()));
        QVERIFY(never->csv().section(QLatin1Char('\n'), 1, 1).endsWith(QStringLiteral("measures it)")));  // the last column
        // Runs that name their config: the command names it too (quoted where the shell would split it).
        PlanRunInput named = base;
        named.config = QStringLiteral("cpu-demo");
        named.configFile = QStringLiteral("/tmp/my configs/unet.yaml");
        QCOMPARE(flagsOf({named}, bench, o),
                 QStringList{QStringLiteral("how ranks that share a node slow each other's compute was never measured (taken as not at "
                                            "all; scaledesk calibrate --nodes 1 --ranks-per-node 2 --config cpu-demo --config-file "
                                            "'/tmp/my configs/unet.yaml' measures it)")});

        CommSample lone;
        lone.op = CommSample::Op::Compute;
        lone.ranks = 2;
        lone.aloneS = lone.seconds = 0.25;
        lone.kernelLocalBatch = 2;
        QList<CommSample> calibrated = bench;
        calibrated << lone;
        // With a run of one rank per node, the contention is the config's step at the layout over
        // that run's compute at the kernel's local batch (0.25 s at 2 ranks over 0.2 s: ×1.25),
        // whatever the benchmark's lone rank took: nothing to flag.
        auto overRuns = makePlan(QStringLiteral("s"), {base}, calibrated, {}, o);
        QVERIFY2(overRuns, overRuns ? "" : qPrintable(overRuns.error().text()));
        QCOMPARE(overRuns->points.first().outsideModel, QStringList{});
        QVERIFY(std::abs(overRuns->model.contention(2, 1) - 1.25) < 1e-9);
        QVERIFY2(overRuns->inputs.join(QLatin1Char('\n')).contains(QStringLiteral("over the runs of one rank per node's compute")),
                 qPrintable(overRuns->inputs.join(QLatin1Char('\n'))));
        // Without one (runs of 2 ranks on a node, a point at 4), it is over the lone step, which must
        // then agree with the runs' compute at its local batch: 0.25 s against 0.2 s, +25 %.
        PlanRunInput pair = base;
        pair.runId = QStringLiteral("pair");
        pair.ranks = 2;
        pair.epochS = 3.5;
        CommSample loneAtFour = lone;
        loneAtFour.ranks = 4;
        QList<CommSample> atFourToo = calibrated;
        atFourToo << loneAtFour;
        for (double bytes : {1e6, 4e7}) atFourToo << CommSample{4, 1, bytes, ring(1e-4, 2e9, 4, bytes)};
        PlanOptions fourOnOne = o;
        fourOnOne.ranksPerNode = 4;
        QCOMPARE(flagsOf({pair}, atFourToo, fourOnOne),
                 QStringList{QStringLiteral("the calibration timed the config's step alone at 0.25 s, the runs computed 0.2 s at its "
                                            "local batch 2 (+25 %): the machine was not as it was for the runs, so the contention "
                                            "measured then (×1) may not be theirs; calibrate again right before or after the runs")});
        for (CommSample& c : atFourToo)  // +5 %: the same machine
            if (c.op == CommSample::Op::Compute) c.aloneS = c.seconds = 0.21;
        QCOMPARE(flagsOf({pair}, atFourToo, fourOnOne), QStringList{});
        PlanRunInput two = base;  // a run measured the point: nothing to flag
        two.runId = QStringLiteral("two");
        two.ranks = 2;
        two.epochS = 3.5;
        QCOMPARE(flagsOf({base, two}, calibrated, o), QStringList{});
        // More ranks than the hosts' CPUs, and no contention measured at 4 per node.
        PlanOptions four = o;
        four.ranksPerNode = 4;
        base.hostCpus = 2;
        const QStringList crowded = flagsOf({base}, calibrated, four);
        QCOMPARE(crowded.size(), 2);
        QCOMPARE(crowded.first(),
                 QStringLiteral("4 ranks per node × 1 thread(s) each on 2 CPUs: the ranks take turns on the cores, "
                                "which the model has no term for"));
        QVERIFY(crowded.last().startsWith(QStringLiteral("how ranks that share a node slow each other's compute was never measured")));
        // A run whose 2 threads filled its 2 CPUs took the trainer's default (cores / local ranks):
        // at 2 ranks per node each would have 1 thread, which fits the CPUs but not the compute fit,
        // made with 2. Given 2 threads on 4 CPUs (--threads 2), it keeps them: 4 ranks per node
        // take 8 threads on 4 CPUs.
        calibrated.last().aloneS = calibrated.last().seconds = 0.21;
        base.threadsPerRank = 2;
        QCOMPARE(flagsOf({base}, calibrated, o),
                 QStringList{QStringLiteral("the runs computed with up to 2 threads per rank, a rank here would get 1 (the trainer's "
                                            "default: usable cores / local ranks): the compute fit does not scale with threads (give "
                                            "the runs --threads 1)")});
        base.hostCpus = 4;
        CommSample lone4 = calibrated.last();
        lone4.ranks = 4;
        QList<CommSample> atFour = calibrated;
        atFour << lone4;
        lone4.threads = 3;  // the contention at 4 per node, timed with other threads than the point's
        atFour.last() = lone4;
        QCOMPARE(flagsOf({base}, atFour, four),
                 QStringList{QStringLiteral("4 ranks per node × 2 thread(s) each on 4 CPUs: the ranks take turns on the cores, which the "
                                            "contention it reads does not describe (it was timed with 3 thread(s) per rank)")});
        atFour.last().threads = 0;
        QVERIFY(flagsOf({base}, atFour, four).value(0).endsWith(QStringLiteral("(it was timed without recording its threads per rank)")));
        atFour.last().threads = 2;  // timed as the point would run: the turns are what it measured
        QCOMPARE(flagsOf({base}, atFour, four), QStringList{});
        // A loader thread per rank beside 1 compute thread: 2 ranks per node keep 4 threads busy on
        // 2 CPUs, though their compute threads alone would fit.
        base.threadsPerRank = 1;
        base.hostCpus = 2;
        QCOMPARE(flagsOf({base}, calibrated, o), QStringList{});
        base.dataWorkers = 1;
        calibrated.last().threads = 1;
        QCOMPARE(flagsOf({base}, calibrated, o),
                 QStringList{QStringLiteral("2 ranks per node × (1 compute + 1 loader thread(s)) each on 2 CPUs: the ranks and their "
                                            "loaders take turns on the cores, which the contention it reads does not describe (it was "
                                            "timed without the loaders: calibrate --config with --make-data or --data)")});
        calibrated.last().kernelLoaders = 1;  // bench-comm fed its step from the config's loader: measured as it runs
        QCOMPARE(flagsOf({base}, calibrated, o), QStringList{});
        base.dataWorkers = -1;

        // GPU ranks: their compute is their own; beyond 8× the largest run, any point is flagged.
        base.cpu = false;
        QCOMPARE(flagsOf({base}, bench, o), QStringList{});
        PlanOptions wide = o;
        wide.ranksPerNode = 32;  // the timings' 2 ranks are the largest measured
        QCOMPARE(flagsOf({base}, bench, wide),
                 QStringList{QStringLiteral("more than 8× the largest rank count measured (2): the collectives' algorithm and the "
                                            "stragglers there were never seen")});
    }
};

QTEST_GUILESS_MAIN(TestPlanLimits)
#include "tst_planlimits.moc"
