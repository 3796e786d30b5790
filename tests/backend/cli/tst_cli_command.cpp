// The user's own training code on the local profile: a real PyTorch DDP script
// (tests/commandrun/train_ddp.py, Debian's python3-torch, gloo over env://) launched by
// `scaledesk submit --run`, its metrics mirrored through scaledesk_metrics, a sweep of variants
// reported, a failing script recorded as failed, and bad definitions refused before anything runs.
#include "analysis/epochscsv.h"
#include "clitest.h"

#include "eventfile.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>

using namespace scaledesk;
using namespace scaledesk::test;

class TestCliCommand : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_tmp;
    Cli m_cli;
    QString m_definition;

    QString write(const QString& name, const QByteArray& text)
    {
        const QString path = m_tmp.filePath(name);
        QFile f(path);
        if (f.open(QIODevice::WriteOnly)) f.write(text);
        return path;
    }

    QStringList submit(const QStringList& extra) const
    {
        return QStringList{QStringLiteral("submit"), QStringLiteral("--run"), m_definition} + extra;
    }

private slots:
    void initTestCase()
    {
        // A workspace path a shell would split and expand if anything forgot to quote it.
        m_cli.workspace = m_tmp.filePath(QStringLiteral("own code 'q' $(touch pwned-ws)"));
        m_cli.env.remove(QStringLiteral("SCALEDESK_FAULT_SUBMIT"));
        m_cli.env.insert(QStringLiteral("SCALEDESK_SLOTS_DIR"), m_tmp.filePath(QStringLiteral("slots")));
        if (qEnvironmentVariableIsSet("SCALEDESK_KEEP_TEST_DIRS")) m_tmp.setAutoRemove(false);
        m_definition = write(QStringLiteral("ddp-script.yaml"),
                             "# the user's own DDP script, two ways of running it\n"
                             "command: [/usr/bin/python3, '{code}/train_ddp.py', --epochs, '2', --steps, '6', --batch, '{local_batch}']\n"
                             "code: " SCALEDESK_SOURCE_DIR "/tests/commandrun\n"
                             "env: {OMP_NUM_THREADS: '1'}\n"
                             "variants:\n"
                             "  plain: [--strategy, plain]\n"
                             "  slow: [--strategy, slow, --sleep, '0.05']\n"
                             "  broken: [--fail-at-epoch, '2']\n"
                             "  long: [--epochs, '40', --sleep, '0.05']\n"
                             "  exits: [--exit-code, '3']\n");
    }

    void aSweepOfVariantsRunsLocallyAndIsReported()
    {
        const auto r =
            m_cli.run(submit({QStringLiteral("--sweep"), QStringLiteral("own"), QStringLiteral("--ranks-per-node"), QStringLiteral("1,2"),
                              QStringLiteral("--strategies"), QStringLiteral("plain,slow"), QStringLiteral("--local-batch"),
                              QStringLiteral("4"), QStringLiteral("--wait"), QStringLiteral("--timeout"), QStringLiteral("400")}));
        QVERIFY2(r.exitCode == 0, qPrintable(r.all()));
        for (const QString& variant : {QStringLiteral("plain"), QStringLiteral("slow")}) {
            for (int ranks : {1, 2}) {
                const QString id = QStringLiteral("own-%1-1x%2-r1").arg(variant).arg(ranks);
                QCOMPARE(m_cli.state(id), QStringLiteral("completed"));
                const QJsonObject m = m_cli.manifest(id);
                QCOMPARE(m.value(QStringLiteral("status")).toString(), QStringLiteral("finished"));
                QCOMPARE(m.value(QStringLiteral("launcher")).toString(), QStringLiteral("command"));
                QCOMPARE(m.value(QStringLiteral("world_size")).toInt(), ranks);
                QCOMPARE(m.value(QStringLiteral("strategy")).toString(), variant);
                QCOMPARE(m.value(QStringLiteral("run_id")).toString(), id);
                QCOMPARE(m.value(QStringLiteral("global_batch_size")).toInt(), 4 * ranks);
                QVERIFY(m.value(QStringLiteral("parameters")).toInt() > 0);
                QCOMPARE(m.value(QStringLiteral("strategy_arg")).toString(), variant);  // the variant's arguments reached the script
                const QByteArray metrics = m_cli.mirrored(id, QStringLiteral("metrics.jsonl"));
                QCOMPARE(metrics.count("\"kind\":\"step\""), 12);
                QCOMPARE(metrics.count("\"kind\":\"epoch\""), 2);
                const EpochTable epochs = parseEpochsCsv(m_cli.mirrored(id, QStringLiteral("epochs.csv")), QStringLiteral("epochs.csv"));
                QVERIFY2(epochs.warnings.isEmpty(), qPrintable(epochs.warnings.join(QLatin1Char('\n'))));
                QCOMPARE(epochs.rows.size(), 2);
                QCOMPARE(epochs.rows[1].samplesGlobal, 6.0 * 4 * ranks);
                QVERIFY(epochs.rows[1].trainS > 0);
                // The NERSC lines the script printed, in the job's output.
                QVERIFY(m_cli.mirrored(id, QStringLiteral("job.out")).contains("Time taken for epoch 2 is"));
                QVERIFY(!m_cli.mirrored(id, QStringLiteral("run.yaml")).isEmpty());
            }
        }
        QVERIFY(
            m_cli.manifest(QStringLiteral("own-slow-1x1-r1")).value(QStringLiteral("command")).toArray().contains(QStringLiteral("0.05")));
        const QString out = m_tmp.filePath(QStringLiteral("report"));
        const auto report = m_cli.run({QStringLiteral("report"), QStringLiteral("--sweep"), QStringLiteral("own"), QStringLiteral("--out"),
                                       out, QStringLiteral("--warmup"), QStringLiteral("0")});
        QVERIFY2(report.exitCode == 0, qPrintable(report.all()));
        QFile md(out + QStringLiteral("/report.md"));
        QVERIFY(md.open(QIODevice::ReadOnly));
        const QString text = QString::fromUtf8(md.readAll());
        QVERIFY2(text.contains(QStringLiteral("plain")) && text.contains(QStringLiteral("slow")), qPrintable(text));
        QVERIFY(QFile::exists(out + QStringLiteral("/groups.csv")));
        QVERIFY2(!text.contains(QStringLiteral("config could not be read")), qPrintable(text));  // a command run has no named config
        // weak scaling: the 2-rank runs processed twice the samples per epoch
        QVERIFY(text.contains(QStringLiteral("Scaling: weak")));
        QVERIFY(!QFile::exists(m_tmp.filePath(QStringLiteral("pwned-ws"))));
    }

    // The planner on the user's code: the step time from its epochs and steps, the gradient size
    // from its parameter count and dtype (scaledesk_metrics.init); a code that does not record
    // them is named with what is missing.
    void thePlannerPredictsFromYourCodesRecords()
    {
        const auto plan = m_cli.run({QStringLiteral("plan"), QStringLiteral("--sweep"), QStringLiteral("own"), QStringLiteral("--nodes"),
                                     QStringLiteral("1,2"), QStringLiteral("--strategies"), QStringLiteral("plain"),
                                     QStringLiteral("--out"), m_tmp.filePath(QStringLiteral("plan"))});
        // The error first: the plan printed before it is longer than a failure message keeps.
        QVERIFY2(plan.exitCode == 0 && !plan.crashed,
                 qPrintable(QStringLiteral("exit %1%2: %3\n%4")
                                .arg(plan.exitCode)
                                .arg(plan.crashed ? QStringLiteral(" (crashed)") : QString())
                                .arg(plan.err, plan.out.right(800))));
        QFile md(m_tmp.filePath(QStringLiteral("plan/plan.md")));
        QVERIFY(md.open(QIODevice::ReadOnly));
        const QString text = QString::fromUtf8(md.readAll());
        // 1 rank predicted (the compute is that run's step time); 2 ranks need collectives timed.
        static const QRegularExpression oneRank(QStringLiteral("\\| plain \\| 1 \\| 1 \\| [0-9.]+ m?s \\|"));
        QVERIFY2(oneRank.match(text).hasMatch(), qPrintable(text));
        QVERIFY2(text.contains(QStringLiteral("scaledesk calibrate --profile local --nodes")), qPrintable(text));
        QVERIFY2(text.contains(QStringLiteral("own-plain-1x2-r1: 2 ranks: its step time")), qPrintable(text));
        QVERIFY2(!text.contains(QStringLiteral("| slow |")), qPrintable(text));  // only the variant asked for
        // A name that is neither the trainer's strategy nor a variant the sweep ran is refused.
        const auto unknown = m_cli.run({QStringLiteral("plan"), QStringLiteral("--sweep"), QStringLiteral("own"), QStringLiteral("--nodes"),
                                        QStringLiteral("1"), QStringLiteral("--strategies"), QStringLiteral("plian"),
                                        QStringLiteral("--out"), m_tmp.filePath(QStringLiteral("plan-x"))});
        QVERIFY(unknown.exitCode != 0);
        QVERIFY2(unknown.all().contains(QStringLiteral(
                     "strategy 'plian' is neither the trainer's nor one sweep 'own' ran; there are ddp, fused, zero1, plain, slow")),
                 qPrintable(unknown.all()));

        const QString def = write(
            QStringLiteral("noparams.yaml"),
            "command: [/usr/bin/python3, '{code}/train_ddp.py', --epochs, '2', --steps, '3', --batch, '{local_batch}', --no-parameters]\n"
            "code: " SCALEDESK_SOURCE_DIR "/tests/commandrun\n");
        QVERIFY(m_cli
                    .run({QStringLiteral("submit"), QStringLiteral("--run"), def, QStringLiteral("--sweep"), QStringLiteral("nop"),
                          QStringLiteral("--local-batch"), QStringLiteral("4"), QStringLiteral("--wait"), QStringLiteral("--timeout"),
                          QStringLiteral("300")})
                    .exitCode == 0);
        const auto missing = m_cli.run({QStringLiteral("plan"), QStringLiteral("--sweep"), QStringLiteral("nop"), QStringLiteral("--nodes"),
                                        QStringLiteral("1"), QStringLiteral("--out"), m_tmp.filePath(QStringLiteral("plan-nop"))});
        QVERIFY(missing.exitCode != 0);
        QVERIFY2(missing.all().contains(QStringLiteral("does not give the planner the gradient size")), qPrintable(missing.all()));
    }

    void aFailingScriptIsFailedWithItsError()
    {
        const auto r = m_cli.run(submit({QStringLiteral("--name"), QStringLiteral("broken"), QStringLiteral("--strategies"),
                                         QStringLiteral("broken"), QStringLiteral("--local-batch"), QStringLiteral("2"),
                                         QStringLiteral("--wait"), QStringLiteral("--timeout"), QStringLiteral("300")}));
        QCOMPARE(r.exitCode, 1);
        QCOMPARE(m_cli.state(QStringLiteral("broken")), QStringLiteral("failed"));
        const QJsonObject m = m_cli.manifest(QStringLiteral("broken"));
        QCOMPARE(m.value(QStringLiteral("status")).toString(), QStringLiteral("failed"));
        QVERIFY2(m.value(QStringLiteral("error")).toString().contains(QStringLiteral("planted failure at epoch 2")),
                 QJsonDocument(m).toJson().constData());
        // The epoch it finished is there; the one it failed in is not.
        QCOMPARE(m_cli.mirrored(QStringLiteral("broken"), QStringLiteral("metrics.jsonl")).count("\"kind\":\"epoch\""), 1);
        // sys.exit(3) after training: no exception, still a failure, in the manifest too.
        const auto e = m_cli.run(submit({QStringLiteral("--name"), QStringLiteral("exits"), QStringLiteral("--strategies"),
                                         QStringLiteral("exits"), QStringLiteral("--local-batch"), QStringLiteral("2"),
                                         QStringLiteral("--wait"), QStringLiteral("--timeout"), QStringLiteral("300")}));
        QCOMPARE(e.exitCode, 1);
        QCOMPARE(m_cli.state(QStringLiteral("exits")), QStringLiteral("failed"));
        QCOMPARE(m_cli.manifest(QStringLiteral("exits")).value(QStringLiteral("error")).toString(), QStringLiteral("exit code 3"));
    }

    // A stop reaches every rank as the definition's stop_signal; the script saves its checkpoint and
    // leaves with exit 75 (scaledesk_metrics.exit_for_requeue); requeue resumes it to the end.
    void aStoppedScriptCheckpointsAndRequeueResumesIt()
    {
        const QString id = QStringLiteral("stopped");
        const auto r = m_cli.run(
            submit({QStringLiteral("--name"), id, QStringLiteral("--strategies"), QStringLiteral("long"),
                    QStringLiteral("--ranks-per-node"), QStringLiteral("2"), QStringLiteral("--local-batch"), QStringLiteral("2")}));
        QVERIFY2(r.exitCode == 0, qPrintable(r.all()));
        QVERIFY(m_cli.waitForSteps(id, 3, 120));
        const auto c = m_cli.run({QStringLiteral("cancel"), QStringLiteral("--signal"), QStringLiteral("USR1"), id});
        QVERIFY2(c.exitCode == 0, qPrintable(c.all()));
        QVERIFY(m_cli.waitFor(
            id, [](const QJsonObject& j) { return j.value(QStringLiteral("state")).toString() == QLatin1String("cancelled"); }, 120));
        QCOMPARE(m_cli.manifest(id).value(QStringLiteral("status")).toString(), QStringLiteral("preempted"));
        const QByteArray before = m_cli.mirrored(id, QStringLiteral("metrics.jsonl"));
        QVERIFY(before.contains("\"event\":\"preempted\""));
        QVERIFY2(before.count("\"kind\":\"epoch\"") < 40, "the stop came after the end");
        QVERIFY(m_cli.mirrored(id, QStringLiteral("job.out")).contains("stop requested: checkpoint saved"));
        const auto q = m_cli.run({QStringLiteral("requeue"), id});
        QVERIFY2(q.exitCode == 0, qPrintable(q.all()));
        m_cli.run({QStringLiteral("status"), QStringLiteral("--wait"), QStringLiteral("--timeout"), QStringLiteral("300"), id});
        QCOMPARE(m_cli.state(id), QStringLiteral("completed"));
        const QByteArray after = m_cli.mirrored(id, QStringLiteral("metrics.jsonl"));
        QVERIFY(after.contains("\"event\":\"resumed\""));
        QVERIFY(m_cli.mirrored(id, QStringLiteral("job.out")).contains("resumed at epoch"));
        QCOMPARE(m_cli.manifest(id).value(QStringLiteral("status")).toString(), QStringLiteral("finished"));
        // Epoch 40 ran once; the epochs before the stop are not run again.
        const EpochTable epochs = parseEpochsCsv(m_cli.mirrored(id, QStringLiteral("epochs.csv")), QStringLiteral("epochs.csv"));
        QCOMPARE(epochs.rows.size(), 40);
        QCOMPARE(epochs.rows.last().epoch, 40);
    }

    // The reproducibility record: a code folder that is a git checkout with a change gives its
    // commit, "dirty" and the diff beside the run; the environment that decides how it ran.
    void theCodesCommitAndChangesAreRecorded()
    {
        const QString code = m_tmp.filePath(QStringLiteral("code repo"));
        QDir().mkpath(code);
        QVERIFY(QFile::copy(QStringLiteral(SCALEDESK_SOURCE_DIR "/tests/commandrun/train_ddp.py"), code + QStringLiteral("/train_ddp.py")));
        auto git = [&](const QStringList& args) {
            QProcess p;
            p.setWorkingDirectory(code);
            p.start(
                QStringLiteral("git"),
                QStringList{QStringLiteral("-c"), QStringLiteral("user.name=t"), QStringLiteral("-c"), QStringLiteral("user.email=t@t")} +
                    args);
            p.waitForFinished();
            return QString::fromUtf8(p.readAllStandardOutput()).trimmed();
        };
        git({QStringLiteral("init"), QStringLiteral("-q")});
        git({QStringLiteral("add"), QStringLiteral("train_ddp.py")});
        git({QStringLiteral("commit"), QStringLiteral("-q"), QStringLiteral("-m"), QStringLiteral("first")});
        const QString commit = git({QStringLiteral("rev-parse"), QStringLiteral("HEAD")});
        QCOMPARE(commit.size(), 40);
        QFile script(code + QStringLiteral("/train_ddp.py"));
        QVERIFY(script.open(QIODevice::Append));
        script.write("# a change not committed yet\n");
        script.close();
        const QString def = write(QStringLiteral("git.yaml"),
                                  "command: [/usr/bin/python3, '{code}/train_ddp.py', --epochs, '1', --steps, '2']\n"
                                  "code: code repo\n"
                                  "env: {NCCL_DEBUG: WARN, SECRET_TOKEN: hidden}\n");
        const auto r = m_cli.run({QStringLiteral("submit"), QStringLiteral("--run"), def, QStringLiteral("--name"), QStringLiteral("git"),
                                  QStringLiteral("--wait"), QStringLiteral("--timeout"), QStringLiteral("300")});
        QVERIFY2(r.exitCode == 0, qPrintable(r.all()));
        const QJsonObject m = m_cli.manifest(QStringLiteral("git"));
        const QJsonObject g = m.value(QStringLiteral("code_git")).toObject();
        QCOMPARE(g.value(QStringLiteral("commit")).toString(), commit);
        QCOMPARE(g.value(QStringLiteral("dirty")).toBool(), true);
        QCOMPARE(g.value(QStringLiteral("diff")).toString(), QStringLiteral("code.diff"));
        // The code was sent (one file) to a copy named by its hash; the manifest names both.
        QVERIFY2(r.all().contains(QStringLiteral("1 files; sent 1 of them")), qPrintable(r.all()));
        const QString hash = m.value(QStringLiteral("code_hash")).toString();
        QCOMPARE(hash.size(), 64);
        QCOMPARE(m.value(QStringLiteral("code_source")).toString(), code);
        QVERIFY2(m.value(QStringLiteral("code")).toString().endsWith(QStringLiteral("/code/") + hash.left(16)),
                 qPrintable(m.value(QStringLiteral("code")).toString()));
        // A second launch of the same code sends nothing and shares the copy.
        const auto again =
            m_cli.run({QStringLiteral("submit"), QStringLiteral("--run"), def, QStringLiteral("--name"), QStringLiteral("git2"),
                       QStringLiteral("--wait"), QStringLiteral("--timeout"), QStringLiteral("300")});
        QVERIFY2(again.exitCode == 0 && again.all().contains(QStringLiteral("nothing sent")), qPrintable(again.all()));
        QCOMPARE(m_cli.manifest(QStringLiteral("git2")).value(QStringLiteral("code_hash")).toString(), hash);
        QVERIFY(m_cli.mirrored(QStringLiteral("git"), QStringLiteral("code.diff")).contains("+# a change not committed yet"));
        const QJsonObject env = m.value(QStringLiteral("environment")).toObject();
        QCOMPARE(env.value(QStringLiteral("NCCL_DEBUG")).toString(), QStringLiteral("WARN"));
        QCOMPARE(env.value(QStringLiteral("WORLD_SIZE")).toString(), QStringLiteral("1"));
        QVERIFY(!env.contains(QStringLiteral("SECRET_TOKEN")));
    }

    // Metrics from what the code prints, not through scaledesk_metrics: the NERSC epoch lines and
    // a step pattern over the job's output, on 2 ranks. The module's own files are not read.
    void metricsFromTheJobsOutput()
    {
        const QString def =
            write(QStringLiteral("printed.yaml"),
                  "command: [/usr/bin/python3, '{code}/train_ddp.py', --epochs, '2', --steps, '5', --batch, '4', --print-steps]\n"
                  "code: " SCALEDESK_SOURCE_DIR "/tests/commandrun\n"
                  "env: {OMP_NUM_THREADS: '1'}\n"
                  "metrics:\n"
                  "  nersc: true\n"
                  "  patterns: ['^step (?<step>\\d+) loss (?<loss>\\S+)$']\n");
        const auto r = m_cli.run({QStringLiteral("submit"), QStringLiteral("--run"), def, QStringLiteral("--name"),
                                  QStringLiteral("printed"), QStringLiteral("--ranks-per-node"), QStringLiteral("2"),
                                  QStringLiteral("--wait"), QStringLiteral("--timeout"), QStringLiteral("300")});
        QVERIFY2(r.exitCode == 0, qPrintable(r.all()));
        const QByteArray metrics = m_cli.mirrored(QStringLiteral("printed"), QStringLiteral("metrics.jsonl"));
        QCOMPARE(metrics.count("\"kind\":\"step\""), 10);
        QCOMPARE(metrics.count("\"kind\":\"epoch\""), 2);
        QVERIFY2(!metrics.contains("\"lr\""), metrics.constData());  // the module's records (with lr) were not read
        const EpochTable epochs =
            parseEpochsCsv(m_cli.mirrored(QStringLiteral("printed"), QStringLiteral("epochs.csv")), QStringLiteral("epochs.csv"));
        QCOMPARE(epochs.rows.size(), 2);
        QCOMPARE(epochs.rows[1].samplesGlobal, 40.0);  // 5 steps x 4 x 2 ranks, from the NERSC line's seconds and rate
        QCOMPARE(epochs.rows[1].step, 10.0);
    }

    // A growing TensorBoard event file (the NERSC example's, written in pieces cut inside records
    // by tests/commandrun/grow_events.py) followed live: points arrive while the run runs, and at
    // the end they are all the file's scalars.
    void metricsFromAGrowingEventFileLive()
    {
        const QString events = QStringLiteral(
            SCALEDESK_SOURCE_DIR
            "/tests/backend/runs/data/nersc-example-logs/base/1GPU/00/logs/events.out.tfevents.1636677146.nid001104.65966.0");
        const QString def = write(QStringLiteral("events.yaml"),
                                  "command: [/usr/bin/python3, '{code}/grow_events.py', '" + events.toUtf8() +
                                      "', logs/train, --pieces, '8', --pause, '1.2']\n"
                                      "code: " SCALEDESK_SOURCE_DIR "/tests/commandrun\n"
                                      "metrics:\n  tensorboard: logs\n  tags: {loss: Loss/train}\n");
        const auto r =
            m_cli.run({QStringLiteral("submit"), QStringLiteral("--run"), def, QStringLiteral("--name"), QStringLiteral("events")});
        QVERIFY2(r.exitCode == 0, qPrintable(r.all()));
        QFile whole(events);
        QVERIFY(whole.open(QIODevice::ReadOnly));
        const QByteArray bytes = whole.readAll();
        const qsizetype total = qsizetype(tb::readEventBytes(bytes.constData(), std::size_t(bytes.size())).scalars.size());
        bool sawPart = false;
        QElapsedTimer clock;
        clock.start();
        while (clock.elapsed() < 120000) {
            m_cli.run({QStringLiteral("status")});
            const QString state = m_cli.state(QStringLiteral("events"));
            const qsizetype n = m_cli.mirrored(QStringLiteral("events"), QStringLiteral("metrics.jsonl")).count("\"kind\":\"scalar\"");
            if (state == QLatin1String("running") && n > 0 && n < total) sawPart = true;
            if (state == QLatin1String("completed")) break;
            QTest::qWait(300);
        }
        QCOMPARE(m_cli.state(QStringLiteral("events")), QStringLiteral("completed"));
        QVERIFY2(sawPart, "no poll saw part of the event file while the run ran");
        const QByteArray metrics = m_cli.mirrored(QStringLiteral("events"), QStringLiteral("metrics.jsonl"));
        QCOMPARE(metrics.count("\"kind\":\"scalar\""), total);
        QVERIFY(metrics.count("\"kind\":\"step\"") > 0);  // Loss/train as the step field `loss`
        QCOMPARE(m_cli.mirrored(QStringLiteral("events"), QStringLiteral("logs/train/") + QFileInfo(events).fileName()), bytes);
    }

    // One torchrun per node, which starts the ranks and sets their env:// variables: a real 2-rank
    // DDP run (torchrun_py311.py: Debian 12's torchrun fails under Python 3.11 without it).
    void torchrunStartsTheRanks()
    {
        const QString def = write(QStringLiteral("torchrun.yaml"),
                                  "command: [/usr/bin/python3, '{code}/train_ddp.py', --epochs, '2', --steps, '4', --batch, '4']\n"
                                  "code: " SCALEDESK_SOURCE_DIR "/tests/commandrun\n"
                                  "torchrun: [/usr/bin/python3, '{code}/torchrun_py311.py']\n"
                                  "env: {OMP_NUM_THREADS: '1'}\n");
        const auto dry =
            m_cli.run({QStringLiteral("submit"), QStringLiteral("--run"), def, QStringLiteral("--name"), QStringLiteral("tr-dry"),
                       QStringLiteral("--ranks-per-node"), QStringLiteral("2"), QStringLiteral("--dry-run")});
        QVERIFY2(dry.out.contains(QStringLiteral("/torchrun_py311.py' --nnodes=1 --nproc_per_node=$ranks --node_rank=0")),
                 qPrintable(dry.all()));
        QVERIFY2(dry.out.contains(QStringLiteral("kill -TERM $pids")), qPrintable(dry.all()));
        const auto r = m_cli.run({QStringLiteral("submit"), QStringLiteral("--run"), def, QStringLiteral("--name"), QStringLiteral("tr"),
                                  QStringLiteral("--ranks-per-node"), QStringLiteral("2"), QStringLiteral("--wait"),
                                  QStringLiteral("--timeout"), QStringLiteral("300")});
        QVERIFY2(r.exitCode == 0, qPrintable(r.all()));
        QCOMPARE(m_cli.state(QStringLiteral("tr")), QStringLiteral("completed"));
        const QJsonObject m = m_cli.manifest(QStringLiteral("tr"));
        QCOMPARE(m.value(QStringLiteral("world_size")).toInt(), 2);
        QCOMPARE(m.value(QStringLiteral("rank_hosts")).toArray().size(), 2);
        QCOMPARE(m_cli.mirrored(QStringLiteral("tr"), QStringLiteral("metrics.jsonl")).count("\"kind\":\"step\""), 8);
        // A stop reaches the workers through torchrun (TERM): they checkpoint, and the run is
        // stopped with 75 (torchrun's own 1 after a signal is not the workers' word), then resumes.
        const QString longer =
            write(QStringLiteral("torchrun-long.yaml"),
                  "command: [/usr/bin/python3, '{code}/train_ddp.py', --epochs, '30', --steps, '4', --batch, '4', --sleep, '0.05']\n"
                  "code: " SCALEDESK_SOURCE_DIR "/tests/commandrun\n"
                  "torchrun: [/usr/bin/python3, '{code}/torchrun_py311.py']\n"
                  "env: {OMP_NUM_THREADS: '1'}\n");
        const QString id = QStringLiteral("tr-stop");
        QVERIFY(m_cli
                    .run({QStringLiteral("submit"), QStringLiteral("--run"), longer, QStringLiteral("--name"), id,
                          QStringLiteral("--ranks-per-node"), QStringLiteral("2")})
                    .exitCode == 0);
        QVERIFY(m_cli.waitForSteps(id, 3, 120));
        QVERIFY(m_cli.run({QStringLiteral("cancel"), QStringLiteral("--signal"), QStringLiteral("USR1"), id}).exitCode == 0);
        QVERIFY(m_cli.waitFor(
            id, [](const QJsonObject& j) { return j.value(QStringLiteral("state")).toString() == QLatin1String("cancelled"); }, 120));
        QVERIFY2(m_cli.record(id).value(QStringLiteral("message")).toString().contains(QStringLiteral("exit 75")),
                 qPrintable(m_cli.record(id).value(QStringLiteral("message")).toString()));
        QVERIFY(m_cli.run({QStringLiteral("requeue"), id}).exitCode == 0);
        m_cli.run({QStringLiteral("status"), QStringLiteral("--wait"), QStringLiteral("--timeout"), QStringLiteral("300"), id});
        QCOMPARE(m_cli.state(id), QStringLiteral("completed"));
        QVERIFY(m_cli.mirrored(id, QStringLiteral("job.out")).contains("resumed at epoch"));

        // torchrun passes only TERM and HUP on: another stop signal is refused, naming the line.
        const QString bad =
            write(QStringLiteral("torchrun-usr1.yaml"), "command: [python3, train.py]\nstop_signal: USR1\ntorchrun: torchrun\n");
        const auto refused =
            m_cli.run({QStringLiteral("submit"), QStringLiteral("--run"), bad, QStringLiteral("--name"), QStringLiteral("never2")});
        QVERIFY(refused.exitCode != 0);
        QVERIFY2(refused.all().contains(QStringLiteral("torchrun-usr1.yaml:2:14")) &&
                     refused.all().contains(QStringLiteral("only TERM and HUP")),
                 qPrintable(refused.all()));
    }

    // `profiles test --run`: the definition's interpreter imports torch where the code runs (with
    // the versions), or the check fails saying what the interpreter printed.
    void profilesTestChecksTheCodesPython()
    {
        Cli cli = m_cli;
        cli.env.insert(QStringLiteral("SCALEDESK_TRAIN"), QStringLiteral(SCALEDESK_TRAIN_BIN));
        auto r =
            cli.run({QStringLiteral("profiles"), QStringLiteral("test"), QStringLiteral("local"), QStringLiteral("--run"), m_definition});
        QVERIFY2(r.exitCode == 0, qPrintable(r.all()));
        QVERIFY2(r.out.contains(QStringLiteral("ok   Python and PyTorch for ddp-script.yaml: /usr/bin/python3 Python 3.")) &&
                     r.out.contains(QStringLiteral(" torch 1.13")) && r.out.contains(QStringLiteral("gloo")),
                 qPrintable(r.out));
        const QString bad = write(QStringLiteral("no-python.yaml"), "command: [/nonexistent/python3, train.py]\n");
        r = cli.run({QStringLiteral("profiles"), QStringLiteral("test"), QStringLiteral("local"), QStringLiteral("--run"), bad});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(
            r.out.contains(QStringLiteral("FAIL Python and PyTorch for no-python.yaml: /nonexistent/python3 -c 'import torch' failed")),
            qPrintable(r.out));
    }

    void badDefinitionsAreRefusedBeforeAnythingIsRecorded()
    {
        const QString bad = write(QStringLiteral("bad.yaml"), "command: [python3, train.py]\nvariants:\n  a: [--rank, '{rank}']\n");
        auto r = m_cli.run({QStringLiteral("submit"), QStringLiteral("--run"), bad, QStringLiteral("--name"), QStringLiteral("never")});
        QVERIFY(r.exitCode != 0);
        QVERIFY2(r.err.contains(bad + QStringLiteral(":3:15: ")) && r.err.contains(QStringLiteral("no placeholder {rank}")),
                 qPrintable(r.all()));
        // {local_batch} with no batch given: refused naming the definition.
        r = m_cli.run(submit({QStringLiteral("--name"), QStringLiteral("never")}));
        QVERIFY(r.exitCode != 0);
        QVERIFY2(r.err.contains(m_definition) && r.err.contains(QStringLiteral("--local-batch")), qPrintable(r.all()));
        r = m_cli.run(submit({QStringLiteral("--name"), QStringLiteral("never"), QStringLiteral("--strategies"), QStringLiteral("ddp"),
                              QStringLiteral("--local-batch"), QStringLiteral("2")}));
        QVERIFY(r.exitCode != 0);
        QVERIFY2(r.err.contains(QStringLiteral("no variant 'ddp' (plain, slow, broken, long, exits)")), qPrintable(r.all()));
        r = m_cli.run({QStringLiteral("submit"), QStringLiteral("--name"), QStringLiteral("never")});
        QVERIFY(r.exitCode != 0);
        QVERIFY2(r.err.contains(QStringLiteral("--run FILE")), qPrintable(r.all()));
        QVERIFY(m_cli.record(QStringLiteral("never")).isEmpty());
        QVERIFY(!QDir(m_cli.workspace + QStringLiteral("/runs/never")).exists());
    }

    void aDryRunShowsTheRanksCommand()
    {
        const auto r = m_cli.run(submit({QStringLiteral("--name"), QStringLiteral("dry"), QStringLiteral("--strategies"),
                                         QStringLiteral("slow"), QStringLiteral("--local-batch"), QStringLiteral("2"),
                                         QStringLiteral("--ranks-per-node"), QStringLiteral("2"), QStringLiteral("--dry-run")}));
        QVERIFY2(r.exitCode == 0, qPrintable(r.all()));
        QVERIFY2(r.out.contains(QStringLiteral("RANK=$rank LOCAL_RANK=$rank WORLD_SIZE=$ranks")), qPrintable(r.out));
        QVERIFY(r.out.contains(QStringLiteral("'--strategy' 'slow' '--sleep' '0.05'")));
        QVERIFY(r.out.contains(QStringLiteral("export SCALEDESK_VARIANT='slow'")));
        QVERIFY(m_cli.record(QStringLiteral("dry")).isEmpty());
    }
};

QTEST_GUILESS_MAIN(TestCliCommand)
#include "tst_cli_command.moc"
