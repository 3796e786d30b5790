// The planner's learning curve (analysis/learningcurve.h): known L∞, a, b and B_noise recovered
// from synthetic validation losses through ±1 % noise within 2 %, its inverse against a hand
// computation, the errors it gives, and the NERSC base run's own validation losses (the fixture):
// fitted on its first epochs, it says when the later ones reach their loss.
#include "analysis/learningcurve.h"
#include "runs/importer.h"

#include <QFile>
#include <QRandomGenerator>
#include <QTest>

#include <algorithm>
#include <cmath>

using namespace scaledesk;

namespace {
bool within(double got, double want, double rel) { return std::abs(got - want) <= rel * std::abs(want); }

// L(s, B) = L∞ + a·(s / (1 + B/B_noise))^(−b), by hand.
double truth(double s, double batch, double floor, double a, double b, double noise)
{
    return floor + a * std::pow(s / (1.0 + batch / noise), -b);
}
}  // namespace

class TestLearningCurve : public QObject {
    Q_OBJECT
private slots:
    void recoversTheCurveAndTheNoiseBatch()
    {
        const double floor = 0.0045, a = 4.0, b = 0.6, noise = 24;
        QRandomGenerator jitterSource(3);
        QList<LossSample> losses;
        // Sample counts doubling from 512 to 262144: the late losses are within 2× of the floor,
        // so ±1 % noise leaves L∞ told apart from a and b.
        for (double batch : {2.0, 4.0, 8.0, 16.0, 32.0, 64.0})
            for (int k = 0; k < 10; ++k) {
                const double s = 512.0 * (1 << k);
                const double jitter = 1.0 + (jitterSource.generateDouble() * 2 - 1) * 0.01;
                losses << LossSample{s, batch, truth(s, batch, floor, a, b, noise) * jitter};
            }
        auto c = fitLearningCurve(losses);
        QVERIFY2(c, c ? "" : qPrintable(c.error().text()));
        QVERIFY(c->batchMeasured());
        QVERIFY2(within(c->lossFloor, floor, 0.02), qPrintable(QString::number(c->lossFloor)));
        QVERIFY2(within(c->amplitude, a, 0.02), qPrintable(QString::number(c->amplitude)));
        QVERIFY2(within(c->exponent, b, 0.02), qPrintable(QString::number(c->exponent)));
        QVERIFY2(within(c->noiseBatch, noise, 0.02), qPrintable(QString::number(c->noiseBatch)));
        QVERIFY2(c->relativeRms < 0.01, qPrintable(QString::number(c->relativeRms)));
        QCOMPARE(c->samples, 60);
        QCOMPARE(c->batches, (QList<double>{2, 4, 8, 16, 32, 64}));
        QCOMPARE(c->maxSamples, 262144.0);
    }

    // A gradient noise scale that grows as the loss falls (McCandlish et al.): B_noise(L) =
    // 4·((L − L∞)/0.1)^−0.7, from 4 samples early to hundreds late. Runs at global batches 4, 16 and
    // 64 are simulated forward (ds_eff = ds / (1 + B/B_noise(L)), L = L∞ + a·s_eff^−b), each epoch
    // recording its validation loss and the B_simple the trainer would measure over it. Fitted
    // with those, the curve predicts the samples to a loss at a batch of 256 (never run) within
    // 5 % of the same simulation at 256, within the losses reached and below them; below them the
    // constant B_noise of the losses alone misses by more than 50 % (it said +156 %).
    void aMeasuredNoiseScaleThatGrowsAsTheLossFalls()
    {
        const double floor = 0.01, a = 2.0, b = 0.5;
        const auto noiseAt = [&](double loss) { return 4.0 * std::pow((loss - floor) / 0.1, -0.7); };
        const auto lossAt = [&](double effective) { return floor + a * std::pow(effective, -b); };
        // Forward: the samples at batch B until the loss reaches `target` (or each epoch's loss).
        const auto simulate = [&](double batch, double epochSamples, int epochs, double target, RunLosses* run) {
            double s = 0, effective = 1e-3, ds = epochSamples / 2000;
            for (int e = 1; e <= epochs; ++e) {
                const double start = lossAt(effective), startEffective = effective;
                for (int k = 0; k < 2000; ++k) {
                    effective += ds / (1.0 + batch / noiseAt(lossAt(effective)));
                    s += ds;
                    if (lossAt(effective) <= target) return s;
                }
                if (run) {
                    run->samples << s;
                    run->losses << lossAt(effective);
                    // The epoch's B_simple as its steps average it: the constant noise scale that
                    // turns its samples into its effective samples.
                    run->bSimple << batch / (epochSamples / (effective - startEffective) - 1);
                    Q_UNUSED(start);
                }
            }
            return s;
        };
        QList<RunLosses> runs;
        for (double batch : {4.0, 16.0, 64.0}) {
            RunLosses r;
            r.batch = batch;
            simulate(batch, 4096, 12, 0, &r);
            runs << r;
        }
        const auto points = gradientNoiseByLoss(runs);
        QCOMPARE(points.size(), 36);
        QVERIFY(std::is_sorted(points.begin(), points.end()));
        auto c = fitLearningCurve(runs);
        QVERIFY2(c, c ? "" : qPrintable(c.error().text()));
        QVERIFY(c->noiseMeasured() && c->batchMeasured());
        QVERIFY2(c->relativeRms < 0.01, qPrintable(QString::number(c->relativeRms)));
        QCOMPARE(c->batches, (QList<double>{4, 16, 64}));
        // B_noise read back between the points, and the nearest point's beyond them.
        QVERIFY(within(c->noiseAt(points[10].first), points[10].second, 1e-12));
        QCOMPARE(c->noiseAt(points.first().first / 2), points.first().second);
        // The constant B_noise of the losses alone, for comparison.
        QList<LossSample> plain;
        for (const RunLosses& r : runs)
            for (int i = 0; i < r.losses.size(); ++i) plain << LossSample{r.samples[i], r.batch, r.losses[i]};
        auto constant = fitLearningCurve(plain);
        QVERIFY(constant);
        // Within the losses the runs reached, and below them (the batch of 256 is never run).
        for (const double target : {runs[2].losses.last() * 1.2, runs[0].losses.last() * 0.9}) {
            const double truthSamples = simulate(256, 20000, 400, target, nullptr);  // steps of 10 samples
            const double predicted = c->samplesTo(target, 256), constantSamples = constant->samplesTo(target, 256);
            qInfo("samples to %g at batch 256: simulated %g; with the measured noise scale %g (%+.1f %%); with one constant B_noise "
                  "(%g) %g (%+.1f %%)",
                  target, truthSamples, predicted, 100 * (predicted / truthSamples - 1), constant->noiseBatch, constantSamples,
                  100 * (constantSamples / truthSamples - 1));
            QVERIFY2(within(predicted, truthSamples, 0.05), qPrintable(QString::number(predicted / truthSamples)));
            QVERIFY(within(c->loss(predicted, 256), target, 1e-6));  // the inverse
            // Below the losses measured, where B_noise has grown past every batch run, one
            // constant B_noise overestimates what a large batch needs by far.
            if (target < runs[0].losses.last()) QVERIFY(constantSamples / truthSamples > 1.5);
        }
    }

    void theInverseMatchesAHandComputation()
    {
        LearningCurve c;
        c.lossFloor = 0.004;
        c.amplitude = 2;
        c.exponent = 0.5;
        c.noiseBatch = 16;
        // 0.004 + 2·(s / (1 + 48/16))^(−1/2) = 0.014 ⇔ s/4 = (0.01/2)^(−2) = 40000 ⇔ s = 160000.
        QVERIFY(within(c.samplesTo(0.014, 48), 160000, 1e-12));
        QVERIFY(within(c.loss(160000, 48), 0.014, 1e-12));
        // At a batch far below B_noise, nearly the minimum: 40000 · (1 + 1/16).
        QVERIFY(within(c.samplesTo(0.014, 1), 42500, 1e-12));
        QVERIFY(std::isinf(c.samplesTo(0.004, 48)));
        QVERIFY(std::isinf(c.samplesTo(0.001, 48)));
    }

    void oneGlobalBatchLeavesTheBatchEffectUnmeasured()
    {
        QList<LossSample> losses;
        for (int epoch = 1; epoch <= 8; ++epoch) losses << LossSample{epoch * 100.0, 8, truth(epoch * 100.0, 8, 0.01, 1.5, 0.8, 1e300)};
        auto c = fitLearningCurve(losses);
        QVERIFY2(c, c ? "" : qPrintable(c.error().text()));
        QVERIFY(!c->batchMeasured());
        QCOMPARE(c->batches, QList<double>{8});
        QVERIFY2(within(c->exponent, 0.8, 0.02), qPrintable(QString::number(c->exponent)));
        QVERIFY2(within(c->lossFloor, 0.01, 0.02), qPrintable(QString::number(c->lossFloor)));
        QCOMPARE(c->samplesTo(0.02, 8), c->samplesTo(0.02, 512));
    }

    void badLossesAreRefusedWithTheReason()
    {
        auto negative = fitLearningCurve({{100, 4, 0.5}, {200, 4, -0.1}, {300, 4, 0.2}});
        QVERIFY(!negative);
        QVERIFY2(negative.error().message.contains(QLatin1String("loss -0.1")), qPrintable(negative.error().message));
        auto two = fitLearningCurve({{100, 4, 0.5}, {200, 4, 0.3}, {200, 8, 0.35}});
        QVERIFY(!two);
        QVERIFY2(two.error().message.contains(QLatin1String("2 distinct sample count")), qPrintable(two.error().message));
        auto rising = fitLearningCurve({{100, 4, 0.1}, {200, 4, 0.2}, {300, 4, 0.3}, {400, 4, 0.4}});
        QVERIFY(!rising);
        QVERIFY2(rising.error().message.contains(QLatin1String("do not decrease")), qPrintable(rising.error().message));
    }

    // NERSC's base run (1 GPU, batch 64, 1024 steps an epoch; its out.log, as the importer reads
    // it): fitted to epochs 1–6, the curve is asked when the validation loss reaches what epochs 7
    // and 8 measured.
    void nerscBaseRunsLaterEpochsFromItsFirst()
    {
        QFile f(QStringLiteral(SCALEDESK_TEST_DATA "/runs/data/nersc-example-logs/base/1GPU/00/out.log"));
        QVERIFY(f.open(QIODevice::ReadOnly));
        const NerscLog log = parseNerscLog(f.readAll(), f.fileName());
        QCOMPARE(log.epochs.size(), 10);
        const double perEpoch = 1024.0 * 64;
        QList<LossSample> first;
        for (const NerscLog::Epoch& e : log.epochs)
            if (e.epoch <= 6) first << LossSample{e.epoch * perEpoch, 64, e.valLoss};
        auto c = fitLearningCurve(first);
        QVERIFY2(c, c ? "" : qPrintable(c.error().text()));
        QVERIFY2(c->relativeRms < 0.02, qPrintable(QString::number(c->relativeRms)));
        for (int epoch : {7, 8}) {
            const double loss = log.epochs[epoch - 1].valLoss;
            const double predicted = c->samplesTo(loss, 64) / perEpoch;
            qInfo("val loss %.6f: measured at epoch %d, predicted at epoch %.2f", loss, epoch, predicted);
            QVERIFY2(std::abs(predicted - epoch) <= 1.0, qPrintable(QString::number(predicted)));
        }
    }
};

QTEST_GUILESS_MAIN(TestLearningCurve)
#include "tst_learningcurve.moc"
