#pragma once

#include "config/clusterprofile.h"
#include "core/progress.h"
#include "remote/transport.h"

#include <QStringList>

#include <functional>

namespace scaledesk {

/// The trainer sources the app carries: the top-level CMakeLists.txt, trainer/ and the example
/// configs, as paths relative to the source folder, sorted.
QStringList trainerSourceFiles(const QString& sourceDir);
/// The first 16 hex digits of SHA-256 over the sorted (relative path, content) pairs.
QString contentHash(const QString& baseDir, const QStringList& relativeFiles);
/// The sources the app carries: $SCALEDESK_TRAINER_SOURCES, the installed share/scaledesk/trainer-src,
/// or the source tree the app was built from.
QString bundledTrainerSources();

struct DeployOptions {
    QString sourceDir;       ///< trainer sources (build from source)
    QString prebuiltBinary;  ///< when set: upload this binary instead of building
    ProgressFn progress;
    std::function<bool()> stopRequested;  ///< asked between steps and while the build runs: stop (and kill the build)
    int pollMs = 2000;                    ///< how often a running build is looked at
};

struct DeployResult {
    QString trainerPath;  ///< scaledesk-train on the far side
    QString hash;
    bool reused = false;  ///< an earlier deploy of the same content was found
    /// "trainer <hash> deployed: <path>" (or "reused"), as `scaledesk deploy` prints it.
    QString summary() const;
};

/// A deploy from this machine as a profile asks for it: this machine's trainer uploaded when the
/// profile says prebuilt, else the sources the app carries built there.
DeployOptions deployOptionsFor(const ClusterProfile& profile);

/// The script a source deploy runs in <dir> on the far side: the profile's setup lines, then (with
/// trainer.pytorch) its PyTorch's setup and the CMake prefix of that PyTorch's libtorch, CMake, and
/// the `ready` marker holding `scaledesk-train --version`.
QString deployBuildScript(const ClusterProfile& profile, const QString& dir);

/// Puts a trainer on the far side under <remote root>/trainer/<hash>/: either the sources,
/// built there with the profile's setup lines and CMake (build.log next to them), or a prebuilt
/// binary. The hash covers the sources and the profile's setup lines (they choose the compiler,
/// MPI and libtorch there). A finished deploy leaves a `ready` marker holding the trainer's
/// `--version`; it is reused only while that trainer still runs there and prints the same, else
/// built (or uploaded) again, and the progress says why;
/// <remote root>/trainer/current names the trainer that submits use.
Expected<DeployResult> deployTrainer(Transport& transport, const ClusterProfile& profile, const DeployOptions& options);

/// The trainer the last deploy left (<remote root>/trainer/current).
Expected<QString> deployedTrainer(Transport& transport, const ClusterProfile& profile);

}  // namespace scaledesk
