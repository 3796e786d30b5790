#pragma once
// A live run on the sandbox for the tail test and the tail benchmark: a held SLURM job (so the run
// stays active), a run folder on the "cluster" that a writer thread appends metrics lines to, the
// real SshTransport, SlurmScheduler, RunPoller and MirrorReader, and a way to cut the SSH session
// the way a network drop would (kill the session's sshd processes).
#include "remote/sshtransport.h"
#include "runs/mirrorreader.h"
#include "runs/runpoller.h"
#include "scheduler/shellquote.h"
#include "scheduler/slurmscheduler.h"

#include <QDateTime>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>

namespace scaledesk::test {

class TailHarness {
public:
    QTemporaryDir tmp;
    std::unique_ptr<SshTransport> ssh;
    std::unique_ptr<SlurmScheduler> slurm;
    std::unique_ptr<RunStore> store;
    std::unique_ptr<MirrorReader> reader;
    QString remoteDir, jobId, runId = QStringLiteral("tail 'run' $(x)");
    std::atomic<int> written{0};
    std::thread writer;

    static QString sandboxDir()
    {
        const QString d = qEnvironmentVariable("SCALEDESK_SSH_SANDBOX_DIR");
        return d.isEmpty() ? QStringLiteral("/tmp/scaledesk-ssh-sandbox") : d;
    }

    /// An empty string when ready, else why not.
    QString setUp()
    {
        SshOptions o;
        o.host = QStringLiteral("sandbox");
        o.sshConfigFile = sandboxDir() + QStringLiteral("/ssh_config");
        o.knownHostsFile = sandboxDir() + QStringLiteral("/known_hosts");
        o.keepaliveS = 1;
        ssh = std::make_unique<SshTransport>(o);
        slurm = std::make_unique<SlurmScheduler>(*ssh);
        auto s = RunStore::open(Workspace(tmp.filePath(QStringLiteral("ws"))));
        if (!s) return s.error().text();
        store = std::move(s).value();
        remoteDir = tmp.filePath(QStringLiteral("remote run"));
        auto job = ssh->exec(
            QStringLiteral("mkdir -p %1 && sbatch --hold --parsable --chdir=%1 --job-name=tail --output=/dev/null --wrap 'sleep 1'")
                .arg(shellQuote(remoteDir)));
        if (!job) return job.error().text();
        if (job->exitCode != 0) return QString::fromUtf8(job->err);
        jobId = QString::fromUtf8(job->out).trimmed();
        RunRecord r;
        r.id = runId;
        r.profile = QStringLiteral("sandbox");
        r.remoteDir = remoteDir;
        r.jobId = jobId;
        r.transition(RunState::Queued, QStringLiteral("held job for the tail test"));
        if (auto ok = store->save(r); !ok) return ok.error().text();
        reader = std::make_unique<MirrorReader>(store->workspace().runDir(runId));
        return QString();
    }

    ~TailHarness()
    {
        if (writer.joinable()) writer.join();
        if (ssh && !jobId.isEmpty())
            if (auto done = ssh->exec(QStringLiteral("scancel %1").arg(shellQuote(jobId))); !done)
                qWarning("cleanup: %s", qPrintable(done.error().text()));
    }

    /// Appends `lines` step records (t = the time of the write) to metrics.jsonl and a log line per
    /// step to slurm-<job>.out, one every `gapUs` microseconds, each with a flush, as the trainer does.
    void startWriter(int lines, int gapUs)
    {
        writer = std::thread([this, lines, gapUs] {
            FILE* metrics = std::fopen((remoteDir + QStringLiteral("/metrics.jsonl")).toLocal8Bit().constData(), "ab");
            FILE* log = std::fopen((remoteDir + QStringLiteral("/slurm-%1.out").arg(jobId)).toLocal8Bit().constData(), "ab");
            for (int i = 1; i <= lines; ++i) {
                const double t = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
                std::fprintf(metrics, "{\"kind\":\"step\",\"step\":%d,\"epoch\":1,\"t\":%.6f,\"loss\":%.9g,\"lr\":0.001,\"step_s\":0.2}\n",
                             i, t, 1.0 / i);
                std::fflush(metrics);
                std::fprintf(log, "step %d done\n", i);
                std::fflush(log);
                written = i;
                if (gapUs > 0) std::this_thread::sleep_for(std::chrono::microseconds(gapUs));
            }
            std::fclose(metrics);
            std::fclose(log);
        });
    }

    Expected<PollReport> poll()
    {
        RunPoller poller(*store, *ssh, *slurm);
        return poller.poll({runId});
    }

    /// Cuts the SSH session as a network failure would (tests/sandbox/ssh-sandbox.sh drop).
    void killSession() const
    {
        QProcess::execute(QStringLiteral(SCALEDESK_SOURCE_DIR "/tests/sandbox/ssh-sandbox.sh"), {QStringLiteral("drop")});
    }

    QByteArray remoteBytes(const QString& name) const
    {
        QFile f(remoteDir + QLatin1Char('/') + name);
        return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
    }
    QByteArray mirrorBytes(const QString& name) const
    {
        QFile f(store->workspace().runDir(runId) + QLatin1Char('/') + name);
        return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
    }
};

}  // namespace scaledesk::test
