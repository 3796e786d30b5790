#pragma once

#include "config/clusterprofile.h"
#include "core/expected.h"
#include "remote/transport.h"
#include "runs/launchrequest.h"

namespace scaledesk {

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

}  // namespace scaledesk
