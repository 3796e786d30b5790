#pragma once

#include "config/clusterprofile.h"
#include "config/commandrun.h"
#include "runs/sweep.h"

#include <QString>
#include <QStringList>

namespace scaledesk {

/// What one batch job runs. The script expects to start in the run folder (sbatch --chdir), which
/// holds the resolved `config.yaml`; that is how no run name or path ever has to appear inside an
/// #SBATCH line, where shell quoting does not apply.
struct JobRequest {
    ClusterProfile profile;
    RunPoint point;
    QString configName;       ///< the named config inside config.yaml
    QString trainerPath;      ///< scaledesk-train on the cluster
    QStringList trainerArgs;  ///< extra flags, passed through quoted
    QString dataDir;          ///< when set, the run folder's `data` links here (relative data paths of cpu configs)
    CommandRun command;       ///< the user's own code (point.task "command") instead of the trainer
    QString runDir;           ///< the run folder on the far side (for {run_dir}); empty in a preview
    bool isCommand() const { return command.isSet(); }
};

/// Renders job.sbatch: #SBATCH directives from the profile and the point (one task per GPU or
/// CPU rank), --signal=B:USR1@s so the trainer checkpoints before the time limit (the batch shell
/// forwards the signal to srun), --requeue and a requeue on exit 75 when the profile asks, the
/// profile's setup lines verbatim, the rendezvous variables (MASTER_ADDR: the first node's NodeAddr
/// as `scontrol show node` gives it, else its name), and srun of the trainer. Every value
/// that reaches the shell is single-quoted.
QString renderJobScript(const JobRequest& request);

/// The trainer command line of a job (unquoted), shared by the SLURM and the local job scripts:
/// training, or for a point of task "bench-comm", `scaledesk-train bench-comm --out comm.jsonl`.
QStringList trainerCommand(const JobRequest& request);

/// A command run's lines before its ranks start, shared by the SLURM and the local job scripts:
/// its setup (verbatim), its environment and ScaleDesk's (SCALEDESK_RUN_ID, _SWEEP, _VARIANT,
/// _NODES, _RANKS_PER_NODE, _REPETITION, _LOCAL_BATCH, _CODE), and PYTHONPATH with the run folder
/// first (scaledesk_metrics.py lies there). Empty for a trainer job.
QStringList commandRunLines(const JobRequest& request);

/// Shell lines that link `data` to request.dataDir when it is set (empty otherwise).
QStringList dataLinkLines(const JobRequest& request);
/// The job script's line that turns torchrun's exit after a stop (1) into 75 when the workers
/// checkpointed (their manifest says "preempted"); `stopVariable` is set when a stop was forwarded.
QString torchrunStoppedLine(const QString& stopVariable);

/// `export MASTER_PORT=…`: the profile's port, or for 0 one derived from the job's id (the shell
/// variable `idVariable`: SLURM_JOB_ID, or `$` for the job shell's pid) in 20000–29999, below
/// Linux's ephemeral ports, so that two jobs on one node (or laptop) do not bind the same port.
QString masterPortLine(int masterPort, const QString& idVariable);

/// The sbatch arguments (unquoted) that submit job.sbatch from `runDir`.
QStringList sbatchArguments(const QString& runDir);

/// A job name SLURM accepts everywhere, derived from the run id.
QString slurmJobName(const QString& runId);

}  // namespace scaledesk
