#pragma once

#include "config/clusterprofile.h"
#include "core/progress.h"
#include "runs/launchrequest.h"
#include "runs/rundata.h"
#include "runs/runstore.h"
#include "scheduler/scheduler.h"

#include <functional>

namespace scaledesk {

/// The trainer a profile's runs use: the deployed one (trainer.deploy) or trainer.path.
Expected<QString> profileTrainer(Transport& transport, const ClusterProfile& profile);

/// Every submit of a job goes through here, in one pass: a launch (its trainer, its data, then each
/// point recorded before every remote action: submitting/upload → submitting/sbatch → queued with
/// its job id), and a run started again. The rules of a job's identity live here and in
/// runs/handover.*, nowhere else: the id is the scheduler's `--parsable` line wherever it stands;
/// an answer without one is an unknown outcome that is looked for by name and folder (squeue,
/// then sacct), never submitted again blindly; and before any new job of a run, a job of that run
/// that may still exist is looked for first. An app killed mid-submit leaves a run that the next
/// poll reconciles, never a job nobody tracks.
class RunSubmitter {
public:
    using Progress = ProgressFn;
    RunSubmitter(RunStore& store, Transport& transport, Scheduler& scheduler);

    /// Submits every point of a launch the caller has checked (RunActions::checkLaunch): finds the
    /// trainer (options.trainerPath, else the profile's), makes the data when asked, checks the
    /// data on the far side (warnings go to `progress`), then hands each point to the scheduler,
    /// following request.onFailure. `stopRequested` is asked between points. An error means nothing
    /// was recorded; what became of each point is in the result.
    Expected<LaunchResult> submit(const LaunchRequest& request, const Progress& progress = {},
                                  const std::function<bool()>& stopRequested = {});

    /// Runs a job of a run that was submitted before again (requeue). The caller holds the run's
    /// `.submitting` lock and loaded `rec` under it. A run with a job the scheduler knows is
    /// requeued there (Queued with its id, which may change; any error other than "unknown job" is
    /// Failed, as it says nothing about whether the requeue happened). Otherwise the job is looked
    /// for first (findJob): one that exists becomes the run's job (Existing), an unanswered lookup
    /// is Failed (nothing is known), and only when there is none is the folder submitted anew
    /// (Queued, Unknown, or Failed with the run as it was).
    SubmitOutcome runAgain(const RunRecord& rec);

    /// Checks a config file before anything is recorded: readable YAML that defines `configName`.
    static Status checkConfig(const QString& configFile, const QString& configName);

private:
    /// Records, uploads and hands over one point. On failure the run is saved as submit-failed
    /// with the reason.
    SubmitOutcome submitPoint(const ClusterProfile& profile, const RunPoint& point, const SubmitOptions& options);
    SubmitOutcome resubmit(const RunRecord& rec);
    /// Sends a command run's code folder (once per launch) and points `command.code` at the copy.
    Status sendCode(const LaunchRequest& req, CommandRun& command, const ProgressFn& say);
    /// A command run's files in its folder (run.yaml, also in the mirror; scaledesk_metrics.py).
    Status placeCommandFiles(const RunRecord& rec, const CommandRun& command);
    /// <remote_root>/runs/<run id>, absolute on the far side.
    Expected<QString> remoteRunDir(const ClusterProfile& profile, const QString& runId);
    RunStore& m_store;
    Transport& m_transport;
    Scheduler& m_scheduler;
    QString m_remoteRoot;  ///< the profile's remote_root, absolute, once asked
};

}  // namespace scaledesk
