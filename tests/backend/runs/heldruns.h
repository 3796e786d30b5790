#pragma once
// Runs for poll tests and the poll benchmark: n SLURM jobs held in the sandbox (PENDING, so
// active), each with a run folder on the far side (metrics.jsonl, epochs.csv, a log per rank after
// the first) and a record in the store.

#include "remote/sshtransport.h"
#include "remote/transport.h"
#include "runs/runstore.h"
#include "scheduler/jobscript.h"
#include "scheduler/shellquote.h"

#include <QStringList>

namespace scaledesk::test {

struct HeldRuns {
    QString remoteRoot;
    QStringList runIds;
    QStringList jobIds;
    QString dir(int i) const { return remoteRoot + QStringLiteral("/runs/r%1").arg(i); }
};

/// The SSH sandbox's host (tests/sandbox/ssh-sandbox.sh), with its own ssh_config and known_hosts.
inline SshOptions sandboxSshOptions()
{
    const QString sandbox = qEnvironmentVariable("SCALEDESK_SSH_SANDBOX_DIR", QStringLiteral("/tmp/scaledesk-ssh-sandbox"));
    SshOptions o;
    o.host = QStringLiteral("sandbox");
    o.sshConfigFile = sandbox + QStringLiteral("/ssh_config");
    o.knownHostsFile = sandbox + QStringLiteral("/known_hosts");
    return o;
}

inline const QByteArray kStepLine = R"({"kind":"step","step":1,"epoch":1,"t":1764480000.0,"loss":0.123456,"lr":0.001,"step_s":0.2})"
                                    "\n";

/// Runs `script` in pieces of at most 50 runs' lines (one argv string stays far below 128 KiB).
inline Expected<QByteArray> execInPieces(Transport& ssh, const QStringList& perRun, int timeoutMs = 300000)
{
    QByteArray out;
    for (qsizetype i = 0; i < perRun.size(); i += 50) {
        auto r = ssh.exec(perRun.mid(i, 50).join(QStringLiteral("; ")), timeoutMs);
        if (!r) return r.error();
        if (r->exitCode != 0) return Error{ErrorCode::SchedulerRejected, QString::fromUtf8(r->err).trimmed(), ssh.describe()};
        out += r->out;
    }
    return out;
}

inline Expected<HeldRuns> setUpHeldRuns(Transport& ssh, RunStore& store, const QString& remoteRoot, int n, int ranks)
{
    HeldRuns h;
    h.remoteRoot = remoteRoot;
    if (auto cleared = ssh.exec(QStringLiteral("rm -rf %1").arg(shellQuote(remoteRoot)), 120000); !cleared) return cleared.error();
    QStringList lines;
    for (int i = 0; i < n; ++i) {
        QString line = QStringLiteral("mkdir -p %1 && cd %1 && printf '%s' %2 > metrics.jsonl && printf 'epoch,loss\\n' > epochs.csv")
                           .arg(shellQuote(h.dir(i)), shellQuote(QString::fromUtf8(kStepLine)));
        for (int rank = 1; rank < ranks; ++rank) line += QStringLiteral(" && echo 'rank %1 starts' > rank-%1.log").arg(rank);
        line += QStringLiteral(" && sbatch --hold --parsable --job-name=%1 --output=/dev/null --wrap 'sleep 1'")
                    .arg(slurmJobName(QStringLiteral("r%1").arg(i)));
        lines << line;
    }
    auto made = execInPieces(ssh, lines);
    if (!made) return made.error();
    h.jobIds = QString::fromUtf8(*made).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    if (h.jobIds.size() != n)
        return Error{ErrorCode::SchedulerParse, QStringLiteral("expected %1 job ids, got %2").arg(n).arg(h.jobIds.size()), QString()};
    for (int i = 0; i < n; ++i) {
        RunRecord r;
        r.id = QStringLiteral("r%1").arg(i);
        r.profile = QStringLiteral("sandbox");
        r.ranksPerNode = ranks;
        r.remoteDir = h.dir(i);
        r.jobId = h.jobIds[i].trimmed();
        r.submitStep = QStringLiteral("recorded");
        r.transition(RunState::Queued, QStringLiteral("held for the test"));
        if (auto ok = store.save(r); !ok) return ok.error();
        h.runIds << r.id;
    }
    return h;
}

/// One more step line in every run's metrics.jsonl and one more line in every rank log.
inline Status growAll(Transport& ssh, const HeldRuns& h, int ranks)
{
    QStringList lines;
    for (int i = 0; i < h.runIds.size(); ++i) {
        QString line =
            QStringLiteral("cd %1 && printf '%s' %2 >> metrics.jsonl").arg(shellQuote(h.dir(i)), shellQuote(QString::fromUtf8(kStepLine)));
        for (int rank = 1; rank < ranks; ++rank) line += QStringLiteral(" && echo step >> rank-%1.log").arg(rank);
        lines << line;
    }
    auto done = execInPieces(ssh, lines);
    if (!done) return done.error();
    return Done{};
}

inline void cancelAll(Transport& ssh, const HeldRuns& h)
{
    QStringList lines;
    for (qsizetype i = 0; i < h.jobIds.size(); i += 200) lines << QStringLiteral("scancel ") + h.jobIds.mid(i, 200).join(QLatin1Char(' '));
    (void)execInPieces(ssh, lines);
    (void)ssh.exec(QStringLiteral("rm -rf %1").arg(shellQuote(h.remoteRoot)), 120000);
}

}  // namespace scaledesk::test
