// The planner on synthetic inputs with known answers: a 1-rank run and a benchmark of the three
// collectives predict a 2-rank epoch of ddp and zero1 as a hand computation does; the band, the
// extrapolation flag, and the benchmark file's errors.
#include "analysis/planner.h"

#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <limits>
#include <tuple>

using namespace scaledesk;

namespace {
// An allreduce-equivalent α–β (n ranks, S bytes): 2(n−1)α + 2(n−1)/n · S/β.
double ring(double alpha, double beta, int n, double bytes) { return 2.0 * (n - 1) * alpha + 2.0 * (n - 1) / n * bytes / beta; }

QByteArray line(const char* kind, double bytes, double seconds)
{
    return QStringLiteral("{\"kind\":\"%1\",\"backend\":\"mpi\",\"ranks\":2,\"nodes\":1,\"bytes\":%2,\"seconds\":%3,\"min_s\":%3}\n")
        .arg(QLatin1String(kind))
        .arg(bytes, 0, 'g', 17)
        .arg(seconds, 0, 'g', 17)
        .toUtf8();
}
// Φ⁻¹(0.95): the 90 % range's z.
constexpr double kZ90 = 1.6448536269514722;

// A 1-rank ddp run: 0.2 s of compute (half of it backward) and 0.01 s of data wait per step at a
// local batch of 2, 64 samples per epoch, epochs 1 % apart, 40 MB of gradients.

PlanRunInput oneRankRun()
{
    PlanRunInput r;
    r.runId = QStringLiteral("one-rank");
    r.strategy = QStringLiteral("ddp");
    r.localBatch = 2;
    r.samplesPerEpoch = 64;
    r.computeS = 0.2;
    r.backwardS = 0.1;
    r.dataS = 0.01;
    r.epochS = 6.72;
    r.epochCv = 0.01;
    r.gradientBytes = 40e6;
    r.bucketBytes = 25.0 * (1 << 20);
    r.steps = 10;
    return r;
}
// A plan of one strategy at 2 ranks on one node.
PlanOptions twoRanksOnOneNode(const QString& strategy)
{
    PlanOptions o;
    o.nodes = {1};
    o.ranksPerNode = 2;
    o.strategies = {strategy};
    return o;
}
}  // namespace

class TestPlanner : public QObject {
    Q_OBJECT
private slots:

    // A message the plan reads off the timings between two sizes where they jump (Open MPI's
    // allreduce switching algorithm between 16 and 64 MiB): the interpolation cannot say where the
    // step lies, so the point's range spans both sizes' times and says why; the plan warns. Timed
    // at its own size (what calibrate --config does), the range is ±2σ again and nothing is said.
    void aMessageOnAStepInTheTimingsWidensItsRange()
    {
        const double mib = 1 << 20, message = 35.8 * mib, steps = 16;  // 64 samples in global batches of 4
        QList<CommSample> bench;
        for (const auto& [bytes, seconds] : {std::pair{1 * mib, 0.001}, {16 * mib, 0.0069}, {64 * mib, 0.226}}) {
            CommSample c;
            c.bytes = bytes;
            c.seconds = seconds;
            bench << c;
        }
        PlanRunInput run = oneRankRun();
        run.strategy = QStringLiteral("fused");
        run.gradientBytes = message;  // the layout is used where it carries every gradient
        run.messageBytes.insert(QStringLiteral("fused"), {message});
        auto wide = makePlan(QStringLiteral("s"), {run}, bench, {}, twoRanksOnOneNode(QStringLiteral("fused")));
        QVERIFY2(wide, wide ? "" : qPrintable(wide.error().text()));
        const PlanPoint& w = wide->points.first();
        QCOMPARE(w.rangeNotes.size(), 1);
        QVERIFY2(w.rangeNotes.first().contains(QStringLiteral("allreduce of 35.8 MiB lies where the timings jump from 0.0069 s at 16 MiB "
                                                              "to 0.226 s at 64 MiB")),
                 qPrintable(w.rangeNotes.first()));
        const double interpolated = 0.0069 + (message - 16 * mib) / (48 * mib) * (0.226 - 0.0069);
        QVERIFY(std::abs(w.exposedCommS - interpolated) < 1e-12);  // fused: all of it exposed
        // The 90 % range (×/÷ e^(zσ)), then each end out by the step.
        QVERIFY(w.rangeSigma > 0);
        QVERIFY(std::abs(w.epochHighS - (w.epochS * std::exp(kZ90 * w.rangeSigma) + steps * (0.226 - interpolated))) < 1e-9);
        QVERIFY(std::abs(w.epochLowS - std::max(0.0, w.epochS * std::exp(-kZ90 * w.rangeSigma) - steps * (interpolated - 0.0069))) < 1e-9);
        QVERIFY(w.efficiencyLow < w.efficiency && w.efficiencyHigh > w.efficiency);
        QVERIFY(wide->markdown().contains(QStringLiteral("range spans a step in the timings")));
        QVERIFY(wide->csv().contains(QStringLiteral("range spans a step in the timings")));
        QVERIFY(std::any_of(wide->warnings.begin(), wide->warnings.end(),
                            [](const QString& x) { return x.contains(QStringLiteral("scaledesk calibrate --config")); }));

        CommSample exact;
        exact.bytes = message;
        exact.seconds = 0.03;
        bench << exact;
        auto timed = makePlan(QStringLiteral("s"), {run}, bench, {}, twoRanksOnOneNode(QStringLiteral("fused")));
        QVERIFY2(timed, timed ? "" : qPrintable(timed.error().text()));
        const PlanPoint& t = timed->points.first();
        QVERIFY(t.rangeNotes.isEmpty());
        QVERIFY(std::abs(t.exposedCommS - 0.03) < 1e-12);
        QVERIFY(std::abs(t.epochHighS / t.epochS - t.epochS / t.epochLowS) < 1e-9);  // ×/÷ e^(zσ) alone
        QVERIFY(!timed->markdown().contains(QStringLiteral("timings jump")));

        // Timed 4 bytes short of the message (bench-comm rounds a size down to whole floats per
        // rank: fused's 66704148-byte buffer was timed at 66704144 at 2 ranks), with the jump just
        // above: the message reads its own timing, not the interpolation up to the next size.
        bench.last().bytes = message - 4;
        auto rounded = makePlan(QStringLiteral("s"), {run}, bench, {}, twoRanksOnOneNode(QStringLiteral("fused")));
        QVERIFY2(rounded, rounded ? "" : qPrintable(rounded.error().text()));
        const PlanPoint& r = rounded->points.first();
        QVERIFY2(r.rangeNotes.isEmpty(), qPrintable(r.rangeNotes.join(QLatin1Char('\n'))));
        QVERIFY(std::abs(r.exposedCommS - 0.03) < 1e-12);
        QVERIFY(!rounded->markdown().contains(QStringLiteral("timings jump")));
        // Its message read at its own timing, the α–β line's residual (the line misses these
        // timings by far) is not its error: its σ is the compute's and the model form's alone.
        QVERIFY(rounded->model.comm.relativeRms > 0.1);
        PlanRunInput unlaid = run;  // without the trainer's layout the messages are not known: the residual counts
        unlaid.messageBytes.clear();
        auto guessed = makePlan(QStringLiteral("s"), {unlaid}, bench, {}, twoRanksOnOneNode(QStringLiteral("fused")));
        QVERIFY2(guessed, guessed ? "" : qPrintable(guessed.error().text()));
        const PlanPoint& g = guessed->points.first();
        // σ² = (compute's)² + (communication's)² + (model form)²: the same compute and model form,
        // the communication's term (steps × residual × exposed / epoch) only where it is guessed.
        const double commTerm = 16 * guessed->model.comm.relativeRms * g.exposedCommS / g.epochS;
        QVERIFY(commTerm > 0.02);
        QVERIFY2(std::abs(g.rangeSigma * g.rangeSigma - r.rangeSigma * r.rangeSigma - commTerm * commTerm) < 1e-4,
                 qPrintable(QStringLiteral("%1 %2 %3").arg(g.rangeSigma).arg(r.rangeSigma).arg(commTerm)));
    }
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
        // run measured one size only: 0.29 at one doubling beyond it)².
        QCOMPARE(ddp.extrapolationWeight, 1.0);
        QVERIFY(!plan->modelSigmaMeasured);
        const double sigma = std::hypot(16 * 0.01 * 0.21 / ddp.epochS, 0.29);
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
            QVERIFY(std::abs(plan->modelSigma - plan->heldOut[0].logError()) < 1e-12);
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

    // Leave one size out: runs at 1, 2 and 4 ranks (ddp), the collectives timed at 2 and 4. Each
    // size beyond the base is left out and predicted from the rest; the model-form σ is the root
    // mean square of their log errors, and it widens the ranges of points no run measured, by the
    // doublings beyond the runs. What a held-out run measured never reaches its own prediction.
    void heldOutSizesMeasureTheModelForm()
    {
        QList<CommSample> bench;
        for (int ranks : {2, 4})
            for (double bytes : {1e6, 4e7}) {
                CommSample c;
                c.ranks = ranks;
                c.bytes = bytes;
                c.seconds = ring(1e-4, 2e9, ranks, bytes);
                bench << c;
            }
        auto atRanks = [](int ranks, double computeS, double epochS) {
            PlanRunInput r = oneRankRun();
            r.runId = QStringLiteral("r%1").arg(ranks);
            r.ranks = ranks;
            r.computeS = computeS;
            r.backwardS = computeS / 2;
            r.commS = r.exposedS = ranks > 1 ? 0.02 : 0.0;
            r.epochS = epochS;
            return r;
        };
        // Compute slows with the ranks sharing a machine (0.2, 0.24, 0.3 s): the model from the rest
        // cannot know it, so the held-out predictions miss, by how much the test reads back.
        const std::vector<PlanRunInput> runs{atRanks(1, 0.2, 6.72), atRanks(2, 0.24, 5.0), atRanks(4, 0.3, 3.5)};
        PlanOptions o;
        o.nodes = {1};
        o.ranksPerNode = 8;
        o.strategies = {QStringLiteral("ddp")};
        auto plan = makePlan(QStringLiteral("s"), runs, bench, {}, o);
        QVERIFY2(plan, plan ? "" : qPrintable(plan.error().text()));
        QCOMPARE(plan->heldOut.size(), 2);
        double squares = 0;
        for (const HeldOutPoint& h : plan->heldOut) {
            QCOMPARE(h.strategy, QStringLiteral("ddp"));
            QCOMPARE(h.nodes, 1);
            // The prediction is the plan of the other sizes' runs alone at this size.
            std::vector<PlanRunInput> rest;
            for (const PlanRunInput& r : runs)
                if (r.ranks != h.ranks) rest.push_back(r);
            PlanOptions at = o;
            at.ranksPerNode = h.ranks;
            at.localBatch = 2;
            at.scaling = PlanOptions::Scaling::Weak;
            at.crossValidate = false;
            auto alone = makePlan(QStringLiteral("s"), rest, bench, {}, at);
            QVERIFY(alone);
            QVERIFY2(std::abs(h.predictedS - alone->points.first().epochS) < 1e-12, qPrintable(QString::number(h.predictedS)));
            QCOMPARE(h.measuredS, h.ranks == 2 ? 5.0 : 3.5);
            qInfo("held out %d ranks: predicted %g s, measured %g s", h.ranks, h.predictedS, h.measuredS);
            QVERIFY(std::abs(h.logError()) > 0.05);  // the slower runs were missed
            squares += h.logError() * h.logError();
        }
        QVERIFY(plan->modelSigmaMeasured);
        QVERIFY(std::abs(plan->modelSigma - std::sqrt(squares / 2)) < 1e-12);
        // The 8-rank point: one doubling beyond the 4-rank run, σ with the model-form term.
        const PlanPoint& p = plan->points.first();
        QCOMPARE(p.ranks, 8);
        QCOMPARE(p.extrapolationWeight, 1.0);
        QVERIFY(p.rangeSigma >= plan->modelSigma);
        QVERIFY(std::abs(p.epochHighS / p.epochS - std::exp(kZ90 * p.rangeSigma)) < 1e-9);
        const QString md = plan->markdown();
        QVERIFY2(md.contains(QStringLiteral("## Held out: each size predicted without its runs")), qPrintable(md));
        QVERIFY(md.contains(QStringLiteral("model form: σ = ")));
        QVERIFY(md.contains(QStringLiteral("90 % range")));

        // A held-out run's own measurements never reach its prediction; a point a run measured
        // carries no model-form term.
        std::vector<PlanRunInput> changed = runs;
        changed[2].computeS = 0.5;
        changed[2].epochS = 9.0;
        o.nodes = {1};
        o.ranksPerNode = 2;
        auto again = makePlan(QStringLiteral("s"), changed, bench, {}, o);
        QVERIFY(again);
        QCOMPARE(again->heldOut.size(), 2);
        QCOMPARE(again->heldOut[1].ranks, 4);
        QCOMPARE(again->heldOut[1].predictedS, plan->heldOut[1].predictedS);
        QCOMPARE(again->heldOut[1].measuredS, 9.0);
        QCOMPARE(again->points.first().ranks, 2);
        QCOMPARE(again->points.first().extrapolationWeight, 0.0);
    }

    // Repeated runs at a layout are resampled: the bootstrap's spread of the prediction is the
    // parameters' σ, the same from the same inputs; measured once, nothing is resampled and it says so.
    void repeatedRunsBootstrapTheParameters()
    {
        QList<CommSample> bench;
        for (double bytes : {1e6, 4e7}) {
            CommSample c;
            c.bytes = bytes;
            c.seconds = ring(1e-4, 2e9, 2, bytes);
            bench << c;
        }
        PlanRunInput a = oneRankRun(), b = oneRankRun();
        a.epochCv = b.epochCv = 0;
        b.runId = QStringLiteral("one-rank-r2");
        b.computeS = 0.22;
        const PlanOptions o = twoRanksOnOneNode(QStringLiteral("ddp"));
        auto once = makePlan(QStringLiteral("s"), {a}, bench, {}, o);
        QVERIFY(once);
        QCOMPARE(once->bootstrapReplicas, 0);
        QVERIFY(once->markdown().contains(QStringLiteral("nothing could be resampled")));
        auto twice = makePlan(QStringLiteral("s"), {a, b}, bench, {}, o);
        QVERIFY2(twice, twice ? "" : qPrintable(twice.error().text()));
        QCOMPARE(twice->bootstrapReplicas, 200);
        // Compute is the runs' mean: drawn twice from {0.2, 0.22}, its spread is 0.01/√2; the
        // epoch's relative σ is that of the step it is part of.
        const PlanPoint& p = twice->points.first();
        const double expected = 0.01 / std::sqrt(2.0) / p.stepS;
        const double model = twice->modelSigma * p.extrapolationWeight;
        const double parameters = std::sqrt(p.rangeSigma * p.rangeSigma - model * model);
        QVERIFY2(parameters > 0.8 * expected && parameters < 1.2 * expected,
                 qPrintable(QStringLiteral("%1 against %2").arg(parameters).arg(expected)));
        auto same = makePlan(QStringLiteral("s"), {a, b}, bench, {}, o);
        QVERIFY(same);
        QCOMPARE(same->points.first().rangeSigma, p.rangeSigma);
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

    // Collectives timed at 2 ranks only cannot tell a ring from a tree: a 4-rank point's range spans
    // both fits' epochs and says so; the 2-rank point reads the measured curve (nothing to span);
    // timed at 2 and 4 ranks (ring timings), the ring is chosen and nothing is spanned.
    void anAlgorithmTheTimingsCannotTellIsSpanned()
    {
        const PlanRunInput base = oneRankRun();
        QList<CommSample> atTwo;
        for (double bytes : {1e5, 1e6, 4e7}) atTwo << CommSample{2, 1, bytes, ring(2e-3, 2e9, 2, bytes)};
        PlanOptions o = twoRanksOnOneNode(QStringLiteral("fused"));
        o.ranksPerNode = 4;
        auto four = makePlan(QStringLiteral("s"), {base}, atTwo, {}, o);
        QVERIFY2(four, four ? "" : qPrintable(four.error().text()));
        const PlanPoint& p = four->points.first();
        QVERIFY(p.algorithmSpanned);
        QCOMPARE(p.rangeNotes.size(), 1);
        QVERIFY2(p.rangeNotes.first().startsWith(QStringLiteral("range spans the allreduce algorithms the timings cannot tell apart "
                                                                "(timed at 2 rank(s) only): ring ")),
                 qPrintable(p.rangeNotes.first()));
        // By hand: the tree's epoch, its own model's, lies inside the range; the ring's is the point.
        PerfModel tree = four->model;
        tree.comm = four->model.comm.withAlgorithm(AllreduceAlgorithm::Tree, 1);
        const double treeEpoch = tree.epoch(QStringLiteral("fused"), 4, 1, true, 1, base.localBatch, base.samplesPerEpoch).epochS;
        QVERIFY2(treeEpoch < p.epochS,
                 qPrintable(QStringLiteral("%1 %2").arg(treeEpoch).arg(p.epochS)));  // 4α of latency a message against the ring's 6α
        QVERIFY(p.epochLowS <= treeEpoch && treeEpoch <= p.epochHighS);
        QVERIFY(four->inputs.join(QLatin1Char('\n'))
                    .contains(QStringLiteral("allreduce algorithm: within a node: ring assumed (timed at 2 rank(s) only")));

        o.ranksPerNode = 2;
        auto two = makePlan(QStringLiteral("s"), {base}, atTwo, {}, o);
        QVERIFY(two);
        QVERIFY(!two->points.first().algorithmSpanned && two->points.first().rangeNotes.isEmpty());

        QList<CommSample> both = atTwo;
        for (double bytes : {1e5, 1e6, 4e7}) both << CommSample{4, 1, bytes, ring(2e-3, 2e9, 4, bytes)};
        o.ranksPerNode = 8;
        auto known = makePlan(QStringLiteral("s"), {base}, both, {}, o);
        QVERIFY(known);
        QCOMPARE(known->model.comm.algorithm(), AllreduceAlgorithm::Ring);
        QVERIFY(!known->points.first().algorithmSpanned);
        QVERIFY(known->inputs.join(QLatin1Char('\n')).contains(QStringLiteral("within a node: ring, as no other fits clearly better")));
    }

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
                                            "all; scaledesk calibrate --config CONFIG --ranks-per-node 2 measures it)")});
        QVERIFY2(never->markdown().contains(QStringLiteral("**outside the model**: how ranks that share a node")),
                 qPrintable(never->markdown()));
        QVERIFY(never->csv().section(QLatin1Char('\n'), 1, 1).endsWith(QStringLiteral("measures it)")));  // the last column

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

QTEST_GUILESS_MAIN(TestPlanner)
#include "tst_planner.moc"
