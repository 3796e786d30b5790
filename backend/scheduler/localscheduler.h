#pragma once

#include "scheduler/scheduler.h"

namespace scaledesk {

/// Runs jobs as processes on this machine, with no SLURM: `job.sh` starts the trainer (under
/// `mpirun` when it is installed and ranks > 1, else as N gloo ranks with env:// rendezvous on
/// 127.0.0.1), forwards USR1/TERM so the trainer checkpoints, and leaves `exit_code` in the run
/// folder. The job id is the pid of job.sh, which runs in its own session so the app can quit
/// while it trains.
class LocalScheduler final : public Scheduler {
public:
    explicit LocalScheduler(Transport& transport) : m_transport(transport) {}
    QString kind() const override { return QStringLiteral("local"); }
    QString scriptName() const override { return QStringLiteral("job.sh"); }
    QString renderScript(const JobRequest& request) const override;
    Expected<Submission> submit(const QString& runDir) override;
    QString queryCommand(const QList<JobRef>& jobs) const override;
    QHash<QString, JobStatus> parseQuery(const QByteArray& output, const QList<JobRef>& jobs) const override;
    Expected<QString> findJob(const JobRef& ref) override;
    Status cancel(const JobRef& job, const QString& signal = QString()) override;
    Expected<QString> requeue(const JobRef& job) override;

private:
    Transport& m_transport;
};

}  // namespace scaledesk
