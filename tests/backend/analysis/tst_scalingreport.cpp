// The scaling report's formulas on synthetic epochs.csv files whose answers are worked out by hand
// below: warm-up exclusion, means and spread over repetitions, speedup against each strategy's
// smallest run, efficiency, the time breakdown, time-to-target, and every warning.
#include "analysis/epochscsv.h"
#include "analysis/scalingreport.h"

#include <QJsonArray>
#include <QTest>

#include <cmath>

using namespace scaledesk;

namespace {
const QByteArray kHeader = "epoch,step,wall_s,train_s,val_s,samples_processed_global,steps,throughput_samples_s,data_wait_s,compute_s,"
                           "allreduce_wait_s,max_rank_wall_s,min_rank_wall_s,train_loss,val_loss,lr,t_end\n";

// Epoch rows: wall, steps, val_loss, t_end; compute/comm/data are 50 % / 20 % / 10 % of wall.
QByteArray epochs(const QList<std::tuple<double, int, double, double>>& rows)
{
    QByteArray csv = kHeader;
    int e = 0;
    for (const auto& [wall, steps, val, tEnd] : rows) {
        ++e;
        csv += QStringLiteral("%1,%2,%3,%3,0,64,%4,0,%5,%6,%7,0,0,0.5,%8,0.001,%9\n")
                   .arg(e)
                   .arg(e * steps)
                   .arg(wall)
                   .arg(steps)
                   .arg(0.1 * wall)
                   .arg(0.5 * wall)
                   .arg(0.2 * wall)
                   .arg(val)
                   .arg(tEnd, 0, 'f', 3)
                   .toUtf8();
    }
    return csv;
}

ReportRun run(const QString& strategy, int world, int rep, RunState state, const QByteArray& csv, double start = 1000)
{
    ReportRun r;
    r.record.id = QStringLiteral("s-%1-1x%2-r%3").arg(strategy).arg(world).arg(rep);
    r.record.strategy = strategy;
    r.record.nodes = 1;
    r.record.ranksPerNode = world;
    r.record.repetition = rep;
    r.record.state = state;
    r.epochs = parseEpochsCsv(csv, r.record.id + QStringLiteral("/epochs.csv"));
    r.manifest.insert(QStringLiteral("start_utc"), QDateTime::fromSecsSinceEpoch(qint64(start), Qt::UTC).toString(Qt::ISODateWithMs));
    r.config = {{QStringLiteral("Nsamples"), QStringLiteral("64")}};
    return r;
}

const ReportGroupRow* group(const ScalingReport& rep, const QString& strategy, int world)
{
    for (const auto& g : rep.groups)
        if (g.strategy == strategy && g.world == world) return &g;
    return nullptr;
}
bool near(double a, double b) { return std::abs(a - b) <= 1e-9 * std::max(1.0, std::abs(b)); }
}  // namespace

class TestScalingReport : public QObject {
    Q_OBJECT
private:
    QList<ReportRun> sweep()
    {
        // Epoch 1 is warm-up (100 s, left out). val_loss reaches 0.32 at a known epoch end.
        return {
            // ddp, 1 rank: epoch means 11 and 13 → T̄ 12, sd √2; best val 0.30 and 0.32 → target 0.32
            run(QStringLiteral("ddp"), 1, 1, RunState::Completed,
                epochs({{100, 20, 0.5, 1100}, {10, 20, 0.35, 1110}, {12, 20, 0.30, 1122}})),
            run(QStringLiteral("ddp"), 1, 2, RunState::Completed,
                epochs({{100, 20, 0.5, 1100}, {13, 20, 0.33, 1113}, {13, 20, 0.32, 1126}})),
            // ddp, 2 ranks: 6 and 6 → T̄ 6; reach 0.32 at epoch 2 (t_end 1106 → 106 s) and epoch 3 (1112 → 112 s)
            run(QStringLiteral("ddp"), 2, 1, RunState::Completed, epochs({{100, 10, 0.5, 1100}, {6, 10, 0.31, 1106}, {6, 10, 0.30, 1112}})),
            run(QStringLiteral("ddp"), 2, 2, RunState::Completed, epochs({{100, 10, 0.5, 1100}, {7, 10, 0.40, 1107}, {5, 10, 0.32, 1112}})),
            // ddp, 4 ranks: 4 → T̄ 4 (speedup 3 of an ideal 4); repetition 2 failed
            run(QStringLiteral("ddp"), 4, 1, RunState::Completed, epochs({{100, 5, 0.5, 1100}, {4, 5, 0.45, 1104}, {4, 5, 0.40, 1108}})),
            run(QStringLiteral("ddp"), 4, 2, RunState::Failed, epochs({{100, 5, 0.5, 1100}})),
            // fused, 2 ranks, one run still going without epochs
            run(QStringLiteral("fused"), 2, 1, RunState::Completed, epochs({{100, 10, 0.5, 1100}, {8, 10, 0.5, 1108}, {8, 10, 0.5, 1116}})),
            run(QStringLiteral("fused"), 2, 2, RunState::Running, QByteArray()),
        };
    }

private slots:
    void formulasMatchTheHandComputation()
    {
        ReportOptions options;
        options.targetLoss = 0.32;
        const ScalingReport rep = buildScalingReport(QStringLiteral("s"), sweep(), options);
        QCOMPARE(rep.groups.size(), 4);
        const auto* d1 = group(rep, QStringLiteral("ddp"), 1);
        const auto* d2 = group(rep, QStringLiteral("ddp"), 2);
        const auto* d4 = group(rep, QStringLiteral("ddp"), 4);
        const auto* f2 = group(rep, QStringLiteral("fused"), 2);
        QVERIFY(d1 && d2 && d4 && f2);
        QCOMPARE(d1->repetitions, 2);
        QVERIFY(near(d1->epochS, 12));
        QVERIFY(near(d1->epochSStd, std::sqrt(2.0)));
        QVERIFY(near(d1->epochSMin, 11));
        QVERIFY(near(d1->epochSMax, 13));
        QVERIFY(near(d1->throughput, 64.0 / 12));
        QVERIFY(near(d2->epochS, 6));
        QVERIFY(near(d2->epochSStd, 0));
        QVERIFY(near(d2->speedup, 2));
        QVERIFY(near(d2->ideal, 2));
        QVERIFY(near(d2->efficiency, 1));
        QCOMPARE(d4->repetitions, 1);
        QVERIFY(near(d4->speedup, 3));
        QVERIFY(near(d4->ideal, 4));
        QVERIFY(near(d4->strongEfficiency, 0.75));
        QVERIFY(near(d4->efficiency, 0.75));  // fixed samples per epoch: the strong-scaling efficiency
        QVERIFY(near(d4->weakEfficiency, 3));
        QVERIFY(near(d4->throughputSpeedup, 3));
        // Breakdown: 50 % compute, 20 % exposed communication, 10 % data wait, 20 % other.
        QVERIFY(near(d2->computeS, 3));
        QVERIFY(near(d2->commS, 1.2));
        QVERIFY(near(d2->dataS, 0.6));
        QVERIFY(near(d2->otherS, 1.2));
        // fused has only 2 ranks: its own baseline.
        QVERIFY(near(f2->speedup, 1));
        QCOMPARE(f2->repetitions, 1);
        // Time-to-target at 0.32.
        QCOMPARE(rep.target, 0.32);
        QVERIFY(rep.targetGiven);
        QVERIFY(near(d1->timeToTargetS, (126.0 + 122.0) / 2));  // r1 at epoch 3 (0.30 ≤ 0.32) ends 1122; r2 epoch 3 1126
        QCOMPARE(d1->reachedTarget, 2);
        QVERIFY(near(d2->timeToTargetS, (106.0 + 112.0) / 2));
        QCOMPARE(d4->reachedTarget, 0);
        QVERIFY(std::isnan(d4->timeToTargetS));
        // By default the target is the lowest loss every run reached (the highest best: fused's
        // 0.5), so every group that has data has a time-to-target.
        const ScalingReport byDefault = buildScalingReport(QStringLiteral("s"), sweep());
        QCOMPARE(byDefault.target, 0.5);
        QVERIFY(!byDefault.targetGiven);
        QCOMPARE(byDefault.targetSource, QStringLiteral("the lowest every run reached"));
        for (const auto& g : byDefault.groups) QVERIFY2(g.reachedTarget > 0, qPrintable(g.strategy + QString::number(g.world)));
        QVERIFY(!byDefault.warnings.join(QLatin1Char('\n')).contains(QStringLiteral("never reached")));
    }

    // report.md's epoch time: the same decimals down the column, and no spread for one repetition.
    void epochTimesLineUpAndOneRepetitionHasNoSpread()
    {
        ScalingReport rep;
        rep.sweep = QStringLiteral("s");
        ReportGroupRow one, two;
        one.strategy = two.strategy = QStringLiteral("ddp");
        one.world = 1, two.world = 2;
        one.nodes = two.nodes = 1;
        one.repetitions = 1, two.repetitions = 3;
        one.epochS = 1.0, two.epochS = 1.391;
        two.epochSStd = 0.0123;
        rep.groups << one << two;
        const QString md = rep.markdown();
        QVERIFY2(md.contains(QStringLiteral("| ddp | 1 | 1 | 1 | 1.000 |")), qPrintable(md));
        QVERIFY2(md.contains(QStringLiteral("| ddp | 2 | 1 | 3 | 1.391 ± 0.012 |")), qPrintable(md));
        QVERIFY2(!md.contains(QStringLiteral("± 0 ")), qPrintable(md));
    }

    // One definition of the breakdown: shares of training + validation, in report.md as in the plot
    // (which draws timeShares()), whether the epoch time includes validation or not.
    void theBreakdownIsSharesOfTrainingAndValidation()
    {
        ReportGroupRow g;
        g.strategy = QStringLiteral("ddp");
        g.world = 1;
        g.epochS = 9;  // training only
        g.computeS = 6;
        g.commS = 1;
        g.dataS = 1;
        g.otherS = 1;
        g.validationS = 1;
        const TimeShares t = timeShares(g, false);
        QVERIFY(near(t.compute, 0.6) && near(t.comm, 0.1) && near(t.data, 0.1) && near(t.other, 0.1) && near(t.validation, 0.1));
        ReportGroupRow wall = g;
        wall.epochS = 10;  // --include-validation: the epoch time is training + validation already
        const TimeShares w = timeShares(wall, true);
        QVERIFY(near(w.compute, 0.6) && near(w.validation, 0.1));
        ScalingReport rep;
        rep.sweep = QStringLiteral("s");
        rep.groups << g;
        QVERIFY2(rep.markdown().contains(QStringLiteral("| 60.0% | 10.0% | 10.0% | 10.0% | 10.0% | 1 |")), qPrintable(rep.markdown()));
    }

    // Runs of the user's own code: the report names what the code did not record.
    void commandRunsSayWhatTheirCodeDidNotRecord()
    {
        ReportRun none = run(QStringLiteral("plain"), 1, 1, RunState::Completed, QByteArray());
        none.record.task = QStringLiteral("command");
        ReportRun noSamples = run(QStringLiteral("plain"), 2, 1, RunState::Completed,
                                  "epoch,step,wall_s,train_s,val_s,samples_processed_global,steps,throughput_samples_s,data_wait_s,"
                                  "compute_s,allreduce_wait_s,max_rank_wall_s,min_rank_wall_s,train_loss,val_loss,lr,t_end\n"
                                  "1,10,,2.5,,,10,,,,,,,0.5,,,1002.5\n2,20,,2.4,,,10,,,,,,,0.4,,,1005\n");
        noSamples.record.task = QStringLiteral("command");
        ReportOptions options;
        options.warmupEpochs = 0;
        const ScalingReport rep = buildScalingReport(QStringLiteral("s"), {none, noSamples}, options);
        const QString all = rep.warnings.join(QLatin1Char('\n'));
        QVERIFY2(all.contains(QStringLiteral("s-plain-1x1-r1: your code recorded no epochs (scaledesk_metrics.epoch()")), qPrintable(all));
        QVERIFY2(all.contains(QStringLiteral("s-plain-1x2-r1: your code's epochs record no samples")), qPrintable(all));
        // Its epoch times are still used.
        const ReportGroupRow* g = group(rep, QStringLiteral("plain"), 2);
        QVERIFY(g);
        QVERIFY(near(g->epochS, 2.45));
    }

    void warningsSayWhatIsMissingOrSuspicious()
    {
        ReportOptions options;
        options.targetLoss = 0.32;
        const ScalingReport rep = buildScalingReport(QStringLiteral("s"), sweep(), options);
        const QString all = rep.warnings.join(QLatin1Char('\n'));
        QVERIFY2(all.contains(QStringLiteral("s-ddp-1x4-r2: failed; left out")), qPrintable(all));
        QVERIFY2(all.contains(QStringLiteral("ddp at 4 ranks: 1 of 2 repetitions have data")), qPrintable(all));
        QVERIFY2(all.contains(QStringLiteral("s-fused-1x2-r2: no epochs yet")), qPrintable(all));
        QVERIFY2(all.contains(QStringLiteral("s-ddp-1x4-r1: 5 steps per epoch per rank")), qPrintable(all));
        QVERIFY2(all.contains(QStringLiteral("s-ddp-1x4-r1: never reached the target")), qPrintable(all));
        QVERIFY2(!all.contains(QStringLiteral("s-ddp-1x2-r1: 10 steps")), qPrintable(all));  // 10 is enough
    }

    // Runs whose measured epochs overlap in time on a host they share are warned of, by name and
    // for how long; the sweep() runs carry no host names, so none of them is.
    void runsThatSharedAHostAtTheSameTimeAreWarned()
    {
        QVERIFY(!buildScalingReport(QStringLiteral("s"), sweep()).warnings.join(QLatin1Char('\n')).contains(QStringLiteral("same time")));
        auto on = [](ReportRun r, const QStringList& hosts) {
            r.manifest.insert(QStringLiteral("hostnames"), QJsonArray::fromStringList(hosts));
            return r;
        };
        const QStringList vm{QStringLiteral("vm"), QStringLiteral("vm")};
        const QList<ReportRun> runs{
            // measured epochs (after the warm-up one): [1100, 1120]
            on(run(QStringLiteral("ddp"), 1, 1, RunState::Completed,
                   epochs({{100, 20, 0.5, 1100}, {10, 20, 0.4, 1110}, {10, 20, 0.3, 1120}})),
               {QStringLiteral("vm")}),
            // [1105, 1117] on vm: overlaps the first for 12 s
            on(run(QStringLiteral("ddp"), 2, 1, RunState::Failed, epochs({{100, 10, 0.5, 1099}, {6, 10, 0.4, 1111}, {6, 10, 0.3, 1117}})),
               vm),
            // [1100, 1120] on another host: no warning
            on(run(QStringLiteral("fused"), 1, 1, RunState::Completed,
                   epochs({{100, 20, 0.5, 1100}, {10, 20, 0.4, 1110}, {10, 20, 0.3, 1120}})),
               {QStringLiteral("other")}),
            // [1120.5, 1140] on vm: touches the first within a second (clock rounding): no warning
            on(run(QStringLiteral("fused"), 2, 1, RunState::Completed,
                   epochs({{100, 10, 0.5, 1100}, {9.5, 10, 0.4, 1130}, {10, 10, 0.3, 1140}})),
               vm),
        };
        const QStringList w = buildScalingReport(QStringLiteral("s"), runs).warnings.filter(QStringLiteral("same time"));
        QCOMPARE(w.size(), 2);
        QVERIFY2(
            w[0].startsWith(QStringLiteral("s-ddp-1x1-r1: its measured epochs (20 s) ran at the same time as s-ddp-1x2-r1 (12 s) on vm")),
            qPrintable(w[0]));
        QVERIFY2(
            w[1].startsWith(QStringLiteral("s-ddp-1x2-r1: its measured epochs (12 s) ran at the same time as s-ddp-1x1-r1 (12 s) on vm")),
            qPrintable(w[1]));
        QVERIFY2(w[0].contains(QStringLiteral("distorted")), qPrintable(w[0]));
    }

    void mixedConfigsAndUnequalSamplesAreWarned()
    {
        QList<ReportRun> runs = sweep();
        runs[3].config.insert(QStringLiteral("Nsamples"), QStringLiteral("128"));
        runs[4].epochs.rows[1].samplesGlobal = 100;  // ddp 4 ranks: neither 64 nor 4 × 64
        runs[4].epochs.rows[2].samplesGlobal = 100;
        const ScalingReport rep = buildScalingReport(QStringLiteral("s"), runs);
        const QString all = rep.warnings.join(QLatin1Char('\n'));
        QVERIFY2(all.contains(QStringLiteral("ddp at 2 ranks: the repetitions' configs differ in Nsamples")), qPrintable(all));
        QVERIFY2(all.contains(QStringLiteral("ddp: samples per epoch are neither equal nor proportional")), qPrintable(all));
    }

    void warmupOnlyAndResumedEpochs()
    {
        QList<ReportRun> runs;
        runs << run(QStringLiteral("ddp"), 1, 1, RunState::Completed, epochs({{100, 20, 0.5, 1100}}));
        // Resumed in epoch 2: its row counts 8 of 20 steps and is left out.
        runs << run(QStringLiteral("ddp"), 2, 1, RunState::Completed,
                    epochs({{100, 20, 0.5, 1100}, {3, 8, 0.4, 1103}, {10, 20, 0.3, 1113}}));
        const ScalingReport rep = buildScalingReport(QStringLiteral("s"), runs, ReportOptions{1, 0.3, 10});
        const QString all = rep.warnings.join(QLatin1Char('\n'));
        QVERIFY2(all.contains(QStringLiteral("only 1 epoch(s), all warm-up")), qPrintable(all));
        QVERIFY2(all.contains(QStringLiteral("epoch 2 ran 8 of 20 steps")), qPrintable(all));
        QVERIFY(near(group(rep, QStringLiteral("ddp"), 2)->epochS, 10));
        QCOMPARE(rep.targetSource, QStringLiteral("given"));
    }

    void emptySweepIsAWarningNotACrash()
    {
        const ScalingReport rep = buildScalingReport(QStringLiteral("nothing"), {});
        QCOMPARE(rep.groups.size(), 0);
        QCOMPARE(rep.warnings, QStringList{QStringLiteral("sweep 'nothing' has no runs")});
        QVERIFY(rep.markdown().contains(QStringLiteral("sweep 'nothing' has no runs")));
        QCOMPARE(rep.groupsCsv().count(QLatin1Char('\n')), 1);  // the header
    }

    // Epoch time is the training time (train_s), as NERSC's "Time taken for epoch" and itwinai's
    // report time it; validation is its own column and breakdown segment. --include-validation
    // keeps training + validation (wall_s). A file without train_s falls back to wall_s − val_s.
    void epochTimeIsTrainingTime()
    {
        // wall 10 = train 8 + validation 2, at 1 and 2 ranks (2 ranks: train 5, validation 1).
        auto csv = [](double train, double val) {
            QByteArray c = kHeader;
            for (int e = 1; e <= 3; ++e)
                c += QStringLiteral("%1,%2,%3,%4,%5,64,10,0,%6,%7,%8,0,0,0.5,0.4,0.001,%9\n")
                         .arg(e)
                         .arg(e * 10)
                         .arg(train + val)
                         .arg(train)
                         .arg(val)
                         .arg(0.1 * train)
                         .arg(0.5 * train)
                         .arg(0.2 * train)
                         .arg(1000 + e * (train + val))
                         .toUtf8();
            return c;
        };
        const QList<ReportRun> runs{run(QStringLiteral("ddp"), 1, 1, RunState::Completed, csv(8, 2)),
                                    run(QStringLiteral("ddp"), 2, 1, RunState::Completed, csv(5, 1))};
        const ScalingReport rep = buildScalingReport(QStringLiteral("s"), runs);
        const ReportGroupRow* one = group(rep, QStringLiteral("ddp"), 1);
        const ReportGroupRow* two = group(rep, QStringLiteral("ddp"), 2);
        QVERIFY(near(one->epochS, 8) && near(two->epochS, 5));
        QVERIFY(near(one->validationS, 2) && near(two->validationS, 1));
        QVERIFY(near(two->speedup, 8.0 / 5.0));
        QVERIFY(near(one->throughput, 64.0 / 8));
        QVERIFY(near(one->otherS, 8 - 0.8 - 4 - 1.6));  // training's parts only
        QVERIFY(rep.markdown().contains(QStringLiteral("training time of an epoch (`train_s`")));
        QVERIFY(rep.groupsCsv().section(QLatin1Char('\n'), 0, 0).endsWith(QStringLiteral(",validation_s,gpu_energy_wh,gpu_util_pct")));

        ReportOptions withVal;
        withVal.includeValidation = true;
        const ScalingReport wall = buildScalingReport(QStringLiteral("s"), runs, withVal);
        QVERIFY(near(group(wall, QStringLiteral("ddp"), 1)->epochS, 10));
        QVERIFY(near(group(wall, QStringLiteral("ddp"), 2)->speedup, 10.0 / 6.0));
        QVERIFY(near(group(wall, QStringLiteral("ddp"), 1)->otherS, 10 - 0.8 - 4 - 1.6 - 2));
        QVERIFY(wall.markdown().contains(QStringLiteral("training plus validation (`wall_s`")));

        // An older epochs.csv without train_s: wall_s − val_s, said once per run.
        QByteArray old = csv(8, 2);
        old.replace("wall_s,train_s,", "wall_s,");
        QByteArray rows;
        for (const QByteArray& line : old.split('\n')) {
            if (line.isEmpty() || line.startsWith("epoch,")) continue;
            QList<QByteArray> f = line.split(',');
            f.removeAt(3);  // the train_s field
            rows += f.join(',') + '\n';
        }
        const QByteArray header = old.left(old.indexOf('\n') + 1);
        const ScalingReport fallback =
            buildScalingReport(QStringLiteral("s"), {run(QStringLiteral("ddp"), 1, 1, RunState::Completed, header + rows)});
        QVERIFY(near(group(fallback, QStringLiteral("ddp"), 1)->epochS, 8));
        QVERIFY(fallback.warnings.join(QLatin1Char('\n')).contains(QStringLiteral("no train_s")));
    }

    // Weak or strong is read from what the runs did (the global batch per step), and a sweep whose
    // label says otherwise is warned about: a "weak" sweep that split one batch is strong scaling.
    void scalingKindIsMeasuredAndALabelThatContradictsItIsWarned()
    {
        auto csv = [](int steps) {
            QByteArray c = kHeader;
            for (int e = 1; e <= 3; ++e)
                c += QStringLiteral("%1,%2,10,10,0,64,%3,0,1,5,2,0,0,0.5,0.4,0.001,%4\n")
                         .arg(e)
                         .arg(e * steps)
                         .arg(steps)
                         .arg(1000 + 10 * e)
                         .toUtf8();
            return c;
        };
        auto sweepOf = [&](int stepsAtTwo) {
            QList<ReportRun> runs{run(QStringLiteral("ddp"), 1, 1, RunState::Completed, csv(10)),
                                  run(QStringLiteral("ddp"), 2, 1, RunState::Completed, csv(stepsAtTwo))};
            for (auto& r : runs) r.record.scaling = QStringLiteral("weak");
            return buildScalingReport(QStringLiteral("s"), runs);
        };
        // The same 10 steps of 6.4 samples at 1 and 2 ranks: one global batch split in two.
        const ScalingReport split = sweepOf(10);
        QCOMPARE(split.scalingLaunched, QStringLiteral("weak"));
        QCOMPARE(split.scalingMeasured, QStringLiteral("strong"));
        QVERIFY2(split.warnings.join(QLatin1Char('\n'))
                     .contains(QStringLiteral("launched as weak scaling, but its runs' global batch per step "
                                              "stayed the same at every size: that is strong scaling")),
                 qPrintable(split.warnings.join(QLatin1Char('\n'))));
        // 5 steps of 12.8 at 2 ranks: the global batch grew with the ranks.
        const ScalingReport grown = sweepOf(5);
        QCOMPARE(grown.scalingMeasured, QStringLiteral("weak"));
        for (const QString& w : grown.warnings) QVERIFY2(!w.contains(QStringLiteral("launched as")), qPrintable(w));
        QVERIFY(grown.markdown().contains(QStringLiteral("Scaling: weak (launched as weak;")));
    }

    // GPU energy (itwinai's total per run, warm-up included) and mean utilisation (after warm-up),
    // by hand: 1 rank 10 + 2 + 3 Wh; 2 ranks 4 + 1 + 1 Wh, and 8 + 2 + 2 Wh. Runs without telemetry
    // have none, and the report says nothing about energy then.
    void energyIsTheRunsTotal()
    {
        auto withGpu = [](const QByteArray& csv, const QList<std::pair<double, double>>& gpu) {
            QList<QByteArray> lines = csv.trimmed().split('\n');
            lines[0] += ",gpu_energy_wh,gpu_util_pct";
            for (int i = 1; i < lines.size(); ++i)
                lines[i] += QStringLiteral(",%1,%2").arg(gpu[i - 1].first).arg(gpu[i - 1].second).toUtf8();
            return lines.join('\n') + '\n';
        };
        const QByteArray three = epochs({{100, 20, 0.5, 1100}, {10, 20, 0.35, 1110}, {12, 20, 0.30, 1122}});
        const QList<ReportRun> runs{
            run(QStringLiteral("ddp"), 1, 1, RunState::Completed, withGpu(three, {{10, 20}, {2, 80}, {3, 90}})),
            run(QStringLiteral("ddp"), 2, 1, RunState::Completed, withGpu(three, {{4, 30}, {1, 60}, {1, 70}})),
            run(QStringLiteral("ddp"), 2, 2, RunState::Completed, withGpu(three, {{8, 30}, {2, 50}, {2, 60}})),
        };
        const ScalingReport rep = buildScalingReport(QStringLiteral("e"), runs);
        QVERIFY2(!rep.warnings.join(QLatin1Char('\n')).contains(QStringLiteral("column")),
                 qPrintable(rep.warnings.join(QLatin1Char('\n'))));
        QVERIFY(near(rep.runs[0].energyWh, 15));
        QVERIFY(near(rep.runs[0].gpuUtilPct, 85));
        QVERIFY(near(group(rep, QStringLiteral("ddp"), 2)->energyWh, (6 + 12) / 2.0));
        QVERIFY(near(group(rep, QStringLiteral("ddp"), 2)->gpuUtilPct, (65 + 55) / 2.0));
        QVERIFY(rep.runsCsv().section(QLatin1Char('\n'), 1, 1).endsWith(QStringLiteral(",15,85")));
        QVERIFY(rep.markdown().contains(QStringLiteral("## GPU energy and utilisation")));
        QVERIFY(rep.markdown().contains(QStringLiteral("| ddp | 2 | 2 | 9.000 | 60.0 % |")));

        const ScalingReport none = buildScalingReport(QStringLiteral("s"), sweep());
        QVERIFY(std::isnan(none.runs[0].energyWh) && std::isnan(none.groups[0].gpuUtilPct));
        QVERIFY(!none.markdown().contains(QStringLiteral("GPU energy")));
        QVERIFY(none.runsCsv().section(QLatin1Char('\n'), 1, 1).endsWith(QStringLiteral(",,")));
    }

    // The gradient noise scale of the runs' epochs (epochs.csv gns_b_simple) against the loss the
    // gradients were measured along (the mean of the validation losses before and after each
    // epoch), and the runs' global batches (manifest); a run without the column adds no point.
    void theGradientNoiseScaleAgainstTheLoss()
    {
        QList<ReportRun> runs;
        const QByteArray measured = "epoch,wall_s,train_s,val_s,samples_processed_global,val_loss,gns_b_simple\n"
                                    "1,10,10,0,64,0.5,2\n2,10,10,0,64,0.3,nan\n3,10,10,0,64,0.2,6\n";
        runs << run(QStringLiteral("ddp"), 2, 1, RunState::Completed, measured);
        runs.last().manifest.insert(QStringLiteral("global_batch_size"), 4);
        runs << run(QStringLiteral("ddp"), 1, 1, RunState::Completed, epochs({{10, 20, 0.5, 1010}, {10, 20, 0.25, 1020}}));
        runs.last().manifest.insert(QStringLiteral("global_batch_size"), 2);
        const ScalingReport rep = buildScalingReport(QStringLiteral("s"), runs);
        QCOMPARE(rep.globalBatches, (QList<double>{2, 4}));
        QCOMPARE(rep.noiseByLoss, (QList<QPair<double, double>>{{0.25, 6}, {0.5, 2}}));  // epoch 3 at (0.3 + 0.2) / 2
    }

    void csvHasOneRowPerGroupAndRun()
    {
        ReportOptions options;
        options.targetLoss = 0.32;  // one that ddp at 4 ranks never reached
        const ScalingReport rep = buildScalingReport(QStringLiteral("s"), sweep(), options);
        const QStringList groups = rep.groupsCsv().trimmed().split(QLatin1Char('\n'));
        QCOMPARE(groups.size(), 1 + 4);
        QVERIFY(groups[0].startsWith(QStringLiteral("strategy,world_size,nodes,repetitions,epoch_s_mean")));
        // The ddp 4-rank row, field by field (floating-point sums print their last digits).
        QStringList row;
        for (const QString& g : groups)
            if (g.startsWith(QStringLiteral("ddp,4,"))) row = g.split(QLatin1Char(','));
        QCOMPARE(row.size(), 25);
        const QList<double> expect{4, 1, 1, 4, 0, 4, 4, 64, 16, 3, 3, 4, 0.75, 0.75, 3, 2, 0.8, 0.4, 0.8};
        for (int i = 0; i < expect.size(); ++i)
            QVERIFY2(near(row[i + 1].toDouble(), expect[i]), qPrintable(QStringLiteral("column %1: %2").arg(i + 1).arg(row[i + 1])));
        QCOMPARE(row[20], QString());  // time-to-target: not reached
        QCOMPARE(row[21], QStringLiteral("0"));
        QCOMPARE(row[22], QStringLiteral("0"));  // validation per epoch
        QCOMPARE(rep.runsCsv().trimmed().split(QLatin1Char('\n')).size(), 1 + 8);
        QVERIFY(rep.markdown().contains(QStringLiteral("| ddp | 4 | 1 | 1 | 4.000 | 16 | 3 | 4 | 75.0% |")));
    }

    void epochsCsvWithMissingColumnsAndBadRows()
    {
        const QByteArray csv = "epoch,wall_s,val_loss\n1,5,0.5\n2,abc,0.4\n3,4\n2,6,0.3\n1,9,0.45\n4,7,0.2";
        const EpochTable t = parseEpochsCsv(csv, QStringLiteral("e.csv"));
        QCOMPARE(t.rows.size(), 2);  // epochs 1 (its newer row) and 2; epoch 4 has no newline yet
        QCOMPARE(t.rows[0].wallS, 9.0);
        QCOMPARE(t.rows[1].epoch, 2);
        QCOMPARE(t.rows[1].wallS, 6.0);
        QVERIFY(std::isnan(t.rows[0].computeS));
        QVERIFY(t.missingColumns.contains(QStringLiteral("compute_s")));
        const QString all = t.warnings.join(QLatin1Char('\n'));
        QVERIFY2(all.contains(QStringLiteral("e.csv:3: column 'wall_s' holds 'abc'")), qPrintable(all));
        QVERIFY2(all.contains(QStringLiteral("e.csv:4: 2 cells for 3 columns")), qPrintable(all));
        QVERIFY2(all.contains(QStringLiteral("e.csv:6: epoch 1 appears again")), qPrintable(all));
        QVERIFY2(all.contains(QStringLiteral("e.csv:7: the last line has no newline yet")), qPrintable(all));
        const EpochTable none = parseEpochsCsv("step,loss\n1,2\n", QStringLiteral("x.csv"));
        QVERIFY(none.rows.isEmpty());
        QVERIFY(none.warnings.join(QString()).contains(QStringLiteral("no 'epoch' or 'wall_s' column")));
    }
};

QTEST_GUILESS_MAIN(TestScalingReport)
#include "tst_scalingreport.moc"
