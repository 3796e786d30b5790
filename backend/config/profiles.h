#pragma once

#include "config/clusterprofile.h"
#include "remote/sshtransport.h"
#include "runs/runstore.h"
#include "scheduler/scheduler.h"

#include <QList>

namespace scaledesk {

/// A profile file of the workspace and whether it loads.
struct ProfileEntry {
    QString name;
    QString file;  ///< empty for the built-in `local` profile
    std::optional<ClusterProfile> profile;
    Error error;  ///< set when `profile` is empty
};

/// profiles/*.yaml of the workspace, by name, plus the built-in `local` profile unless a file
/// named local.yaml replaces it. A broken file is listed with its error, never skipped.
QList<ProfileEntry> listProfiles(const Workspace& workspace);
Expected<ClusterProfile> findProfile(const Workspace& workspace, const QString& name);

/// This machine, no SSH, no SLURM: runs live in <workspace>/local/runs, the trainer is the one
/// installed with the app.
ClusterProfile builtinLocalProfile(const Workspace& workspace);

/// Validates `file` and copies it to profiles/<name>.yaml (name: as given, else the file's `name`
/// key, else its base name; a given name that contradicts the key is refused). Refuses to replace
/// an existing profile.
Expected<ClusterProfile> addProfile(const Workspace& workspace, const QString& file, const QString& name = QString());

/// Writes `profile` as profiles/<name>.yaml (clusterProfileYaml), read back and checked before it
/// replaces anything: an invalid profile is refused with the loader's error and nothing is written.
/// `replace` false refuses an existing name (as addProfile does); true is an edit.
Expected<QString> saveProfile(const Workspace& workspace, const ClusterProfile& profile, bool replace);

/// A profile's transport and scheduler: this machine's for `local`, else SSH (its options from
/// the profile; $SCALEDESK_SSH_CONFIG names an ssh_config to read instead of ~/.ssh/config) and
/// SLURM. `callbacks` answer the SSH questions (host key, passphrase, 2FA).
struct ProfileConnection {
    std::unique_ptr<Transport> transport;
    std::unique_ptr<Scheduler> scheduler;
};
ProfileConnection connectProfile(const ClusterProfile& profile, SshCallbacks callbacks = {});

/// The scheduler of a profile's kind over `transport`: the one place where a kind picks its
/// scheduler (connectProfile uses it; so do the script previews, over a transport never used).
std::unique_ptr<Scheduler> makeScheduler(const ClusterProfile& profile, Transport& transport);

/// scaledesk-train on this machine: $SCALEDESK_TRAIN, next to the app, the build tree's
/// trainer/ folder, then PATH. Empty when none is found.
QString findLocalTrainer();

}  // namespace scaledesk
