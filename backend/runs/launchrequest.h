#pragma once

#include "config/clusterprofile.h"
#include "config/commandrun.h"
#include "core/error.h"
#include "runs/runrecord.h"
#include "runs/sweep.h"
#include "scheduler/jobscript.h"

#include <QList>
#include <QString>
#include <QStringList>

#include <utility>

namespace scaledesk {

/// What every run of one submit shares.
struct SubmitOptions {
    QString configFile;  ///< local YAML of named configs; copied to the run folder as config.yaml
    QString configName;
    QString trainerPath;      ///< scaledesk-train on the far side
    QStringList trainerArgs;  ///< extra trainer flags
    QString dataDir;          ///< far-side folder the run's `data` links to (optional)
    CommandRun command;       ///< a run of the user's own code (points of task "command"); configFile is then empty
};

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

/// Whether any point of the launch trains (a calibration's points are benchmarks, point.task:
/// no config, no data).
bool launchTrains(const LaunchRequest& request);

/// The job script a point of a launch would get, without connecting (submit --dry-run and the
/// launch dialog's preview): paths on the far side as the profile gives them, the deployed trainer
/// as `<deployed trainer>`, made data under <remote_root>/data/generated.
QString previewScript(const LaunchRequest& request, const RunPoint& point);

/// What became of one run handed to the scheduler: the one answer the submitter gives.
struct SubmitOutcome {
    enum class Kind {
        Queued,    ///< the scheduler printed a job id (wherever among its lines); run.jobId is it
        Unknown,   ///< the job may exist (no id, a lost exit status, a timeout, a dropped connection):
                   ///< the run is `submitting` at step `sbatch-unknown` and polls look for its job
        Existing,  ///< (run again only) a job of the run exists already: it is now the run's job, and
                   ///< nothing was submitted
        Failed,    ///< refused, nothing started: `error` says why; a new run is recorded submit-failed,
                   ///< a run submitted before keeps its state with the reason in its history
        NotTried,  ///< (launch only) not submitted: the launch stopped before this point
    };
    Kind kind = Kind::Failed;
    QString runId;
    RunRecord run;  ///< the run as recorded after the submit (empty when no record was made)
    Error error;    ///< for Failed
    /// The job exists, or may: the run is followed (Queued, Unknown, Existing).
    bool followed() const { return kind == Kind::Queued || kind == Kind::Unknown || kind == Kind::Existing; }
};

/// How a launch went, point by point.
struct LaunchResult {
    QList<SubmitOutcome> outcomes;       ///< one per point, in the launch's order
    QList<RunRecord> submitted() const;  ///< the runs now followed (a job id, or one being looked for)
    /// Run id and why; recorded as submit-failed, except a point refused before its record was made
    /// (an invalid id, a run folder already on the far side, a run this workspace has).
    QList<std::pair<QString, Error>> failed() const;
    QStringList notTried() const;  ///< points left out (OnSubmitFailure::Stop, or a cancelled launch)
    QStringList unknown() const;   ///< runs whose job is being looked for (Kind::Unknown)
    bool complete() const;         ///< every point followed, none failed or left out
    /// "4 run(s) submitted", "3 of 4 run(s) submitted; 1 failed (first: …)", "…; 1 being looked for".
    QString summary() const;
};

/// The job of one point: what the scheduler renders into its script. Data under the remote root
/// (`remoteRoot`, absolute; empty when not known) is linked relative to the run folder
/// (<root>/runs/<id>), so a copied or moved root (the local profile's lives in the workspace)
/// keeps working.
JobRequest jobRequest(const ClusterProfile& profile, const RunPoint& point, const SubmitOptions& options, const QString& remoteRoot);

}  // namespace scaledesk
