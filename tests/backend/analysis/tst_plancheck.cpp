// The extrapolation protocol (analysis/plancheck.h) on a synthetic sweep: ddp and fused at 1, 2 and
// 4 ranks on one node and 4 ranks on two, collectives timed within and across nodes. Each size is
// predicted from the runs at half its ranks or fewer on one node only, as makePlan predicts it
// from exactly those; coverage, half-width and the table follow from the points.
#include "analysis/plancheck.h"

#include <QTest>

#include <cmath>

using namespace scaledesk;

namespace {
double ring(double alpha, double beta, int n, double bytes) { return 2.0 * (n - 1) * alpha + 2.0 * (n - 1) / n * bytes / beta; }

PlanRunInput run(const QString& strategy, int ranks, int nodes, double computeS, double epochS)
{
    PlanRunInput r;
    r.runId = QStringLiteral("%1-%2x%3").arg(strategy).arg(nodes).arg(ranks / nodes);
    r.strategy = strategy;
    r.ranks = ranks;
    r.nodes = nodes;
    r.localBatch = 2;
    r.samplesPerEpoch = 64;
    r.computeS = computeS;
    r.backwardS = computeS / 2;
    r.dataS = 0.01;
    r.commS = r.exposedS = ranks > 1 ? 0.02 : 0.0;
    r.epochS = epochS;
    r.epochCv = 0.02;
    r.gradientBytes = 40e6;
    r.bucketBytes = 25.0 * (1 << 20);
    r.steps = 10;
    return r;
}

QList<CommSample> timings()
{
    QList<CommSample> bench;
    for (const auto& [ranks, nodes] : {std::pair{2, 1}, {4, 1}, {4, 2}})
        for (double bytes : {1e6, 4e7}) {
            CommSample c;
            c.ranks = ranks;
            c.nodes = nodes;
            c.bytes = bytes;
            c.seconds = ring(nodes > 1 ? 5e-4 : 1e-4, nodes > 1 ? 1e9 : 2e9, ranks, bytes);
            bench << c;
        }
    return bench;
}
}  // namespace

class TestPlanCheck : public QObject {
    Q_OBJECT
private slots:
    void eachSizeIsPredictedFromTheSmallerRunsOnly()
    {
        std::vector<PlanRunInput> runs;
        for (const QString& s : {QStringLiteral("ddp"), QStringLiteral("fused")}) {
            runs.push_back(run(s, 1, 1, 0.2, 6.72));
            runs.push_back(run(s, 2, 1, 0.23, 4.1));
            runs.push_back(run(s, 4, 1, 0.26, 2.5));
            runs.push_back(run(s, 4, 2, 0.24, 2.9));
        }
        const PlanCheck check = checkPlan(QStringLiteral("synthetic"), runs, timings(), {});
        QCOMPARE(check.points.size(), 6);  // (2, 1), (4, 1), (4, 2) × ddp, fused
        for (const PlanCheckPoint& p : check.points) {
            QVERIFY2(p.predicted(), qPrintable(p.why));
            QCOMPARE(p.fittedOn, p.ranks == 2 ? QStringLiteral("1") : QStringLiteral("1, 2"));
            // makePlan of exactly those runs, at this size.
            std::vector<PlanRunInput> smaller;
            for (const PlanRunInput& r : runs)
                if (2 * r.ranks <= p.ranks && r.nodes == 1) smaller.push_back(r);
            PlanOptions o;
            o.nodes = {p.nodes};
            o.ranksPerNode = p.ranks / p.nodes;
            o.strategies = {p.strategy};
            o.scaling = PlanOptions::Scaling::Weak;
            o.localBatch = 2;
            auto plan = makePlan(QStringLiteral("synthetic"), smaller, timings(), {}, o);
            QVERIFY(plan);
            const PlanPoint& q = plan->points.first();
            QCOMPARE(p.predictedS, q.epochS);
            QCOMPARE(p.lowS, q.epochLowS);
            QCOMPARE(p.highS, q.epochHighS);
            for (const PlanRunInput& r : runs)
                if (r.strategy == p.strategy && r.ranks == p.ranks && r.nodes == p.nodes) QCOMPARE(p.measuredS, r.epochS);
            QCOMPARE(p.covered(), p.lowS <= p.measuredS && p.measuredS <= p.highS);
            QVERIFY(std::abs(p.error() - (p.predictedS / p.measuredS - 1)) < 1e-12);
            QVERIFY(std::abs(p.relativeHalfWidth() - (p.highS - p.lowS) / 2 / p.predictedS) < 1e-12);
        }
        int covered = 0;
        for (const PlanCheckPoint& p : check.points) covered += p.covered();
        QCOMPARE(check.coveredCount(), covered);
        QCOMPARE(check.predictedCount(), 6);
        QCOMPARE(check.coverage(), covered / 6.0);
        // The median of six: the mean of the third and fourth.
        std::vector<double> widths;
        for (const PlanCheckPoint& p : check.points) widths.push_back(p.relativeHalfWidth());
        std::sort(widths.begin(), widths.end());
        QVERIFY(std::abs(check.medianHalfWidth() - (widths[2] + widths[3]) / 2) < 1e-12);

        const QString md = check.markdown();
        QVERIFY2(md.contains(QStringLiteral("%1 of 6 predicted point(s) in their 90 % range").arg(covered)), qPrintable(md));
        QVERIFY(md.contains(QStringLiteral("| ddp | 2 | 4 | 1, 2 |")));
        const QStringList csv = check.csv().trimmed().split(QLatin1Char('\n'));
        QCOMPARE(csv.size(), 7);
        QCOMPARE(csv.first(),
                 QStringLiteral("sweep,strategy,nodes,ranks,fitted_on_ranks,predicted_epoch_s,epoch_low_s,epoch_high_s,"
                                "measured_epoch_s,error,in_range,relative_half_width,not_predicted,outside_model"));
        // GPU ranks, no size beyond 8× its fit: nothing is flagged, so "within 10 % or flagged" is the error alone.
        QCOMPARE(check.flaggedCount(), 0);
        int within = 0;
        for (const PlanCheckPoint& p : check.points) within += std::abs(p.error()) <= kPlanCheckTolerance;
        QCOMPARE(check.withinOrFlaggedCount(), within);
        QVERIFY2(md.contains(QStringLiteral("%1 of 6 predicted point(s) within 10 % of the measurement or flagged as outside the "
                                            "model beforehand (0 flagged)")
                                 .arg(within)),
                 qPrintable(md));
    }

    // CPU ranks on hosts of 2 CPUs, 1 thread each: the 4-rank points share 2 cores among 4 ranks, a
    // condition the contention they read (timed with 2 threads a rank) does not describe. They are flagged before their error is known, count as
    // "flagged" whatever their error, and the table says why; the 2-rank points are not flagged.
    void pointsOutsideTheModelAreFlaggedBeforehand()
    {
        std::vector<PlanRunInput> runs;
        for (const QString& s : {QStringLiteral("ddp"), QStringLiteral("fused")}) {
            runs.push_back(run(s, 1, 1, 0.2, 6.72));
            runs.push_back(run(s, 2, 1, 0.2, 3.9));
            runs.push_back(run(s, 4, 1, 0.4, 4.0));  // oversubscribed: far slower than any model of 2 ranks predicts
        }
        for (PlanRunInput& r : runs) {
            r.cpu = true;
            r.threadsPerRank = 1;
            r.hostCpus = 2;
        }
        QList<CommSample> bench;
        for (const CommSample& c : timings())
            if (c.nodes == 1) bench << c;
        // Contention measured at both layouts, as the lone run computes, but at 4 ranks with 2
        // threads each where the runs had 1: not as the 4-rank points run.
        for (int ranks : {2, 4}) {
            CommSample k;
            k.op = CommSample::Op::Compute;
            k.ranks = ranks;
            k.aloneS = 0.2;
            k.seconds = 0.2;
            k.kernelLocalBatch = 2;
            k.threads = ranks == 4 ? 2 : 1;
            k.hostCpus = 2;
            bench << k;
        }
        const PlanCheck check = checkPlan(QStringLiteral("cpu"), runs, bench, {});
        QCOMPARE(check.points.size(), 4);
        for (const PlanCheckPoint& p : check.points) {
            QVERIFY2(p.predicted(), qPrintable(p.why));
            QCOMPARE(p.flagged(), p.ranks == 4);
            if (p.ranks == 4) {
                QCOMPARE(p.outsideModel.size(), 1);
                QCOMPARE(p.outsideModel.first(),
                         QStringLiteral("4 ranks per node × 1 thread(s) each on 2 CPUs: the ranks take turns on the cores, which "
                                        "the contention it reads does not describe (it was timed with 2 thread(s) per rank)"));
                QVERIFY2(std::abs(p.error()) > kPlanCheckTolerance, qPrintable(QString::number(p.error())));
                QVERIFY(p.withinOrFlagged());
            }
        }
        QCOMPARE(check.flaggedCount(), 2);
        const QString md = check.markdown();
        QVERIFY2(md.contains(QStringLiteral("| 4 ranks per node × 1 thread(s) each on 2 CPUs")), qPrintable(md));
        QVERIFY2(md.contains(QStringLiteral("(2 flagged)")), qPrintable(md));
        QVERIFY2(check.csv().contains(QStringLiteral(",\"4 ranks per node × 1 thread(s) each on 2 CPUs: the ranks take turns on the "
                                                     "cores, which the contention it reads does not describe (it was timed with 2 "
                                                     "thread(s) per rank)\"\n")),
                 qPrintable(check.csv()));  // the last column, quoted (it holds a comma)
    }

    // A size with nothing smaller to fit, or whose layout was never timed, is not predicted, and says why.
    void whatCannotBePredictedSaysWhy()
    {
        std::vector<PlanRunInput> runs{run(QStringLiteral("ddp"), 2, 1, 0.2, 4.0), run(QStringLiteral("ddp"), 3, 1, 0.2, 3.0),
                                       run(QStringLiteral("ddp"), 4, 2, 0.2, 2.9)};
        QList<CommSample> withinOnly;
        for (const CommSample& c : timings())
            if (c.nodes == 1) withinOnly << c;
        const PlanCheck check = checkPlan(QStringLiteral("s"), runs, withinOnly, {});
        QCOMPARE(check.points.size(), 2);
        QCOMPARE(check.points[0].ranks, 3);
        QVERIFY(!check.points[0].predicted());
        QCOMPARE(check.points[0].why, QStringLiteral("no run at 1 ranks or fewer on one node"));
        QCOMPARE(check.points[1].nodes, 2);
        QVERIFY2(check.points[1].why.startsWith(QStringLiteral("communication across nodes")), qPrintable(check.points[1].why));
        QCOMPARE(check.predictedCount(), 0);
        QVERIFY(std::isnan(check.coverage()));
        QVERIFY(check.markdown().contains(QStringLiteral("2 point(s) not predicted")));
    }
};

QTEST_GUILESS_MAIN(TestPlanCheck)
#include "tst_plancheck.moc"
