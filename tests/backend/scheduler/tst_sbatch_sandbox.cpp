// A rendered job.sbatch submitted to the real SLURM sandbox: a 2-rank cpu-tiny job in a run folder
// whose name would run commands if anything quoted it wrongly, and a SIGUSR1 checkpoint + requeue.
#include "scheduler/jobscript.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>

using namespace scaledesk;

namespace {
QString run(const QString& program, const QStringList& args, int* exitCode = nullptr, const QString& cwd = QString())
{
    QProcess p;
    if (!cwd.isEmpty()) p.setWorkingDirectory(cwd);
    p.setProcessChannelMode(QProcess::MergedChannels);
    p.start(program, args);
    p.waitForFinished(300000);
    if (exitCode) *exitCode = p.exitCode();
    return QString::fromUtf8(p.readAll()).trimmed();
}

// Waits until squeue no longer lists the job.
bool waitGone(const QString& jobId, int seconds)
{
    QElapsedTimer t;
    t.start();
    while (t.elapsed() < seconds * 1000) {
        if (run(QStringLiteral("squeue"), {QStringLiteral("-h"), QStringLiteral("-j"), jobId}).isEmpty()) return true;
        QThread::msleep(200);
    }
    return false;
}

QJsonObject manifest(const QString& runDir)
{
    QFile f(runDir + QStringLiteral("/manifest.json"));
    if (!f.open(QIODevice::ReadOnly)) return {};
    return QJsonDocument::fromJson(f.readAll()).object();
}
}  // namespace

class TestSbatchSandbox : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_root;
    QString prepare(const QString& runId, JobRequest& r)
    {
        const QString runDir = m_root.filePath(runId);
        QDir().mkpath(runDir);
        // The run folder holds the resolved config and, for these tests, the generated data.
        QFile::copy(QStringLiteral(SCALEDESK_SOURCE_DIR "/configs/unet.yaml"), runDir + QStringLiteral("/config.yaml"));
        int code = -1;
        const QString out = run(QStringLiteral(SCALEDESK_TRAIN_BIN),
                                {QStringLiteral("make-data"), QStringLiteral("--out"), QStringLiteral("data"), QStringLiteral("--box"),
                                 QStringLiteral("128"), QStringLiteral("--val-box"), QStringLiteral("96")},
                                &code, runDir);
        if (code != 0) qWarning() << out;
        r.profile.kind = ProfileKind::SshSlurm;
        r.profile.slurm.cpusPerTask = 1;
        r.profile.slurm.timeLimit = QStringLiteral("00:10:00");
        r.profile.slurm.mpi = QStringLiteral("pmix");
        r.profile.masterPort = 29640;
        r.point.runId = runId;
        r.point.strategy = QStringLiteral("ddp");
        r.point.ranksPerNode = 2;
        r.point.localBatch = 1;
        r.configName = QStringLiteral("cpu-tiny");
        r.trainerPath = QStringLiteral(SCALEDESK_TRAIN_BIN);
        r.trainerArgs = {QStringLiteral("--seed"), QStringLiteral("3")};
        QFile script(runDir + QStringLiteral("/job.sbatch"));
        script.open(QIODevice::WriteOnly);
        script.write(renderJobScript(r).toUtf8());
        return runDir;
    }

private slots:
    void initTestCase()
    {
        QVERIFY(!qEnvironmentVariableIsEmpty("SLURM_CONF"));
        if (qEnvironmentVariableIsSet("SCALEDESK_KEEP_TEST_DIRS")) {  // for post-mortems
            m_root.setAutoRemove(false);
            qInfo() << "run folders kept in" << m_root.path();
        }
    }

    void hostileRunFolderRunsToCompletion()
    {
        const QString runId = QStringLiteral("r $(touch pwned); 'q' \"dq\" ü");
        JobRequest r;
        const QString runDir = prepare(runId, r);
        int code = -1;
        const QString jobId = run(QStringLiteral("sbatch"), sbatchArguments(runDir), &code);
        QVERIFY2(code == 0, qPrintable(jobId));
        QVERIFY2(waitGone(jobId, 240), "the job did not finish");
        const QJsonObject m = manifest(runDir);
        QCOMPARE(m.value(QStringLiteral("status")).toString(), QStringLiteral("finished"));
        QCOMPARE(m.value(QStringLiteral("world_size")).toInt(), 2);
        QCOMPARE(m.value(QStringLiteral("slurm_job_id")).toString(), jobId);
        QVERIFY(QFile::exists(runDir + QStringLiteral("/slurm-") + jobId + QStringLiteral(".out")));
        // Nothing in the name was executed, anywhere.
        QVERIFY(!QFile::exists(runDir + QStringLiteral("/pwned")));
        QVERIFY(!QFile::exists(m_root.filePath(QStringLiteral("pwned"))));
        QVERIFY(!QFile::exists(QDir::home().filePath(QStringLiteral("pwned"))));
    }

    // --signal's USR1 reaches the batch shell, which forwards it: the trainer checkpoints and exits
    // 75, the script requeues, and the requeued job resumes from the checkpoint to the end.
    void usr1CheckpointsAndTheRequeuedJobResumes()
    {
        JobRequest r;
        r.profile.slurm.requeue = true;
        const QString runDir = prepare(QStringLiteral("requeue"), r);
        // cpu-short runs long enough to be signalled mid-way.
        QFile script(runDir + QStringLiteral("/job.sbatch"));
        r.configName = QStringLiteral("cpu-short");
        r.point.localBatch = 2;
        r.trainerArgs << QStringLiteral("--num_epochs") << QStringLiteral("2");
        script.open(QIODevice::WriteOnly | QIODevice::Truncate);
        script.write(renderJobScript(r).toUtf8());
        script.close();
        int code = -1;
        const QString jobId = run(QStringLiteral("sbatch"), sbatchArguments(runDir), &code);
        QVERIFY2(code == 0, qPrintable(jobId));
        // Wait for training steps, then signal the batch shell as --signal=B:USR1 would.
        QElapsedTimer t;
        t.start();
        QFile metrics(runDir + QStringLiteral("/metrics.jsonl"));
        while (t.elapsed() < 120000) {
            if (metrics.open(QIODevice::ReadOnly)) {
                const QByteArray all = metrics.readAll();
                metrics.close();
                if (all.count("\"kind\":\"step\"") >= 5) break;
            }
            QThread::msleep(100);
        }
        QCOMPARE(run(QStringLiteral("scancel"), {QStringLiteral("--batch"), QStringLiteral("--signal=USR1"), jobId}, &code), QString());
        // SLURM holds a requeued job back for two minutes (BeginTime) so the old step can clean up
        // (its pmix socket: starting before that makes the new step fail to launch). Start it as
        // soon as the job is pending again and its old step is gone.
        t.restart();
        while (t.elapsed() < 120000 &&
               run(QStringLiteral("squeue"),
                   {QStringLiteral("-h"), QStringLiteral("-j"), jobId, QStringLiteral("-o"), QStringLiteral("%T")}) !=
                   QLatin1String("PENDING"))
            QThread::msleep(200);
        while (t.elapsed() < 180000 &&
               !run(QStringLiteral("squeue"), {QStringLiteral("-h"), QStringLiteral("-s"), QStringLiteral("-j"), jobId}).isEmpty())
            QThread::msleep(200);
        QThread::sleep(5);
        QCOMPARE(
            run(QStringLiteral("scontrol"), {QStringLiteral("update"), QStringLiteral("JobId=") + jobId, QStringLiteral("StartTime=now")}),
            QString());
        QVERIFY2(waitGone(jobId, 400), "the requeued job did not finish");
        QFile f(runDir + QStringLiteral("/metrics.jsonl"));
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QByteArray text = f.readAll();
        QVERIFY(text.contains("\"event\":\"preempted\""));
        QVERIFY(text.contains("\"event\":\"resumed\""));
        QVERIFY(text.contains("\"event\":\"finished\""));
        QCOMPARE(manifest(runDir).value(QStringLiteral("status")).toString(), QStringLiteral("finished"));
    }
};

QTEST_GUILESS_MAIN(TestSbatchSandbox)
#include "tst_sbatch_sandbox.moc"
