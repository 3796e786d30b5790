#pragma once

#include "scheduler/scheduler.h"

namespace scaledesk {

/// SLURM through a Transport: sbatch --parsable, squeue --me (falling back to -u for SLURM
/// before 20.02), sacct when accounting exists, scancel and scontrol requeue.
class SlurmScheduler final : public Scheduler {
public:
    /// `commandTimeoutMs`: how long one SLURM command may take (the profile's slurm.command_timeout).
    explicit SlurmScheduler(Transport& transport, int commandTimeoutMs = 60000) : m_transport(transport), m_execTimeoutMs(commandTimeoutMs)
    {}
    QString kind() const override { return QStringLiteral("slurm"); }
    QString scriptName() const override { return QStringLiteral("job.sbatch"); }
    QString renderScript(const JobRequest& request) const override { return renderJobScript(request); }
    Expected<Submission> submit(const QString& runDir) override;
    QString queryCommand(const QList<JobRef>& jobs) const override;
    QHash<QString, JobStatus> parseQuery(const QByteArray& output, const QList<JobRef>& jobs) const override;
    Expected<QString> findJob(const JobRef& ref) override;
    Status cancel(const JobRef& job, const QString& signal = QString()) override;
    Expected<QString> requeue(const JobRef& job) override;

    /// SLURM's job state name → the run state (PENDING → queued, TIMEOUT → timeout, …).
    static RunState mapState(const QString& slurmState);
    /// The job id of sbatch --parsable's answer: the last line of `stdoutText` that is
    /// `digits[;cluster]`, wherever a wrapper's or a plugin's lines put it; empty when there is none.
    static QString parsableJobId(const QByteArray& stdoutText);
    /// findJob's one command, and the newest matching job id in its output (an error when squeue
    /// did not answer; tests read both).
    static QString findJobCommand(const JobRef& ref);
    static Expected<QString> parseFindJob(const QByteArray& output, const JobRef& ref);

private:
    Expected<ExecResult> run(const QString& command, const QString& what, Idempotent idempotent = Idempotent::No);
    Transport& m_transport;
    int m_execTimeoutMs;
};

}  // namespace scaledesk
