#pragma once

#include "config/clusterprofile.h"
#include "core/progress.h"
#include "runs/runstore.h"
#include "runs/runsubmitter.h"
#include "runs/sweep.h"
#include "scheduler/scheduler.h"

#include <functional>
#include <utility>

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

/// What to do with the rest of a sweep when one of its points fails to submit.
enum class OnSubmitFailure {
    Continue,  ///< try every point; each failure is recorded as submit-failed with its reason
    Stop,      ///< stop at the first failure; the points after it are not recorded at all
};

/// One launch: every point of a sweep (or one run) on one profile.
struct LaunchRequest {
    ClusterProfile profile;
    QList<RunPoint> points;
    SubmitOptions options;  ///< options.trainerPath is filled in from the profile when empty
    bool makeData = false;  ///< generate the cpu configs' data on the far side first (once)
    OnSubmitFailure onFailure = OnSubmitFailure::Continue;
};

/// How a launch went, point by point.
struct LaunchResult {
    QList<RunRecord> submitted;
    QList<std::pair<QString, Error>> failed;  ///< run id and why; recorded as submit-failed
    QStringList notTried;                     ///< points left out (OnSubmitFailure::Stop, or the launch was cancelled)
    bool complete() const { return failed.isEmpty() && notTried.isEmpty(); }
    /// "4 runs submitted", "3 of 4 runs submitted; 1 failed: …".
    QString summary() const;
};

/// The run lifecycle: launch, cancel, checkpoint-and-stop and requeue, with every rule about
/// which run states allow what. The command line and the window both call this; neither has a
/// rule of its own. It works on the caller's thread (the window runs it on the profile's session
/// thread) and records every step in the run's history before and after the remote action.
class RunActions {
public:
    using Progress = ProgressFn;
    RunActions(RunStore& store, Transport& transport, Scheduler& scheduler);

    /// Everything a launch can be refused for before anything is recorded or sent: no points,
    /// an unreadable config or one without the named config, data paths its runs could not find
    /// (checkDataLink), an invalid or repeated run id, a run id that exists. Cheap (no network);
    /// the window calls it as the user types.
    static Status checkLaunch(const Workspace& workspace, const LaunchRequest& request);

    /// Checks, finds the trainer, makes the data when asked, then submits every point following
    /// request.onFailure. An error means nothing was recorded; per-point failures are in the result.
    /// `stopRequested` is asked between points (the window's Cancel of a running launch).
    Expected<LaunchResult> launch(const LaunchRequest& request, const Progress& progress = {},
                                  const std::function<bool()>& stopRequested = {});

    /// Cancels the run's job (RunAction::Cancel). The request is recorded in the run's history; the
    /// state changes only when the scheduler or the run's files show the job ended, and then to
    /// what they show (a job that had already completed stays completed).
    Expected<RunRecord> cancel(const QString& runId);
    /// Sends SIGUSR1 (RunAction::CheckpointStop): the trainer checkpoints and exits 75.
    Expected<RunRecord> checkpointStop(const QString& runId);
    /// Runs the job again (RunAction::Requeue): `scontrol requeue`, or a new submit of the run
    /// folder when the run has no job or the scheduler no longer knows it, and only after
    /// findJob() found no job of the run (one it finds becomes the run's job instead). `confirmed`: the user agreed to the
    /// question checkAction() asks (requeue of a completed run).
    Expected<RunRecord> requeue(const QString& runId, bool confirmed = false);

private:
    Expected<RunRecord> loadChecked(const QString& runId, RunAction action, bool confirmed);
    /// A new job for the run folder, after findJob() says the run has none (handOver()). The caller
    /// holds the run's submit lock and loaded `rec` under it.
    Expected<RunRecord> resubmit(const RunRecord& rec);
    /// Records `jobId` (found by its name and folder) as the run's job and polls it: the requeue
    /// is refused, with what the job is doing.
    Expected<RunRecord> adopt(const QString& runId, const QString& jobId);
    Expected<RunRecord> signal(const QString& runId, RunAction action, const QString& signal, const QString& note);
    RunStore& m_store;
    Transport& m_transport;
    Scheduler& m_scheduler;
};

}  // namespace scaledesk
