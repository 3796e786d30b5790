#pragma once

#include "scheduler/scheduler.h"

namespace scaledesk {

/// SLURM through a Transport: sbatch --parsable, squeue --me (falling back to -u for SLURM
/// before 20.02), sacct when accounting exists, scancel and scontrol requeue.
class SlurmScheduler final : public Scheduler {
public:
    explicit SlurmScheduler(Transport& transport) : m_transport(transport) {}
    QString kind() const override { return QStringLiteral("slurm"); }
    QString scriptName() const override { return QStringLiteral("job.sbatch"); }
    QString renderScript(const JobRequest& request) const override { return renderJobScript(request); }
    Expected<QString> submit(const QString& runDir) override;
    QString queryCommand(const QList<JobRef>& jobs) const override;
    QHash<QString, JobStatus> parseQuery(const QByteArray& output, const QList<JobRef>& jobs) const override;
    Expected<QString> findJob(const JobRef& ref) override;
    Status cancel(const JobRef& job, const QString& signal = QString()) override;
    Expected<QString> requeue(const JobRef& job) override;

    /// SLURM's job state name → the run state (PENDING → queued, TIMEOUT → timeout, …).
    static RunState mapState(const QString& slurmState);

private:
    Expected<ExecResult> run(const QString& command, const QString& what);
    Transport& m_transport;
};

}  // namespace scaledesk
