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

/// What a submit command answered. No job id (an empty jobId) and no plain refusal means the
/// outcome is unknown: the job may exist (a wrapper that swallowed the id, a nonzero exit after
/// the job was accepted, a lost exit status), and it is looked up with findJob(), never sent again.
struct Submission {
    QString jobId;
    QString output;     ///< everything the command printed (stdout, then stderr): the run's submit.log keeps it
    int exitCode = -1;  ///< as the command's shell reported it (-1: not reported)
    QString why;        ///< for an unknown outcome: what was missing, in words
};

/// Runs jobs on the machine behind a Transport: SLURM over SSH, or processes on this machine.
/// Every value that reaches a shell is quoted with shellQuote().
class Scheduler {
public:
    virtual ~Scheduler() = default;
    virtual QString kind() const = 0;        ///< "slurm" or "local", for messages
    virtual QString scriptName() const = 0;  ///< the job script in the run folder
    virtual QString renderScript(const JobRequest& request) const = 0;

    /// Starts the job script of `runDir` (already uploaded). An error is a plain refusal, with the
    /// scheduler's own message (e.g. sbatch's "error: invalid partition"), or a transport error
    /// (then, too, the outcome is unknown); a Submission without a job id is an unknown outcome.
    virtual Expected<Submission> submit(const QString& runDir) = 0;

    /// One shell command that prints the state of every job in `jobs`; the poller sends it in the
    /// same round trip as the file sizes. parseQuery() reads its output.
    virtual QString queryCommand(const QList<JobRef>& jobs) const = 0;
    /// Every job of `jobs` by id; an empty map when the scheduler could not be asked (then the
    /// poller changes no state).
    virtual QHash<QString, JobStatus> parseQuery(const QByteArray& output, const QList<JobRef>& jobs) const = 0;

    /// After a submit whose outcome is unknown, and before any resubmit: the id of the newest job
    /// named ref.jobName whose run folder is ref.runDir, or an empty string when there is none.
    /// SLURM asks squeue, then sacct (it keeps ended jobs), then the folder's slurm-<id>.out.
    /// ref.jobId, when set, is the job of an earlier submit of the run: it is never the answer.
    /// An error means nothing is known either way (squeue did not answer).
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
