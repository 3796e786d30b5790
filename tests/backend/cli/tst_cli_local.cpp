// The `scaledesk` command line on the `local` profile: no SSH, no SLURM, the real trainer as
// processes (mpirun for 2 ranks). Sweeps, hostile names, a killed submit, cancel, and a USR1
// checkpoint that `requeue` resumes.
#include "../../common/svgtexts.h"
#include "analysis/epochscsv.h"
#include "clitest.h"

#include <QDeadlineTimer>
#include <QDir>
#include <QFileInfo>
#include <QImage>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMap>
#include <QRegularExpression>
#include <QSet>
#include <QTemporaryDir>
#include <QThread>

using namespace scaledesk::test;

namespace {
// The text an SVG draws (its <text> elements' contents), for a failure message.
QString svgTexts(const QByteArray& svg)
{
    static const QRegularExpression text(QStringLiteral("<text[^>]*>([^<]*)</text>"));
    QStringList found;
    for (auto it = text.globalMatch(QString::fromUtf8(svg)); it.hasNext();) found << it.next().captured(1).trimmed();
    return found.join(QStringLiteral(" | "));
}
}  // namespace

class TestCliLocal : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_tmp;
    Cli m_cli;

    // The workspace's profile `two-slots`: local, 2 slots, with slot files of its own (no job of
    // another test program can hold them).
    Cli twoSlots()
    {
        QDir().mkpath(m_cli.workspace + QStringLiteral("/profiles"));
        QFile profile(m_cli.workspace + QStringLiteral("/profiles/two-slots.yaml"));
        if (profile.open(QIODevice::WriteOnly)) profile.write("kind: local\nslots: 2\n");
        Cli cli = m_cli;
        cli.env.insert(QStringLiteral("SCALEDESK_SLOTS_DIR"), m_tmp.filePath(QStringLiteral("slots")));
        return cli;
    }

private slots:
    void initTestCase()
    {
        // A workspace path a shell would split and expand if anything forgot to quote it.
        m_cli.workspace = m_tmp.filePath(QStringLiteral("work space 'q' $(touch pwned-ws); ü"));
        m_cli.env.insert(QStringLiteral("SCALEDESK_TRAIN"), QStringLiteral(SCALEDESK_TRAIN_BIN));
        m_cli.env.remove(QStringLiteral("SCALEDESK_FAULT_SUBMIT"));
        if (qEnvironmentVariableIsSet("SCALEDESK_KEEP_TEST_DIRS")) m_tmp.setAutoRemove(false);
    }

    void dryRunRecordsNothing()
    {
        const auto r =
            m_cli.run({QStringLiteral("submit"), QStringLiteral("--config"), QStringLiteral("cpu-tiny"), QStringLiteral("--sweep"),
                       QStringLiteral("dry"), QStringLiteral("--ranks-per-node"), QStringLiteral("1,2"), QStringLiteral("--strategies"),
                       QStringLiteral("ddp,zero1"), QStringLiteral("--make-data"), QStringLiteral("--dry-run")});
        QCOMPARE(r.exitCode, 0);
        QCOMPARE(r.out.count(QStringLiteral("#!/bin/bash")), 4);
        QVERIFY(r.out.contains(QStringLiteral("# ---- run dry-zero1-1x2-r1: job.sh ----")));
        QVERIFY(r.out.contains(QStringLiteral("'--strategy' 'zero1'")));
        QVERIFY(r.out.contains(QStringLiteral("4 job(s)")));
        const auto list = m_cli.run({QStringLiteral("runs"), QStringLiteral("list"), QStringLiteral("--json")});
        QCOMPARE(list.exitCode, 0);
        QCOMPARE(QJsonDocument::fromJson(list.out.toUtf8()).array().size(), 0);
    }

    void sweepRunsEveryPoint()
    {
        const auto r =
            m_cli.run({QStringLiteral("submit"), QStringLiteral("--config"), QStringLiteral("cpu-tiny"), QStringLiteral("--sweep"),
                       QStringLiteral("loc"), QStringLiteral("--nodes"), QStringLiteral("1"), QStringLiteral("--ranks-per-node"),
                       QStringLiteral("1,2"), QStringLiteral("--strategies"), QStringLiteral("ddp,fused"), QStringLiteral("--make-data"),
                       QStringLiteral("--wait"), QStringLiteral("--timeout"), QStringLiteral("600")});
        QVERIFY2(r.exitCode == 0, qPrintable(r.all()));
        const QStringList ids = {QStringLiteral("loc-ddp-1x1-r1"), QStringLiteral("loc-ddp-1x2-r1"), QStringLiteral("loc-fused-1x1-r1"),
                                 QStringLiteral("loc-fused-1x2-r1")};
        for (const QString& id : ids) {
            QCOMPARE(m_cli.state(id), QStringLiteral("completed"));
            const QJsonObject m = m_cli.manifest(id);  // mirrored into the workspace
            QCOMPARE(m.value(QStringLiteral("status")).toString(), QStringLiteral("finished"));
            const bool two = id.contains(QStringLiteral("1x2"));
            QCOMPARE(m.value(QStringLiteral("world_size")).toInt(), two ? 2 : 1);
            // The strategy as launched, at one rank too (the sweep's baseline of that strategy), and the
            // run's own id (its job starts the trainer with --run_dir .).
            QCOMPARE(m.value(QStringLiteral("strategy")).toString(), id.section(QLatin1Char('-'), 1, 1));
            QCOMPARE(m.value(QStringLiteral("run_id")).toString(), id);
            QCOMPARE(m_cli.record(id).value(QStringLiteral("strategy")).toString(), id.section(QLatin1Char('-'), 1, 1));
            QVERIFY(m_cli.mirrored(id, QStringLiteral("metrics.jsonl")).contains("\"event\":\"finished\""));
            QVERIFY(!m_cli.mirrored(id, QStringLiteral("epochs.csv")).isEmpty());
            const QStringList h = m_cli.history(id);
            QCOMPARE(h.first(), QStringLiteral("draft"));
            QVERIFY2(h.contains(QStringLiteral("queued")) && h.last() == QStringLiteral("completed"), qPrintable(h.join(QLatin1Char(' '))));
        }
        const auto list = m_cli.run(
            {QStringLiteral("runs"), QStringLiteral("list"), QStringLiteral("--json"), QStringLiteral("--sweep"), QStringLiteral("loc")});
        const QJsonArray rows = QJsonDocument::fromJson(list.out.toUtf8()).array();
        QCOMPARE(rows.size(), 4);
        for (const auto& row : rows) QCOMPARE(row.toObject().value(QStringLiteral("state")).toString(), QStringLiteral("completed"));
        QVERIFY(!QFile::exists(m_tmp.filePath(QStringLiteral("pwned-ws"))));
    }

    // The local profile is a small scheduler: a sweep of 3 points x 2 gloo ranks on a profile of 2
    // slots runs its points in turn (each takes both slots), the waiting ones PENDING in `runs list`,
    // each on its own rendezvous port, and all complete.
    void aLocalSweepWaitsForFreeSlots()
    {
        const Cli cli = twoSlots();
        const auto r =
            cli.run({QStringLiteral("submit"), QStringLiteral("--profile"), QStringLiteral("two-slots"), QStringLiteral("--config"),
                     QStringLiteral("cpu-tiny"), QStringLiteral("--sweep"), QStringLiteral("turn"), QStringLiteral("--ranks-per-node"),
                     QStringLiteral("2"), QStringLiteral("--repetitions"), QStringLiteral("3"), QStringLiteral("--make-data"),
                     QStringLiteral("--"), QStringLiteral("--backend"), QStringLiteral("gloo")});
        QVERIFY2(r.exitCode == 0, qPrintable(r.all()));
        int mostRunning = 0;
        bool sawPendingJson = false, sawPendingText = false;
        QDeadlineTimer deadline(600000);
        QStringList states;
        do {
            QVERIFY(cli.run({QStringLiteral("status"), QStringLiteral("--json")}).exitCode == 0);
            const auto list = cli.run({QStringLiteral("runs"), QStringLiteral("list"), QStringLiteral("--json"), QStringLiteral("--sweep"),
                                       QStringLiteral("turn")});
            const QJsonArray rows = QJsonDocument::fromJson(list.out.toUtf8()).array();
            QCOMPARE(rows.size(), 3);
            int running = 0;
            states.clear();
            for (const auto& row : rows) {
                const QJsonObject o = row.toObject();
                states << o.value(QStringLiteral("state")).toString();
                running += states.last() == QLatin1String("running");
                if (states.last() == QLatin1String("queued") &&
                    o.value(QStringLiteral("detail")).toString().startsWith(QLatin1String("local: PENDING (waiting for 2 of 2 slots")))
                    sawPendingJson = true;
            }
            mostRunning = std::max(mostRunning, running);
            if (!sawPendingText) {
                const auto text =
                    cli.run({QStringLiteral("runs"), QStringLiteral("list"), QStringLiteral("--sweep"), QStringLiteral("turn")});
                sawPendingText = text.out.contains(QStringLiteral("queued")) && text.out.contains(QStringLiteral("local: PENDING"));
            }
            if (states.count(QStringLiteral("completed")) == 3 || states.contains(QStringLiteral("failed"))) break;
            QThread::msleep(300);
        } while (!deadline.hasExpired());
        QCOMPARE(states, QStringList(3, QStringLiteral("completed")));
        QVERIFY2(sawPendingJson, "no run was ever seen PENDING with its reason in `runs list --json`");
        QVERIFY2(sawPendingText, "no run was ever seen PENDING in `runs list`");
        // (A run's record can still say running while its job has ended and the last bytes come;
        // whether the jobs overlapped is what their manifests say, below.)
        QVERIFY(mostRunning >= 1);
        // Each ran alone: one ended before the next started, each with its own port, over gloo.
        QList<QPair<QString, QString>> spans;
        QSet<QString> ports;
        for (int rep = 1; rep <= 3; ++rep) {
            const QString id = QStringLiteral("turn-ddp-1x2-r%1").arg(rep);
            const QJsonObject m = cli.manifest(id);
            QCOMPARE(m.value(QStringLiteral("backend")).toString(), QStringLiteral("gloo"));
            QCOMPARE(m.value(QStringLiteral("world_size")).toInt(), 2);
            spans << qMakePair(m.value(QStringLiteral("start_utc")).toString(), m.value(QStringLiteral("end_utc")).toString());
            QFile out(m_cli.workspace + QStringLiteral("/local/runs/") + id + QStringLiteral("/job.out"));
            QVERIFY2(out.open(QIODevice::ReadOnly), qPrintable(out.fileName()));
            const QString text = QString::fromUtf8(out.readAll());
            QVERIFY2(text.contains(QStringLiteral("scaledesk: started with 2 of 2 slots")), qPrintable(text));
            // Waiting for slots is queued, never running then requeued (a poll before the job's
            // first wait once saw it running).
            const QStringList h = cli.history(id);
            QVERIFY2(!h.contains(QStringLiteral("requeued")), qPrintable(id + QStringLiteral(": ") + h.join(QLatin1Char(' '))));
            const auto port = QRegularExpression(QStringLiteral("MASTER_PORT=([0-9]+)")).match(text);
            QVERIFY2(port.hasMatch(), qPrintable(text));
            ports << port.captured(1);
        }
        QCOMPARE(ports.size(), 3);
        std::sort(spans.begin(), spans.end());
        for (int i = 1; i < spans.size(); ++i)
            QVERIFY2(spans[i - 1].second <= spans[i].first, qPrintable(spans[i - 1].second + QStringLiteral(" > ") + spans[i].first));
    }

    // The sweep's report with its plots, and a comparison chart, written headless.
    void reportAndCompareWriteImages()
    {
        const QString dir = m_tmp.filePath(QStringLiteral("report 'out'"));
        const auto r = m_cli.run({QStringLiteral("report"), QStringLiteral("--sweep"), QStringLiteral("loc"), QStringLiteral("--out"), dir,
                                  QStringLiteral("--format"), QStringLiteral("png,svg,pdf,csv,md")});
        QVERIFY2(r.exitCode == 0, qPrintable(r.all()));
        for (const QString& plot : {QStringLiteral("epoch_time"), QStringLiteral("speedup"), QStringLiteral("efficiency"),
                                    QStringLiteral("throughput"), QStringLiteral("time_breakdown"), QStringLiteral("time_to_target")})
            for (const QString& ext : {QStringLiteral("png"), QStringLiteral("svg"), QStringLiteral("pdf")}) {
                QFile f(dir + QLatin1Char('/') + plot + QLatin1Char('.') + ext);
                QVERIFY2(f.open(QIODevice::ReadOnly) && f.size() > 1000, qPrintable(f.fileName()));
            }
        QVERIFY(QFile::exists(dir + QStringLiteral("/groups.csv")));
        QVERIFY(QFile::exists(dir + QStringLiteral("/report.md")));
        QFile md(dir + QStringLiteral("/report.md"));
        QVERIFY(md.open(QIODevice::ReadOnly));
        QVERIFY2(md.readAll().contains("Scaling: weak (launched as weak;"), "the default sweep is a weak one");
        const QString png = m_tmp.filePath(QStringLiteral("compare.png"));
        const auto c = m_cli.run({QStringLiteral("compare"), QStringLiteral("loc-ddp-1x1-r1"), QStringLiteral("loc-fused-1x2-r1"),
                                  QStringLiteral("--series"), QStringLiteral("step/loss"), QStringLiteral("--out"), png});
        QVERIFY2(c.exitCode == 0, qPrintable(c.all()));
        // Qt's offscreen platform warns about size hints for every chart, and about a missing
        // XDG_RUNTIME_DIR on every command; the user sees none of it.
        for (const QString& noise : {QStringLiteral("propagateSizeHints"), QStringLiteral("XDG_RUNTIME_DIR")})
            QVERIFY2(!r.err.contains(noise) && !c.err.contains(noise), qPrintable(r.err + c.err));
        QFile f(png);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QVERIFY(f.read(4) == QByteArray("\x89PNG"));
        const auto bad = m_cli.run({QStringLiteral("report"), QStringLiteral("--sweep"), QStringLiteral("loc"), QStringLiteral("--out"),
                                    QStringLiteral("/proc/nope"), QStringLiteral("--format"), QStringLiteral("png")});
        QCOMPARE(bad.exitCode, 1);
        QVERIFY2(bad.err.contains(QStringLiteral("/proc/nope")), qPrintable(bad.err));
    }

    // `scaledesk plan` on the sweep's real runs: a row per strategy and node count, the measured
    // point beside its prediction, points past 8× the largest measured rank count flagged, and a
    // benchmark file that cannot be read named with its line.
    void planPredictsFromTheSweepsRuns()
    {
        const QString dir = m_tmp.filePath(QStringLiteral("plan"));
        const auto r = m_cli.run({QStringLiteral("plan"), QStringLiteral("--sweep"), QStringLiteral("loc"), QStringLiteral("--nodes"),
                                  QStringLiteral("1,2,32"), QStringLiteral("--out"), dir});
        QVERIFY2(r.exitCode == 0, qPrintable(r.all()));
        QFile csv(dir + QStringLiteral("/plan.csv"));
        QVERIFY(csv.open(QIODevice::ReadOnly));
        const QStringList lines = QString::fromUtf8(csv.readAll()).trimmed().split(QLatin1Char('\n'));
        QCOMPARE(lines.size(), 1 + 2 * 3);  // ddp and fused × 1, 2, 32 nodes
        const QStringList header = lines[0].split(QLatin1Char(','));
        auto cell = [&](int row, const char* column) { return lines[row].split(QLatin1Char(','))[header.indexOf(QLatin1String(column))]; };
        QCOMPARE(cell(1, "strategy"), QStringLiteral("ddp"));
        QCOMPARE(cell(1, "ranks"), QStringLiteral("2"));                             // 2 ranks per node, as the sweep's largest runs had
        QVERIFY2(cell(1, "measured_epoch_s").toDouble() > 0, qPrintable(lines[1]));  // loc-ddp-1x2-r1 ran this point
        QVERIFY2(cell(1, "epoch_s").toDouble() > 0 && cell(1, "epoch_low_s").toDouble() <= cell(1, "epoch_s").toDouble() &&
                     cell(1, "epoch_high_s").toDouble() >= cell(1, "epoch_s").toDouble(),
                 qPrintable(lines[1]));
        QCOMPARE(cell(2, "extrapolated"), QStringLiteral("no"));   // 4 ranks
        QCOMPARE(cell(3, "extrapolated"), QStringLiteral("yes"));  // 64 ranks > 8 × 2
        // This machine is one node: across nodes was never timed, so 2 and 32 nodes are "not
        // measured" (no stand-in of the within-node bandwidth), with the command that measures it,
        // naming the runs' config (launched from the workspace's configs/unet.yaml: no --config-file).
        for (int row : {2, 3}) {
            QVERIFY2(cell(row, "not_measured").startsWith(QStringLiteral("communication across nodes")), qPrintable(lines[row]));
            QCOMPARE(cell(row, "measure_with"),
                     QStringLiteral("scaledesk calibrate --profile local --nodes 2 --ranks-per-node 2 --config cpu-tiny"));
            QVERIFY2(cell(row, "epoch_s").isEmpty(), qPrintable(lines[row]));
        }
        QVERIFY2(r.out.contains(QStringLiteral("not measured")), qPrintable(r.out));
        QVERIFY2(r.out.contains(QStringLiteral("the steps of loc-ddp-1x2-r1")), qPrintable(r.out));
        QVERIFY(QFile::exists(dir + QStringLiteral("/plan.md")));
        // The plots, in every format by default: the SVG's axis titles and legend, a PNG with ink.
        for (const char* plot : {"plan_epoch_time", "plan_efficiency", "plan_node_hours"})
            for (const char* ext : {"png", "svg", "pdf"})
                QVERIFY2(QFileInfo(dir + QStringLiteral("/%1.%2").arg(QLatin1String(plot), QLatin1String(ext))).size() > 1000, plot);
        QString svgError;
        const QStringList texts = svgTexts(dir + QStringLiteral("/plan_epoch_time.svg"), &svgError);
        QVERIFY2(svgError.isEmpty(), qPrintable(svgError));
        for (const QString& want :
             {QStringLiteral("Epoch time (s)"), QStringLiteral("Ranks (GPUs or CPU ranks)"), QStringLiteral("ddp predicted"),
              QStringLiteral("fused predicted"), QStringLiteral("ddp measured"), QStringLiteral("Predicted epoch time (weak scaling)")})
            QVERIFY2(texts.join(QLatin1Char('|')).contains(want),
                     qPrintable(want + QStringLiteral(" not in ") + texts.join(QLatin1Char('|'))));
        const QImage png(dir + QStringLiteral("/plan_efficiency.png"));
        int inked = 0;
        for (int y = 0; y < png.height(); y += 3)
            for (int x = 0; x < png.width(); x += 3) inked += png.pixelColor(x, y).lightness() < 200;
        QVERIFY2(png.width() == 1200 && inked > 1500, qPrintable(QString::number(inked)));  // one measured size per strategy drawn
        const QStringList efficiencyTexts = svgTexts(dir + QStringLiteral("/plan_efficiency.svg"), &svgError);
        QVERIFY2(efficiencyTexts.join(QLatin1Char('|'))
                     .contains(QStringLiteral("Not measured, not drawn: ddp, fused at 2, 32 node(s); plan.md says what to measure")),
                 qPrintable(efficiencyTexts.join(QLatin1Char('|'))));
        const QString bad = m_tmp.filePath(QStringLiteral("bad-comm.jsonl"));
        QFile b(bad);
        QVERIFY(b.open(QIODevice::WriteOnly));
        b.write(
            "{\"kind\":\"allreduce\",\"ranks\":2,\"nodes\":1,\"bytes\":4096,\"seconds\":0.001}\n{\"kind\":\"allreduce\",\"ranks\":2}\n");
        b.close();
        const auto e = m_cli.run({QStringLiteral("plan"), QStringLiteral("--sweep"), QStringLiteral("loc"), QStringLiteral("--nodes"),
                                  QStringLiteral("2"), QStringLiteral("--comm"), bad});
        QCOMPARE(e.exitCode, 1);
        QVERIFY2(e.err.contains(bad + QStringLiteral(":2")) && e.err.contains(QStringLiteral("'nodes'")), qPrintable(e.err));
    }

    // `plan --target-loss` on real runs: a sweep of 1 and 2 ranks (global batches 2 and 4) trained
    // for 4 epochs; the learning curve fitted to their validation losses gives each point's
    // time-to-target beside what the 2-rank run measured, in the CSV, the Markdown and a plot. The
    // 2-epoch sweep has too few losses for a curve: an error that says so.
    void planTimeToTargetFromTheRunsLosses()
    {
        const auto few = m_cli.run({QStringLiteral("plan"), QStringLiteral("--sweep"), QStringLiteral("loc"), QStringLiteral("--nodes"),
                                    QStringLiteral("1"), QStringLiteral("--target-loss"), QStringLiteral("0.1")});
        QCOMPARE(few.exitCode, 1);
        QVERIFY2(few.err.contains(QStringLiteral("time-to-target")) && few.err.contains(QStringLiteral("2 distinct sample count")),
                 qPrintable(few.err));

        const auto r =
            m_cli.run({QStringLiteral("submit"), QStringLiteral("--config"), QStringLiteral("cpu-tiny"), QStringLiteral("--sweep"),
                       QStringLiteral("curve"), QStringLiteral("--ranks-per-node"), QStringLiteral("1,2"), QStringLiteral("--strategies"),
                       QStringLiteral("ddp"), QStringLiteral("--make-data"), QStringLiteral("--wait"), QStringLiteral("--timeout"),
                       QStringLiteral("600"), QStringLiteral("--"), QStringLiteral("--num_epochs"), QStringLiteral("4"),
                       QStringLiteral("--gns_every"), QStringLiteral("1")});
        QVERIFY2(r.exitCode == 0, qPrintable(r.all()));
        // The 2-rank run measured the gradient noise scale each epoch; the 1-rank run could not.
        int measured = 0;
        for (const scaledesk::EpochRow& e :
             scaledesk::parseEpochsCsv(m_cli.mirrored(QStringLiteral("curve-ddp-1x2-r1"), QStringLiteral("epochs.csv")), QString()).rows)
            measured += e.gnsBSimple > 0;
        for (const scaledesk::EpochRow& e :
             scaledesk::parseEpochsCsv(m_cli.mirrored(QStringLiteral("curve-ddp-1x1-r1"), QStringLiteral("epochs.csv")), QString()).rows)
            QVERIFY(std::isnan(e.gnsBSimple));
        QVERIFY2(measured > 0, "no epoch of the 2-rank run has a positive B_simple");
        // The target: a loss both runs reached (the larger of their best).
        double target = 0;
        for (const char* id : {"curve-ddp-1x1-r1", "curve-ddp-1x2-r1"}) {
            const scaledesk::EpochTable t =
                scaledesk::parseEpochsCsv(m_cli.mirrored(QLatin1String(id), QStringLiteral("epochs.csv")), QLatin1String(id));
            QCOMPARE(t.rows.size(), 4);
            double best = 1e300;
            for (const scaledesk::EpochRow& e : t.rows) best = std::min(best, e.valLoss);
            target = std::max(target, best);
        }
        const QString dir = m_tmp.filePath(QStringLiteral("plan-target"));
        const auto p = m_cli.run({QStringLiteral("plan"), QStringLiteral("--sweep"), QStringLiteral("curve"), QStringLiteral("--nodes"),
                                  QStringLiteral("1,4"), QStringLiteral("--target-loss"), QString::number(target, 'g', 17),
                                  QStringLiteral("--out"), dir, QStringLiteral("--format"), QStringLiteral("csv,md,svg,png")});
        QVERIFY2(p.exitCode == 0, qPrintable(p.all()));
        QVERIFY2(p.out.contains(QStringLiteral("learning curve: validation loss")) &&
                     p.out.contains(QStringLiteral("from 8 validation losses at global batch(es) 2, 4")),
                 qPrintable(p.out));
        // Time-to-target reads B_noise off the noise scale the trainer measured, as a function of the loss.
        QVERIFY2(p.out.contains(QStringLiteral("ds_eff = ds / (1 + B/B_noise(L))")) &&
                     p.out.contains(
                         QStringLiteral("B_noise(L) the gradient noise scale the trainer measured (B_simple, %1 epoch(s)").arg(measured)),
                 qPrintable(p.out));
        QFile csv(dir + QStringLiteral("/plan.csv"));
        QVERIFY(csv.open(QIODevice::ReadOnly));
        const QStringList lines = QString::fromUtf8(csv.readAll()).trimmed().split(QLatin1Char('\n'));
        QCOMPARE(lines.size(), 3);  // ddp at 2 and 8 ranks
        const QStringList header = lines[0].split(QLatin1Char(','));
        auto cell = [&](int row, const char* column) { return lines[row].split(QLatin1Char(','))[header.indexOf(QLatin1String(column))]; };
        QCOMPARE(cell(1, "global_batch"), QStringLiteral("4"));
        QCOMPARE(cell(2, "global_batch"), QStringLiteral("16"));
        const double epochs = cell(1, "epochs_to_target").toDouble(), time = cell(1, "time_to_target_s").toDouble();
        QVERIFY2(epochs > 0 && time >= cell(1, "epoch_s").toDouble() && cell(1, "node_hours_to_target").toDouble() > 0,
                 qPrintable(lines[1]));
        // 4 nodes: across nodes was never timed on this one machine, so no time-to-target either.
        QVERIFY2(cell(2, "time_to_target_s").isEmpty() && !cell(2, "not_measured").isEmpty(), qPrintable(lines[2]));
        // The same global batch of 16 on one node (8 ranks) is predicted.
        const QString one = m_tmp.filePath(QStringLiteral("plan-target-8"));
        const auto eight =
            m_cli.run({QStringLiteral("plan"), QStringLiteral("--sweep"), QStringLiteral("curve"), QStringLiteral("--nodes"),
                       QStringLiteral("1"), QStringLiteral("--ranks-per-node"), QStringLiteral("8"), QStringLiteral("--target-loss"),
                       QString::number(target, 'g', 17), QStringLiteral("--out"), one, QStringLiteral("--format"), QStringLiteral("csv")});
        QVERIFY2(eight.exitCode == 0, qPrintable(eight.all()));
        QFile csv8(one + QStringLiteral("/plan.csv"));
        QVERIFY(csv8.open(QIODevice::ReadOnly));
        const QStringList row8 = QString::fromUtf8(csv8.readAll()).trimmed().split(QLatin1Char('\n')).value(1).split(QLatin1Char(','));
        auto cell8 = [&](const char* column) { return row8.value(header.indexOf(QLatin1String(column))); };
        QCOMPARE(cell8("global_batch"), QStringLiteral("16"));
        QVERIFY2(cell8("epochs_to_target").toDouble() > 0 && cell8("time_to_target_s").toDouble() >= cell8("epoch_s").toDouble(),
                 qPrintable(row8.join(QLatin1Char(','))));
        // The 2-rank run reached the target: its training time up to that epoch, measured.
        QVERIFY2(cell(1, "measured_time_to_target_s").toDouble() > 0, qPrintable(lines[1]));
        QFile md(dir + QStringLiteral("/plan.md"));
        QVERIFY(md.open(QIODevice::ReadOnly));
        QVERIFY(md.readAll().contains("## Time to a validation loss of"));
        QFile svg(dir + QStringLiteral("/plan_time_to_target.svg"));
        QVERIFY(svg.open(QIODevice::ReadOnly));
        const QByteArray text = svg.readAll();
        for (const char* want : {"Time to target (s)", "ddp predicted", "ddp measured", "Predicted training time to validation loss"})
            QVERIFY2(text.contains(want),
                     qPrintable(QStringLiteral("%1 not in the plot; its text: %2; the plan's rows:\n%3")
                                    .arg(QLatin1String(want), svgTexts(text), lines.join(QLatin1Char('\n')))));
        QVERIFY(QFileInfo(dir + QStringLiteral("/plan_time_to_target.png")).size() > 1000);
    }

    // `scaledesk calibrate` on the local profile: a 2-rank `scaledesk-train bench-comm` job through
    // the lifecycle layer, its timings mirrored into the workspace, and `plan` using them (the
    // profile's calibrations) when no --comm is given.
    void calibrateTimesTheCollectivesAndPlanUsesThem()
    {
        const auto r = m_cli.run({QStringLiteral("calibrate"),
                                  QStringLiteral("--nodes"),
                                  QStringLiteral("1"),
                                  QStringLiteral("--ranks-per-node"),
                                  QStringLiteral("2"),
                                  QStringLiteral("--sizes"),
                                  QStringLiteral("64K,1M"),
                                  QStringLiteral("--reps"),
                                  QStringLiteral("3"),
                                  QStringLiteral("--name"),
                                  QStringLiteral("cal"),
                                  QStringLiteral("--config"),
                                  QStringLiteral("cpu-tiny"),
                                  QStringLiteral("--local-batch"),
                                  QStringLiteral("1"),
                                  QStringLiteral("--make-data"),
                                  QStringLiteral("--wait"),
                                  QStringLiteral("--"),
                                  QStringLiteral("--num_data_workers"),
                                  QStringLiteral("2")});
        QVERIFY2(r.exitCode == 0, qPrintable(r.all()));
        QCOMPARE(m_cli.state(QStringLiteral("cal-1x2")), QStringLiteral("completed"));
        QCOMPARE(m_cli.record(QStringLiteral("cal-1x2")).value(QStringLiteral("task")).toString(), QStringLiteral("bench-comm"));
        const QString file = m_cli.workspace + QStringLiteral("/runs/cal-1x2/comm.jsonl");
        QVERIFY2(r.out.contains(QStringLiteral("cal-1x2/comm.jsonl")), qPrintable(r.out));
        QFile f(file);
        QVERIFY2(f.open(QIODevice::ReadOnly), qPrintable(file));
        int lines = 0, afterCompute = 0, overlapped = 0, barrier = 0, allreduces = 0;
        QSet<QString> kinds;
        QMap<QString, QSet<qint64>> timedBy;  // strategy → the sizes timed for it (sent_by)
        QMap<QString, QSet<qint64>> sizes;    // collective → sizes timed
        for (const QByteArray& line : f.readAll().split('\n')) {
            if (line.trimmed().isEmpty()) continue;
            const QJsonObject o = QJsonDocument::fromJson(line).object();
            QCOMPARE(o.value(QStringLiteral("ranks")).toInt(), 2);
            QVERIFY(o.value(QStringLiteral("seconds")).toDouble() > 0);
            kinds.insert(o.value(QStringLiteral("kind")).toString());
            const bool computes = o.value(QStringLiteral("kind")).toString() == QStringLiteral("compute") ||
                o.value(QStringLiteral("mode")).toString() == QStringLiteral("after_compute") ||
                o.value(QStringLiteral("mode")).toString() == QStringLiteral("overlapped");
            const QString kind = o.value(QStringLiteral("kind")).toString();
            if (!o.contains(QStringLiteral("mode")) && kind != QStringLiteral("compute")) {
                ++barrier;
                allreduces += kind == QStringLiteral("allreduce");
                const qint64 bytes = qint64(o.value(QStringLiteral("bytes")).toDouble());
                sizes[kind].insert(bytes);
                for (const QJsonValue& by : o.value(QStringLiteral("sent_by")).toArray()) timedBy[by.toString()].insert(bytes);
            }
            afterCompute += o.value(QStringLiteral("mode")).toString() == QStringLiteral("after_compute");
            overlapped += o.value(QStringLiteral("mode")).toString() == QStringLiteral("overlapped");
            // --config: cpu-tiny's own step (its config.yaml in the run folder) is the compute, on
            // batches from its loader (--make-data's link), with the trainer flag after -- applied.
            if (computes)
                QVERIFY2(o.value(QStringLiteral("kernel")).toString() == QStringLiteral("model") &&
                             o.value(QStringLiteral("config")).toString() == QStringLiteral("cpu-tiny") &&
                             o.value(QStringLiteral("local_batch")).toInt() == 1 &&
                             o.value(QStringLiteral("data")).toString() == QStringLiteral("loader") &&
                             o.value(QStringLiteral("data_workers")).toInt() == 2,
                         line.constData());
            ++lines;
        }
        // Each collective at 64K and 1M and at every size a strategy sends with cpu-tiny at 2 ranks
        // (the buckets the 2-rank training runs recorded in their manifests), each behind a barrier
        // and again after compute (calibrate's default), the allreduce of each size behind compute,
        // and compute (alone, and on both ranks).
        for (const QString& collective : {QStringLiteral("allreduce"), QStringLiteral("reduce_scatter"), QStringLiteral("allgather")})
            QVERIFY2(sizes.value(collective).contains(65536) && sizes.value(collective).contains(1 << 20), qPrintable(collective));
        const QString loc = m_cli.record(QStringLiteral("loc-ddp-1x2-r1")).value(QStringLiteral("remote_dir")).toString();
        QFile manifestFile((QDir::isAbsolutePath(loc) ? loc : m_cli.workspace + QLatin1Char('/') + loc) + QStringLiteral("/manifest.json"));
        QVERIFY2(manifestFile.open(QIODevice::ReadOnly), qPrintable(manifestFile.fileName()));
        const QJsonObject sent =
            QJsonDocument::fromJson(manifestFile.readAll()).object().value(QStringLiteral("comm_message_bytes")).toObject();
        for (const QString& strategy : {QStringLiteral("ddp"), QStringLiteral("fused"), QStringLiteral("zero1")}) {
            QSet<qint64> expected;
            for (const QJsonValue& b : sent.value(strategy).toArray())
                expected.insert(qint64(b.toDouble()) / 8 * 8);  // whole floats per rank
            QVERIFY2(!expected.isEmpty(), qPrintable(strategy));
            QCOMPARE(timedBy.value(strategy), expected);
            QVERIFY(sizes.value(strategy == QStringLiteral("zero1") ? QStringLiteral("reduce_scatter") : QStringLiteral("allreduce"))
                        .contains(expected));
        }
        QCOMPARE(afterCompute, barrier);
        QCOMPARE(overlapped, allreduces);
        QCOMPARE(lines, 2 * barrier + allreduces + 1);
        QCOMPARE(kinds.size(), 4);
        QVERIFY(kinds.contains(QStringLiteral("compute")));
        // The plan of a sweep on this profile takes the calibration without being told.
        const auto p = m_cli.run(
            {QStringLiteral("plan"), QStringLiteral("--sweep"), QStringLiteral("loc"), QStringLiteral("--nodes"), QStringLiteral("1,2")});
        QVERIFY2(p.exitCode == 0, qPrintable(p.all()));
        QVERIFY2(p.out.contains(QStringLiteral("benchmark timing(s) (") + file), qPrintable(p.out));
        QVERIFY2(
            p.out.contains(QStringLiteral("compute contention (CPU ranks share a node's cores and memory): ×")) &&
                p.out.contains(QStringLiteral("at 2 rank(s) on 1 node(s) (config cpu-tiny's own training step at local batch 1, on its "
                                              "loader's batches (2 worker thread(s)):")),
            qPrintable(p.out));
        // The step timed before the after-compute collectives is the one the contention reads, over
        // the 1-rank runs' own compute at its local batch.
        QVERIFY2(p.out.contains(QStringLiteral(" s between collectives: the after-compute timings' mean, used; over the runs of one rank "
                                               "per node's compute at its local batch, ")),
                 qPrintable(p.out));
        QVERIFY2(p.out.contains(QStringLiteral("reduce-scatter (zero1)")) || p.out.contains(QStringLiteral("reduce-scatter")),
                 qPrintable(p.out));
        QVERIFY2(p.out.contains(QStringLiteral("collectives timed as training meets them")) &&
                     p.out.contains(QStringLiteral("%1 barrier timing(s) of the same collectives left out").arg(barrier)),
                 qPrintable(p.out));
        // plan-check: the 2-rank runs predicted from the 1-rank runs and this calibration, beside what
        // they measured; check.csv has both rows with a range around each prediction.
        const QString checkDir = m_tmp.filePath(QStringLiteral("plan-check"));
        const auto c =
            m_cli.run({QStringLiteral("plan-check"), QStringLiteral("--sweep"), QStringLiteral("loc"), QStringLiteral("--out"), checkDir});
        QVERIFY2(c.exitCode == 0, qPrintable(c.all()));
        QVERIFY2(c.out.contains(QStringLiteral("of 2 predicted point(s) in their 90 % range")), qPrintable(c.out));
        QFile checkCsv(checkDir + QStringLiteral("/check.csv"));
        QVERIFY(checkCsv.open(QIODevice::ReadOnly));
        const QStringList rows = QString::fromUtf8(checkCsv.readAll()).trimmed().split(QLatin1Char('\n'));
        QCOMPARE(rows.size(), 3);
        for (const QString& row : rows.mid(1)) {
            const QStringList cells = row.split(QLatin1Char(','));
            QVERIFY2(cells.value(3) == QLatin1String("2") && cells.value(4) == QLatin1String("1"), qPrintable(row));
            const double predicted = cells.value(5).toDouble(), low = cells.value(6).toDouble(), high = cells.value(7).toDouble();
            QVERIFY2(low < predicted && predicted < high && cells.value(8).toDouble() > 0, qPrintable(row));
        }
        QVERIFY(QFile::exists(checkDir + QStringLiteral("/check.md")));
    }

    // `scaledesk import`: a run folder the real trainer wrote (copied elsewhere, as a colleague would
    // send it) and the NERSC tutorial's Python run, into another workspace; compared side by side on
    // the tag they share; read-only to every action.
    void importedRunsCompareAndRefuseActions()
    {
        const QString remote = m_cli.record(QStringLiteral("loc-ddp-1x2-r1")).value(QStringLiteral("remote_dir")).toString();
        const QString runDir = QDir::isAbsolutePath(remote) ? remote : m_cli.workspace + QLatin1Char('/') + remote;
        QVERIFY2(QFile::exists(runDir + QStringLiteral("/manifest.json")), qPrintable(runDir));
        const QString copy = m_tmp.filePath(QStringLiteral("from a colleague/loc-ddp-1x2-r1"));
        QVERIFY(QDir().mkpath(copy));
        for (const QString& f : QDir(runDir).entryList(QDir::Files))
            QVERIFY(QFile::copy(runDir + QLatin1Char('/') + f, copy + QLatin1Char('/') + f));
        Cli other = m_cli;
        other.workspace = m_tmp.filePath(QStringLiteral("other workspace"));
        const auto r =
            other.run({QStringLiteral("import"), copy, QStringLiteral(SCALEDESK_SOURCE_DIR "/tests/backend/runs/data/nersc-example-logs")});
        QVERIFY2(r.exitCode == 0, qPrintable(r.all()));
        QVERIFY2(r.out.contains(QStringLiteral("imported loc-ddp-1x2-r1 (scaledesk)")), qPrintable(r.out));
        QVERIFY2(r.out.contains(QStringLiteral("imported base-1GPU-00 (nersc-python)")) && r.out.contains(QStringLiteral("10 epoch(s)")),
                 qPrintable(r.out));
        QCOMPARE(other.state(QStringLiteral("loc-ddp-1x2-r1")), QStringLiteral("completed"));
        QCOMPARE(other.record(QStringLiteral("loc-ddp-1x2-r1"))
                     .value(QStringLiteral("origin"))
                     .toObject()
                     .value(QStringLiteral("kind"))
                     .toString(),
                 QStringLiteral("scaledesk"));
        const auto list = other.run({QStringLiteral("runs"), QStringLiteral("list"), QStringLiteral("--json")});
        const QJsonArray rows = QJsonDocument::fromJson(list.out.toUtf8()).array();
        QCOMPARE(rows.size(), 2);
        for (const auto& row : rows) QVERIFY(!row.toObject().value(QStringLiteral("origin")).toString().isEmpty());
        QVERIFY(QFile::exists(runDir + QStringLiteral("/logs")));  // the trainer's TensorBoard events
        // The trainer's Loss/valid and the Python trainer's, on one chart and in one table.
        const QString png = m_tmp.filePath(QStringLiteral("imported.png"));
        const auto c = other.run({QStringLiteral("compare"), QStringLiteral("loc-ddp-1x2-r1"), QStringLiteral("base-1GPU-00"),
                                  QStringLiteral("--series"), QStringLiteral("Loss/valid"), QStringLiteral("--out"), png});
        QVERIFY2(c.exitCode == 0, qPrintable(c.all()));
        // Qt's offscreen platform warns about size hints for every chart, and about a missing
        // XDG_RUNTIME_DIR on every command; the user sees none of it.
        for (const QString& noise : {QStringLiteral("propagateSizeHints"), QStringLiteral("XDG_RUNTIME_DIR")})
            QVERIFY2(!r.err.contains(noise) && !c.err.contains(noise), qPrintable(r.err + c.err));
        QFile f(png);
        QVERIFY(f.open(QIODevice::ReadOnly) && f.read(4) == QByteArray("\x89PNG"));
        // Round trip: the trainer's own TensorBoard events, read back by the importer, equal its
        // metrics.jsonl value for value (as float, TensorBoard's type), for every tag and step.
        const auto tb =
            other.run({QStringLiteral("import"), runDir + QStringLiteral("/logs"), QStringLiteral("--id"), QStringLiteral("tb-copy")});
        QVERIFY2(tb.exitCode == 0, qPrintable(tb.all()));
        QMap<QPair<QString, qint64>, double> events;
        for (const QByteArray& line : other.mirrored(QStringLiteral("tb-copy"), QStringLiteral("metrics.jsonl")).split('\n')) {
            const QJsonObject o = QJsonDocument::fromJson(line).object();
            if (o.value(QStringLiteral("kind")).toString() == QLatin1String("scalar"))
                events.insert({o.value(QStringLiteral("tag")).toString(), qint64(o.value(QStringLiteral("step")).toDouble())},
                              o.value(QStringLiteral("value")).toDouble());
        }
        int compared = 0;
        for (const QByteArray& line : m_cli.mirrored(QStringLiteral("loc-ddp-1x2-r1"), QStringLiteral("metrics.jsonl")).split('\n')) {
            const QJsonObject o = QJsonDocument::fromJson(line).object();
            const QString kind = o.value(QStringLiteral("kind")).toString();
            if (kind != QLatin1String("step") && kind != QLatin1String("epoch")) continue;
            const qint64 step = qint64(o.value(QStringLiteral("step")).toDouble());
            for (auto it = o.begin(); it != o.end(); ++it) {
                if (!it.value().isDouble() || it.key() == QLatin1String("step") || it.key() == QLatin1String("t") ||
                    it.key() == QLatin1String("epoch"))
                    continue;
                const QString tag = kind + QLatin1Char('/') + it.key();
                QVERIFY2(events.contains({tag, step}), qPrintable(QStringLiteral("%1 at step %2").arg(tag).arg(step)));
                QCOMPARE(events.value({tag, step}), double(float(it.value().toDouble())));
                ++compared;
            }
            if (kind == QLatin1String("epoch")) {
                QCOMPARE(events.value({QStringLiteral("Loss/valid"), step}), double(float(o.value(QStringLiteral("val_loss")).toDouble())));
                QCOMPARE(events.value({QStringLiteral("Learning Rate"), step}), double(float(o.value(QStringLiteral("lr")).toDouble())));
                compared += 2;
            }
        }
        QVERIFY2(compared > 100, qPrintable(QString::number(compared)));
        // The table: the NERSC run's final Loss/valid is its event file's 0.004844, next to the trainer's.
        const QString table = m_tmp.filePath(QStringLiteral("imported.csv"));
        QVERIFY(other
                    .run({QStringLiteral("compare"), QStringLiteral("loc-ddp-1x2-r1"), QStringLiteral("base-1GPU-00"),
                          QStringLiteral("--out"), table})
                    .exitCode == 0);
        QFile t(table);
        QVERIFY(t.open(QIODevice::ReadOnly));
        const QList<QByteArray> tableRows = t.readAll().trimmed().split('\n');
        QCOMPARE(tableRows.size(), 3);
        const int finalCol = int(tableRows[0].split(',').indexOf("Loss/valid final"));
        QVERIFY(finalCol > 0);
        QVERIFY(tableRows[1].startsWith("loc-ddp-1x2-r1,") && !tableRows[1].split(',')[finalCol].isEmpty());
        QVERIFY(tableRows[2].startsWith("base-1GPU-00,"));
        QCOMPARE(QString::number(tableRows[2].split(',')[finalCol].toDouble(), 'g', 4), QStringLiteral("0.004844"));
        // The points on the step and relative-time axes: the last is epoch 10's, at step 10,240 and
        // 2 h 18 min 32 s after the log's first line (00:32:26.118 → the event at 02:50:57.8).
        for (const auto& [axis, x] : {std::pair{QStringLiteral("step"), 10240.0}, std::pair{QStringLiteral("relative"), 8311.7}}) {
            const QString csv = m_tmp.filePath(QStringLiteral("valid-%1.csv").arg(axis));
            QVERIFY(other
                        .run({QStringLiteral("compare"), QStringLiteral("loc-ddp-1x2-r1"), QStringLiteral("base-1GPU-00"),
                              QStringLiteral("--series"), QStringLiteral("Loss/valid"), QStringLiteral("--x"), axis,
                              QStringLiteral("--out"), csv})
                        .exitCode == 0);
            QFile s(csv);
            QVERIFY(s.open(QIODevice::ReadOnly));
            QList<QByteArray> nersc;
            bool trainer = false;
            for (const QByteArray& line : s.readAll().trimmed().split('\n')) {
                if (line.startsWith("base-1GPU-00,")) nersc << line;
                trainer = trainer || line.startsWith("loc-ddp-1x2-r1,");
            }
            QVERIFY(trainer);
            QCOMPARE(nersc.size(), 11);
            const QList<QByteArray> last = nersc.last().split(',');
            QVERIFY2(std::abs(last[1].toDouble() - x) < 0.5, nersc.last().constData());
            QCOMPARE(QString::number(last[2].toDouble(), 'g', 4), QStringLiteral("0.004844"));
        }
        for (const QString& action : {QStringLiteral("cancel"), QStringLiteral("requeue")}) {
            const auto refused = other.run({action, QStringLiteral("base-1GPU-00")});
            QCOMPARE(refused.exitCode, 1);
            QVERIFY2(refused.err.contains(QStringLiteral("read-only")), qPrintable(refused.err));
        }
        // Bad input: the path is named, nothing is added.
        const auto missing = other.run({QStringLiteral("import"), m_tmp.filePath(QStringLiteral("no such run"))});
        QCOMPARE(missing.exitCode, 1);
        QVERIFY2(missing.err.contains(QStringLiteral("no such run: no such file or folder")), qPrintable(missing.err));
        QCOMPARE(QDir(other.workspace + QStringLiteral("/runs")).entryList(QDir::Dirs | QDir::NoDotAndDotDot).size(), 3);
    }

    // GPU telemetry end to end, through the real dlopen path into the tests' stand-in NVML (GPU 0:
    // a fixed 250 W and 87 %, GPU 1: 300 W and 50 %): the report's energy of each run is the
    // integral of that power over the windows the trainer sampled (every epoch of every rank),
    // computed here by hand. The sweep is a strong one, and the report says so.
    void reportEnergyIsTheIntegralOfThePower()
    {
#ifndef SCALEDESK_FAKE_NVML
        QSKIP("the trainer tests' stand-in NVML is not built");
#else
        Cli gpu = m_cli;
        gpu.env.insert(QStringLiteral("SCALEDESK_NVML_LIBRARY"), QStringLiteral(SCALEDESK_FAKE_NVML));
        // cpu-tiny with epochs of a few seconds, so that each holds utilisation readings (one a second).
        QFile unet(QStringLiteral(SCALEDESK_SOURCE_DIR "/configs/unet.yaml"));
        QVERIFY(unet.open(QIODevice::ReadOnly));
        const QString yaml = m_tmp.filePath(QStringLiteral("gpu.yaml"));
        QFile out(yaml);
        QVERIFY(out.open(QIODevice::WriteOnly));
        out.write(unet.readAll() +
                  "\ngpu-tiny:\n  <<: *cpu\n  base_channels: 4\n  global_batch_size: 2\n  base_batch_size: 2\n"
                  "  Nsamples: 400\n  Nsamples_val: 8\n  num_epochs: 2\n");
        out.close();
        const auto r = gpu.run(
            {QStringLiteral("submit"), QStringLiteral("--config-file"), yaml, QStringLiteral("--config"), QStringLiteral("gpu-tiny"),
             QStringLiteral("--sweep"), QStringLiteral("gpu"), QStringLiteral("--ranks-per-node"), QStringLiteral("1,2"),
             QStringLiteral("--scaling"), QStringLiteral("strong"), QStringLiteral("--global-batch"), QStringLiteral("2"),
             QStringLiteral("--make-data"), QStringLiteral("--wait"), QStringLiteral("--timeout"), QStringLiteral("600")});
        QVERIFY2(r.exitCode == 0, qPrintable(r.all()));
        const QString dir = m_tmp.filePath(QStringLiteral("gpu-report"));
        const auto rep = gpu.run({QStringLiteral("report"), QStringLiteral("--sweep"), QStringLiteral("gpu"), QStringLiteral("--out"), dir,
                                  QStringLiteral("--format"), QStringLiteral("csv,md")});
        QVERIFY2(rep.exitCode == 0, qPrintable(rep.all()));
        QFile runsCsv(dir + QStringLiteral("/runs.csv"));
        QVERIFY(runsCsv.open(QIODevice::ReadOnly));
        const QList<QByteArray> lines = runsCsv.readAll().trimmed().split('\n');
        const QList<QByteArray> header = lines.first().split(',');
        const int idCol = int(header.indexOf("run_id")), energyCol = int(header.indexOf("gpu_energy_wh")),
                  utilCol = int(header.indexOf("gpu_util_pct"));
        QVERIFY(energyCol > 0 && utilCol > 0);
        QCOMPARE(lines.size(), 3);
        for (int i = 1; i < lines.size(); ++i) {
            const QList<QByteArray> cells = lines[i].split(',');
            const QString id = QString::fromUtf8(cells[idCol]);
            // By hand: each GPU's power over each sampled window (gpu_epoch: one per rank and epoch).
            double joules = 0;
            int windows = 0;
            for (const QByteArray& line : m_cli.mirrored(id, QStringLiteral("metrics.jsonl")).split('\n')) {
                const QJsonObject o = QJsonDocument::fromJson(line).object();
                if (o.value(QStringLiteral("kind")).toString() != QLatin1String("gpu_epoch")) continue;
                joules += (o.value(QStringLiteral("gpu")).toInt() == 0 ? 250.0 : 300.0) * o.value(QStringLiteral("window_s")).toDouble();
                ++windows;
            }
            const int ranks = id.contains(QStringLiteral("1x2")) ? 2 : 1;
            QCOMPARE(windows, 2 * ranks);  // cpu-tiny: 2 epochs
            const double reported = cells[energyCol].toDouble();
            QVERIFY2(std::abs(reported - joules / 3600.0) <= 1e-9 + 1e-6 * joules / 3600.0,
                     qPrintable(QStringLiteral("%1: report %2 Wh, by hand %3 Wh").arg(id).arg(reported).arg(joules / 3600.0)));
            QCOMPARE(cells[utilCol].toDouble(), ranks == 1 ? 87.0 : (87.0 + 50.0) / 2);
        }
        QFile md(dir + QStringLiteral("/report.md"));
        QVERIFY(md.open(QIODevice::ReadOnly));
        const QByteArray text = md.readAll();
        QVERIFY(text.contains("## GPU energy and utilisation"));
        QVERIFY2(text.contains("Scaling: strong (launched as strong;"), text.constData());
#endif
    }

    void hostileRunNameNeverExecutes()
    {
        const QString name = QStringLiteral("x $(touch pwned); `touch pwned2` 'q' \"dq\" ü;");
        const auto r =
            m_cli.run({QStringLiteral("submit"), QStringLiteral("--config"), QStringLiteral("cpu-tiny"), QStringLiteral("--name"), name,
                       QStringLiteral("--ranks-per-node"), QStringLiteral("2"), QStringLiteral("--make-data"), QStringLiteral("--wait"),
                       QStringLiteral("--timeout"), QStringLiteral("300")});
        QVERIFY2(r.exitCode == 0, qPrintable(r.all()));
        QCOMPARE(m_cli.state(name), QStringLiteral("completed"));
        const QString remote = m_cli.record(name).value(QStringLiteral("remote_dir")).toString();
        QVERIFY(remote.endsWith(QStringLiteral("/runs/") + name));
        for (const QString& dir :
             {remote, m_cli.workspace, m_cli.workspace + QStringLiteral("/runs/") + name, QDir::currentPath(), QDir::homePath()}) {
            QVERIFY2(!QFile::exists(dir + QStringLiteral("/pwned")), qPrintable(dir));
            QVERIFY2(!QFile::exists(dir + QStringLiteral("/pwned2")), qPrintable(dir));
        }
        const auto status = m_cli.run({QStringLiteral("status"), name});
        QVERIFY(status.out.contains(name));
    }

    void runNameWithSlashIsRefused()
    {
        const auto r = m_cli.run({QStringLiteral("submit"), QStringLiteral("--config"), QStringLiteral("cpu-tiny"),
                                  QStringLiteral("--name"), QStringLiteral("../escape")});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.contains(QStringLiteral("cannot contain '/'")), qPrintable(r.err));
        QVERIFY(!QDir(m_cli.workspace + QStringLiteral("/escape")).exists());
    }

    void badConfigIsRefusedBeforeAnythingIsRecorded()
    {
        const auto r = m_cli.run({QStringLiteral("submit"), QStringLiteral("--config"), QStringLiteral("no-such-config"),
                                  QStringLiteral("--name"), QStringLiteral("never")});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.contains(QStringLiteral("no config named 'no-such-config'")), qPrintable(r.err));
        QVERIFY(m_cli.record(QStringLiteral("never")).isEmpty());
    }

    // A cpu config reads data/ in its new run folder: with nothing linked there the submit is
    // refused before anything is recorded, naming the config's line and the ways to give it data.
    void submitWithoutDataIsRefusedBeforeAnythingIsRecorded()
    {
        const auto r = m_cli.run({QStringLiteral("submit"), QStringLiteral("--config"), QStringLiteral("cpu-tiny"),
                                  QStringLiteral("--name"), QStringLiteral("no-data")});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.contains(QStringLiteral("configs/unet.yaml:89")), qPrintable(r.err));
        QVERIFY2(r.err.contains(QStringLiteral("train_path 'data/train.h5' (config cpu-tiny)")), qPrintable(r.err));
        QVERIFY2(r.err.contains(QStringLiteral("--make-data")) && r.err.contains(QStringLiteral("--data DIR")), qPrintable(r.err));
        QVERIFY(m_cli.record(QStringLiteral("no-data")).isEmpty());
        const QString empty = m_tmp.filePath(QStringLiteral("empty-data"));
        QVERIFY(QDir().mkpath(empty));
        const auto linked = m_cli.run({QStringLiteral("submit"), QStringLiteral("--config"), QStringLiteral("cpu-tiny"),
                                       QStringLiteral("--name"), QStringLiteral("no-data"), QStringLiteral("--data"), empty});
        QCOMPARE(linked.exitCode, 1);
        QVERIFY2(linked.err.contains(empty + QStringLiteral("/train.h5")) && linked.err.contains(QStringLiteral("no such file")),
                 qPrintable(linked.err));
        QVERIFY(m_cli.record(QStringLiteral("no-data")).isEmpty());
    }

    // The app dies in the middle of a submit; the next `status` shows what really happened.
    void killedSubmitIsReconciled_data()
    {
        QTest::addColumn<QString>("fault");
        QTest::addColumn<QString>("expect");
        QTest::newRow("before the job started") << QStringLiteral("before-sbatch") << QStringLiteral("submit-failed");
        QTest::newRow("after the job started") << QStringLiteral("after-sbatch") << QStringLiteral("completed");
    }
    void killedSubmitIsReconciled()
    {
        QFETCH(QString, fault);
        QFETCH(QString, expect);
        const QString id = QStringLiteral("killed-") + fault;
        Cli crashing = m_cli;
        crashing.env.insert(QStringLiteral("SCALEDESK_FAULT_SUBMIT"), fault);
        const auto r = crashing.run({QStringLiteral("submit"), QStringLiteral("--config"), QStringLiteral("cpu-tiny"),
                                     QStringLiteral("--name"), id, QStringLiteral("--make-data")});
        QVERIFY2(r.crashed, "the fault hook did not kill the submit");
        QCOMPARE(m_cli.state(id), QStringLiteral("submitting"));  // what the killed process left
        const auto status =
            m_cli.run({QStringLiteral("status"), QStringLiteral("--wait"), QStringLiteral("--timeout"), QStringLiteral("300"), id});
        QCOMPARE(m_cli.state(id), expect);
        QVERIFY2(status.out.contains(expect), qPrintable(status.all()));
        if (fault == QLatin1String("after-sbatch"))
            QVERIFY2(status.out.contains(QStringLiteral("after an interrupted submit")), qPrintable(status.out));
        else
            QVERIFY2(m_cli.record(id).value(QStringLiteral("message")).toString().startsWith(QStringLiteral("failed to submit")),
                     qPrintable(status.out));
    }

    void cancelStopsARunningJob()
    {
        const QString id = QStringLiteral("to-cancel");
        const auto r = m_cli.run({QStringLiteral("submit"), QStringLiteral("--config"), QStringLiteral("cpu-short"),
                                  QStringLiteral("--name"), id, QStringLiteral("--make-data")});
        QVERIFY2(r.exitCode == 0, qPrintable(r.all()));
        QVERIFY(m_cli.waitForSteps(id, 2, 180));
        const auto c = m_cli.run({QStringLiteral("cancel"), id});
        QVERIFY2(c.exitCode == 0, qPrintable(c.all()));
        QVERIFY(m_cli.waitFor(
            id, [](const QJsonObject& j) { return j.value(QStringLiteral("state")).toString() != QLatin1String("running"); }, 120));
        QCOMPARE(m_cli.state(id), QStringLiteral("cancelled"));
        const auto again = m_cli.run({QStringLiteral("cancel"), id});
        QCOMPARE(again.exitCode, 1);
        QVERIFY2(again.err.contains(QStringLiteral("the run has already ended (cancelled)")), qPrintable(again.err));
        QVERIFY(m_cli.record(id).value(QStringLiteral("history")).toVariant().toList().size() > 0);
        bool noted = false;
        for (const auto& h : m_cli.record(id).value(QStringLiteral("history")).toArray())
            noted = noted || h.toObject().value(QStringLiteral("note")).toString() == QLatin1String("cancel requested by the user");
        QVERIFY(noted);  // the cancel is in the run's history
    }

    // A job waiting for slots is cancelled before it starts: it never runs the trainer, ends
    // `cancelled`, and the job holding the slots goes on.
    void cancelEndsAPendingJobBeforeItStarts()
    {
        const Cli cli = twoSlots();
        auto submit = [&](const QString& id, const QString& config) {
            return cli.run({QStringLiteral("submit"), QStringLiteral("--profile"), QStringLiteral("two-slots"), QStringLiteral("--config"),
                            config, QStringLiteral("--name"), id, QStringLiteral("--ranks-per-node"), QStringLiteral("2"),
                            QStringLiteral("--make-data")});
        };
        const auto hog = submit(QStringLiteral("slot-hog"), QStringLiteral("cpu-short"));
        QVERIFY2(hog.exitCode == 0, qPrintable(hog.all()));
        QVERIFY(cli.waitForSteps(QStringLiteral("slot-hog"), 1, 180));
        const auto waiter = submit(QStringLiteral("slot-waiter"), QStringLiteral("cpu-tiny"));
        QVERIFY2(waiter.exitCode == 0, qPrintable(waiter.all()));
        QVERIFY(cli.waitFor(
            QStringLiteral("slot-waiter"),
            [](const QJsonObject& j) { return j.value(QStringLiteral("message")).toString().startsWith(QLatin1String("local: PENDING")); },
            60));
        QCOMPARE(cli.state(QStringLiteral("slot-waiter")), QStringLiteral("queued"));
        const auto c = cli.run({QStringLiteral("cancel"), QStringLiteral("slot-waiter")});
        QVERIFY2(c.exitCode == 0, qPrintable(c.all()));
        QVERIFY(cli.waitFor(
            QStringLiteral("slot-waiter"),
            [](const QJsonObject& j) { return j.value(QStringLiteral("state")).toString() != QLatin1String("queued"); }, 60));
        QCOMPARE(cli.state(QStringLiteral("slot-waiter")), QStringLiteral("cancelled"));
        QVERIFY2(!QFile::exists(m_cli.workspace + QStringLiteral("/local/runs/slot-waiter/out.log")),
                 "the cancelled job started the trainer");
        QCOMPARE(cli.state(QStringLiteral("slot-hog")), QStringLiteral("running"));
        QCOMPARE(cli.run({QStringLiteral("cancel"), QStringLiteral("slot-hog")}).exitCode, 0);
        QVERIFY(cli.waitFor(
            QStringLiteral("slot-hog"),
            [](const QJsonObject& j) { return j.value(QStringLiteral("state")).toString() == QLatin1String("cancelled"); }, 120));
    }

    // The run is long enough (150 epochs of cpu-tiny, ~45 s here) that the stop reaches the trainer
    // well before its end on a loaded machine: with 40 (~12 s) a stop that arrived after the last
    // epoch's check let the run complete, and the wait for `cancelled` failed in CI.
    void signalCheckpointsAndRequeueResumes()
    {
        const QString id = QStringLiteral("to-resume");
        const auto r =
            m_cli.run({QStringLiteral("submit"), QStringLiteral("--config"), QStringLiteral("cpu-tiny"), QStringLiteral("--name"), id,
                       QStringLiteral("--make-data"), QStringLiteral("--"), QStringLiteral("--num_epochs"), QStringLiteral("150")});
        QVERIFY2(r.exitCode == 0, qPrintable(r.all()));
        QVERIFY(m_cli.waitForSteps(id, 3, 180));
        const auto c = m_cli.run({QStringLiteral("cancel"), QStringLiteral("--signal"), QStringLiteral("USR1"), id});
        QVERIFY2(c.exitCode == 0, qPrintable(c.all()));
        QVERIFY2(
            m_cli.waitFor(
                id, [](const QJsonObject& j) { return j.value(QStringLiteral("state")).toString() == QLatin1String("cancelled"); }, 120),
            qPrintable(m_cli.describe(id)));
        QCOMPARE(m_cli.manifest(id).value(QStringLiteral("status")).toString(), QStringLiteral("preempted"));
        QVERIFY(m_cli.mirrored(id, QStringLiteral("metrics.jsonl")).contains("\"event\":\"preempted\""));
        const auto q = m_cli.run({QStringLiteral("requeue"), id});
        QVERIFY2(q.exitCode == 0, qPrintable(q.all()));
        const auto done =
            m_cli.run({QStringLiteral("status"), QStringLiteral("--wait"), QStringLiteral("--timeout"), QStringLiteral("600"), id});
        QCOMPARE(m_cli.state(id), QStringLiteral("completed"));
        QVERIFY(m_cli.mirrored(id, QStringLiteral("metrics.jsonl")).contains("\"event\":\"resumed\""));
        const QStringList h = m_cli.history(id);
        QCOMPARE(h.join(QLatin1Char(' ')), QStringLiteral("draft submitting queued running cancelled queued running completed"));
        QVERIFY2(done.out.contains(QStringLiteral("requeued by the user")), qPrintable(done.out));
    }

    // A run that completed while nobody polled it, then cancelled: it stays completed, exit 0.
    void cancelAfterCompletionKeepsTheRunCompleted()
    {
        const QString id = QStringLiteral("late-cancel");
        const auto r = m_cli.run({QStringLiteral("submit"), QStringLiteral("--config"), QStringLiteral("cpu-tiny"),
                                  QStringLiteral("--name"), id, QStringLiteral("--make-data")});
        QVERIFY2(r.exitCode == 0, qPrintable(r.all()));
        const QString exitCode = m_cli.workspace + QStringLiteral("/local/runs/") + id + QStringLiteral("/exit_code");
        QTRY_VERIFY_WITH_TIMEOUT(QFile::exists(exitCode), 180000);
        QCOMPARE(m_cli.state(id), QStringLiteral("queued"));  // no poll has seen it run, let alone end
        const auto c = m_cli.run({QStringLiteral("cancel"), id});
        QVERIFY2(c.exitCode == 0, qPrintable(c.all()));
        QVERIFY2(c.out.contains(QStringLiteral("completed")), qPrintable(c.out));
        QCOMPARE(m_cli.state(id), QStringLiteral("completed"));
        QVERIFY(!m_cli.history(id).contains(QStringLiteral("cancelled")));
        QVERIFY(m_cli.record(id).value(QStringLiteral("message")).toString().contains(QStringLiteral("exit 0")));
    }

    // Each action is refused, with the lifecycle layer's reason and exit code 1, where it makes
    // no sense; the record does not change.
    void actionsAreRefusedWhereTheyMakeNoSense()
    {
        const QString done = QStringLiteral("loc-ddp-1x1-r1");  // completed by sweepRunsEveryPoint
        QCOMPARE(m_cli.state(done), QStringLiteral("completed"));
        const auto before = m_cli.record(done);
        struct Case {
            QStringList args;
            QString says;
        };
        const QList<Case> refused = {
            {{QStringLiteral("cancel"), done}, QStringLiteral("already ended (completed)")},
            {{QStringLiteral("cancel"), QStringLiteral("--signal"), QStringLiteral("USR1"), done}, QStringLiteral("already ended")},
            {{QStringLiteral("requeue"), done}, QStringLiteral("confirm to run it again")},
        };
        for (const Case& c : refused) {
            const auto r = m_cli.run(c.args);
            QCOMPARE(r.exitCode, 1);
            QVERIFY2(r.err.contains(c.says), qPrintable(r.err));
        }
        QCOMPARE(m_cli.record(done), before);
        // A run that was just submitted is queued: no checkpoint to take, nothing to requeue.
        const QString id = QStringLiteral("refusals");
        const auto s = m_cli.run({QStringLiteral("submit"), QStringLiteral("--config"), QStringLiteral("cpu-short"),
                                  QStringLiteral("--name"), id, QStringLiteral("--make-data")});
        QVERIFY2(s.exitCode == 0, qPrintable(s.all()));
        QCOMPARE(m_cli.state(id), QStringLiteral("queued"));
        const auto stop = m_cli.run({QStringLiteral("cancel"), QStringLiteral("--signal"), QStringLiteral("USR1"), id});
        QCOMPARE(stop.exitCode, 1);
        QVERIFY2(stop.err.contains(QStringLiteral("not running yet")), qPrintable(stop.err));
        const auto requeue = m_cli.run({QStringLiteral("requeue"), id});
        QCOMPARE(requeue.exitCode, 1);
        QVERIFY2(requeue.err.contains(QStringLiteral("is still queued")), qPrintable(requeue.err));
        const auto cancel = m_cli.run({QStringLiteral("cancel"), id});
        QVERIFY2(cancel.exitCode == 0, qPrintable(cancel.all()));
        m_cli.run({QStringLiteral("status"), QStringLiteral("--wait"), QStringLiteral("--timeout"), QStringLiteral("120"), id});
        QVERIFY(m_cli.state(id) == QLatin1String("cancelled") || m_cli.state(id) == QLatin1String("completed"));
        // A completed run runs again when confirmed.
        const auto forced = m_cli.run({QStringLiteral("requeue"), QStringLiteral("--force"), done});
        QVERIFY2(forced.exitCode == 0, qPrintable(forced.all()));
        QCOMPARE(m_cli.state(done), QStringLiteral("queued"));
        m_cli.run({QStringLiteral("status"), QStringLiteral("--wait"), QStringLiteral("--timeout"), QStringLiteral("300"), done});
        QCOMPARE(m_cli.state(done), QStringLiteral("completed"));
    }

    // The window follows the same policy (tests/gui): the lifecycle layer is the only place it lives.
    void aSweepFollowsThePartialFailurePolicy_data()
    {
        QTest::addColumn<QString>("policy");
        QTest::newRow("continue") << QStringLiteral("continue");
        QTest::newRow("stop") << QStringLiteral("stop");
    }
    void aSweepFollowsThePartialFailurePolicy()
    {
        QFETCH(QString, policy);
        const QString sweep = QStringLiteral("pf") + policy;
        const QStringList ids{sweep + QStringLiteral("-ddp-1x1-r1"), sweep + QStringLiteral("-ddp-1x1-r2"),
                              sweep + QStringLiteral("-ddp-1x1-r3")};
        // The second point's run folder cannot be made: a dangling link is where it would be (the
        // launch's check finds no folder there, so the other points follow the policy).
        QDir().mkpath(m_cli.workspace + QStringLiteral("/local/runs"));
        QVERIFY(QFile::link(m_cli.workspace + QStringLiteral("/nowhere"), m_cli.workspace + QStringLiteral("/local/runs/") + ids[1]));
        const auto r = m_cli.run({QStringLiteral("submit"), QStringLiteral("--config"), QStringLiteral("cpu-tiny"),
                                  QStringLiteral("--sweep"), sweep, QStringLiteral("--repetitions"), QStringLiteral("3"),
                                  QStringLiteral("--make-data"), QStringLiteral("--on-failure"), policy});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.contains(ids[1]), qPrintable(r.err));
        QCOMPARE(m_cli.state(ids[0]), QStringLiteral("queued"));
        QCOMPARE(m_cli.state(ids[1]), QStringLiteral("submit-failed"));
        if (policy == QLatin1String("stop")) {
            QVERIFY(m_cli.record(ids[2]).isEmpty());  // never recorded
            QVERIFY2(r.err.contains(QStringLiteral("1 not tried")), qPrintable(r.err));
        } else {
            QCOMPARE(m_cli.state(ids[2]), QStringLiteral("queued"));
        }
        m_cli.run({QStringLiteral("status"), QStringLiteral("--wait"), QStringLiteral("--timeout"), QStringLiteral("300")});
    }

    // Only no arguments, or --workspace DIR alone, open the window; anything else is the command
    // line's, and what it does not know is a usage error naming the nearest command.
    void unknownCommandsAndOptionsAreUsageErrors_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("says");
        QTest::newRow("misspelt command") << QStringList{QStringLiteral("stauts")}
                                          << QStringLiteral("unknown command 'stauts'; did you mean 'status'?");
        QTest::newRow("unknown command") << QStringList{QStringLiteral("frobnicate"), QStringLiteral("x")}
                                         << QStringLiteral("unknown command 'frobnicate' (the commands are listed below)");
        QTest::newRow("command one letter off")
            << QStringList{QStringLiteral("rport")} << QStringLiteral("unknown command 'rport'; did you mean 'report'?");
        QTest::newRow("unknown option") << QStringList{QStringLiteral("--bogus")} << QStringLiteral("--bogus");
        QTest::newRow("unknown command option")
            << QStringList{QStringLiteral("status"), QStringLiteral("--bogus")} << QStringLiteral("unknown option '--bogus' for 'status'");
        QTest::newRow("command option one letter off") << QStringList{QStringLiteral("status"), QStringLiteral("--jsn")}
                                                       << QStringLiteral("unknown option '--jsn' for 'status'; did you mean '--json'?");
        QTest::newRow("a command without its command")
            << QStringList{QStringLiteral("runs")} << QStringLiteral("'runs' needs one of its commands: list\n");
        QTest::newRow("option of a nested command")
            << QStringList{QStringLiteral("runs"), QStringLiteral("list"), QStringLiteral("--swep"), QStringLiteral("s")}
            << QStringLiteral("unknown option '--swep' for 'runs list'; did you mean '--sweep'?");
    }
    void unknownCommandsAndOptionsAreUsageErrors()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, says);
        Cli noDisplay = m_cli;
        noDisplay.env.remove(QStringLiteral("DISPLAY"));
        noDisplay.env.remove(QStringLiteral("WAYLAND_DISPLAY"));
        noDisplay.env.remove(QStringLiteral("QT_QPA_PLATFORM"));
        const auto r = noDisplay.run(args, 60);
        QVERIFY2(!r.crashed, "it hung or crashed");
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains(says), qPrintable(r.err));
        QVERIFY2(r.all().contains(QStringLiteral("Usage:")) || r.all().contains(QStringLiteral("--help")), qPrintable(r.all()));
        QVERIFY(!r.err.contains(QStringLiteral("no display")));  // never the window
    }
    void onlyTheWorkspaceOptionOpensTheWindow()
    {
        // No display here: the window's path says so; the command line's path would not.
        Cli noDisplay = m_cli;
        noDisplay.env.remove(QStringLiteral("DISPLAY"));
        noDisplay.env.remove(QStringLiteral("WAYLAND_DISPLAY"));
        noDisplay.env.remove(QStringLiteral("QT_QPA_PLATFORM"));
        const auto r = noDisplay.run({}, 60);  // Cli adds --workspace DIR
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains(QStringLiteral("no display")), qPrintable(r.err));
        const auto help = m_cli.run({QStringLiteral("--help")}, 60);
        QCOMPARE(help.exitCode, 0);
        QVERIFY(help.out.contains(QStringLiteral("opens the window")));
    }
};

QTEST_GUILESS_MAIN(TestCliLocal)
#include "tst_cli_local.moc"
