// The planner's fits (backend/analysis/planfit.cpp): the compute contention from the benchmark,
// ddp's share behind compute from overlapped allreduces, collectives timed after compute preferred
// to those behind a barrier, and zero1's runs fitted with the whole optimizer step.
#include "planfixture.h"

#include "analysis/planner.h"

#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>

using namespace scaledesk;
using namespace scaledesk::planfixture;

class TestPlanFit : public QObject {
    Q_OBJECT
private slots:
    // Compute contention on CPU ranks: the benchmark's kernel took 10 ms alone and 12.5 ms on two
    // ranks at once, so a 2-rank step computes 1.25× the 1-rank run's 0.2 s; a 2-rank run's
    // contended compute is divided by it before the fit, so it is not counted twice.
    void computeContentionFromTheBenchmark()
    {
        QTemporaryDir dir;
        const QString bench = dir.filePath(QStringLiteral("comm.jsonl"));
        QFile f(bench);
        QVERIFY(f.open(QIODevice::WriteOnly));
        for (double s : {1e6, 1e7, 4e7}) f.write(line("allreduce", s, ring(1e-4, 2e9, 2, s)));
        f.write("{\"kind\":\"compute\",\"ranks\":2,\"nodes\":1,\"alone_s\":0.01,\"seconds\":0.0125,\"mean_s\":0.012,\"threads\":1}\n");
        f.close();
        auto samples = loadCommSamples(bench);
        QVERIFY2(samples, samples ? "" : qPrintable(samples.error().text()));
        QCOMPARE(samples->size(), 4);
        QCOMPARE(samples->last().op, CommSample::Op::Compute);
        QCOMPARE(samples->last().aloneS, 0.01);
        QCOMPARE(samples->last().kernel, QStringLiteral("a convolution kernel"));  // a line without "kernel": the one kernel of old

        PlanRunInput base = oneRankRun();
        base.cpu = true;
        const PlanOptions o = twoRanksOnOneNode(QStringLiteral("fused"));
        auto plan = makePlan(QStringLiteral("s"), {base}, *samples, {bench}, o);
        QVERIFY2(plan, plan ? "" : qPrintable(plan.error().text()));
        QVERIFY2(std::abs(plan->points[0].computeS - 0.25) < 1e-12, qPrintable(QString::number(plan->points[0].computeS, 'g', 17)));
        QVERIFY2(plan->markdown().contains(
                     QStringLiteral("compute contention (CPU ranks share a node's cores and memory): ×1.25 at 2 rank(s) on 1 node(s)")),
                 qPrintable(plan->markdown()));
        QCOMPARE(plan->model.comm.samples, 3);  // the kernel is no collective
        QVERIFY2(plan->markdown().contains(
                     QStringLiteral("(a convolution kernel: 0.01 s alone, 0.0125 s on every rank at once; over its time alone)")),
                 qPrintable(plan->markdown()));

        PlanRunInput two = base;
        two.runId = QStringLiteral("two");
        two.strategy = QStringLiteral("fused");
        two.ranks = 2;
        two.computeS = 0.25;  // contended
        two.backwardS = 0.125;
        auto both = makePlan(QStringLiteral("s"), {base, two}, *samples, {bench}, o);
        QVERIFY2(both, both ? "" : qPrintable(both.error().text()));
        QVERIFY2(std::abs(both->model.compute.perSampleS - 0.1) < 1e-12, qPrintable(QString::number(both->model.compute.perSampleS)));
        QVERIFY(std::abs(both->points[0].computeS - 0.25) < 1e-12);

        // Without the kernel's timing, or on GPU ranks: not applied, and said where it matters.
        samples->removeLast();
        auto without = makePlan(QStringLiteral("s"), {base}, *samples, {bench}, o);
        QVERIFY(without);
        QVERIFY(std::abs(without->points[0].computeS - 0.2) < 1e-12);
        QVERIFY(without->markdown().contains(QStringLiteral("compute contention: not measured")));

        // bench-comm --config: the config's own step computed, and the inputs name it.
        QFile model(dir.filePath(QStringLiteral("model.jsonl")));
        QVERIFY(model.open(QIODevice::WriteOnly));
        model.write("{\"kind\":\"compute\",\"ranks\":2,\"nodes\":1,\"alone_s\":0.08,\"seconds\":0.125,\"kernel\":\"model\","
                    "\"config\":\"cpu-bench\",\"local_batch\":1}\n");
        model.close();
        auto ownStep = loadCommSamples(model.fileName());
        QVERIFY2(ownStep, ownStep ? "" : qPrintable(ownStep.error().text()));
        samples->append(ownStep->first());
        auto withModel = makePlan(QStringLiteral("s"), {base}, *samples, {bench, model.fileName()}, o);
        QVERIFY2(withModel, withModel ? "" : qPrintable(withModel.error().text()));
        // Its time on every rank over the 1-rank run's compute at its local batch (0.1 s of the
        // run's 0.2 s at 2), not over its lone rank's 0.08 s: ×1.25.
        QVERIFY(std::abs(withModel->points[0].computeS - 0.25) < 1e-12);
        QVERIFY2(withModel->markdown().contains(QStringLiteral(
                     "×1.25 at 2 rank(s) on 1 node(s) (config cpu-bench's own training step at local batch 1: 0.08 s alone, 0.125 s on "
                     "every rank at once; over the runs of one rank per node's compute at its local batch, 0.1 s)")),
                 qPrintable(withModel->markdown()));

        // With collectives timed after the same step (--after_compute), the step's time between
        // them is the contention: 0.24 s for two steps, 0.12 s each, over the run's 0.1 s = ×1.2.
        QFile between(dir.filePath(QStringLiteral("between.jsonl")));
        QVERIFY(between.open(QIODevice::WriteOnly));
        QByteArray after = line("allreduce", 4e7, ring(1e-4, 2e9, 2, 4e7));
        after.replace("}\n",
                      ",\"mode\":\"after_compute\",\"wait_s\":0,\"compute_s\":0.24,\"kernels\":2,\"kernel\":\"model\","
                      "\"config\":\"cpu-bench\",\"local_batch\":1}\n");
        between.write(after);
        between.close();
        auto timedAfter = loadCommSamples(between.fileName());
        QVERIFY2(timedAfter, timedAfter ? "" : qPrintable(timedAfter.error().text()));
        QCOMPARE(timedAfter->first().kernels, 2);
        samples->append(timedAfter->first());
        auto withBetween = makePlan(QStringLiteral("s"), {base}, *samples, {bench, model.fileName(), between.fileName()}, o);
        QVERIFY2(withBetween, withBetween ? "" : qPrintable(withBetween.error().text()));
        QVERIFY2(std::abs(withBetween->points[0].computeS - 0.24) < 1e-12,
                 qPrintable(QString::number(withBetween->points[0].computeS, 'g', 17)));
        QVERIFY2(
            withBetween->markdown().contains(QStringLiteral("×1.2 at 2 rank(s) on 1 node(s) (config cpu-bench's own training step at "
                                                            "local batch 1: 0.08 s alone, 0.125 s on every rank at once, 0.12 s between "
                                                            "collectives: the after-compute timings' mean, used; over the runs of one "
                                                            "rank per node's compute at its local batch, 0.1 s)")),
            qPrintable(withBetween->markdown()));
        QFile badKernels(dir.filePath(QStringLiteral("kernels.jsonl")));
        QVERIFY(badKernels.open(QIODevice::WriteOnly));
        after.replace("\"kernels\":2", "\"kernels\":0.5");
        badKernels.write(line("allreduce", 1e6, 1e-3) + after);
        badKernels.close();
        auto halfKernel = loadCommSamples(badKernels.fileName());
        QVERIFY(!halfKernel);
        QCOMPARE(halfKernel.error().location, badKernels.fileName() + QStringLiteral(":2"));
        QVERIFY2(halfKernel.error().message.contains(QStringLiteral("'kernels'")), qPrintable(halfKernel.error().message));

        QFile bad(dir.filePath(QStringLiteral("bad.jsonl")));
        QVERIFY(bad.open(QIODevice::WriteOnly));
        bad.write("{\"kind\":\"compute\",\"ranks\":2,\"nodes\":1,\"seconds\":0.0125}\n");
        bad.close();
        auto noAlone = loadCommSamples(bad.fileName());
        QVERIFY(!noAlone);
        QCOMPARE(noAlone.error().location, bad.fileName() + QStringLiteral(":1"));
        QVERIFY2(noAlone.error().message.contains(QStringLiteral("'alone_s'")), qPrintable(noAlone.error().message));
    }

    // bench-comm's overlapped allreduces (launched before the compute, waited for after it) set
    // ddp's share φ on CPU ranks: here each call costs 0.25 of its collective less behind compute
    // than after it, so ddp exposes its communication less a quarter of it (backward, 0.1 s, is
    // longer); they are no timing of the collective alone, so the fits and the barrier's timings
    // are as without them.
    void overlappedAllreducesSetDdpsShareOnCpuRanks()
    {
        QTemporaryDir dir;
        const QString bench = dir.filePath(QStringLiteral("comm.jsonl"));
        QFile f(bench);
        QVERIFY(f.open(QIODevice::WriteOnly));
        QByteArray behind;
        for (double s : {1e6, 1e7, 4e7}) {
            const double after = 1.5 * ring(1e-4, 2e9, 2, s);
            f.write(line("allreduce", s, ring(1e-4, 2e9, 2, s)));
            f.write(line("allreduce", s, after)
                        .replace("}\n", ",\"mode\":\"after_compute\",\"wait_s\":0.01,\"compute_s\":0.1,\"kernels\":1}\n"));
            behind +=
                line("allreduce", s, 0.01 + 0.75 * after).replace("}\n", ",\"mode\":\"overlapped\",\"compute_s\":0.1,\"kernels\":1}\n");
        }
        f.close();
        auto plain = loadCommSamples(bench);
        QVERIFY2(plain, plain ? "" : qPrintable(plain.error().text()));
        QVERIFY(f.open(QIODevice::Append));
        f.write(behind);
        f.close();
        auto samples = loadCommSamples(bench);
        QVERIFY2(samples, samples ? "" : qPrintable(samples.error().text()));
        QCOMPARE(samples->size(), 9);
        QVERIFY(samples->last().overlapped && !samples->last().afterCompute);
        QCOMPARE(samples->last().computeS, 0.1);

        PlanRunInput base = oneRankRun();
        base.cpu = true;
        const PlanOptions o = twoRanksOnOneNode(QStringLiteral("ddp"));
        auto without = makePlan(QStringLiteral("s"), {base}, *plain, {bench}, o);
        auto with = makePlan(QStringLiteral("s"), {base}, *samples, {bench}, o);
        QVERIFY2(without && with, qPrintable(without ? (with ? QString() : with.error().text()) : without.error().text()));
        QCOMPARE(with->model.comm.samples, 3);  // the after-compute timings only, as without
        QVERIFY2(with->markdown().contains(QStringLiteral("3 barrier timing(s) of the same collectives left out")),
                 qPrintable(with->markdown()));
        QVERIFY2(with->markdown().contains(QStringLiteral("exposed = max(last bucket, comm − φ·min(comm, backward))")) &&
                     with->markdown().contains(QStringLiteral("φ = 0.25 at 2 rank(s) on 1 node(s) (3 size(s))")),
                 qPrintable(with->markdown()));
        QVERIFY2(without->markdown().contains(QStringLiteral("CPU ranks, where backward and the buckets share the cores: all exposed")),
                 qPrintable(without->markdown()));
        const double wait = 0.1 * 0.2;  // 0.01 s per 0.1 s of compute, of the step's 0.2 s
        const double comm = without->points[0].exposedCommS - wait;
        QVERIFY2(std::abs(with->points[0].exposedCommS - (wait + 0.75 * comm)) < 1e-12,
                 qPrintable(QStringLiteral("%1 vs %2").arg(with->points[0].exposedCommS, 0, 'g', 17).arg(wait + 0.75 * comm, 0, 'g', 17)));

        // Only an allreduce is timed behind compute, and a mode not known is named.
        QFile bad(dir.filePath(QStringLiteral("bad.jsonl")));
        QVERIFY(bad.open(QIODevice::WriteOnly));
        bad.write(line("allgather", 1e6, 1e-3).replace("}\n", ",\"mode\":\"overlapped\",\"compute_s\":0.1,\"kernels\":1}\n"));
        bad.close();
        auto gather = loadCommSamples(bad.fileName());
        QVERIFY(!gather);
        QCOMPARE(gather.error().location, bad.fileName() + QStringLiteral(":1"));
        QVERIFY2(gather.error().message.contains(QStringLiteral("only allreduces are timed behind compute")),
                 qPrintable(gather.error().message));
        QVERIFY(bad.open(QIODevice::WriteOnly | QIODevice::Truncate));
        bad.write(line("allreduce", 1e6, 1e-3) + line("allreduce", 1e6, 1e-3).replace("}\n", ",\"mode\":\"sideways\"}\n"));
        bad.close();
        auto unknown = loadCommSamples(bad.fileName());
        QVERIFY(!unknown);
        QCOMPARE(unknown.error().location, bad.fileName() + QStringLiteral(":2"));
        QVERIFY2(unknown.error().message.contains(QStringLiteral("field 'mode' is 'sideways'")), qPrintable(unknown.error().message));
        QVERIFY(bad.open(QIODevice::WriteOnly | QIODevice::Truncate));
        bad.write(line("allreduce", 1e6, 1e-3).replace("}\n", ",\"mode\":\"overlapped\",\"kernels\":1}\n"));
        bad.close();
        auto noCompute = loadCommSamples(bad.fileName());
        QVERIFY(!noCompute);
        QVERIFY2(
            noCompute.error().message.contains(QStringLiteral("field 'compute_s' is missing or not a number ≥ 0 (an overlapped timing)")),
            qPrintable(noCompute.error().message));
    }

    // A benchmark with --after_compute: its after-compute timings are read with their wait and
    // compute, replace the barrier's of the same collective, and add the arrival wait to the step:
    // fused at 2 ranks computes 0.2 s, its 40 MB allreduce takes 1.5× the barrier's ring time, and
    // the ranks waited 0.01 s per 0.1 s of compute: 10 % of 0.2 s.
    void collectivesTimedAfterComputeArePreferred()
    {
        QTemporaryDir dir;
        const QString bench = dir.filePath(QStringLiteral("comm.jsonl"));
        QFile f(bench);
        QVERIFY(f.open(QIODevice::WriteOnly));
        for (double s : {1e6, 1e7, 4e7}) {
            f.write(line("allreduce", s, ring(1e-4, 2e9, 2, s)));
            QByteArray after = line("allreduce", s, 1.5 * ring(1e-4, 2e9, 2, s));
            after.replace("}\n", ",\"mode\":\"after_compute\",\"wait_s\":0.01,\"compute_s\":0.1,\"kernels\":20}\n");
            f.write(after);
        }
        f.close();
        auto samples = loadCommSamples(bench);
        QVERIFY2(samples, samples ? "" : qPrintable(samples.error().text()));
        QCOMPARE(samples->size(), 6);
        QVERIFY(!(*samples)[0].afterCompute);
        QVERIFY((*samples)[1].afterCompute);
        QCOMPARE((*samples)[1].waitS, 0.01);
        QCOMPARE((*samples)[1].computeS, 0.1);

        const PlanOptions o = twoRanksOnOneNode(QStringLiteral("fused"));
        auto plan = makePlan(QStringLiteral("s"), {oneRankRun()}, *samples, {bench}, o);
        QVERIFY2(plan, plan ? "" : qPrintable(plan.error().text()));
        QCOMPARE(plan->model.comm.samples, 3);  // the after-compute timings only
        const double allreduce = 1.5 * ring(1e-4, 2e9, 2, 40e6);
        const double want = 0.2 + 0.01 + allreduce + 0.1 * 0.2;
        QVERIFY2(std::abs(plan->points[0].stepS - want) < 1e-9 * want,
                 qPrintable(QStringLiteral("%1 vs %2").arg(plan->points[0].stepS, 0, 'g', 17).arg(want, 0, 'g', 17)));
        QVERIFY2(plan->markdown().contains(QStringLiteral("3 barrier timing(s) of the same collectives left out")),
                 qPrintable(plan->markdown()));
        QVERIFY2(plan->markdown().contains(QStringLiteral("+10 % of compute at 2 rank(s) on 1 node(s)")), qPrintable(plan->markdown()));

        // A 2-rank run's communication per step, which the allreduce fit reads too, paid the wait:
        // it is taken less 10 % of the run's compute, so the curve at 40 MB stays the benchmark's.
        PlanRunInput two = oneRankRun();
        two.runId = QStringLiteral("two");
        two.strategy = QStringLiteral("fused");
        two.ranks = 2;
        two.bucketBytes = 64.0 * (1 << 20);  // one fusion buffer
        two.commS = allreduce + 0.1 * two.computeS;
        two.exposedS = two.commS;
        auto withRun = makePlan(QStringLiteral("s"), {oneRankRun(), two}, *samples, {bench}, o);
        QVERIFY2(withRun, withRun ? "" : qPrintable(withRun.error().text()));
        bool seen = false;
        for (const CommSample& c : withRun->model.comm.measured)
            if (c.ranks == 2 && c.nodes == 1 && c.bytes == 40e6) {
                seen = true;
                QVERIFY2(std::abs(c.seconds - allreduce) < 1e-12, qPrintable(QString::number(c.seconds, 'g', 17)));
            }
        QVERIFY(seen);

        // The barrier's timings alone: no wait, and the plan says it was not measured.
        QList<CommSample> barrierOnly;
        for (const CommSample& c : *samples)
            if (!c.afterCompute) barrierOnly << c;
        auto plain = makePlan(QStringLiteral("s"), {oneRankRun()}, barrierOnly, {bench}, o);
        QVERIFY(plain);
        QVERIFY(std::abs(plain->points[0].stepS - (0.2 + 0.01 + ring(1e-4, 2e9, 2, 40e6))) < 1e-9);
        QVERIFY(plain->markdown().contains(QStringLiteral("the ranks' arrival wait not measured")));

        QFile bad(dir.filePath(QStringLiteral("bad.jsonl")));
        QVERIFY(bad.open(QIODevice::WriteOnly));
        bad.write(line("allreduce", 1e6, 1e-3));
        bad.write("{\"kind\":\"allreduce\",\"ranks\":2,\"nodes\":1,\"bytes\":1e6,\"seconds\":1e-3,\"mode\":\"after_compute\",\"compute_s\":"
                  "0.1}\n");
        bad.close();
        auto noWait = loadCommSamples(bad.fileName());
        QVERIFY(!noWait);
        QCOMPARE(noWait.error().location, bad.fileName() + QStringLiteral(":2"));
        QVERIFY2(noWait.error().message.contains(QStringLiteral("'wait_s'")), qPrintable(noWait.error().message));
    }

    // A 2-rank zero1 run updated half the parameters: its 0.02 s optimizer step counts as 0.04 s in
    // the compute fit, so it fits as the 1-rank run does (0.1 s per sample), and its prediction
    // at 2 ranks gives the half back.
    void zero1RunsAreFittedWithTheWholeOptimizerStep()
    {
        PlanRunInput one = oneRankRun();
        one.optimizerS = 0.04;
        PlanRunInput zero = one;
        zero.runId = QStringLiteral("zero");
        zero.strategy = QStringLiteral("zero1");
        zero.ranks = 2;
        zero.optimizerS = 0.02;
        zero.computeS = 0.18;
        zero.commS = zero.exposedS = 0.01;
        const PlanOptions o = twoRanksOnOneNode(QStringLiteral("zero1"));
        QTemporaryDir dir;
        const QString bench = dir.filePath(QStringLiteral("comm.jsonl"));
        QFile f(bench);
        QVERIFY(f.open(QIODevice::WriteOnly));
        for (double s : {1e6, 4e7}) {
            f.write(line("allreduce", s, ring(1e-4, 2e9, 2, s)));
            f.write(line("reduce_scatter", s, ring(1e-4, 2e9, 2, s) / 2));  // zero1's own collectives timed (else "not measured")
            f.write(line("allgather", s, ring(1e-4, 2e9, 2, s) / 2));
        }
        f.close();
        auto samples = loadCommSamples(bench);
        QVERIFY(samples);
        auto plan = makePlan(QStringLiteral("s"), {one, zero}, *samples, {bench}, o);
        QVERIFY2(plan, plan ? "" : qPrintable(plan.error().text()));
        QVERIFY2(std::abs(plan->model.compute.perSampleS - 0.1) < 1e-12,
                 qPrintable(QString::number(plan->model.compute.perSampleS, 'g', 17)));
        QVERIFY(std::abs(plan->model.compute.optimizerShare - 0.2) < 1e-12);
        QVERIFY2(std::abs(plan->points[0].computeS - 0.18) < 1e-12, qPrintable(QString::number(plan->points[0].computeS, 'g', 17)));
        QVERIFY2(plan->markdown().contains(QStringLiteral("optimizer: 20 % of compute, of which zero1 does 1/n at n ranks")),
                 qPrintable(plan->markdown()));
    }
};

QTEST_GUILESS_MAIN(TestPlanFit)
#include "tst_planfit.moc"
