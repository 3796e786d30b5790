// The planner's performance model (analysis/perfmodel.h) on synthetic measurements with known
// answers: α, β, compute and overlap recovered through ±1 % noise within 2 %, and the weak and
// strong epoch predictions against a hand computation.
#include "analysis/perfmodel.h"

#include <QRandomGenerator>
#include <QTest>

#include <cmath>

using namespace scaledesk;

namespace {
bool within(double got, double want, double rel) { return std::abs(got - want) <= rel * std::abs(want); }
bool near(double a, double b) { return std::abs(a - b) <= 1e-9 * std::max(1.0, std::abs(b)); }
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

        // Weak, from 1 rank at local batch 4 and 1024 samples: 4 ranks train 4096 samples in the
        // same 256 steps of 0.4612 s = 118.0672 s; the 1-rank epoch is 256 × 0.31 = 79.36 s.
        const EpochPrediction weak = m.epoch(QStringLiteral("fused"), 4, 1, true, 1, 4, 1024);
        QVERIFY(near(weak.localBatch, 4) && near(weak.globalBatch, 16) && near(weak.steps, 256));
        QVERIFY(near(weak.epochS, 118.0672));
        QVERIFY(near(weak.throughput, 4096 / 118.0672));
        QVERIFY(near(weak.speedup, 79.36 / 118.0672));
        QVERIFY(near(weak.efficiency, 79.36 / 118.0672));  // weak: T(1) / T(4)
        QVERIFY(near(weak.nodeHours, 118.0672 / 3600));
        // Strong: the global batch 4 and 1024 samples stay; local batch 1; 256 steps of
        // 0.1 + 0.05 + 0.01 + 0.1512 = 0.3112 s = 79.6672 s: a speedup of 0.996, efficiency 0.249.
        const EpochPrediction strong = m.epoch(QStringLiteral("fused"), 4, 1, false, 1, 4, 1024, 10);
        QVERIFY(near(strong.localBatch, 1) && near(strong.globalBatch, 4) && near(strong.steps, 256));
        QVERIFY(near(strong.epochS, 79.6672));
        QVERIFY(near(strong.speedup, 79.36 / 79.6672));
        QVERIFY(near(strong.efficiency, 79.36 / 79.6672 / 4));
        QVERIFY(near(strong.nodeHours, 10 * 79.6672 / 3600));
        // A measured overlap replaces the rule: 70 % hidden leaves 30 % of 0.1524 s.
        m.strategies[QStringLiteral("ddp")].measuredOverlap = 0.7;
        QVERIFY(near(m.step(QStringLiteral("ddp"), 4, 1, 4).exposedS, 0.3 * 0.1524));
    }

    void whatCannotBeFittedIsSaid()
    {
        auto oneSize = fitAllreduce({CommSample{2, 1, 1e6, 0.01}, CommSample{2, 1, 1e6, 0.011}});
        QVERIFY(!oneSize);
        QVERIFY2(oneSize.error().text().contains(QStringLiteral("two message sizes")), qPrintable(oneSize.error().text()));
        auto oneRank = fitAllreduce({CommSample{1, 1, 1e6, 0.01}});
        QVERIFY(!oneRank);
        QVERIFY(oneRank.error().text().contains(QStringLiteral("2 or more ranks")));
        QVERIFY(!fitCompute({}));
    }
};

QTEST_GUILESS_MAIN(TestPerfModel)
#include "tst_perfmodel.moc"
