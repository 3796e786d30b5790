#pragma once

#include "config/clusterprofile.h"
#include "config/commandrun.h"
#include "remote/transport.h"

#include <QList>

namespace scaledesk {

/// A SLURM partition as `sinfo` describes it.
struct PartitionInfo {
    QString name;
    bool isDefault = false;
    QString timeLimit;  ///< sbatch --time syntax ("1-00:00:00"), or "UNLIMITED"
    int nodes = 0;
    int cpusPerNode = 0;  ///< the smallest node's count
    int gpusPerNode = 0;  ///< GPUs in the nodes' GRES (gpu, gpu:<type>)
    QString gres;         ///< as sinfo prints it, "(null)" dropped
};

/// What a cluster offers a new profile, read over its SSH connection.
struct ClusterFacts {
    QString host;  ///< uname -n of the login node
    QString slurmVersion;
    QList<PartitionInfo> partitions;
    QStringList accounts;  ///< the user's associations (sacctmgr); empty when accounting is not readable
    QStringList qos;
    QString accountsNote;  ///< why there are no accounts (no accounting, not allowed)
    QString moduleSystem;  ///< "Lmod 8.7.x", "Environment Modules 5.x", or empty
};

/// `sinfo -h -o '%P|%l|%D|%c|%G'` output, one partition per line (a partition listed once per node
/// group is merged: nodes add up, the smallest CPU and GPU counts win). Malformed lines are skipped.
QList<PartitionInfo> parseSinfo(const QByteArray& text);
/// GPUs per node of a GRES string: "gpu:4", "gpu:a100:4(S:0-1)", "gpu:2,gpu:v100:2", "(null)" → 0.
int gpusInGres(const QString& gres);
/// `sacctmgr -nP show assoc user=<u> format=Account,QOS` output: the accounts and QOS names.
void parseAssociations(const QByteArray& text, QStringList* accounts, QStringList* qos);

/// Reads the cluster's partitions, the user's accounts and QOS where allowed, and the module
/// system. An error only when the connection fails or SLURM's sinfo cannot run.
Expected<ClusterFacts> probeCluster(Transport& transport);

/// What a scaledesk-train was built with, from its --version line: "scaledesk-train 0.1.0+g… (libtorch
/// 2.6.0, CUDA 12.4, NCCL 2.22.3)", "(libtorch 1.13.0, CPU only)"; older trainers said "(libtorch
/// 1.13.0, CPU)".
struct TrainerBuild {
    bool parsed = false;
    QString libtorch;  ///< "2.6.0"
    QString cuda;      ///< "12.4"; empty: a CPU-only libtorch
    QString nccl;      ///< "2.22.3"; empty: no NCCL backend
    bool hasCuda() const { return !cuda.isEmpty(); }
    /// "CUDA libtorch 2.6.0 (CUDA 12.4), NCCL 2.22.3" / "CPU-only libtorch 1.13.0".
    QString describe() const;
};
TrainerBuild parseTrainerVersion(const QString& versionLine);

/// One check of `scaledesk profiles test` (and the window's Test).
struct ProfileCheck {
    QString what;
    bool ok = false;
    QString detail;
};
/// The GPU half of a profile test, from the trainer's build and the GPUs a node of the profile's
/// partition has (`gpusOnNode`, -1: unknown): whether the trainer can use the GPUs the profile
/// asks for (slurm.gpus_per_node), and whether the nodes have them.
QList<ProfileCheck> gpuChecks(const ClusterProfile& profile, const TrainerBuild& build, int gpusOnNode, const QString& where);

/// The Python a run definition's command runs, checked where it runs: after the profile's setup
/// and the definition's, its interpreter (the command's program when it is a python, else python3)
/// imports torch; the detail names the interpreter, Python's and PyTorch's versions, and whether
/// CUDA, gloo and NCCL are there. A missing interpreter or a failed import is a failed check with
/// what it printed.
ProfileCheck pythonCheck(Transport& transport, const ClusterProfile& profile, const CommandRun& run);

/// Connects and logs in; then (unless `connectOnly`) checks SLURM, that the remote root is
/// writable, that the trainer runs, and its GPU build against the GPUs per node (gpuChecks). Stops after a failed connection. `each` hears every check
/// as it ends.
QList<ProfileCheck> testProfile(Transport& transport, const ClusterProfile& profile, bool connectOnly,
                                const std::function<void(const ProfileCheck&)>& each = {});

}  // namespace scaledesk
