#pragma once

#include "core/expected.h"
#include "remote/transport.h"
#include "runs/runrecord.h"
#include "scheduler/jobscript.h"

#include <QHash>
#include <QList>
#include <QString>

namespace scaledesk {

/// A job the app follows: its id, run folder (absolute, on the far side) and job name.
struct JobRef {
    QString jobId;
    QString runDir;
    QString jobName;
};

/// What the scheduler says about a job in one poll.
struct JobStatus {
    bool known = false;  ///< false: the scheduler has no record of the job (any more)
    RunState state = RunState::Queued;
    QString schedulerState;  ///< "PENDING", "RUNNING", "COMPLETED", … as the scheduler printed it
    QString reason;          ///< "BeginTime", "Resources", an exit code, …
};

/// Runs jobs on the machine behind a Transport: SLURM over SSH, or processes on this machine.
/// Every value that reaches a shell is quoted with shellQuote().
class Scheduler {
public:
    virtual ~Scheduler() = default;
    virtual QString kind() const = 0;        ///< "slurm" or "local", for messages
    virtual QString scriptName() const = 0;  ///< the job script in the run folder
    virtual QString renderScript(const JobRequest& request) const = 0;

    /// Starts the job script of `runDir` (already uploaded); returns the job id. An error carries
    /// the scheduler's own message (e.g. sbatch's "error: invalid partition").
    virtual Expected<QString> submit(const QString& runDir) = 0;

    /// One shell command that prints the state of every job in `jobs`; the poller sends it in the
    /// same round trip as the file sizes. parseQuery() reads its output.
    virtual QString queryCommand(const QList<JobRef>& jobs) const = 0;
    /// Every job of `jobs` by id; an empty map when the scheduler could not be asked (then the
    /// poller changes no state).
    virtual QHash<QString, JobStatus> parseQuery(const QByteArray& output, const QList<JobRef>& jobs) const = 0;

    /// After an interrupted submit: the id of a job named ref.jobName whose run folder is
    /// ref.runDir, or an empty string when there is none.
    virtual Expected<QString> findJob(const JobRef& ref) = 0;

    /// Cancels, or with `signal` (e.g. "USR1") only signals, the job. ErrorCode::SchedulerUnknownJob:
    /// the scheduler no longer knows it.
    virtual Status cancel(const JobRef& job, const QString& signal = QString()) = 0;
    /// Runs the job again (it resumes from its checkpoint); returns its id, which may change.
    /// ErrorCode::SchedulerUnknownJob: the scheduler no longer knows the job (it must be submitted
    /// again); any other error says nothing about whether it was requeued.
    virtual Expected<QString> requeue(const JobRef& job) = 0;
};

}  // namespace scaledesk
