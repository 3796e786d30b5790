#include "scheduler/jobscript.h"

#include "scheduler/shellquote.h"

#include <QRegularExpression>

namespace scaledesk {

QString slurmJobName(const QString& runId)
{
    QString name = runId;
    name.replace(QRegularExpression(QStringLiteral("[^A-Za-z0-9._-]")), QStringLiteral("_"));
    return name.left(64);
}

QStringList sbatchArguments(const QString& runDir)
{
    return {QStringLiteral("--parsable"), QStringLiteral("--chdir=") + runDir, QStringLiteral("job.sbatch")};
}

QStringList trainerCommand(const JobRequest& r)
{
    const RunPoint& p = r.point;
    if (r.isCommand()) return commandArguments(r.command, {&p, r.runDir});
    if (p.task == QLatin1String("bench-comm")) {
        QStringList bench{r.trainerPath,
                          QStringLiteral("bench-comm"),
                          QStringLiteral("--out"),
                          QStringLiteral("comm.jsonl"),
                          QStringLiteral("--threads"),
                          QString::number(r.profile.slurm.cpusPerTask)};
        // With a config, its own training step is the benchmark's compute.
        if (!r.configName.isEmpty()) {
            bench << QStringLiteral("--yaml_config") << QStringLiteral("config.yaml") << QStringLiteral("--config") << r.configName;
            if (p.localBatch > 0) bench << QStringLiteral("--local_batch_size") << QString::number(p.localBatch);
        }
        return bench + r.trainerArgs;
    }
    QStringList train = {r.trainerPath,
                         QStringLiteral("--yaml_config"),
                         QStringLiteral("config.yaml"),
                         QStringLiteral("--config"),
                         r.configName,
                         QStringLiteral("--run_dir"),
                         QStringLiteral("."),
                         QStringLiteral("--strategy"),
                         p.strategy,
                         QStringLiteral("--threads"),
                         QString::number(r.profile.slurm.cpusPerTask),
                         QStringLiteral("--resume")};
    if (p.localBatch > 0) train << QStringLiteral("--local_batch_size") << QString::number(p.localBatch);
    train << r.trainerArgs;
    return train;
}

QString masterPortLine(int masterPort, const QString& idVariable)
{
    if (masterPort > 0) return QStringLiteral("export MASTER_PORT=%1").arg(masterPort);
    return QStringLiteral("export MASTER_PORT=$((20000 + ${%1:-0} % 10000))").arg(idVariable);
}

QStringList commandRunLines(const JobRequest& r)
{
    if (!r.isCommand()) return {};
    const RunPoint& p = r.point;
    const CommandValues values{&p, r.runDir};
    QStringList l;
    if (!r.command.setup.trimmed().isEmpty())
        l << QStringLiteral("# --- the run definition's setup (verbatim) ---") << r.command.setup.trimmed()
          << QStringLiteral("# --- end of the run definition's setup ---");
    for (const auto& [name, value] : commandEnvironment(r.command, values))
        l << QStringLiteral("export %1=%2").arg(name, shellQuote(value));
    QList<std::pair<QString, QString>> ours{{QStringLiteral("SCALEDESK_RUN_ID"), p.runId},
                                            {QStringLiteral("SCALEDESK_SWEEP"), p.sweep},
                                            {QStringLiteral("SCALEDESK_VARIANT"), p.strategy},
                                            {QStringLiteral("SCALEDESK_NODES"), QString::number(p.nodes)},
                                            {QStringLiteral("SCALEDESK_RANKS_PER_NODE"), QString::number(p.ranksPerNode)},
                                            {QStringLiteral("SCALEDESK_REPETITION"), QString::number(p.repetition)},
                                            {QStringLiteral("SCALEDESK_LOCAL_BATCH"), QString::number(p.localBatch)},
                                            {QStringLiteral("SCALEDESK_CODE"), commandCode(r.command, values)},
                                            {QStringLiteral("SCALEDESK_STOP_SIGNAL"), r.command.stopSignal}};
    if (const CommandRun::Sent& sent = r.command.sent; !sent.hash.isEmpty()) {
        ours.push_back({QStringLiteral("SCALEDESK_CODE_HASH"), sent.hash});
        ours.push_back({QStringLiteral("SCALEDESK_CODE_SOURCE"), sent.source});
        if (!sent.gitCommit.isEmpty()) {
            ours.push_back({QStringLiteral("SCALEDESK_CODE_COMMIT"), sent.gitCommit});
            ours.push_back({QStringLiteral("SCALEDESK_CODE_DIRTY"), sent.gitDirty ? QStringLiteral("1") : QStringLiteral("0")});
        }
    }
    for (const auto& [name, value] : ours) l << QStringLiteral("export %1=%2").arg(name, shellQuote(value));
    l << QStringLiteral("# scaledesk_metrics.py, which writes the run's metrics, lies in the run folder");
    l << QStringLiteral("export SCALEDESK_RUN_DIR=\"$PWD\" PYTHONPATH=\"$PWD${PYTHONPATH:+:$PYTHONPATH}\"");
    return l;
}

QString torchrunStoppedLine(const QString& stopVariable)
{
    // torchrun ends with 1 after a signal, whatever its workers did: when they checkpointed
    // (scaledesk_metrics.exit_for_requeue() recorded "preempted"), the job says so with 75 too.
    return QStringLiteral("if [ \"$rc\" -ne 0 ] && [ -n \"$%1\" ] && grep -qs '\"status\": *\"preempted\"' manifest.json; then rc=75; fi")
        .arg(stopVariable);
}

QStringList dataLinkLines(const JobRequest& r)
{
    if (r.dataDir.isEmpty()) return {};
    return {QStringLiteral("# relative data paths of the config resolve against the run folder"),
            QStringLiteral("[ -e data ] || ln -s -- %1 data").arg(shellQuote(r.dataDir))};
}

QString renderJobScript(const JobRequest& r)
{
    const SlurmDefaults& s = r.profile.slurm;
    const RunPoint& p = r.point;
    QStringList lines;
    lines << QStringLiteral("#!/bin/bash");
    lines << QStringLiteral("# Rendered by ScaleDesk for run %1; submit from the run folder (sbatch --chdir).").arg(slurmJobName(p.runId));
    auto directive = [&](const QString& option) { lines << QStringLiteral("#SBATCH ") + option; };
    directive(QStringLiteral("--job-name=") + slurmJobName(p.runId));
    directive(QStringLiteral("--nodes=%1").arg(p.nodes));
    directive(QStringLiteral("--ntasks-per-node=%1").arg(p.ranksPerNode));
    directive(QStringLiteral("--cpus-per-task=%1").arg(s.cpusPerTask));
    if (s.gpusPerNode > 0) directive(QStringLiteral("--gpus-per-node=%1").arg(s.gpusPerNode));
    directive(QStringLiteral("--time=") + s.timeLimit);
    if (!s.partition.isEmpty()) directive(QStringLiteral("--partition=") + s.partition);
    if (!s.account.isEmpty()) directive(QStringLiteral("--account=") + s.account);
    if (!s.qos.isEmpty()) directive(QStringLiteral("--qos=") + s.qos);
    if (!s.reservation.isEmpty()) directive(QStringLiteral("--reservation=") + s.reservation);
    if (!s.constraint.isEmpty()) directive(QStringLiteral("--constraint=") + s.constraint);
    directive(QStringLiteral("--output=slurm-%j.out"));
    if (s.signalSeconds > 0) directive(QStringLiteral("--signal=B:USR1@%1").arg(s.signalSeconds));
    if (s.requeue) directive(QStringLiteral("--requeue"));
    for (const auto& extra : s.extraDirectives) directive(extra);
    lines << QString();
    lines << QStringLiteral("set -u");
    // The rendezvous host is the profile's (its setup or env may export MASTER_ADDR, e.g. a node's
    // high-speed-network name), else the first node's; never one inherited from the submitting shell.
    lines << QStringLiteral("unset MASTER_ADDR");
    if (!r.profile.setup.trimmed().isEmpty()) {
        lines << QStringLiteral("# --- profile setup (verbatim) ---");
        lines << r.profile.setup.trimmed();
        lines << QStringLiteral("# --- end of profile setup ---");
    }
    if (!r.profile.pytorchSetup.trimmed().isEmpty()) {
        lines << QStringLiteral("# --- trainer.pytorch.setup (verbatim): the PyTorch the trainer was built against ---");
        lines << r.profile.pytorchSetup.trimmed();
        lines << QStringLiteral("# --- end of trainer.pytorch.setup ---");
    }
    // The profile's environment (NCCL_SOCKET_IFNAME, NCCL_IB_*, NCCL_DEBUG, …); srun --export=ALL
    // hands it, and whatever the setup exported, to every rank even where sbatch runs with --export=NONE.
    for (const auto& [name, value] : r.profile.environment) lines << QStringLiteral("export %1=%2").arg(name, shellQuote(value));
    // The rendezvous: what the profile exported, else the first node of the allocation at the address
    // SLURM itself reaches it by (NodeAddr; its name where none is set), so several slurmd on one host
    // work too.
    lines << QStringLiteral("first_node=\"$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1)\"");
    lines << QStringLiteral("[ -n \"${MASTER_ADDR:-}\" ] || MASTER_ADDR=\"$(scontrol show node \"$first_node\" 2>/dev/null | sed -n "
                            "'s/.*NodeAddr=\\([^ ]*\\).*/\\1/p' | head -n 1)\"");
    lines << QStringLiteral("export MASTER_ADDR=\"${MASTER_ADDR:-$first_node}\"");
    lines << masterPortLine(r.profile.masterPort, QStringLiteral("SLURM_JOB_ID"));
    lines << QStringLiteral("export OMP_NUM_THREADS=%1").arg(s.cpusPerTask);

    lines << dataLinkLines(r);
    lines << commandRunLines(r);
    QStringList train = trainerCommand(r);
    QString srun = QStringLiteral("srun --kill-on-bad-exit=1 --export=ALL");
    const bool torchrun = r.isCommand() && !r.command.torchrun.isEmpty();
    if (torchrun) {
        // One torchrun per node, which starts the node's ranks: its rendezvous (this node's rank,
        // the first node's address, the job's port) is filled in on each node by the task's shell.
        const QStringList head = commandTorchrun(r.command, {&r.point, r.runDir}) +
            QStringList{QStringLiteral("--nnodes=%1").arg(r.point.nodes), QStringLiteral("--nproc_per_node=%1").arg(r.point.ranksPerNode)};
        train = QStringList{QStringLiteral("/bin/bash"), QStringLiteral("-c"),
                            QStringLiteral("exec \"${@:1:%1}\" --node_rank=\"$SLURM_NODEID\" --master_addr=\"$MASTER_ADDR\" "
                                           "--master_port=\"$MASTER_PORT\" \"${@:%2}\"")
                                .arg(head.size())
                                .arg(head.size() + 1),
                            QStringLiteral("scaledesk-node")} +
            head + QStringList{QStringLiteral("--no_python")} + train;
        srun += QStringLiteral(" --ntasks-per-node=1 --ntasks=%1 --cpus-per-task=%2")
                    .arg(r.point.nodes)
                    .arg(r.point.ranksPerNode * s.cpusPerTask);
    } else if (r.isCommand())  // each rank gets PyTorch's env:// variables from SLURM's, as torchrun would set them
        train = QStringList{QStringLiteral("/bin/bash"), QStringLiteral("-c"),
                            QStringLiteral("export RANK=$SLURM_PROCID LOCAL_RANK=$SLURM_LOCALID WORLD_SIZE=$SLURM_NTASKS "
                                           "LOCAL_WORLD_SIZE=$SLURM_NTASKS_PER_NODE NODE_RANK=$SLURM_NODEID; exec \"$@\""),
                            QStringLiteral("scaledesk-rank")} +
            train;
    if (!s.mpi.isEmpty() && !torchrun) srun += QStringLiteral(" --mpi=") + shellQuote(s.mpi);
    lines << QStringLiteral("# The batch shell receives --signal's USR1 (the time limit is near) and forwards it to the");
    lines << QStringLiteral("# ranks, which checkpoint and exit 75 (EX_TEMPFAIL). TERM (scancel, preemption) is forwarded too,");
    lines << QStringLiteral("# and the ranks checkpoint, but only a USR1 stop asks for a requeue: a cancelled job stays cancelled.");
    lines << QStringLiteral("stop_signal=");
    lines << srun + QStringLiteral(" ") + shellJoin(train) + QStringLiteral(" &");
    lines << QStringLiteral("srun_pid=$!");
    // A command run's ranks get its stop_signal (srun forwards it to every task).
    lines << QStringLiteral("trap 'stop_signal=USR1; kill -%1 \"$srun_pid\" 2>/dev/null' USR1")
                 .arg(r.isCommand() ? r.command.stopSignal : QStringLiteral("USR1"));
    lines << QStringLiteral("trap 'stop_signal=TERM; kill -TERM \"$srun_pid\" 2>/dev/null' TERM");
    lines << QStringLiteral("# A trapped signal interrupts wait; keep waiting while srun runs, then collect its status");
    lines << QStringLiteral("# (127 means it was already collected).");
    lines << QStringLiteral("while :; do wait \"$srun_pid\"; rc=$?; kill -0 \"$srun_pid\" 2>/dev/null || break; done");
    lines << QStringLiteral("wait \"$srun_pid\" 2>/dev/null; last=$?; [ \"$last\" -ne 127 ] && rc=$last");
    if (torchrun) lines << torchrunStoppedLine(QStringLiteral("stop_signal"));
    if (s.requeue) {
        lines << QStringLiteral("if [ \"$rc\" -eq 75 ] && [ \"$stop_signal\" = USR1 ]; then");
        lines << QStringLiteral("  echo \"scaledesk: checkpoint written; requeueing job $SLURM_JOB_ID\"");
        lines << QStringLiteral("  scontrol requeue \"$SLURM_JOB_ID\"");
        lines << QStringLiteral("fi");
    }
    lines << QStringLiteral("exit \"$rc\"");
    return lines.join(QLatin1Char('\n')) + QLatin1Char('\n');
}

}  // namespace scaledesk
