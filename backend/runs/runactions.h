#pragma once

#include "config/clusterprofile.h"
#include "core/progress.h"
#include "runs/runstore.h"
#include "runs/runsubmitter.h"
#include "runs/sweep.h"
#include "scheduler/scheduler.h"

#include <functional>

namespace scaledesk {

/// What a user can do to a run once it exists.
enum class RunAction {
    Cancel,          ///< stop the job for good
    CheckpointStop,  ///< signal the job (USR1): the trainer checkpoints and stops; requeue resumes it
    Requeue,         ///< run it again; it resumes from its last checkpoint
};

/// Whether an action applies to a run in its recorded state. The window enables its buttons from
/// this, with `reason` as the tooltip of a disabled one, and asks `confirm` before acting; the
/// lifecycle layer refuses with `reason` whatever the caller.
struct ActionCheck {
    bool allowed = false;
    QString reason;   ///< why not, when !allowed
    QString confirm;  ///< when allowed: the question to ask first, or empty
};
ActionCheck checkAction(RunAction action, const RunRecord& run);

/// The run lifecycle: launch, cancel, checkpoint-and-stop and requeue, with every rule about
/// which run states allow what. The command line and the window both call this; neither has a
/// rule of its own. It works on the caller's thread (the window runs it on the profile's session
/// thread) and records every step in the run's history before and after the remote action.
class RunActions {
public:
    using Progress = ProgressFn;
    RunActions(RunStore& store, Transport& transport, Scheduler& scheduler);

    /// Everything a launch can be refused for before anything is recorded or sent: no points,
    /// more ranks per node than a GPU profile's nodes have GPUs (checkRanksPerNode),
    /// an unreadable config or one without the named config, data paths its runs could not find
    /// (checkDataLink), an invalid or repeated run id, a run id that exists. Cheap (no network);
    /// the window calls it as the user types.
    static Status checkLaunch(const Workspace& workspace, const LaunchRequest& request);

    /// The launch's config checked with the trainer's own rules (checkConfigWithTrainer: every key's
    /// type and value, the cross-key rules), with this machine's scaledesk-train (findLocalTrainer),
    /// so that a type error is refused with the trainer's file:line:col before anything is recorded
    /// or sent. Takes about a second (a process). With no trainer on this machine it is Done and
    /// `*note` says that the check was left to the job. launch() calls it; so does submit --dry-run.
    static Status checkConfigRules(const LaunchRequest& request, QString* note);

    /// Checks (checkLaunch, checkConfigRules), then hands the whole launch to RunSubmitter::submit in one call: it finds
    /// the trainer, makes the data when asked and submits every point following request.onFailure.
    /// An error means nothing was recorded; what became of each point is in the result.
    /// `stopRequested` is asked between points (the window's Cancel of a running launch).
    Expected<LaunchResult> launch(const LaunchRequest& request, const Progress& progress = {},
                                  const std::function<bool()>& stopRequested = {});

    /// Cancels the run's job (RunAction::Cancel). The request is recorded in the run's history; the
    /// state changes only when the scheduler or the run's files show the job ended, and then to
    /// what they show (a job that had already completed stays completed).
    Expected<RunRecord> cancel(const QString& runId);
    /// Sends SIGUSR1 (RunAction::CheckpointStop): the trainer checkpoints and exits 75.
    Expected<RunRecord> checkpointStop(const QString& runId);
    /// Runs the job again (RunAction::Requeue), under the run's `.submitting` lock (one at a time,
    /// from any process), through RunSubmitter::runAgain: `scontrol requeue`, or a new submit of
    /// the run folder when the run has no job or the scheduler no longer knows it, and only after
    /// findJob() found no job of the run (one it finds becomes the run's job instead, and the requeue
    /// is refused with what that job is doing). `confirmed`: the user agreed to the question
    /// checkAction() asks (requeue of a completed run).
    Expected<RunRecord> requeue(const QString& runId, bool confirmed = false);

private:
    Expected<RunRecord> loadChecked(const QString& runId, RunAction action, bool confirmed);
    /// A job of the run that findJob() found: polled at once, and the requeue refused with what it is doing.
    Expected<RunRecord> refuseForExisting(const RunRecord& adopted);
    Expected<RunRecord> signal(const QString& runId, RunAction action, const QString& signal, const QString& note);
    RunStore& m_store;
    Transport& m_transport;
    Scheduler& m_scheduler;
};

}  // namespace scaledesk
