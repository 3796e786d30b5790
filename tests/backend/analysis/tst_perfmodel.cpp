// The planner's performance model (analysis/perfmodel.h) on synthetic measurements with known
// answers: α, β, compute and overlap recovered through ±1 % noise within 2 %, and the weak and
// strong epoch predictions against a hand computation.
#include "analysis/perfmodel.h"

#include <QRandomGenerator>
#include <QTest>

#include <cmath>
#include <tuple>

using namespace scaledesk;

namespace {
bool within(double got, double want, double rel) { return std::abs(got - want) <= rel * std::abs(want); }
bool near(double a, double b) { return std::abs(a - b) <= 1e-9 * std::max(1.0, std::abs(b)); }
// 0.1 s of compute per sample (half of it backward), no data wait, 1 MB of gradients over an
// allreduce of α = 0 and β = 1 GB/s.
PerfModel tenthOfASecondPerSample()
{
    PerfModel m;
    m.compute.fixedS = 0;
    m.compute.perSampleS = 0.1;
    m.compute.backwardShare = 0.5;
    m.compute.dataS = 0;
    m.comm.alphaS = 0;
    m.comm.betaBytesPerS = 1e9;
    m.gradientBytes = 1e6;
    return m;
}
// The benchmark's compute kernel at 2 ranks on one node: 10 ms alone, 12 ms on both at once.
CommSample kernelOnTwoRanks()
{
    CommSample kernel{2, 1, 0, 0.012};
    kernel.op = CommSample::Op::Compute;
    kernel.aloneS = 0.010;
    return kernel;
}
}  // namespace

class TestPerfModel : public QObject {
    Q_OBJECT
private slots:
    void recoversAlphaAndBetaWithinAndAcrossNodes()
    {
        const double alpha = 50e-6, beta = 10e9, alphaInter = 30e-6, betaInter = 2e9;
        QRandomGenerator noise(11);
        auto jitter = [&] { return 1.0 + (noise.generateDouble() * 2 - 1) * 0.01; };
        QList<CommSample> samples;
        for (int n : {2, 4, 8})
            for (double bytes : {1e3, 1e5, 1e7, 1e8})
                samples << CommSample{n, 1, bytes, (2.0 * (n - 1) * alpha + 2.0 * (n - 1) / n * bytes / beta) * jitter()};
        for (int n : {4, 8, 16})
            for (double bytes : {1e3, 1e6, 1e8})
                samples << CommSample{n, 2, bytes, (2.0 * (n - 1) * alphaInter + 2.0 * (n - 1) / n * bytes / betaInter) * jitter()};
        auto m = fitAllreduce(samples);
        QVERIFY2(m, m ? "" : qPrintable(m.error().text()));
        QVERIFY2(within(m->alphaS, alpha, 0.02), qPrintable(QString::number(m->alphaS)));
        QVERIFY2(within(m->betaBytesPerS, beta, 0.02), qPrintable(QString::number(m->betaBytesPerS)));
        QVERIFY2(within(m->alphaInterS, alphaInter, 0.02), qPrintable(QString::number(m->alphaInterS)));
        QVERIFY2(within(m->betaInterBytesPerS, betaInter, 0.02), qPrintable(QString::number(m->betaInterBytesPerS)));
        QVERIFY(m->relativeRms < 0.01);
        QCOMPARE(m->samples, int(samples.size()));
        // A run across nodes is as slow as the across-node link; within a node, the other.
        QVERIFY(m->time(8, 2, 1e8) > 3 * m->time(8, 1, 1e8));
        QCOMPARE(m->algorithm(), AllreduceAlgorithm::Ring);  // ring timings, three rank counts: the ring
        QCOMPARE(m->algorithmInter(), AllreduceAlgorithm::Ring);
        QVERIFY(m->algorithmKnown(8, 1));
        // Across nodes each ranks-per-node (2, 4, 8 on two nodes) has its own fit, of one rank count each.
        QCOMPARE(m->acrossPerNode.size(), 3);
        QVERIFY(!m->algorithmKnown(8, 2));
    }

    // The algorithms' steps by hand, and timings made by each at 2, 4 and 8 ranks (±1 % noise):
    // the fit chooses the algorithm that made them and recovers its α and β within 2 %; the others
    // fit worse, and the model's line follows the chosen one.
    void theFitChoosesTheAlgorithmThatMadeTheTimings()
    {
        using A = AllreduceAlgorithm;
        QCOMPARE(allreduceSteps(A::Ring, 8), std::make_pair(14.0, 1.75));
        QCOMPARE(allreduceSteps(A::Tree, 8), std::make_pair(6.0, 1.75));
        QCOMPARE(allreduceSteps(A::Tree, 6), std::make_pair(6.0, 2.0 * 5 / 6));  // ⌈log₂6⌉ = 3
        QCOMPARE(allreduceSteps(A::RecursiveDoubling, 8), std::make_pair(3.0, 3.0));
        QCOMPARE(allreduceSteps(A::Ring, 1), std::make_pair(0.0, 0.0));
        const double alpha = 40e-6, beta = 5e9;
        for (A made : {A::Ring, A::Tree, A::RecursiveDoubling}) {
            QRandomGenerator noise(7);
            QList<CommSample> samples;
            for (int n : {2, 4, 8})
                for (double bytes : {1e3, 1e5, 1e6, 1e7, 1e8}) {
                    const auto [steps, factor] = allreduceSteps(made, n);
                    samples << CommSample{n, 1, bytes,
                                          (steps * alpha + factor * bytes / beta) * (1 + (noise.generateDouble() * 2 - 1) * 0.01)};
                }
            auto m = fitAllreduce(samples);
            QVERIFY2(m, m ? "" : qPrintable(m.error().text()));
            QCOMPARE(m->algorithm(), made);
            QCOMPARE(m->within.size(), 3);
            QVERIFY2(within(m->alphaS, alpha, 0.02), qPrintable(QString::number(m->alphaS)));
            QVERIFY2(within(m->betaBytesPerS, beta, 0.02), qPrintable(QString::number(m->betaBytesPerS)));
            for (int i = 1; i < 3; ++i) QVERIFY(m->within[i].relativeRms > m->within[0].relativeRms + 0.01);
            QCOMPARE(m->withinRanks, (QList<int>{2, 4, 8}));
            QVERIFY(m->algorithmKnown(16, 1));
            const auto [steps, factor] = allreduceSteps(made, 16);
            QVERIFY(within(m->lineTime(16, 1, 1e4), steps * alpha + factor * 1e4 / beta, 0.03));
            QCOMPARE(m->algorithmSpan(16, 1, 1e4), std::make_pair(m->time(16, 1, 1e4), m->time(16, 1, 1e4)));  // known: no span
        }
    }

    // Ranks that share a node share its links: across two nodes, timings at 1, 2 and 4 ranks per
    // node with 4, 2 and 1 GB/s get a fit each; a point reads its own ranks per node, or the
    // nearest (3 per node: the larger of 2 and 4), and the plan's pooled fit is not used.
    void acrossNodesEachRanksPerNodeHasItsFit()
    {
        const double alpha = 30e-6;
        QList<CommSample> samples;
        for (const auto& [rpn, beta] : {std::pair{1, 4e9}, {2, 2e9}, {4, 1e9}})
            for (double bytes : {1e3, 1e5, 1e7, 1e8}) {
                const int n = 2 * rpn;
                samples << CommSample{n, 2, bytes, 2.0 * (n - 1) * alpha + 2.0 * (n - 1) / n * bytes / beta};
            }
        auto m = fitAllreduce(samples);
        QVERIFY2(m, m ? "" : qPrintable(m.error().text()));
        QCOMPARE(m->acrossPerNode.size(), 3);
        QCOMPARE(m->acrossPerNode[1].ranksPerNode, 2);
        QCOMPARE(m->acrossPerNode[1].ranks, QList<int>{4});
        const AlgorithmFit& two = m->acrossPerNode[1].fits.first();
        QCOMPARE(two.algorithm, AllreduceAlgorithm::Ring);  // one rank count: the ring
        QVERIFY2(within(two.betaBytesPerS, 2e9, 1e-6) && within(two.alphaS, alpha, 1e-6),
                 qPrintable(QStringLiteral("%1 %2").arg(two.alphaS).arg(two.betaBytesPerS)));
        QCOMPARE(m->acrossFit(2), &m->acrossPerNode[1]);
        QCOMPARE(m->acrossFit(3), &m->acrossPerNode[2]);  // a tie: the larger
        QCOMPARE(m->acrossFit(16), &m->acrossPerNode[2]);
        // 8 ranks on 4 nodes (2 per node, never timed on 4 nodes): the line of 2 per node.
        QVERIFY(within(m->time(8, 4, 1e8), 2.0 * 7 * alpha + 2.0 * 7 / 8 * 1e8 / 2e9, 1e-6));
        QVERIFY(within(m->time(16, 4, 1e8), 2.0 * 15 * alpha + 2.0 * 15 / 16 * 1e8 / 1e9, 1e-6));
        QVERIFY(!m->algorithmKnown(8, 4));
        // Timed at 8 ranks only, a tree puts the ring's 14α of latency into its 6 steps: at 16 ranks,
        // 8 steps of 14α/6 against the ring's 30α, at 4 per node's β.
        const auto [lo, hi] = m->algorithmSpan(16, 4, 1e4);
        QVERIFY2(within(lo, 8 * (14.0 / 6) * alpha + 2.0 * 15 / 16 * 1e4 / 1e9, 1e-6) &&
                     within(hi, 30 * alpha + 2.0 * 15 / 16 * 1e4 / 1e9, 1e-6),
                 qPrintable(QStringLiteral("%1–%2").arg(lo).arg(hi)));
    }

    // Timings at one rank count cannot tell a ring from a tree (at 2 ranks both are 2α + S/β):
    // the ring is assumed, and at other rank counts the span covers what a tree fitted to the same
    // timings gives: at 16 ranks, 30α against the tree's 8α of latency.
    void oneRankCountLeavesTheAlgorithmOpen()
    {
        const double alpha = 1e-4, beta = 1e9;
        QList<CommSample> samples;
        for (double bytes : {1e3, 1e6, 1e8}) samples << CommSample{2, 1, bytes, 2 * alpha + bytes / beta};
        auto m = fitAllreduce(samples);
        QVERIFY2(m, m ? "" : qPrintable(m.error().text()));
        QCOMPARE(m->algorithm(), AllreduceAlgorithm::Ring);
        QVERIFY(!m->algorithmKnown(16, 1));
        QCOMPARE(m->withinRanks, QList<int>{2});
        const double ring16 = 30 * alpha + 2.0 * 15 / 16 * 1e4 / beta, tree16 = 8 * alpha + 2.0 * 15 / 16 * 1e4 / beta;
        QVERIFY2(within(m->time(16, 1, 1e4), ring16, 1e-6), qPrintable(QString::number(m->time(16, 1, 1e4), 'g', 12)));
        const auto [lo, hi] = m->algorithmSpan(16, 1, 1e4);
        QVERIFY2(within(lo, tree16, 1e-6) && within(hi, ring16, 1e-6), qPrintable(QStringLiteral("%1–%2").arg(lo).arg(hi)));
        QVERIFY(within(m->withAlgorithm(AllreduceAlgorithm::Tree, 1).time(16, 1, 1e4), tree16, 1e-6));
        // Where the measured curve is read (2 ranks, between its sizes), there is nothing to span.
        QCOMPARE(m->algorithmSpan(2, 1, 5e5).first, m->algorithmSpan(2, 1, 5e5).second);
    }

    void recoversComputeAndOverlap()
    {
        QRandomGenerator noise(5);
        auto jitter = [&] { return 1.0 + (noise.generateDouble() * 2 - 1) * 0.01; };
        QList<ComputeSample> steps;
        for (int rep = 0; rep < 5; ++rep)
            for (double b : {1.0, 2.0, 4.0, 8.0}) {
                const double c = (0.02 + 0.015 * b) * jitter();
                steps << ComputeSample{b, c, 0.6 * c, 0.004};
            }
        auto c = fitCompute(steps);
        QVERIFY(c);
        QVERIFY2(within(c->fixedS, 0.02, 0.02), qPrintable(QString::number(c->fixedS)));
        QVERIFY2(within(c->perSampleS, 0.015, 0.02), qPrintable(QString::number(c->perSampleS)));
        QVERIFY(near(c->backwardShare, 0.6));
        QVERIFY(near(c->dataS, 0.004));
        // One local batch: a line through the origin, and the model says it fitted one batch.
        auto one = fitCompute({ComputeSample{4, 0.08, 0.05, 0}, ComputeSample{4, 0.082, 0.05, 0}});
        QVERIFY(one && one->fixedS == 0.0 && within(one->perSampleS, 0.02025, 0.001));

        QList<QPair<double, double>> comm;
        for (int i = 0; i < 20; ++i) {
            const double total = 0.1 + 0.01 * i;
            comm << qMakePair(total, 0.3 * total * jitter());
        }
        QVERIFY2(within(measuredOverlap(comm), 0.7, 0.02), qPrintable(QString::number(measuredOverlap(comm))));
        QVERIFY(std::isnan(measuredOverlap({})));
    }

    // By hand: compute 0.1 + 0.05·b s, data 0.01 s, α 100 µs, β 1 GB/s, 100 MB of gradients.
    void weakAndStrongEpochsByHand()
    {
        PerfModel m;
        m.compute.fixedS = 0.1;
        m.compute.perSampleS = 0.05;
        m.compute.dataS = 0.01;
        m.compute.backwardShare = 0.5;
        m.comm.alphaS = 1e-4;
        m.comm.betaBytesPerS = 1e9;
        m.gradientBytes = 100e6;
        // fused at 4 ranks: two 64 MB fusion buffers: 2 × 2·3·1e-4 + 2·3/4 · 1e8 / 1e9 = 0.1512 s, all exposed.
        const StepPrediction s = m.step(QStringLiteral("fused"), 4, 1, 4);
        QVERIFY(near(s.commS, 0.1512));
        QVERIFY(near(s.exposedS, 0.1512));
        QVERIFY(near(s.stepS, 0.1 + 0.2 + 0.01 + 0.1512));
        // ddp: four 25 MB buckets (0.1524 s) during a 0.15 s backward: the last bucket is exposed,
        // 2·3·1e-4 + 2·3/4 · 25e6 / 1e9 = 0.0381 s.
        const StepPrediction d = m.step(QStringLiteral("ddp"), 4, 1, 4);
        QVERIFY(near(d.commS, 0.1524));
        QVERIFY(near(d.exposedS, 0.0381));
        // One rank: no communication.
        QVERIFY(near(m.step(QStringLiteral("ddp"), 1, 1, 4).stepS, 0.31));

        // Weak, from 1 rank at local batch 4 and 1024 samples: 4 ranks train the same 1024 samples
        // in batches of 16, 64 steps of 0.4612 s = 29.5168 s; the 1-rank epoch is 256 × 0.31 = 79.36 s.
        const EpochPrediction weak = m.epoch(QStringLiteral("fused"), 4, 1, true, 1, 4, 1024);
        QVERIFY(near(weak.localBatch, 4) && near(weak.globalBatch, 16) && near(weak.steps, 64));
        QVERIFY(near(weak.epochS, 29.5168));
        QVERIFY(near(weak.throughput, 1024 / 29.5168));
        QVERIFY(near(weak.speedup, 79.36 / 29.5168));
        QVERIFY(near(weak.efficiency, 79.36 / 29.5168 / 4));  // X(4) / (4 X(1)): the per-step time ratio 0.31 / 0.4612
        QVERIFY(near(weak.efficiency, 0.31 / 0.4612));
        QVERIFY(near(weak.nodeHours, 29.5168 / 3600));
        // Strong: the global batch 4 and 1024 samples stay; local batch 1; 256 steps of
        // 0.1 + 0.05 + 0.01 + 0.1512 = 0.3112 s = 79.6672 s: a speedup of 0.996, efficiency 0.249.
        const EpochPrediction strong = m.epoch(QStringLiteral("fused"), 4, 1, false, 1, 4, 1024, 10);
        QVERIFY(near(strong.localBatch, 1) && near(strong.globalBatch, 4) && near(strong.steps, 256));
        QVERIFY(near(strong.epochS, 79.6672));
        QVERIFY(near(strong.speedup, 79.36 / 79.6672));
        QVERIFY(near(strong.efficiency, 79.36 / 79.6672 / 4));
        QVERIFY(near(strong.nodeHours, 10 * 79.6672 / 3600));
        // The trainer's own layout, where known, replaces equal buckets: 1 + 3 × 25 + 24 MB is five
        // allreduces, 5 · 2·3·1e-4 + 2·3/4 · 1e8 / 1e9 = 0.153 s; the last (24 MB) is exposed:
        // 2·3·1e-4 + 2·3/4 · 24e6 / 1e9 = 0.0366 s (comm − backward is only 0.003 s).
        m.strategies[QStringLiteral("ddp")].messageBytes = {1e6, 25e6, 25e6, 25e6, 24e6};
        const StepPrediction laid = m.step(QStringLiteral("ddp"), 4, 1, 4);
        QVERIFY(near(laid.commS, 0.153));
        QVERIFY(near(laid.exposedS, 0.0366));
        // On CPU ranks backward and the buckets share the cores: all 0.153 s exposed.
        m.cpuRanks = true;
        QVERIFY(near(m.step(QStringLiteral("ddp"), 4, 1, 4).exposedS, 0.153));
        // A measured overlap replaces the rule: 70 % hidden leaves 30 % of 0.153 s.
        m.strategies[QStringLiteral("ddp")].measuredOverlap = 0.7;
        QVERIFY(near(m.step(QStringLiteral("ddp"), 4, 1, 4).exposedS, 0.3 * 0.153));
    }

    // A curve with a step (Open MPI on this VM: 0.021 s at 48 MiB, 0.25 s at 64 MiB) is read where
    // it was measured; the α–β line stands in elsewhere.
    void theMeasuredCurveIsReadBetweenItsSizes()
    {
        QList<CommSample> samples{{2, 1, 1e6, 0.001}, {2, 1, 16e6, 0.008}, {2, 1, 48e6, 0.021}, {2, 1, 64e6, 0.25},
                                  {2, 1, 64e6, 0.27}, {4, 1, 1e6, 0.002},  {4, 1, 64e6, 0.05}};
        auto m = fitAllreduce(samples);
        QVERIFY2(m, m ? "" : qPrintable(m.error().text()));
        QCOMPARE(m->measured.size(), 6);  // the two 64 MB timings at 2 ranks are one mean point
        // At a measured size: the measurement (the mean of repeats).
        QVERIFY(near(m->time(2, 1, 16e6), 0.008));
        QVERIFY(near(m->time(2, 1, 64e6), 0.26));
        // Between sizes: linear between the neighbours. 56 MB is halfway from 48 to 64 MB.
        QVERIFY(near(m->time(2, 1, 56e6), (0.021 + 0.26) / 2));
        QVERIFY(m->fromMeasuredCurve(2, 1, 56e6));
        // Within 1 % of an end: that end (a benchmark rounds sizes; the trainer pads to the ranks).
        QVERIFY(near(m->time(2, 1, 64e6 + 4), 0.26) && m->fromMeasuredCurve(2, 1, 64e6 + 4));
        QVERIFY(near(m->time(2, 1, 0.995e6), 0.001) && m->fromMeasuredCurve(2, 1, 0.995e6));
        // Beyond the largest size, at ranks not measured, or on another node count: the line.
        QVERIFY(!m->fromMeasuredCurve(2, 1, 100e6) && near(m->time(2, 1, 100e6), m->lineTime(2, 1, 100e6)));
        QVERIFY(!m->fromMeasuredCurve(8, 1, 16e6) && near(m->time(8, 1, 16e6), m->lineTime(8, 1, 16e6)));
        QVERIFY(!m->fromMeasuredCurve(2, 2, 16e6) && near(m->time(2, 2, 16e6), m->lineTime(2, 2, 16e6)));
        // The line cannot follow the step: at 56 MB it is far from the curve.
        QVERIFY(std::abs(m->lineTime(2, 1, 56e6) - m->time(2, 1, 56e6)) > 0.02);
        // Buckets are equal messages read off the curve: 64 MB in 16 MB buckets is four 16 MB
        // allreduces (0.032 s), not one 64 MB one (0.26 s).
        QVERIFY(near(m->bucketedTime(2, 1, 64e6, 16e6), 4 * 0.008));
        // ZeRO-1 with its collectives measured reads their curves too (half an allreduce each:
        // fitted at twice their time, halved back in the step).
        QList<CommSample> zero;
        for (auto [op, t48, t64] :
             {std::tuple{CommSample::Op::ReduceScatter, 0.012, 0.34}, std::tuple{CommSample::Op::Allgather, 0.004, 0.007}})
            zero << CommSample{2, 1, 1e6, 0.0005, op} << CommSample{2, 1, 48e6, t48, op} << CommSample{2, 1, 80e6, t64, op};
        PerfModel p;
        p.compute.fixedS = 0;
        p.compute.perSampleS = 0.1;
        p.comm = *m;
        p.reduceScatter = *fitCollective(zero, CommSample::Op::ReduceScatter);
        p.allgather = *fitCollective(zero, CommSample::Op::Allgather);
        p.gradientBytes = 64e6;
        // At 64 MB, halfway from 48 to 80 MB: (0.012 + 0.34)/2 + (0.004 + 0.007)/2.
        QVERIFY(near(p.step(QStringLiteral("zero1"), 2, 1, 1).commS, (0.012 + 0.34) / 2 + (0.004 + 0.007) / 2));
        // In the trainer's buckets (--zero_bucket_mb), each bucket's pair off the curves: two of
        // 24 MB (halfway from 1 to 48 MB: 0.0005 + 23/47 of the rise) and one of 16 MB, not one of 64 MB.
        StrategyComm buckets;
        buckets.messageBytes = {24e6, 24e6, 16e6};
        p.strategies.insert(QStringLiteral("zero1"), buckets);
        auto at = [](double t48, double bytes) { return 0.0005 + (t48 - 0.0005) * (bytes - 1e6) / 47e6; };
        const double want = 2 * (at(0.012, 24e6) + at(0.004, 24e6)) + at(0.012, 16e6) + at(0.004, 16e6);
        QVERIFY2(near(p.step(QStringLiteral("zero1"), 2, 1, 1).commS, want),
                 qPrintable(QStringLiteral("%1 vs %2").arg(p.step(QStringLiteral("zero1"), 2, 1, 1).commS).arg(want)));
    }

    // Compute contention: the benchmark's kernel 10 ms alone, 12 ms on two ranks of one node: a
    // CPU rank's compute at 2 ranks per node is 1.2× its own, on any number of such nodes; one rank
    // per node was not measured (1×); GPUs and one rank compute on their own.
    void computeContentionByLayout()
    {
        PerfModel m = tenthOfASecondPerSample();
        m.cpuRanks = true;
        const CommSample kernel = kernelOnTwoRanks();
        m.contentionSamples << kernel;
        QVERIFY(near(m.contention(2, 1), 1.2));
        QVERIFY(near(m.contention(8, 4), 1.2));  // 2 per node, as measured
        QCOMPARE(m.contention(2, 2), 1.0);       // 1 per node: not measured
        QCOMPARE(m.contention(1, 1), 1.0);
        QVERIFY(near(m.step(QStringLiteral("fused"), 2, 1, 2).computeS, 0.24));
        QVERIFY(near(m.step(QStringLiteral("fused"), 1, 1, 2).computeS, 0.2));
        // A measurement at the very layout wins over one with as many ranks per node; elsewhere the
        // largest layout of as many ranks per node stands in.
        CommSample across = kernel;
        across.ranks = 4;
        across.nodes = 2;
        across.seconds = 0.015;
        m.contentionSamples << across;
        QVERIFY(near(m.contention(4, 2), 1.5));
        QVERIFY(near(m.contention(2, 1), 1.2));
        QVERIFY(near(m.contention(16, 8), 1.5));  // 2 per node: the largest such layout measured
        m.cpuRanks = false;
        QCOMPARE(m.contention(2, 1), 1.0);
        QVERIFY(near(m.step(QStringLiteral("fused"), 2, 1, 2).computeS, 0.2));
        // Not a collective: the allreduce fit leaves it out.
        QList<CommSample> mixed{CommSample{2, 1, 1e6, 2e-3}, CommSample{2, 1, 4e6, 5e-3}, kernel};
        auto fit = fitAllreduce(mixed);
        QVERIFY2(fit, fit ? "" : qPrintable(fit.error().text()));
        QCOMPARE(fit->samples, 2);
    }

    // The kernel timed between collectives (bench-comm --after_compute) is how a step computes:
    // where the same kernel has such timings at the layout, their mean per kernel over the kernel
    // alone is the contention. 10 ms alone, 12 ms on both ranks at once, and 26 ms for two kernels
    // (13 ms each) and 14 ms for one between the collectives: ×1.35 at 2 ranks on 1 node.
    void computeContentionBetweenCollectives()
    {
        PerfModel m = tenthOfASecondPerSample();
        m.cpuRanks = true;
        CommSample kernel = kernelOnTwoRanks();
        kernel.kernel = QStringLiteral("config cpu-bench's own training step at local batch 1");
        m.contentionSamples << kernel;
        CommSample after{2, 1, 1e6, 1.5e-3};
        after.afterCompute = true;
        after.kernel = kernel.kernel;
        after.computeS = 0.026;
        after.kernels = 2;
        CommSample after2 = after;
        after2.bytes = 4e6;
        after2.computeS = 0.014;
        after2.kernels = 1;
        m.waitSamples << after << after2;
        QVERIFY(near(m.computeBetweenCollectives(2, 1), 0.0135));
        QVERIFY(near(m.contention(2, 1), 1.35));
        QVERIFY(near(m.contention(8, 4), 1.35));  // 2 per node: the layout measured stands in
        QVERIFY(near(m.step(QStringLiteral("fused"), 2, 1, 2).computeS, 0.27));
        // Timings of another kernel, or at another layout, are not this kernel's: together/alone.
        m.waitSamples[0].kernel = m.waitSamples[1].kernel = QStringLiteral("a convolution kernel");
        QCOMPARE(m.computeBetweenCollectives(2, 1), 0.0);
        QVERIFY(near(m.contention(2, 1), 1.2));
        m.waitSamples[0].kernel = m.waitSamples[1].kernel = kernel.kernel;
        m.waitSamples[0].nodes = m.waitSamples[1].nodes = 2;
        QVERIFY(near(m.contention(2, 1), 1.2));
        // GPUs compute on their own, timed between collectives or not.
        m.waitSamples[0].nodes = m.waitSamples[1].nodes = 1;
        m.cpuRanks = false;
        QCOMPARE(m.contention(2, 1), 1.0);
    }

    // Where the kernel is the config's own step and runs of one rank per node computed it, the
    // contention is over their compute at the kernel's local batch, not the benchmark's lone rank
    // (10 ms here; the runs' 12.5 ms at local batch 1): 13.5 ms between collectives over 12.5 ms,
    // ×1.08. A convolution kernel, or no solo runs: over its lone rank, as before (×1.35).
    void theContentionIsOverTheSoloRunsCompute()
    {
        PerfModel m = tenthOfASecondPerSample();
        m.cpuRanks = true;
        CommSample kernel = kernelOnTwoRanks();
        kernel.kernel = QStringLiteral("config cpu-bench's own training step at local batch 1");
        kernel.kernelLocalBatch = 1;
        m.contentionSamples << kernel;
        CommSample after{2, 1, 1e6, 1.5e-3};
        after.afterCompute = true;
        after.kernel = kernel.kernel;
        after.computeS = 0.0135;
        m.waitSamples << after;
        QVERIFY(near(m.contention(2, 1), 1.35));  // no solo runs
        ComputeModel solo;
        solo.fixedS = 0.0025;
        solo.perSampleS = 0.01;
        m.soloCompute = solo;
        bool fromRuns = false;
        QVERIFY(near(m.contentionReference(kernel, &fromRuns), 0.0125));
        QVERIFY(fromRuns);
        QVERIFY(near(m.contention(2, 1), 1.08));
        m.contentionSamples[0].kernelLocalBatch = 0;  // a convolution: not the runs' step
        QVERIFY(near(m.contention(2, 1), 1.35));
        QVERIFY(near(m.contentionReference(m.contentionSamples[0], &fromRuns), 0.010));
        QVERIFY(!fromRuns);
    }

    // ddp on CPU ranks: the share φ of an allreduce that hides behind compute is what a call costs
    // after compute (compute + collective + wait) less what it costs launched before the compute
    // and waited for after it, over the collective: 0.105 − 0.103 of 0.004 s and 0.114 − 0.108 of
    // 0.012 s = 0.008 / 0.016 = 0.5. Four 0.25 MB buckets (1 ms at 2 ranks) then expose
    // max(last, 1 ms − 0.5·min(1 ms, backward)) = 0.5 ms.
    void ddpOverlapOnCpuRanksFromTheBenchmark()
    {
        PerfModel m = tenthOfASecondPerSample();
        m.cpuRanks = true;
        m.strategies[QStringLiteral("ddp")].messageBytes = {0.25e6, 0.25e6, 0.25e6, 0.25e6};
        const QString kernel = QStringLiteral("config cpu-bench's own training step at local batch 1");
        auto timing = [&](double bytes, double compute, double seconds, double wait, bool overlapped) {
            CommSample c{2, 1, bytes, seconds};
            c.afterCompute = !overlapped;
            c.overlapped = overlapped;
            c.kernel = kernel;
            c.computeS = compute;
            c.waitS = wait;
            return c;
        };
        QVERIFY(std::isnan(m.overlapShare(2, 1)));
        QVERIFY(near(m.step(QStringLiteral("ddp"), 2, 1, 2).exposedS, 1e-3));  // not measured: all exposed
        m.waitSamples << timing(1e6, 0.1, 0.004, 0.001, false) << timing(4e6, 0.1, 0.012, 0.002, false);
        m.overlapSamples << timing(1e6, 0.102, 0.001, 0, true) << timing(4e6, 0.104, 0.004, 0, true);
        QVERIFY(near(m.overlapShare(2, 1), 0.5));
        QVERIFY(near(m.overlapShare(8, 4), 0.5));  // 2 per node: the layout measured stands in
        QVERIFY(std::isnan(m.overlapShare(2, 2)));
        StepPrediction d = m.step(QStringLiteral("ddp"), 2, 1, 2);
        QVERIFY2(near(d.exposedS - d.waitS, 0.5e-3), qPrintable(QString::number(d.exposedS - d.waitS, 'g', 17)));
        QVERIFY(near(d.waitS, 0.2 * 0.003 / 0.2));  // the arrival wait still paid once
        // fused and zero1 send after backward: nothing to hide behind.
        StepPrediction f = m.step(QStringLiteral("fused"), 2, 1, 2);
        QVERIFY(near(f.exposedS - f.waitS, 1e-3));
        // GPUs keep the rule: the buckets hide behind backward but the last.
        m.cpuRanks = false;
        d = m.step(QStringLiteral("ddp"), 2, 1, 2);
        QVERIFY(near(d.exposedS - d.waitS, 0.25e-3));
        m.cpuRanks = true;
        // Overlapping that costs more than taking turns is negative, bounded at −1.
        m.overlapSamples[0].seconds = m.overlapSamples[1].seconds = 0.5;
        QCOMPARE(m.overlapShare(2, 1), -1.0);
        d = m.step(QStringLiteral("ddp"), 2, 1, 2);
        QVERIFY(near(d.exposedS - d.waitS, 2e-3));
        // Timed after another kernel, the calls cannot be set side by side.
        m.overlapSamples[0].kernel = m.overlapSamples[1].kernel = QStringLiteral("a convolution kernel");
        QVERIFY(std::isnan(m.overlapShare(2, 1)));
        // Not a collective timed alone: the allreduce fit leaves an overlapped call out.
        auto fit = fitAllreduce({CommSample{2, 1, 1e6, 2e-3}, CommSample{2, 1, 4e6, 5e-3}, m.overlapSamples[0]});
        QVERIFY2(fit, fit ? "" : qPrintable(fit.error().text()));
        QCOMPARE(fit->samples, 2);
    }

    // Collectives timed after compute (no barrier): where a collective and layout has such timings
    // they replace the barrier's; the ranks' wait in them beyond the last rank in, over the compute
    // before them, is the arrival wait a step pays once: 0.01 and 0.03 s after 0.1 s each = 20 %.
    // The stragglers' term: E[max of n standard normals], against its closed forms for 2 and 3
    // (1/√π, 3/(2√π)) and tabulated values (Harter 1961) for 5, 10, 100; it grows with n.
    void expectedMaximumOfNormalDraws()
    {
        QCOMPARE(expectedMaxOfNormals(1), 0.0);
        QVERIFY(std::abs(expectedMaxOfNormals(2) - 1 / std::sqrt(M_PI)) < 1e-9);
        QVERIFY(std::abs(expectedMaxOfNormals(3) - 1.5 / std::sqrt(M_PI)) < 1e-9);
        QVERIFY(std::abs(expectedMaxOfNormals(5) - 1.16296) < 1e-5);
        QVERIFY(std::abs(expectedMaxOfNormals(10) - 1.53875) < 1e-5);
        QVERIFY(std::abs(expectedMaxOfNormals(100) - 2.50759) < 1e-5);
        for (int n = 2; n < 256; n *= 2) QVERIFY(expectedMaxOfNormals(2 * n) > expectedMaxOfNormals(n));
    }

    void arrivalWaitFromTheAfterComputeTimings()
    {
        CommSample barrier{2, 1, 1e6, 1e-3};
        CommSample after = barrier;
        after.afterCompute = true;
        after.seconds = 1.5e-3;
        after.waitS = 0.01;
        after.computeS = 0.1;
        CommSample after2 = after;
        after2.bytes = 4e6;
        after2.waitS = 0.03;
        CommSample scatter = barrier;
        scatter.op = CommSample::Op::ReduceScatter;
        CommSample acrossNodes = barrier;
        acrossNodes.nodes = 2;
        int dropped = -1;
        const QList<CommSample> kept = preferAfterCompute({barrier, after, after2, scatter, acrossNodes}, &dropped);
        QCOMPARE(dropped, 1);  // the allreduce behind a barrier at 2 ranks on 1 node
        QCOMPARE(kept.size(), 4);
        QVERIFY(kept[0].afterCompute && kept[1].afterCompute);
        QCOMPARE(kept[2].op, CommSample::Op::ReduceScatter);  // not timed after compute: kept
        QCOMPARE(kept[3].nodes, 2);                           // another layout: kept

        PerfModel m = tenthOfASecondPerSample();
        QCOMPARE(m.arrivalWait(2, 1), 0.0);  // not measured
        m.waitSamples << after << after2;
        QVERIFY(near(m.arrivalWait(2, 1), 0.2));
        // 8 ranks, 2 per node as measured: the slowest of 8 ranks, not of 2 (stragglers).
        QVERIFY(near(m.arrivalWait(8, 4), 0.2 * expectedMaxOfNormals(8) / expectedMaxOfNormals(2)));
        QCOMPARE(m.arrivalWait(2, 2), 0.0);  // 1 per node: not measured
        QCOMPARE(m.arrivalWait(1, 1), 0.0);  // one rank waits for none
        // fused at 2 ranks, local batch 2: compute 0.2 s, one allreduce of 1 MB = 1e-3 s, and the
        // wait 20 % of 0.2 s, exposed with it.
        const StepPrediction p = m.step(QStringLiteral("fused"), 2, 1, 2);
        QVERIFY(near(p.waitS, 0.04));
        QVERIFY(near(p.commS, 0.041));
        QVERIFY(near(p.exposedS, 0.041));
        QVERIFY(near(p.stepS, 0.241));
        QCOMPARE(m.step(QStringLiteral("fused"), 1, 1, 2).waitS, 0.0);
    }

    // ZeRO-1 shards the optimizer: with the optimizer 20 % of a 0.2 s step, a zero1 rank of 4
    // computes 0.2·(1 − 0.2·3/4) = 0.17 s; ddp and one rank the whole 0.2 s. The share is fitted
    // from the step records.
    void zero1UpdatesItsShardOnly()
    {
        PerfModel m = tenthOfASecondPerSample();
        auto fit = fitCompute({ComputeSample{2, 0.2, 0.1, 0, 0.04}, ComputeSample{2, 0.2, 0.1, 0, 0.04}});
        QVERIFY2(fit, fit ? "" : qPrintable(fit.error().text()));
        QVERIFY(near(fit->optimizerShare, 0.2));
        m.compute = *fit;
        QVERIFY(near(m.step(QStringLiteral("zero1"), 4, 1, 2).computeS, 0.17));
        QVERIFY(near(m.step(QStringLiteral("ddp"), 4, 1, 2).computeS, 0.2));
        QVERIFY(near(m.step(QStringLiteral("zero1"), 1, 1, 2).computeS, 0.2));
    }

    // A loader with worker threads overlaps the step: a run at local batch 2 that computed 0.2 s
    // and waited 0.05 s a step had a loader of 0.25 s for 2 samples (0.125 s each), so at batch 4
    // (compute 0.4 s) it waits max(0, 0.5 − 0.4) = 0.1 s, and with compute slowed to 0.3 s at
    // batch 2 it keeps up (no wait). Without workers the measured wait adds as it was; with
    // workers that kept up, too (the loader's own time is not known).
    void dataWaitIsWhatTheLoaderTakesBeyondCompute()
    {
        ComputeSample waited{2, 0.2, 0.1, 0.05, 0.02, 2};
        auto fit = fitCompute({waited});
        QVERIFY2(fit, fit ? "" : qPrintable(fit.error().text()));
        QVERIFY(fit->loaderWorkers);
        QVERIFY(near(fit->loaderPerSampleS, 0.125));
        PerfModel m = tenthOfASecondPerSample();
        m.compute = *fit;
        QVERIFY(near(m.step(QStringLiteral("fused"), 1, 1, 2).dataS, 0.05));  // as measured
        QVERIFY(near(m.step(QStringLiteral("fused"), 1, 1, 4).dataS, 0.1));
        m.compute.perSampleS = 0.15;  // slower compute: 0.3 s at batch 2
        QCOMPARE(m.step(QStringLiteral("fused"), 1, 1, 2).dataS, 0.0);

        ComputeSample inline_ = waited;
        inline_.dataWorkers = 0;
        auto noWorkers = fitCompute({inline_});
        QVERIFY(noWorkers && !noWorkers->loaderWorkers && std::isnan(noWorkers->loaderPerSampleS));
        m.compute = *noWorkers;
        QVERIFY(near(m.step(QStringLiteral("fused"), 1, 1, 4).dataS, 0.05));  // added as measured

        ComputeSample keptUp = waited;
        keptUp.dataS = 0.001;
        auto kept = fitCompute({keptUp});
        QVERIFY(kept && kept->loaderWorkers && std::isnan(kept->loaderPerSampleS));
        m.compute = *kept;
        QVERIFY(near(m.step(QStringLiteral("fused"), 1, 1, 4).dataS, 0.001));
    }

    void whatCannotBeFittedIsSaid()
    {
        // One size at one rank count: the bandwidth alone (latency 0), and the model says so.
        // 2·1/2 · 1e6 B over 0.01 and 0.0125 s: 100 and 80 MB/s, a mean of 90 MB/s, ±10 MB/s.
        auto oneSize = fitAllreduce({CommSample{2, 1, 1e6, 0.01}, CommSample{2, 1, 1e6, 0.0125}});
        QVERIFY2(oneSize, oneSize ? "" : qPrintable(oneSize.error().text()));
        QVERIFY(oneSize->bandwidthOnly);
        QCOMPARE(oneSize->alphaS, 0.0);
        QVERIFY(near(oneSize->betaBytesPerS, 90e6));
        QVERIFY(near(oneSize->relativeRms, 10.0 / 90));
        // Across nodes too, beside a within-node part fitted in full.
        auto mixed = fitAllreduce({CommSample{2, 1, 1e3, 2e-4}, CommSample{2, 1, 1e7, 0.0102}, CommSample{8, 2, 1e8, 0.35}});
        QVERIFY2(mixed, mixed ? "" : qPrintable(mixed.error().text()));
        QVERIFY(mixed->bandwidthOnly && mixed->alphaInterS == 0.0 && mixed->alphaS > 0);
        QVERIFY(near(mixed->betaInterBytesPerS, 2.0 * 7 / 8 * 1e8 / 0.35));
        QVERIFY(!fitAllreduce({CommSample{2, 1, 1e3, 2e-4}, CommSample{2, 1, 1e7, 0.0102}})->bandwidthOnly);
        // Times that fit no positive bandwidth (noise): the bandwidth alone too. 1e3 B in 0.01 s and
        // 1e7 B in 0.001 s: 1e5 and 1e10 B/s.
        auto shrinking = fitAllreduce({CommSample{2, 1, 1e3, 0.01}, CommSample{2, 1, 1e7, 0.001}});
        QVERIFY2(shrinking, shrinking ? "" : qPrintable(shrinking.error().text()));
        QVERIFY(shrinking->bandwidthOnly && near(shrinking->betaBytesPerS, (1e5 + 1e10) / 2));
        auto oneRank = fitAllreduce({CommSample{1, 1, 1e6, 0.01}});
        QVERIFY(!oneRank);
        QVERIFY(oneRank.error().text().contains(QStringLiteral("2 or more ranks")));
        QVERIFY(!fitCompute({}));
    }
};

QTEST_GUILESS_MAIN(TestPerfModel)
#include "tst_perfmodel.moc"
