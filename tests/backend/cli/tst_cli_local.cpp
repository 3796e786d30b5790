// The `scaledesk` command line on the `local` profile: no SSH, no SLURM, the real trainer as
// processes (mpirun for 2 ranks). Sweeps, hostile names, a killed submit, cancel, and a USR1
// checkpoint that `requeue` resumes.
#include "clitest.h"

#include <QTemporaryDir>

using namespace scaledesk::test;

class TestCliLocal : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_tmp;
    Cli m_cli;

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
        const auto r = m_cli.run({QStringLiteral("submit"), QStringLiteral("--config"), QStringLiteral("cpu-tiny"),
                                  QStringLiteral("--sweep"), QStringLiteral("dry"), QStringLiteral("--ranks-per-node"),
                                  QStringLiteral("1,2"), QStringLiteral("--strategies"), QStringLiteral("ddp,zero1"),
                                  QStringLiteral("--dry-run")});
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
        const auto r = m_cli.run({QStringLiteral("submit"), QStringLiteral("--config"), QStringLiteral("cpu-tiny"),
                                  QStringLiteral("--sweep"), QStringLiteral("loc"), QStringLiteral("--nodes"), QStringLiteral("1"),
                                  QStringLiteral("--ranks-per-node"), QStringLiteral("1,2"), QStringLiteral("--strategies"),
                                  QStringLiteral("ddp,fused"), QStringLiteral("--make-data"), QStringLiteral("--wait"),
                                  QStringLiteral("--timeout"), QStringLiteral("600")});
        QVERIFY2(r.exitCode == 0, qPrintable(r.all()));
        const QStringList ids = {QStringLiteral("loc-ddp-1x1-r1"), QStringLiteral("loc-ddp-1x2-r1"),
                                 QStringLiteral("loc-fused-1x1-r1"), QStringLiteral("loc-fused-1x2-r1")};
        for (const QString& id : ids) {
            QCOMPARE(m_cli.state(id), QStringLiteral("completed"));
            const QJsonObject m = m_cli.manifest(id);  // mirrored into the workspace
            QCOMPARE(m.value(QStringLiteral("status")).toString(), QStringLiteral("finished"));
            const bool two = id.contains(QStringLiteral("1x2"));
            QCOMPARE(m.value(QStringLiteral("world_size")).toInt(), two ? 2 : 1);
            // One rank has nothing to synchronise: the trainer labels it "none".
            QCOMPARE(m.value(QStringLiteral("strategy")).toString(), two ? id.section(QLatin1Char('-'), 1, 1) : QStringLiteral("none"));
            QCOMPARE(m_cli.record(id).value(QStringLiteral("strategy")).toString(), id.section(QLatin1Char('-'), 1, 1));
            QVERIFY(m_cli.mirrored(id, QStringLiteral("metrics.jsonl")).contains("\"event\":\"finished\""));
            QVERIFY(!m_cli.mirrored(id, QStringLiteral("epochs.csv")).isEmpty());
            const QStringList h = m_cli.history(id);
            QCOMPARE(h.first(), QStringLiteral("draft"));
            QVERIFY2(h.contains(QStringLiteral("queued")) && h.last() == QStringLiteral("completed"), qPrintable(h.join(QLatin1Char(' '))));
        }
        const auto list = m_cli.run({QStringLiteral("runs"), QStringLiteral("list"), QStringLiteral("--json"),
                                     QStringLiteral("--sweep"), QStringLiteral("loc")});
        const QJsonArray rows = QJsonDocument::fromJson(list.out.toUtf8()).array();
        QCOMPARE(rows.size(), 4);
        for (const auto& row : rows) QCOMPARE(row.toObject().value(QStringLiteral("state")).toString(), QStringLiteral("completed"));
        QVERIFY(!QFile::exists(m_tmp.filePath(QStringLiteral("pwned-ws"))));
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
        const QString png = m_tmp.filePath(QStringLiteral("compare.png"));
        const auto c = m_cli.run({QStringLiteral("compare"), QStringLiteral("loc-ddp-1x1-r1"), QStringLiteral("loc-fused-1x2-r1"),
                                  QStringLiteral("--series"), QStringLiteral("step/loss"), QStringLiteral("--out"), png});
        QVERIFY2(c.exitCode == 0, qPrintable(c.all()));
        QFile f(png);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QVERIFY(f.read(4) == QByteArray("\x89PNG"));
        const auto bad = m_cli.run({QStringLiteral("report"), QStringLiteral("--sweep"), QStringLiteral("loc"), QStringLiteral("--out"),
                                    QStringLiteral("/proc/nope"), QStringLiteral("--format"), QStringLiteral("png")});
        QCOMPARE(bad.exitCode, 1);
        QVERIFY2(bad.err.contains(QStringLiteral("/proc/nope")), qPrintable(bad.err));
    }

    void hostileRunNameNeverExecutes()
    {
        const QString name = QStringLiteral("x $(touch pwned); `touch pwned2` 'q' \"dq\" ü;");
        const auto r = m_cli.run({QStringLiteral("submit"), QStringLiteral("--config"), QStringLiteral("cpu-tiny"),
                                  QStringLiteral("--name"), name, QStringLiteral("--ranks-per-node"), QStringLiteral("2"),
                                  QStringLiteral("--make-data"), QStringLiteral("--wait"), QStringLiteral("--timeout"), QStringLiteral("300")});
        QVERIFY2(r.exitCode == 0, qPrintable(r.all()));
        QCOMPARE(m_cli.state(name), QStringLiteral("completed"));
        const QString remote = m_cli.record(name).value(QStringLiteral("remote_dir")).toString();
        QVERIFY(remote.endsWith(QStringLiteral("/runs/") + name));
        for (const QString& dir : {remote, m_cli.workspace, m_cli.workspace + QStringLiteral("/runs/") + name, QDir::currentPath(), QDir::homePath()}) {
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
        const auto status = m_cli.run({QStringLiteral("status"), QStringLiteral("--wait"), QStringLiteral("--timeout"),
                                       QStringLiteral("300"), id});
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
        QVERIFY(m_cli.waitFor(id, [](const QJsonObject& j) { return j.value(QStringLiteral("state")).toString() != QLatin1String("running"); }, 120));
        QCOMPARE(m_cli.state(id), QStringLiteral("cancelled"));
        const auto again = m_cli.run({QStringLiteral("cancel"), id});
        QCOMPARE(again.exitCode, 1);
        QVERIFY2(again.err.contains(QStringLiteral("the run has ended (cancelled)")), qPrintable(again.err));
    }

    void signalCheckpointsAndRequeueResumes()
    {
        const QString id = QStringLiteral("to-resume");
        const auto r = m_cli.run({QStringLiteral("submit"), QStringLiteral("--config"), QStringLiteral("cpu-tiny"),
                                  QStringLiteral("--name"), id, QStringLiteral("--make-data"), QStringLiteral("--"),
                                  QStringLiteral("--num_epochs"), QStringLiteral("40")});
        QVERIFY2(r.exitCode == 0, qPrintable(r.all()));
        QVERIFY(m_cli.waitForSteps(id, 3, 180));
        const auto c = m_cli.run({QStringLiteral("cancel"), QStringLiteral("--signal"), QStringLiteral("USR1"), id});
        QVERIFY2(c.exitCode == 0, qPrintable(c.all()));
        QVERIFY(m_cli.waitFor(id, [](const QJsonObject& j) { return j.value(QStringLiteral("state")).toString() == QLatin1String("cancelled"); }, 120));
        QCOMPARE(m_cli.manifest(id).value(QStringLiteral("status")).toString(), QStringLiteral("preempted"));
        QVERIFY(m_cli.mirrored(id, QStringLiteral("metrics.jsonl")).contains("\"event\":\"preempted\""));
        const auto q = m_cli.run({QStringLiteral("requeue"), id});
        QVERIFY2(q.exitCode == 0, qPrintable(q.all()));
        const auto done = m_cli.run({QStringLiteral("status"), QStringLiteral("--wait"), QStringLiteral("--timeout"), QStringLiteral("600"), id});
        QCOMPARE(m_cli.state(id), QStringLiteral("completed"));
        QVERIFY(m_cli.mirrored(id, QStringLiteral("metrics.jsonl")).contains("\"event\":\"resumed\""));
        const QStringList h = m_cli.history(id);
        QCOMPARE(h.join(QLatin1Char(' ')), QStringLiteral("draft submitting queued running cancelled queued running completed"));
        QVERIFY2(done.out.contains(QStringLiteral("requeued by the user")), qPrintable(done.out));
    }
};

QTEST_GUILESS_MAIN(TestCliLocal)
#include "tst_cli_local.moc"
