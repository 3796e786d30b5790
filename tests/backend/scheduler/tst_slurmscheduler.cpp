// SlurmScheduler's command and parsing logic, run through a real /bin/sh (LocalTransport) against
// stand-in squeue/sacct/sbatch scripts that print what a given SLURM version prints. The real SLURM
// path is tested in tst_cli_sandbox.
#include "remote/localtransport.h"
#include "scheduler/slurmscheduler.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

using namespace scaledesk;

class TestSlurmScheduler : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_bin;
    QByteArray m_path;
    void tool(const QString& name, const QByteArray& body)
    {
        QFile f(m_bin.filePath(name));
        QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
        f.write("#!/bin/sh\n" + body);
        f.close();
        QFile::setPermissions(f.fileName(), QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
    }

private slots:
    void initTestCase()
    {
        m_path = qgetenv("PATH");
        qputenv("PATH", m_bin.path().toUtf8() + ':' + m_path);
    }
    void cleanupTestCase() { qputenv("PATH", m_path); }

    void mapsSlurmStates_data()
    {
        QTest::addColumn<QString>("slurm");
        QTest::addColumn<int>("state");
        QTest::newRow("PENDING") << QStringLiteral("PENDING") << int(RunState::Queued);
        QTest::newRow("CONFIGURING") << QStringLiteral("CONFIGURING") << int(RunState::Queued);
        QTest::newRow("RUNNING") << QStringLiteral("RUNNING") << int(RunState::Running);
        QTest::newRow("COMPLETING") << QStringLiteral("COMPLETING") << int(RunState::Running);
        QTest::newRow("COMPLETED") << QStringLiteral("COMPLETED") << int(RunState::Completed);
        QTest::newRow("FAILED") << QStringLiteral("FAILED") << int(RunState::Failed);
        QTest::newRow("NODE_FAIL") << QStringLiteral("NODE_FAIL") << int(RunState::Failed);
        QTest::newRow("OUT_OF_MEMORY") << QStringLiteral("OUT_OF_MEMORY") << int(RunState::Failed);
        QTest::newRow("sacct CANCELLED by 0") << QStringLiteral("CANCELLED by 0") << int(RunState::Cancelled);
        QTest::newRow("TIMEOUT") << QStringLiteral("TIMEOUT") << int(RunState::Timeout);
        QTest::newRow("PREEMPTED") << QStringLiteral("PREEMPTED") << int(RunState::Requeued);
        QTest::newRow("REQUEUED") << QStringLiteral("REQUEUED") << int(RunState::Requeued);
        QTest::newRow("unknown future state") << QStringLiteral("WARPED") << int(RunState::Failed);
    }
    void mapsSlurmStates()
    {
        QFETCH(QString, slurm);
        QFETCH(int, state);
        QCOMPARE(int(SlurmScheduler::mapState(slurm)), state);
    }

    // squeue knows 11 and 12; 13 has left squeue and only sacct knows it; 14 is known to nobody.
    void oneQueryCoversEveryJob()
    {
        tool(QStringLiteral("squeue"),
             "echo '11|RUNNING|None|run-a|/scratch/a b'\necho '12|PENDING|BeginTime|run-b|/scratch/b'\necho '99|RUNNING|None|other|/x'\n");
        tool(QStringLiteral("sacct"), "echo '13|CANCELLED by 0|0:15'\n");
        LocalTransport t;
        SlurmScheduler s(t);
        const QList<JobRef> jobs = {
            {QStringLiteral("11"), {}, {}}, {QStringLiteral("12"), {}, {}}, {QStringLiteral("13"), {}, {}}, {QStringLiteral("14"), {}, {}}};
        auto r = t.exec(s.queryCommand(jobs));
        QVERIFY(r);
        QCOMPARE(t.stats().roundTrips, quint64(1));
        const auto st = s.parseQuery(r->out, jobs);
        QCOMPARE(st.size(), 4);
        QVERIFY(st[QStringLiteral("11")].known);
        QCOMPARE(st[QStringLiteral("11")].state, RunState::Running);
        QCOMPARE(st[QStringLiteral("11")].reason, QString());
        QCOMPARE(st[QStringLiteral("12")].state, RunState::Queued);
        QCOMPARE(st[QStringLiteral("12")].reason, QStringLiteral("BeginTime"));
        QCOMPARE(st[QStringLiteral("13")].state, RunState::Cancelled);
        QCOMPARE(st[QStringLiteral("13")].schedulerState, QStringLiteral("CANCELLED"));
        QVERIFY(!st[QStringLiteral("14")].known);
    }

    // SLURM before 20.02 has no --me: the same command falls back to -u <user>.
    void squeueWithoutMeFallsBackToUser()
    {
        tool(QStringLiteral("squeue"),
             "for a in \"$@\"; do [ \"$a\" = --me ] && { echo \"squeue: unrecognized option '--me'\" >&2; exit 1; }; done\n"
             "case \" $* \" in *\" -u \"*) echo '21|RUNNING|None|r|/d';; *) exit 3;; esac\n");
        tool(QStringLiteral("sacct"), "echo 'sacct: error: Slurm accounting storage is disabled' >&2; exit 1\n");
        LocalTransport t;
        SlurmScheduler s(t);
        const QList<JobRef> jobs = {{QStringLiteral("21"), {}, {}}, {QStringLiteral("22"), {}, {}}};
        auto r = t.exec(s.queryCommand(jobs));
        QVERIFY(r);
        const auto st = s.parseQuery(r->out, jobs);
        QVERIFY(st[QStringLiteral("21")].known);
        QCOMPARE(st[QStringLiteral("21")].state, RunState::Running);
        QVERIFY(!st[QStringLiteral("22")].known);  // accounting disabled: its error text is not read as a job
    }

    void squeueFailureMeansNothingIsKnown()
    {
        tool(QStringLiteral("squeue"), "echo 'slurm_load_jobs error: Unable to contact slurm controller' >&2; exit 1\n");
        tool(QStringLiteral("sacct"), "exit 1\n");
        LocalTransport t;
        SlurmScheduler s(t);
        const QList<JobRef> jobs = {{QStringLiteral("31"), {}, {}}};
        auto r = t.exec(s.queryCommand(jobs));
        QVERIFY(r);
        QVERIFY(s.parseQuery(r->out, jobs).isEmpty());  // no answer, not "no such job"
    }

    // squeue -j with a single id SLURM has forgotten fails with "Invalid job id specified": that
    // is an answer (the job is gone), unlike a controller that does not answer.
    void forgottenSingleJobIsAnAnswer()
    {
        tool(QStringLiteral("squeue"), "echo 'slurm_load_jobs error: Invalid job id specified' >&2; exit 1\n");
        tool(QStringLiteral("sacct"), "exit 1\n");
        LocalTransport t;
        SlurmScheduler s(t);
        const QList<JobRef> jobs = {{QStringLiteral("41"), {}, {}}};
        auto r = t.exec(s.queryCommand(jobs));
        QVERIFY(r);
        const auto st = s.parseQuery(r->out, jobs);
        QCOMPARE(st.size(), 1);
        QVERIFY(!st[QStringLiteral("41")].known);
    }

    void submitParsesTheJobId_data()
    {
        QTest::addColumn<QByteArray>("sbatch");
        QTest::addColumn<QString>("id");
        QTest::addColumn<QString>("error");  // a plain refusal
        QTest::addColumn<QString>("why");    // an unknown outcome (no id, no refusal)
        QTest::newRow("plain") << QByteArray("echo 4711\n") << QStringLiteral("4711") << QString() << QString();
        QTest::newRow("federated") << QByteArray("echo '4712;cluster2'\n") << QStringLiteral("4712") << QString() << QString();
        QTest::newRow("banner before") << QByteArray("echo 'Submitted to partition gpu (site wrapper v2)'; echo\necho 4713\n")
                                       << QStringLiteral("4713") << QString() << QString();
        QTest::newRow("notices after") << QByteArray("echo 4714; echo 'quota: 81% of 10 TB used'; echo 'NOTE: 2 jobs queued'\n")
                                       << QStringLiteral("4714") << QString() << QString();
        QTest::newRow("id, then the wrapper fails")
            << QByteArray("echo 4715; echo 'wrapper: cannot log' >&2; exit 1\n") << QStringLiteral("4715") << QString() << QString();
        QTest::newRow("rejected") << QByteArray("echo 'sbatch: error: invalid partition specified: nope' >&2; exit 1\n") << QString()
                                  << QStringLiteral("sbatch refused the job: sbatch: error: invalid partition specified: nope")
                                  << QString();
        QTest::newRow("no id") << QByteArray("echo 'Submitted batch job'\n") << QString() << QString()
                               << QStringLiteral("sbatch printed no job id ('Submitted batch job')");
        QTest::newRow("id swallowed, exit 1") << QByteArray("echo 'wrapper: cannot log' >&2; exit 1\n") << QString() << QString()
                                              << QStringLiteral("sbatch printed no job id and exited 1 ('wrapper: cannot log')");
        QTest::newRow("a number inside a line is no id")
            << QByteArray("echo 'job 4716 accepted'\n") << QString() << QString() << QStringLiteral("sbatch printed no job id");
    }
    void submitParsesTheJobId()
    {
        QFETCH(QByteArray, sbatch);
        QFETCH(QString, id);
        QFETCH(QString, error);
        QFETCH(QString, why);
        tool(QStringLiteral("sbatch"), "[ \"$1\" = --parsable ] || exit 9\n" + sbatch);
        QTemporaryDir run;
        const QString dir = run.filePath(QStringLiteral("it's $(touch pwned); a run"));
        QVERIFY(QDir().mkpath(dir));
        LocalTransport t;
        SlurmScheduler s(t);
        auto r = s.submit(dir);
        if (error.isEmpty()) {
            QVERIFY2(r, qPrintable(r ? QString() : r.error().text()));
            QCOMPARE(r->jobId, id);
            QVERIFY2(r->why.startsWith(why) && r->why.isEmpty() == why.isEmpty(), qPrintable(r->why));
            QVERIFY(!r->output.isEmpty() || id.isEmpty());  // what it printed, for the run's submit.log
        } else {
            QVERIFY(!r);
            QCOMPARE(r.error().code, ErrorCode::SchedulerRejected);
            QVERIFY2(r.error().message.contains(error), qPrintable(r.error().text()));
        }
        QVERIFY(!QFile::exists(dir + QStringLiteral("/pwned")));
        QVERIFY(!QFile::exists(run.filePath(QStringLiteral("pwned"))));
    }

    // findJob: squeue first, then sacct (ended jobs), then the folder's slurm-<id>.out; the job
    // of an earlier submit is never the answer, and without squeue's answer nothing is known.
    void findJobAsksEveryWitness_data()
    {
        QTest::addColumn<QByteArray>("squeue");
        QTest::addColumn<QByteArray>("sacct");
        QTest::addColumn<QStringList>("files");
        QTest::addColumn<QString>("earlier");
        QTest::addColumn<QString>("found");  // "error": findJob fails
        const QByteArray none = "exit 0\n";
        // DIR and NAME are replaced by the run's folder and job name.
        const QByteArray queued = "echo '90|PENDING|Priority|NAME|/elsewhere'; echo '91|RUNNING|None|NAME|DIR'; "
                                  "echo '95|RUNNING|None|other|DIR'\n";
        const QByteArray ended = "echo '70|NAME|DIR|COMPLETED'; echo '72|NAME|DIR|FAILED'; echo '99|NAME|/elsewhere|COMPLETED'\n";
        QTest::newRow("in squeue") << queued << ended << QStringList{QStringLiteral("slurm-60.out")} << QString() << QStringLiteral("91");
        QTest::newRow("left squeue: sacct") << none << ended << QStringList() << QString() << QStringLiteral("72");
        QTest::newRow("no accounting: the job's output")
            << none << QByteArray("echo 'sacct: error: accounting storage is disabled'; exit 1\n")
            << QStringList{QStringLiteral("slurm-60.out"), QStringLiteral("slurm-61.out"), QStringLiteral("slurm-99.out.bak"),
                           QStringLiteral("slurm-x.out")}
            << QString() << QStringLiteral("61");
        QTest::newRow("only the earlier job's traces")
            << none << QByteArray("echo '61|NAME|DIR|COMPLETED'\n")
            << QStringList{QStringLiteral("slurm-60.out"), QStringLiteral("slurm-61.out")} << QStringLiteral("61") << QString();
        QTest::newRow("a newer one than the earlier") << none << ended << QStringList() << QStringLiteral("70") << QStringLiteral("72");
        QTest::newRow("nothing") << none << none << QStringList() << QString() << QString();
        QTest::newRow("squeue does not answer")
            << QByteArray("echo 'slurm_load_jobs error: Unable to contact slurm controller' >&2; exit 1\n") << ended << QStringList()
            << QString() << QStringLiteral("error");
    }
    void findJobAsksEveryWitness()
    {
        QFETCH(QByteArray, squeue);
        QFETCH(QByteArray, sacct);
        QFETCH(QStringList, files);
        QFETCH(QString, earlier);
        QFETCH(QString, found);
        QTemporaryDir run;
        const QString dir = run.filePath(QStringLiteral("it's $(touch pwned); a run"));
        QVERIFY(QDir().mkpath(dir));
        for (const QString& f : files) {
            QFile out(dir + QLatin1Char('/') + f);
            QVERIFY(out.open(QIODevice::WriteOnly));
        }
        const QByteArray name = "sd-run-1";
        auto fill = [&](QByteArray body) {
            // Single-quoted in the stand-ins: a folder with a quote is spelled '\''.
            QByteArray quotedDir = dir.toUtf8();
            quotedDir.replace("'", "'\\''");
            return body.replace("DIR", quotedDir).replace("NAME", name);
        };
        tool(QStringLiteral("squeue"), fill(squeue));
        tool(QStringLiteral("sacct"), "case \"$*\" in *--name=sd-run-1*) ;; *) exit 7 ;; esac\n" + fill(sacct));
        LocalTransport t;
        SlurmScheduler s(t);
        auto r = s.findJob({earlier, dir, QString::fromUtf8(name)});
        if (found == QLatin1String("error")) {
            QVERIFY(!r);
            QCOMPARE(r.error().code, ErrorCode::SchedulerUnavailable);
        } else {
            QVERIFY2(r, qPrintable(r ? QString() : r.error().text()));
            QCOMPARE(*r, found);
        }
        QVERIFY(!QFile::exists(dir + QStringLiteral("/pwned")));
        QVERIFY(!QFile::exists(run.filePath(QStringLiteral("pwned"))));
    }
};

QTEST_GUILESS_MAIN(TestSlurmScheduler)
#include "tst_slurmscheduler.moc"
