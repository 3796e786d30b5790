#pragma once

#include "config/clusterprofile.h"
#include "runs/runstore.h"
#include "scheduler/scheduler.h"

namespace scaledesk {

/// What every run of one submit shares.
struct SubmitOptions {
    QString configFile;  ///< local YAML of named configs; copied to the run folder as config.yaml
    QString configName;
    QString trainerPath;      ///< scaledesk-train on the far side
    QStringList trainerArgs;  ///< extra trainer flags
    QString dataDir;          ///< far-side folder the run's `data` links to (optional)
};

/// The cpu configs' generated data (make-data --box 128 --val-box 96) under
/// <remote root>/data/generated, made once; returns that folder.
Expected<QString> ensureGeneratedData(Transport& transport, const ClusterProfile& profile, const QString& trainerPath);

/// A data file the job of a run reads: the named config's train_path or val_path, and the
/// config file:line that sets it.
struct RunDataPath {
    QString key, path, where;
};
/// The data paths the runs of a launch read in their new run folder: none for a benchmark job
/// (no config file) or the `synthetic` loader (by the config, or by `--data_loader_config` in the
/// trainer's arguments).
Expected<QList<RunDataPath>> runDataPaths(const SubmitOptions& options);

/// The rule that needs no connection: a relative data path can only be found through the run's
/// `data` link, so without one (`linked`: --data or --make-data), or for a path not under data/,
/// the launch is refused with ErrorCode::DataMissing naming the config's file:line.
Status checkDataLink(const SubmitOptions& options, bool linked);

/// Whether the runs of a launch will find their data, on the far side, before anything is
/// recorded or sent: checkDataLink, then each relative path through the link (options.dataDir,
/// relative to `firstRunDir` when it is relative) must be a file there (else DataMissing naming
/// it). An absolute path missing on the far side is not refused (a job may see file systems
/// that the login node does not); it is returned as a warning, one line per path.
Expected<QStringList> checkRunData(Transport& transport, const SubmitOptions& options, const QString& firstRunDir);

/// The trainer a profile's runs use: the deployed one (trainer.deploy) or trainer.path.
Expected<QString> profileTrainer(Transport& transport, const ClusterProfile& profile);

/// Turns sweep points into runs on a cluster: the run is recorded before every remote action
/// (submitting/upload → submitting/sbatch → queued with its job id), so an app killed mid-submit
/// leaves a run that the next poll can reconcile, never a job nobody tracks.
class RunSubmitter {
public:
    RunSubmitter(RunStore& store, Transport& transport, Scheduler& scheduler, ClusterProfile profile);

    /// <remote_root>/runs/<run id>, absolute on the far side.
    Expected<QString> remoteRunDir(const QString& runId);
    /// The job script a point would get (for --dry-run and the launch dialog's preview).
    Expected<QString> render(const RunPoint& point, const SubmitOptions& options);
    /// Records, uploads and submits one run. On failure the run is saved as submit-failed with the
    /// reason, and the error is returned.
    Expected<RunRecord> submit(const RunPoint& point, const SubmitOptions& options);

    /// Checks a config file before anything is recorded: readable YAML that defines `configName`.
    static Status checkConfig(const QString& configFile, const QString& configName);

private:
    JobRequest request(const RunPoint& point, const SubmitOptions& options) const;
    RunStore& m_store;
    Transport& m_transport;
    Scheduler& m_scheduler;
    ClusterProfile m_profile;
    QString m_remoteRoot;
};

}  // namespace scaledesk
