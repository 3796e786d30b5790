// The planner on synthetic inputs with known answers: a 1-rank run and a benchmark of the three
// collectives predict a 2-rank epoch of ddp and zero1 as a hand computation does; the band, the
// extrapolation flag, and the benchmark file's errors.
#include "analysis/planner.h"

#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>

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
}  // namespace

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
        QVERIFY(std::abs(ddp.epochS - 32 * ddpStep) < 1e-9);  // weak: 128 samples in batches of 4
        QVERIFY(std::abs(ddp.efficiency - 32 * 0.21 / (32 * ddpStep)) < 1e-9);
        QVERIFY(std::abs(ddp.epochHighS - ddp.epochS - 2 * 32 * 0.01 * 0.21) < 1e-9);  // ±2σ, σ: the epochs' 1 % spread
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
        auto noComm = makePlan(QStringLiteral("s"), {base}, {}, {}, o);
        QVERIFY(!noComm);
        QVERIFY2(noComm.error().message.contains(QStringLiteral("no allreduce measured")), qPrintable(noComm.error().message));
        base.steps = 0;
        auto noSteps = makePlan(QStringLiteral("s"), {base}, {}, {}, o);
        QVERIFY(!noSteps);
        QVERIFY2(noSteps.error().message.contains(QStringLiteral("step records")), qPrintable(noSteps.error().message));
    }
};

QTEST_GUILESS_MAIN(TestPlanner)
#include "tst_planner.moc"
