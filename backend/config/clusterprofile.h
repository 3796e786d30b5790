#pragma once

#include "core/expected.h"
#include "core/status.h"

#include <QList>
#include <QPair>
#include <QString>
#include <QStringList>

#include <optional>

namespace scaledesk {

/// SLURM defaults of a cluster profile; empty values are left out of job scripts.
struct SlurmDefaults {
    QString partition;
    QString account;
    QString qos;
    QString reservation;
    QString constraint;
    int gpusPerNode = 0;  ///< 0: a CPU cluster (one task per rank, no --gpus-per-node)
    int cpusPerTask = 1;
    QString timeLimit = QStringLiteral("00:30:00");
    QString mpi = QStringLiteral("pmix");  ///< srun --mpi type; "none" for plain srun (gloo over SLURM's variables)
    bool requeue = false;
    int signalSeconds = 120;      ///< --signal=B:USR1@<s>: checkpoint this long before the time limit; 0 = none
    int commandTimeoutS = 60;     ///< how long sbatch, scancel and scontrol may take before their outcome counts as unknown
    QStringList extraDirectives;  ///< verbatim, e.g. "--exclusive"
};

/// How a profile's runs are started: on a cluster over SSH with SLURM, or on this machine.
enum class ProfileKind { SshSlurm, Local };
/// "ssh+slurm" or "local", as profile files spell it.
QString profileKindName(ProfileKind kind);

/// A cluster: where it is, how jobs run there, and how the trainer is found.
/// YAML file (profiles/<name>.yaml), keys documented in docs/profiles.md.
struct ClusterProfile {
    QString name;
    ProfileKind kind = ProfileKind::SshSlurm;
    bool isLocal() const { return kind == ProfileKind::Local; }
    /// "user@host:port", or "this machine" for a local profile.
    QString target() const;
    QString host;
    int port = 22;
    QString user;
    QString identityFile;
    QString proxyJump;
    QString knownHostsFile;        ///< empty: ~/.ssh/known_hosts
    bool rememberSecrets = false;  ///< key passphrases go to the system keyring (QtKeychain) once entered
    QString remoteRoot;            ///< run folders live in <remote_root>/runs/<run id>
    SlurmDefaults slurm;
    QString setup;        ///< shell lines inserted verbatim before srun (module load …)
    QString trainerPath;  ///< a preinstalled scaledesk-train; empty with trainerDeploy (and for local: found next to the app)
    bool trainerDeploy = false;
    bool trainerPrebuilt = false;  ///< deploy uploads this machine's scaledesk-train instead of building (the cluster matches)
    int buildJobs = 8;             ///< parallel compile jobs of a deploy build
    /// How to get PyTorch on the cluster (trainer.pytorch): shell lines (a `module load`) and the
    /// interpreter whose torch a deploy builds the trainer against (its libtorch brings CUDA and
    /// NCCL). Both empty: the cluster's own libtorch, as CMake finds it.
    QString pytorchSetup;
    QString pytorchPython;
    bool buildsAgainstPytorch() const { return !pytorchSetup.isEmpty() || !pytorchPython.isEmpty(); }
    /// The interpreter a deploy asks for torch's CMake prefix (python3 when only the setup is given).
    QString pytorchInterpreter() const { return pytorchPython.isEmpty() ? QStringLiteral("python3") : pytorchPython; }
    /// Environment of the job's ranks (env: NAME: value), exported in the job script after the setup
    /// lines, e.g. NCCL_SOCKET_IFNAME, NCCL_IB_HCA, NCCL_DEBUG.
    QList<QPair<QString, QString>> environment;
    /// The trainer's rendezvous port (MASTER_PORT). 0: one per job, derived from its id (SLURM's job
    /// id; locally the job's pid), so that jobs sharing a node or a laptop never share a port.
    int masterPort = 0;
    /// A local profile's slot count: how many cores its jobs may use at once (a job of R ranks
    /// with C cpus per task takes min(R × C, slots)); later jobs wait, PENDING, in arrival order.
    /// 0: the usable cores of the machine (`nproc`).
    int localSlots = 0;
};

/// MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS or UNLIMITED (sbatch --time); a field after
/// the first is a clock field (minutes and seconds below 60, hours after a day count below 24), so
/// 99:99:99 is refused.
bool isSlurmTimeLimit(const QString& value);

/// Ranks per node when none are given: one per GPU on a GPU profile (slurm.gpus_per_node), else
/// `cpuDefault`. Submit, sweeps, calibrate and the launch dialog all start from this.
int defaultRanksPerNode(const ClusterProfile& profile, int cpuDefault = 1);

/// A GPU profile runs one rank per GPU: a point with more ranks per node than the profile's nodes
/// have GPUs is refused (ErrorCode::SweepInvalid) with both numbers. A CPU profile takes any
/// positive count.
Status checkRanksPerNode(const ClusterProfile& profile, int ranksPerNode);

/// Reads a profile; errors name the file, line and column and the key.
Expected<ClusterProfile> loadClusterProfile(const QString& path);

/// The profile as a profile file says it (yaml-cpp's emitter): every key that differs from its
/// default, so loadClusterProfile() reads back the same profile.
QByteArray clusterProfileYaml(const ClusterProfile& profile);

}  // namespace scaledesk
