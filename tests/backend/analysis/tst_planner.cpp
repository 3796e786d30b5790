// The planner on synthetic inputs with known answers, as a whole: a 1-rank run and a benchmark of
// the three collectives predict a 2-rank epoch of ddp and zero1 as a hand computation does (the
// range, the extrapolation flag); NERSC's published figures; time to a target loss; the batch asked
// for. The parts have their own tests: tst_planfit, tst_planuncertainty, tst_plangaps,
// tst_planlimits, tst_plancheck.
#include "planfixture.h"

#include "analysis/planner.h"

#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>

using namespace scaledesk;
using namespace scaledesk::planfixture;

class TestPlanner : public QObject {
    Q_OBJECT
private slots:
    void predictsAsTheHandComputationDoes()
    {
        QTemporaryDir dir;
        const QString bench = dir.filePath(QStringLiteral("comm.jsonl"));
        {
            QFile f(bench);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write("{\"kind\":\"something-newer\",\"x\":1}\n\n");  // other kinds are skipped
            for (double s : {1e6, 1e7, 4e7}) {
                f.write(line("allreduce", s, ring(1e-4, 2e9, 2, s)));
                f.write(line("reduce_scatter", s, ring(2e-4, 0.5e9, 2, s) / 2));  // half an allreduce of its own α, β
                f.write(line("allgather", s, ring(1e-4, 4e9, 2, s) / 2));
            }
        }
        auto samples = loadCommSamples(bench);
        QVERIFY2(samples, samples ? "" : qPrintable(samples.error().text()));
        QCOMPARE(samples->size(), 9);

        const PlanRunInput base = oneRankRun();
        PlanOptions o;
        o.nodes = {1, 16};
        o.ranksPerNode = 2;
        o.strategies = {QStringLiteral("ddp"), QStringLiteral("zero1")};
        o.gpuHourPrice = 2.5;
        auto plan = makePlan(QStringLiteral("s"), {base}, *samples, {bench}, o);
        QVERIFY2(plan, plan ? "" : qPrintable(plan.error().text()));
        QVERIFY(plan->weak);
        QCOMPARE(plan->points.size(), 4);
        QCOMPARE(plan->model.reduceScatter.alphaS, 2e-4);  // recovered from its own timings
        QVERIFY(std::abs(plan->model.allgather.betaBytesPerS / 4e9 - 1) < 1e-9);

        // ddp at 2 ranks: 2 buckets of 25 MiB; exposed = max(last bucket, comm − backward).
        const double comm = 2 * 2e-4 + 40e6 / 2e9, last = 2e-4 + 25.0 * (1 << 20) / 2e9;
        const double ddpStep = 0.2 + 0.01 + std::max(last, comm - 0.1);
        const PlanPoint& ddp = plan->points[0];
        QCOMPARE(ddp.ranks, 2);
        QVERIFY(std::abs(ddp.stepS - ddpStep) < 1e-12);
        QVERIFY(std::abs(ddp.epochS - 16 * ddpStep) < 1e-9);  // weak: the 64 samples in batches of 4
        QVERIFY(std::abs(ddp.efficiency - 0.21 / ddpStep) < 1e-9);
        // The 90 % range: σ² = (the epochs' 1 % spread of compute)² + (the model form assumed, one
        // run measured one size only: 0.10 at one doubling beyond it)².
        QCOMPARE(ddp.extrapolationWeight, 1.0);
        QVERIFY(!plan->modelSigmaMeasured);
        const double sigma = std::hypot(16 * 0.01 * 0.21 / ddp.epochS, 0.10);
        QVERIFY2(std::abs(ddp.rangeSigma - sigma) < 1e-12, qPrintable(QString::number(ddp.rangeSigma, 'g', 17)));
        QVERIFY(std::abs(ddp.epochHighS - ddp.epochS * std::exp(kZ90 * sigma)) < 1e-9);
        QVERIFY(std::abs(ddp.epochLowS - ddp.epochS * std::exp(-kZ90 * sigma)) < 1e-9);
        QCOMPARE(plan->points[1].extrapolationWeight, 6.0);  // 32 ranks: 5 doublings beyond the run's 1, and across nodes, where no run was
        QVERIFY(std::abs(ddp.cost - ddp.epochS * 2 / 3600 * 2.5) < 1e-12);
        QVERIFY(!ddp.extrapolated);
        QVERIFY(plan->points[1].extrapolated);  // 32 ranks > 8 × 2 (the benchmark's)

        // zero1: one reduce-scatter and one allgather of the whole gradient, as measured.
        const double zeroStep = 0.21 + ring(2e-4, 0.5e9, 2, 40e6) / 2 + ring(1e-4, 4e9, 2, 40e6) / 2;
        const PlanPoint& zero = plan->points[2];
        QCOMPARE(zero.strategy, QStringLiteral("zero1"));
        QVERIFY2(std::abs(zero.stepS - zeroStep) < 1e-9, qPrintable(QString::number(zero.stepS, 'g', 17)));

        QVERIFY(plan->csv().startsWith(QStringLiteral("strategy,nodes,ranks,")));
        QVERIFY(plan->markdown().contains(QStringLiteral("reduce-scatter (zero1)")));
        QVERIFY(plan->markdown().contains(QStringLiteral("extrapolated")));

        // The trainer's layout (manifest.json comm_message_bytes) replaces equal buckets: 1, 26 and
        // 13 MB are three allreduces, and the last, 13 MB, is what ddp's rule exposes at least.
        PlanRunInput laidOut = base;
        laidOut.messageBytes.insert(QStringLiteral("ddp"), {1e6, 26e6, 13e6});
        laidOut.messageBytes.insert(QStringLiteral("fused"), {1e6, 2e6});  // not the gradients' 40 MB: not used
        o.strategies = {QStringLiteral("ddp"), QStringLiteral("fused")};
        auto laid = makePlan(QStringLiteral("s"), {laidOut}, *samples, {bench}, o);
        QVERIFY2(laid, laid ? "" : qPrintable(laid.error().text()));
        const double laidComm = ring(1e-4, 2e9, 2, 1e6) + ring(1e-4, 2e9, 2, 26e6) + ring(1e-4, 2e9, 2, 13e6);
        const double laidStep = 0.21 + std::max(ring(1e-4, 2e9, 2, 13e6), laidComm - 0.1);
        QVERIFY2(std::abs(laid->points[0].stepS - laidStep) < 1e-12, qPrintable(QString::number(laid->points[0].stepS, 'g', 17)));
        QVERIFY(laid->markdown().contains(QStringLiteral("ddp: 3 message(s) of 0.9537–24.8 MiB per step (the trainer's layout")));
        QVERIFY(laid->model.strategies.value(QStringLiteral("fused")).messageBytes.isEmpty());
        QVERIFY(laid->markdown().contains(QStringLiteral("fused: buckets of 64 MiB")));
    }

    // NERSC's published U-Net figures (../shared/reference/nersc-unet-trainer.md §7.3–7.4) as a
    // synthetic sweep: one A100 at 516 samples/s with a batch of 64 (the 66k ideal of 128 GPUs; 547
    // with 128, the 70k ideal), one node of 4 at local batch 16: 1268 samples/s, two nodes of 4:
    // 1833 samples/s. Compute at local batch 16 is taken at the single GPU's 1/516 s per sample;
    // what the 4- and 8-GPU steps spend beyond it is their exposed allreduce of the 117 M
    // parameters' gradients: one message size, so bandwidth only, within and across nodes. Its 128-GPU weak efficiency is
    // set beside the published 78 % (batch 64 per GPU) and 89 % (batch 128): docs/planner.md.
    void nerscPublishedFiguresAsASyntheticSweep()
    {
        const double gradientBytes = 4.0 * 116977029;
        auto run = [&](const char* id, int ranks, int nodes, double localBatch, double samplesPerS, double computeS) {
            PlanRunInput r;
            r.runId = QLatin1String(id);
            r.strategy = QStringLiteral("ddp");
            r.ranks = ranks;
            r.nodes = nodes;
            r.localBatch = localBatch;
            r.samplesPerEpoch = 65536;
            const double step = localBatch * ranks / samplesPerS;
            r.computeS = computeS;
            r.backwardS = 0.6 * r.computeS;
            r.dataS = 0;
            r.commS = r.exposedS = step - r.computeS;  // only the exposed part was published
            r.epochS = 65536 / samplesPerS;
            r.epochCv = 0;
            r.gradientBytes = gradientBytes;
            r.bucketBytes = 25.0 * (1 << 20);
            r.steps = 100;
            return r;
        };
        PlanOptions o;
        o.nodes = {1, 2, 4, 8, 16, 32};
        o.ranksPerNode = 4;
        o.scaling = PlanOptions::Scaling::Weak;
        for (const auto& [batch, single, published] : {std::tuple{64.0, 516.0, 0.78}, std::tuple{128.0, 547.0, 0.89}}) {
            const std::vector<PlanRunInput> sweep{run("1gpu", 1, 1, batch, single, batch / single),
                                                  run("1node-4gpu-lbs16", 4, 1, 16, 1268, 16.0 / 516),
                                                  run("2node-8gpu-lbs16", 8, 2, 16, 1833, 16.0 / 516)};
            auto plan = makePlan(QStringLiteral("nersc"), sweep, {}, {}, o);
            QVERIFY2(plan, plan ? "" : qPrintable(plan.error().text()));
            QVERIFY(plan->model.comm.bandwidthOnly && plan->model.comm.acrossNodesMeasured());
            QVERIFY(plan->warnings.join(QLatin1Char(' ')).contains(QStringLiteral("one message size")));
            // By hand: the 8-GPU step exposed 128/1833 − 16/516 s of allreduce, 2·7/8 · S/β across
            // nodes; 128 ranks take 2·127/128 · S/β of it; compute at the batch is batch/single s
            // (the affine fit passes through both batches measured).
            const double exposed8 = 128.0 / 1833 - 16.0 / 516, exposed128 = exposed8 * (127.0 / 128) / (7.0 / 8);
            const double compute = batch / single, efficiency = compute / (compute + exposed128);
            const PlanPoint& at128 = plan->points.last();
            QCOMPARE(at128.ranks, 128);
            QVERIFY2(std::abs(at128.efficiency - efficiency) < 1e-9, qPrintable(QString::number(at128.efficiency, 'g', 17)));
            QVERIFY(at128.extrapolated);  // 16× the largest sweep point (8)
            // Within 10 points of the published figure (docs/planner.md says by how much, and why).
            QVERIFY2(std::abs(at128.efficiency - published) < 0.10,
                     qPrintable(QStringLiteral("%1 against %2").arg(at128.efficiency).arg(published)));
            // Left out, 4 GPUs on one node are predicted from the across-node allreduce of the 8
            // (+27 %: slower than NVLink's); 8 GPUs on two nodes cannot be (no across-node timing
            // without them). The model form is that one error, and 128 GPUs lie 4 doublings beyond
            // the 8 measured: a wide range, and it holds the published figure.
            QCOMPARE(plan->heldOut.size(), 2);
            QVERIFY(plan->modelSigmaMeasured);
            QCOMPARE(plan->heldOut[0].ranks, 4);
            QVERIFY(plan->heldOut[0].predictedS > plan->heldOut[0].measuredS);
            const double e = plan->heldOut[0].logError();
            QVERIFY(std::abs(plan->modelSigma - std::sqrt((e * e + 2 * 0.10 * 0.10) / 3)) < 1e-12);  // pooled with the assumed 0.10 as 2
            QVERIFY(plan->heldOut[1].why.startsWith(QStringLiteral("communication across nodes")));
            QCOMPARE(at128.extrapolationWeight, 4.0);
            QVERIFY(at128.efficiencyLow < at128.efficiency);
            QVERIFY2(at128.efficiencyLow <= published && published <= at128.efficiencyHigh,
                     qPrintable(QStringLiteral("%1–%2").arg(at128.efficiencyLow).arg(at128.efficiencyHigh)));
            QStringList row;
            for (const PlanPoint& p : plan->points)
                row << QStringLiteral("%1: %2 % (%3–%4)")
                           .arg(p.ranks)
                           .arg(100 * p.efficiency, 0, 'f', 1)
                           .arg(100 * p.efficiencyLow, 0, 'f', 0)
                           .arg(100 * p.efficiencyHigh, 0, 'f', 0);
            qInfo("batch %g per GPU, predicted weak efficiency: %s; published at 128: %g %%", batch,
                  qPrintable(row.join(QStringLiteral(", "))), 100 * published);
        }
    }

    // Time-to-target: runs at global batches 2 and 4 whose validation losses follow
    // L(s, B) = 0.01 + (s / (1 + B/8))^−½ exactly; the plan fits that curve and predicts, at a
    // target of 0.08, the epochs and time a hand computation gives, beside what the 2-rank run
    // measured.
    void timeToTargetFromTheLearningCurve()
    {
        auto loss = [](double s, double batch) { return 0.01 + std::pow(s / (1 + batch / 8), -0.5); };
        PlanRunInput one = oneRankRun();
        one.globalBatch = 2;
        PlanRunInput two = oneRankRun();
        two.runId = QStringLiteral("two-ranks");
        two.ranks = 2;
        two.globalBatch = 4;
        two.commS = 0.03;
        two.exposedS = 0.03;
        two.epochS = 3.6;
        for (PlanRunInput* r : {&one, &two})
            for (int epoch = 1; epoch <= 6; ++epoch) {
                EpochRow e;
                e.epoch = epoch;
                e.trainS = r->epochS + (r == &two && epoch == 1 ? 1.0 : 0.0);  // its first epoch: 1 s of start-up
                e.valLoss = loss(epoch * 64.0, r->globalBatch);
                r->epochs << e;
            }
        PlanOptions o;
        o.nodes = {1, 4};
        o.ranksPerNode = 2;
        o.strategies = {QStringLiteral("ddp")};
        o.targetLoss = 0.08;
        // 4 nodes need the allreduce across nodes timed (else "not measured").
        QList<CommSample> across;
        for (double bytes : {1e6, 4e7}) across << CommSample{4, 2, bytes, ring(1e-4, 1e9, 4, bytes)};
        auto plan = makePlan(QStringLiteral("s"), {one, two}, across, {}, o);
        QVERIFY2(plan, plan ? "" : qPrintable(plan.error().text()));
        QVERIFY2(std::abs(plan->curve.exponent - 0.5) < 1e-3, qPrintable(QString::number(plan->curve.exponent)));
        QVERIFY2(std::abs(plan->curve.noiseBatch - 8) < 8e-3, qPrintable(QString::number(plan->curve.noiseBatch)));
        QVERIFY2(std::abs(plan->curve.lossFloor - 0.01) < 1e-5, qPrintable(QString::number(plan->curve.lossFloor)));
        QCOMPARE(plan->curve.samples, 12);
        QCOMPARE(plan->points.size(), 2);
        // 2 ranks, global batch 4: 0.07^−2 · (1 + 4/8) = 306.1 samples, 4.78 epochs of 64: the 5th
        // epoch's validation sees it. The 2-rank run's 5th epoch (0.0785) was its first below 0.08.
        const PlanPoint& p2 = plan->points[0];
        QCOMPARE(p2.globalBatch, 4.0);
        const double epochs2 = std::pow(0.07, -2) * 1.5 / 64;
        QVERIFY2(std::abs(p2.epochsToTarget - epochs2) < 1e-3 * epochs2, qPrintable(QString::number(p2.epochsToTarget)));
        // + the runs' mean first-epoch start-up: (0 + 1) / 2.
        QVERIFY(std::abs(p2.timeToTargetS - (5 * p2.epochS + 0.5)) < 1e-9);
        QVERIFY(std::abs(p2.nodeHoursToTarget - p2.timeToTargetS / 3600) < 1e-12);
        QVERIFY(p2.timeToTargetLowS <= p2.timeToTargetS && p2.timeToTargetHighS >= p2.timeToTargetS);
        QCOMPARE(p2.measuredTimeToTargetS, 5 * 3.6 + 1);
        QVERIFY(!p2.targetBeyondCurve);
        // 8 ranks, global batch 16: three times the samples of the smallest batch, 612 — beyond the
        // 384 any run saw.
        const PlanPoint& p8 = plan->points[1];
        QCOMPARE(p8.globalBatch, 16.0);
        QVERIFY2(std::abs(p8.epochsToTarget - std::pow(0.07, -2) * 3 / 64) < 1e-2, qPrintable(QString::number(p8.epochsToTarget)));
        QVERIFY(std::abs(p8.timeToTargetS - (10 * p8.epochS + 0.5)) < 1e-9);
        QVERIFY(p8.targetBeyondCurve);
        QVERIFY(std::isnan(p8.measuredTimeToTargetS));
        QVERIFY(plan->warnings.join(QLatin1Char('\n')).contains(QStringLiteral("the learning curve is extrapolated")));
        QVERIFY(plan->csv()
                    .section(QLatin1Char('\n'), 0, 0)
                    .endsWith(QStringLiteral(
                        "measured_time_to_target_s,target_beyond_curve,efficiency_clipped,not_measured,measure_with,range_notes,"
                        "range_sigma,extrapolation_weight,outside_model")));
        QVERIFY(plan->markdown().contains(QStringLiteral("## Time to a validation loss of 0.08")));
        QVERIFY(plan->markdown().contains(QStringLiteral("B_noise = 8")));

        // Below the curve's floor: never, and said.
        o.targetLoss = 0.005;
        auto never = makePlan(QStringLiteral("s"), {one, two}, across, {}, o);
        QVERIFY(never);
        QVERIFY(std::isinf(never->points[0].timeToTargetS));
        QVERIFY(never->warnings.join(QLatin1Char('\n')).contains(QStringLiteral("levels off at a validation loss of 0.01")));
        QVERIFY(never->markdown().contains(QStringLiteral("never")));
        // One global batch (the 2-rank run's losses left out): its effect unmeasured, taken as
        // none, and said to be optimistic where the batch grows.
        o.targetLoss = 0.08;
        PlanRunInput twoWithoutLosses = two;
        twoWithoutLosses.epochs.clear();
        auto oneBatch = makePlan(QStringLiteral("s"), {one, twoWithoutLosses}, across, {}, o);
        QVERIFY2(oneBatch, oneBatch ? "" : qPrintable(oneBatch.error().text()));
        QVERIFY(!oneBatch->curve.batchMeasured());
        QCOMPARE(oneBatch->points[0].epochsToTarget, oneBatch->points[1].epochsToTarget);
        QVERIFY(oneBatch->warnings.join(QLatin1Char('\n')).contains(QStringLiteral("optimistic where the global batch grows")));
        // No validation losses: an error that says so.
        o.ranksPerNode = 1;
        o.nodes = {1};
        PlanRunInput bare = oneRankRun();
        auto noLoss = makePlan(QStringLiteral("s"), {bare}, {}, {}, o);
        QVERIFY(!noLoss);
        QVERIFY2(noLoss.error().message.contains(QStringLiteral("no run has a validation loss")), qPrintable(noLoss.error().message));
    }

    // A launch at another batch than the runs': weak at local batch 4 (the run had 2), strong at a
    // global batch of 8; the run's own epoch is no measurement of those points.
    void predictsAtTheBatchAskedFor()
    {
        PlanOptions o;
        o.nodes = {1};
        o.ranksPerNode = 1;
        o.strategies = {QStringLiteral("ddp")};
        o.scaling = PlanOptions::Scaling::Weak;
        o.localBatch = 4;
        auto weak = makePlan(QStringLiteral("s"), {oneRankRun()}, {}, {}, o);
        QVERIFY2(weak, weak ? "" : qPrintable(weak.error().text()));
        QCOMPARE(weak->points[0].localBatch, 4.0);
        QVERIFY(std::abs(weak->points[0].epochS - 16 * (0.4 + 0.01)) < 1e-9);  // 64 samples in 16 steps of 0.1 s per sample
        QVERIFY(std::isnan(weak->points[0].measuredEpochS));
        QVERIFY(weak->markdown().contains(QStringLiteral("predicted at local batch 4 per rank, as asked")));
        o.scaling = PlanOptions::Scaling::Strong;
        o.localBatch = std::numeric_limits<double>::quiet_NaN();
        o.globalBatch = 8;
        auto strong = makePlan(QStringLiteral("s"), {oneRankRun()}, {}, {}, o);
        QVERIFY2(strong, strong ? "" : qPrintable(strong.error().text()));
        QCOMPARE(strong->points[0].localBatch, 8.0);
        QVERIFY(std::abs(strong->points[0].epochS - 8 * (0.8 + 0.01)) < 1e-9);
        QVERIFY(strong->markdown().contains(QStringLiteral("predicted at global batch 8, as asked")));
        // At the run's own batch: its epoch stands beside the prediction.
        o.globalBatch = 2;
        auto same = makePlan(QStringLiteral("s"), {oneRankRun()}, {}, {}, o);
        QVERIFY(same);
        QCOMPARE(same->points[0].measuredEpochS, 6.72);
    }
};

QTEST_GUILESS_MAIN(TestPlanner)
#include "tst_planner.moc"
