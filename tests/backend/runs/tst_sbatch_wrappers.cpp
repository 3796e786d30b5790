// Every job accounted for, whatever sbatch prints: over SSH to the sandbox's login shell, whose
// PATH finds a site's sbatch wrapper first (the SSH sandbox's path-first folder), in front of the
// real sbatch of the SLURM sandbox. The wrapper prints a banner first, notices after, exits 1
// after the job was accepted, or swallows the job id; and a job has left squeue when the run is
// reconciled. Each time the run has exactly one job, records it, is followed to its end, and a
// requeue is refused while the job exists; a requeue of a run whose job exists adopts that job.
#include "onejobrequest.h"
#include "remote/sshtransport.h"
#include "runs/runactions.h"
#include "runs/runpoller.h"
#include "scheduler/jobscript.h"
#include "scheduler/slurmscheduler.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>

using namespace scaledesk;

namespace {
QString sandboxDir()
{
    const QString d = qEnvironmentVariable("SCALEDESK_SSH_SANDBOX_DIR");
    return d.isEmpty() ? QStringLiteral("/tmp/scaledesk-ssh-sandbox") : d;
}
SshOptions sandbox()
{
    SshOptions o;
    o.host = QStringLiteral("127.0.0.1");
    o.port = 26822;
    o.user = QStringLiteral("root");
    o.identityFile = sandboxDir() + QStringLiteral("/id_ed25519");
    o.knownHostsFile = sandboxDir() + QStringLiteral("/known_hosts");
    o.connectTimeoutS = 10;
    o.keepaliveS = 0;
    return o;
}
}  // namespace

class TestSbatchWrappers : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_tmp;
    QString m_bin;  // first on the login shell's PATH: the wrappers
    QString m_sbatch, m_squeue;
    std::unique_ptr<RunStore> m_store;

    void tool(const QString& name, const QByteArray& body)
    {
        QFile f(m_bin + QLatin1Char('/') + name);
        QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
        f.write("#!/bin/sh\nREAL_SBATCH=" + m_sbatch.toUtf8() + "\nREAL_SQUEUE=" + m_squeue.toUtf8() + "\n" + body);
        f.close();
        QFile::setPermissions(f.fileName(), QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
    }
    // What the real squeue says: the ids of every job of that name.
    QStringList jobsNamed(const QString& name) const
    {
        QProcess p;
        p.start(m_squeue,
                {QStringLiteral("-h"), QStringLiteral("-t"), QStringLiteral("all"), QStringLiteral("-n"), name, QStringLiteral("-o"),
                 QStringLiteral("%i")});
        p.waitForFinished(20000);
        return QString::fromUtf8(p.readAllStandardOutput()).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    }
    LaunchRequest request(const QString& id, const QString& trainer) const
    {
        return test::oneJobRequest(id, QStringLiteral("wrapped"), m_tmp.filePath(QStringLiteral("remote")),
                                   m_tmp.filePath(QStringLiteral("configs.yaml")), trainer);
    }
    bool followToTheEnd(const QString& id)
    {
        SshTransport t(sandbox());
        SlurmScheduler s(t, 120000);
        RunPoller poller(*m_store, t, s);
        QElapsedTimer clock;
        clock.start();
        while (clock.elapsed() < 120000) {
            (void)poller.poll({id});
            auto r = m_store->load(id);
            if (r && isFinal(r->state)) return r->state == RunState::Completed;
            QThread::msleep(300);
        }
        return false;
    }

private slots:
    void initTestCase()
    {
        QVERIFY2(!qEnvironmentVariableIsEmpty("SLURM_CONF"), "the SLURM sandbox is not configured");
        m_sbatch = QStandardPaths::findExecutable(QStringLiteral("sbatch"));
        m_squeue = QStandardPaths::findExecutable(QStringLiteral("squeue"));
        QVERIFY(!m_sbatch.isEmpty() && !m_squeue.isEmpty());
        m_bin = sandboxDir() + QStringLiteral("/path-first");
        QVERIFY2(QFileInfo(m_bin).isDir(), "the SSH sandbox has no path-first folder");
        // The login shell finds what is put there first.
        tool(QStringLiteral("sbatch"), "echo wrapped\n");
        SshTransport t(sandbox());
        auto which = t.exec(QStringLiteral("sbatch"), 20000, Idempotent::Yes);
        QVERIFY2(which && which->out.trimmed() == "wrapped", which ? which->out.constData() : qPrintable(which.error().text()));
        cleanup();
        QFile configs(m_tmp.filePath(QStringLiteral("configs.yaml")));
        QVERIFY(configs.open(QIODevice::WriteOnly));
        configs.write("any: {}\n");
        configs.close();
        QFile slow(m_tmp.filePath(QStringLiteral("slow-trainer")));
        QVERIFY(slow.open(QIODevice::WriteOnly));
        slow.write("#!/bin/sh\nsleep 6\n");
        slow.close();
        QFile::setPermissions(slow.fileName(), QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
        auto store = RunStore::open(Workspace(m_tmp.filePath(QStringLiteral("ws"))));
        QVERIFY(store);
        m_store = std::move(store).value();
    }
    void cleanupTestCase() { cleanup(); }
    void cleanup()
    {
        QFile::remove(m_bin + QStringLiteral("/sbatch"));
        QFile::remove(m_bin + QStringLiteral("/squeue"));
    }

    void oneJobWhateverSbatchPrints_data()
    {
        QTest::addColumn<QByteArray>("sbatch");
        QTest::addColumn<QByteArray>("squeue");  // empty: the real one
        QTest::addColumn<QString>("recorded");   // a word of the run's note once the submit returned
        QTest::newRow("a banner before the id")
            << QByteArray("echo 'Submitted to partition debug (site wrapper 2.1)'\nexec \"$REAL_SBATCH\" \"$@\"\n") << QByteArray()
            << QStringLiteral("slurm: job");
        QTest::newRow("notices after the id") << QByteArray("\"$REAL_SBATCH\" \"$@\"; rc=$?\necho 'quota: 81% of 10 TB used'\nexit $rc\n")
                                              << QByteArray() << QStringLiteral("slurm: job");
        QTest::newRow("the wrapper fails after the job was accepted")
            << QByteArray("\"$REAL_SBATCH\" \"$@\"\necho 'wrapper: cannot write its log' >&2\nexit 1\n") << QByteArray()
            << QStringLiteral("slurm: job");
        QTest::newRow("the id swallowed") << QByteArray("\"$REAL_SBATCH\" \"$@\" >/dev/null\necho 'submitted.'\n") << QByteArray()
                                          << QStringLiteral("found by its name and folder");
        QTest::newRow("the id swallowed, exit 1")
            << QByteArray("\"$REAL_SBATCH\" \"$@\" >/dev/null\nexit 1\n") << QByteArray() << QStringLiteral("found by its name and folder");
        // The job ran and left squeue before anyone looked (MinJobAge; here squeue hides it), and
        // there is no accounting: its slurm-<id>.out in the run folder is the witness.
        QTest::newRow("the id swallowed and the job gone from squeue")
            << QByteArray("\"$REAL_SBATCH\" --wait \"$@\" >/dev/null\n") << QByteArray("exit 0\n")
            << QStringLiteral("found by its name and folder");
    }
    void oneJobWhateverSbatchPrints()
    {
        QFETCH(QByteArray, sbatch);
        QFETCH(QByteArray, squeue);
        QFETCH(QString, recorded);
        static int k = 0;
        const QString id = QStringLiteral("wrapped-%1").arg(++k);
        tool(QStringLiteral("sbatch"), sbatch);
        if (!squeue.isEmpty()) tool(QStringLiteral("squeue"), squeue);
        SshTransport t(sandbox());
        SlurmScheduler s(t, 120000);
        RunActions actions(*m_store, t, s);
        auto launched = actions.launch(request(id, m_tmp.filePath(QStringLiteral("slow-trainer"))));
        QVERIFY2(launched, qPrintable(launched ? QString() : launched.error().text()));
        const RunRecord after = *m_store->load(id);
        QCOMPARE(after.state, RunState::Queued);
        QVERIFY2(after.message.contains(recorded), qPrintable(after.message));
        // The submitter's one answer for the point says the same as the record.
        QCOMPARE(launched->outcomes.size(), 1);
        QCOMPARE(launched->outcomes.first().kind, SubmitOutcome::Kind::Queued);
        QCOMPARE(launched->outcomes.first().run.jobId, after.jobId);
        QVERIFY(launched->complete());
        cleanup();  // the real squeue from here on
        const QStringList jobs = jobsNamed(slurmJobName(id));
        QCOMPARE(jobs.size(), 1);
        QCOMPARE(after.jobId, jobs.first().trimmed());
        // What the wrapper said is kept with the run.
        QFile log(m_store->workspace().runDir(id) + QStringLiteral("/submit.log"));
        QVERIFY(log.open(QIODevice::ReadOnly));
        const QByteArray text = log.readAll();
        QVERIFY2(text.contains("slurm submit (exit"), text.constData());
        // While the job exists, a requeue is refused and starts nothing.
        auto requeued = actions.requeue(id, true);
        QVERIFY(!requeued);
        QCOMPARE(requeued.error().code, ErrorCode::ActionRefused);
        QCOMPARE(jobsNamed(slurmJobName(id)).size(), 1);
        QVERIFY(followToTheEnd(id));
        QCOMPARE(jobsNamed(slurmJobName(id)).size(), 1);
    }

    // A run recorded failed by an older version while its job runs (sbatch's banner hid the id):
    // requeue finds the job and follows it; it never starts a second one.
    void requeueAdoptsTheJobThatExists()
    {
        const QString id = QStringLiteral("adopt");
        SshTransport t(sandbox());
        SlurmScheduler s(t, 120000);
        RunActions actions(*m_store, t, s);
        auto launched = actions.launch(request(id, m_tmp.filePath(QStringLiteral("slow-trainer"))));
        QVERIFY2(launched, qPrintable(launched ? QString() : launched.error().text()));
        const QString job = m_store->load(id)->jobId;
        QVERIFY(m_store->update(id, [](RunRecord& r) {
            r.jobId.clear();
            r.submitStep = QStringLiteral("sbatch");
            r.transition(RunState::SubmitFailed,
                         QStringLiteral("failed to submit: sbatch printed no job id: 'Submitted to partition debug'"));
            return Status(Done{});
        }));
        QVERIFY(checkAction(RunAction::Requeue, *m_store->load(id)).allowed);
        auto requeued = actions.requeue(id);
        QVERIFY(!requeued);
        QCOMPARE(requeued.error().code, ErrorCode::ActionRefused);
        QVERIFY2(requeued.error().message.contains(QStringLiteral("job %1 of this run exists").arg(job)),
                 qPrintable(requeued.error().text()));
        const RunRecord now = *m_store->load(id);
        QCOMPARE(now.jobId, job);
        QVERIFY(isActive(now.state));
        QCOMPARE(jobsNamed(slurmJobName(id)).size(), 1);
        QVERIFY(followToTheEnd(id));
        QCOMPARE(jobsNamed(slurmJobName(id)).size(), 1);
    }

    // A plain refusal is no unknown outcome: the run fails at once with sbatch's words.
    void aPlainRefusalFailsTheSubmit()
    {
        const QString id = QStringLiteral("refused");
        tool(QStringLiteral("sbatch"), "echo 'Submitted to partition debug'\nexec \"$REAL_SBATCH\" --partition=no-such-partition \"$@\"\n");
        SshTransport t(sandbox());
        SlurmScheduler s(t, 120000);
        RunActions actions(*m_store, t, s);
        auto launched = actions.launch(request(id, QStringLiteral("/bin/true")));
        const RunRecord after = *m_store->load(id);
        QCOMPARE(after.state, RunState::SubmitFailed);
        QVERIFY2(after.message.contains(QStringLiteral("sbatch refused the job: sbatch: error:")), qPrintable(after.message));
        QVERIFY(jobsNamed(slurmJobName(id)).isEmpty());
        // The launch itself went through; its one point failed, with sbatch's words.
        QVERIFY2(launched, qPrintable(launched ? QString() : launched.error().text()));
        QCOMPARE(launched->outcomes.size(), 1);
        QCOMPARE(launched->outcomes.first().kind, SubmitOutcome::Kind::Failed);
        QVERIFY2(launched->outcomes.first().error.text().contains(QStringLiteral("sbatch: error:")),
                 qPrintable(launched->outcomes.first().error.text()));
        QCOMPARE(launched->outcomes.first().run.state, RunState::SubmitFailed);
        QVERIFY(!launched->complete());
        QVERIFY(launched->summary().contains(QStringLiteral("1 failed")));
    }
};

QTEST_GUILESS_MAIN(TestSbatchWrappers)
#include "tst_sbatch_wrappers.moc"
