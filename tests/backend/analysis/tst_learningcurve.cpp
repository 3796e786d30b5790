// The planner's learning curve (analysis/learningcurve.h): known L∞, a, b and B_noise recovered
// from synthetic validation losses through ±1 % noise within 2 %, its inverse against a hand
// computation, the errors it gives, and the NERSC base run's own validation losses (the fixture):
// fitted on its first epochs, it says when the later ones reach their loss.
#include "analysis/learningcurve.h"
#include "runs/importer.h"

#include <QFile>
#include <QRandomGenerator>
#include <QTest>

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
