#include "scheduler/localscheduler.h"

#include "scheduler/shellquote.h"

#include <QRegularExpression>
#include <QThread>

#include <algorithm>
#include <sched.h>

namespace scaledesk {

namespace {
/// The cores this process may run on (its affinity, as nproc counts them).
int usableCores()
{
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
    return std::max(1, QThread::idealThreadCount());
}

/// The local scheduler's slots: at most `slots` cores (0: nproc) busy with this user's ScaleDesk
/// jobs at once. Each job takes min(need, slots) slot locks (flock on slot.<i> files, held by
/// job.sh and its ranks until they exit) in arrival order: a queue of tickets, the oldest living
/// one first, so a big job is not starved by small ones. While it waits, job.pending says why (the
/// poll reports the job PENDING), and TERM (a cancel) or USR1 (a stop) ends it before it starts
/// (the traps of renderScript: exit 143 or 75, never a job.sh killed without an exit_code).
QStringList slotWaitLines(int slotCount, int need)
{
    QStringList l;
    l << QStringLiteral("# --- wait for free slots (cores) on this machine, in arrival order ---");
    l << QStringLiteral("slots=%1").arg(slotCount > 0 ? slotCount : usableCores());
    l << QStringLiteral("need=%1; [ \"$need\" -gt \"$slots\" ] && need=$slots").arg(need);
    l << QStringLiteral("slot_dir=\"${SCALEDESK_SLOTS_DIR:-${TMPDIR:-/tmp}/scaledesk-slots-$EUID}\"");
    l << QStringLiteral("mkdir -p \"$slot_dir\" || ended 1");
    l << QStringLiteral("cd -P . && ticket=\"$slot_dir/queue.${EPOCHREALTIME//[!0-9]/}.$$\" && echo \"$PWD\" > \"$ticket\" || ended 1");
    l << QStringLiteral("while :; do");
    l << QStringLiteral("  first=");
    l << QStringLiteral("  for t in \"$slot_dir\"/queue.*; do  # the oldest ticket whose job.sh still runs in its folder");
    l << QStringLiteral("    [ -f \"$t\" ] || continue; p=${t##*.}; there=; { read -r there < \"$t\"; } 2>/dev/null");
    l << QStringLiteral(
        "    if kill -0 \"$p\" 2>/dev/null && [ -n \"$there\" ] && [ \"/proc/$p/cwd\" -ef \"$there\" ]; then first=$t; break; fi");
    l << QStringLiteral("    rm -f \"$t\"");
    l << QStringLiteral("  done");
    l << QStringLiteral("  held=()");
    l << QStringLiteral("  if [ \"$first\" = \"$ticket\" ]; then");
    l << QStringLiteral("    for ((i = 0; i < slots && ${#held[@]} < need; i++)); do");
    l << QStringLiteral("      exec {fd}>>\"$slot_dir/slot.$i\"; if flock -n \"$fd\"; then held+=(\"$fd\"); else exec {fd}>&-; fi");
    l << QStringLiteral("    done");
    l << QStringLiteral("    [ \"${#held[@]}\" -ge \"$need\" ] && break");
    l << QStringLiteral("    for fd in \"${held[@]}\"; do exec {fd}>&-; done");
    l << QStringLiteral("  fi");
    l << QStringLiteral("  waiting=\"waiting for $need of $slots slots (cores)\"; [ -n \"$first\" ] && [ \"$first\" != \"$ticket\" ] && "
                        "waiting=\"$waiting; an earlier job goes first\"");
    l << QStringLiteral("  said=; { read -r said < job.pending; } 2>/dev/null");
    l << QStringLiteral("  [ \"$said\" = \"$waiting\" ] || { echo \"$waiting\" > job.pending.part && mv job.pending.part job.pending; }");
    l << QStringLiteral("  sleep 0.5");
    l << QStringLiteral("done");
    l << QStringLiteral("rm -f \"$ticket\" job.pending  # a cancel or stop still ends the job (ended) until the ranks start");
    l << QStringLiteral("echo \"scaledesk: started with $need of $slots slots\"");
    return l;
}

/// MASTER_PORT: the profile's, or one derived from the job's pid and checked free (the next one
/// up when something listens there), so concurrent local jobs never share a rendezvous.
QStringList localPortLines(int masterPort)
{
    if (masterPort > 0) return {masterPortLine(masterPort, QStringLiteral("$"))};
    return {masterPortLine(0, QStringLiteral("$")),
            QStringLiteral("for ((try = 0; try < 200; try++)); do (: > /dev/tcp/127.0.0.1/$MASTER_PORT) 2>/dev/null || break; "
                           "MASTER_PORT=$((20000 + (MASTER_PORT - 20000 + 1) % 10000)); done"),
            QStringLiteral("echo \"scaledesk: MASTER_PORT=$MASTER_PORT\"")};
}

QStringList forwardLines(const QString& signal)
{
    return {QStringLiteral("# USR1 or TERM: the ranks checkpoint and exit 75 (mpirun forwards USR1 to them); not before they have"),
            QStringLiteral("# run 5 s, so that their handlers are in place. A command run's ranks get its stop_signal."),
            QStringLiteral("launched=$SECONDS"),
            QStringLiteral("forward() { while [ $((SECONDS - launched)) -lt 5 ]; do sleep 0.5; done; kill -%1 $pids 2>/dev/null; }")
                .arg(signal),
            QStringLiteral("trap forward USR1 TERM"),
            QStringLiteral("[ -n \"$stop\" ] && forward")};
}

/// Starts the ranks and forwards a stop (USR1) or cancel (TERM) to them. A rank can only catch
/// them once its handlers are installed (scaledesk-train: after libtorch has loaded, its config is
/// read and MPI is up, a second or two here), and a signal before that kills it (exit 138,
/// "failed"): so a stop in the ranks' first 5 s is held until they have run for 5 s.
QStringList rankLines(const QString& train, const CommandRun* command, const QStringList& torchrun)
{
    QStringList l;
    l << QStringLiteral("# From here a stop or cancel is kept until the ranks exist, then forwarded to them.");
    l << QStringLiteral("stop=; trap 'stop=1' USR1 TERM");
    l << QStringLiteral("pids=");
    if (command && !torchrun.isEmpty()) {
        // The user's code under torchrun, which starts the ranks (one node here).
        l << QStringLiteral("%1 --nnodes=1 --nproc_per_node=$ranks --node_rank=0 --master_addr=127.0.0.1 --master_port=$MASTER_PORT "
                            "--no_python %2 &")
                 .arg(shellJoin(torchrun), train);
        l << QStringLiteral("pids=$!");
        l << forwardLines(command->stopSignal);
        l << QStringLiteral("trap 'stop=1; forward' USR1 TERM");
        return l;
    }
    if (command) {
        // The user's code: one process per rank with PyTorch's env:// variables, as torchrun sets them.
        l << QStringLiteral("for ((rank = 0; rank < ranks; rank++)); do");
        l << QStringLiteral(
                 "  RANK=$rank LOCAL_RANK=$rank WORLD_SIZE=$ranks LOCAL_WORLD_SIZE=$ranks NODE_RANK=0 MASTER_ADDR=127.0.0.1 %1 &")
                 .arg(train);
        l << QStringLiteral("  pids=\"$pids $!\"");
        l << QStringLiteral("done");
        l << forwardLines(command->stopSignal);
        return l;
    }
    l << QStringLiteral("if [ \"$ranks\" -gt 1 ] && command -v mpirun >/dev/null 2>&1; then");
    l << QStringLiteral("  as_root=; [ \"$EUID\" = 0 ] && as_root=--allow-run-as-root");
    l << QStringLiteral("  echo \"scaledesk: mpirun -np $ranks\"");
    l << QStringLiteral("  mpirun $as_root --oversubscribe --bind-to none -np \"$ranks\" %1 &").arg(train);
    l << QStringLiteral("  pids=$!");
    l << QStringLiteral("elif [ \"$ranks\" -gt 1 ]; then");
    l << QStringLiteral("  echo \"scaledesk: no mpirun; $ranks gloo ranks on 127.0.0.1\"");
    l << QStringLiteral("  for ((rank = 0; rank < ranks; rank++)); do");
    l << QStringLiteral(
             "    RANK=$rank LOCAL_RANK=$rank WORLD_SIZE=$ranks LOCAL_WORLD_SIZE=$ranks MASTER_ADDR=127.0.0.1 %1 --backend gloo &")
             .arg(train);
    l << QStringLiteral("    pids=\"$pids $!\"");
    l << QStringLiteral("  done");
    l << QStringLiteral("else");
    l << QStringLiteral("  %1 &").arg(train);
    l << QStringLiteral("  pids=$!");
    l << QStringLiteral("fi");
    l << forwardLines(QStringLiteral("USR1"));
    return l;
}
}  // namespace

QString LocalScheduler::renderScript(const JobRequest& r) const
{
    const RunPoint& p = r.point;
    const int ranks = p.worldSize();
    QStringList lines;
    lines << QStringLiteral("#!/bin/bash");
    lines << QStringLiteral("# Rendered by ScaleDesk for a local run; started in the run folder by the local scheduler.");
    lines << QStringLiteral("set -u");
    // The job id is this shell's pid, known to the app at once: a cancel (TERM) or stop (USR1) may
    // come at any time, and ends the job with an exit code (143, 75) until its ranks run. No command
    // substitution runs while these traps are set: bash 5.2 loses a trap that fires while it parses
    // one ("unexpected EOF while looking for matching `)'"), and the job went on.
    lines << QStringLiteral("ticket=; locked=");
    // exit_code before job.pending goes: a poll between the two would see a live job that is not
    // pending, and call a job cancelled while it waited for slots "running".
    lines << QStringLiteral(
        "ended() { [ -n \"$locked\" ] && echo \"$1\" > exit_code.part && mv exit_code.part exit_code; rm -f \"$ticket\" job.pending; "
        "exit \"$1\"; }");
    lines << QStringLiteral("trap 'ended 143' TERM; trap 'ended 75' USR1");
    lines << QStringLiteral("# One job.sh per run folder: a second one (a requeue while this one runs) leaves at once.");
    lines << QStringLiteral("exec 9>>job.lock");
    lines << QStringLiteral(
        "if ! flock -n 9; then echo \"scaledesk: another job.sh runs in $PWD; this one does not start\" >&2; exit 1; fi");
    lines << QStringLiteral("locked=1; echo $$ > job.pid");
    lines << slotWaitLines(r.profile.localSlots, ranks * r.profile.slurm.cpusPerTask);
    lines << QStringLiteral("export OMP_NUM_THREADS=%1").arg(r.profile.slurm.cpusPerTask);
    if (!r.profile.setup.trimmed().isEmpty()) {
        lines << QStringLiteral("# --- profile setup (verbatim) ---") << r.profile.setup.trimmed()
              << QStringLiteral("# --- end of profile setup ---");
    }
    lines << dataLinkLines(r);
    lines << commandRunLines(r);
    const QString train = shellJoin(trainerCommand(r));
    lines << localPortLines(r.profile.masterPort);
    lines << QStringLiteral("ranks=%1").arg(ranks);
    lines << rankLines(train, r.isCommand() ? &r.command : nullptr,
                       r.isCommand() ? commandTorchrun(r.command, {&r.point, r.runDir}) : QStringList());
    lines << QStringLiteral("rc=0");
    lines << QStringLiteral("for pid in $pids; do");
    lines << QStringLiteral("  while :; do wait \"$pid\"; r=$?; kill -0 \"$pid\" 2>/dev/null || break; done");
    lines << QStringLiteral("  wait \"$pid\" 2>/dev/null; last=$?; [ \"$last\" -ne 127 ] && r=$last");
    lines << QStringLiteral("  [ \"$rc\" -eq 0 ] && rc=$r");
    lines << QStringLiteral("done");
    if (r.isCommand() && !r.command.torchrun.isEmpty()) lines << torchrunStoppedLine(QStringLiteral("stop"));
    lines << QStringLiteral("echo \"$rc\" > exit_code.part && mv exit_code.part exit_code");
    lines << QStringLiteral("exit \"$rc\"");
    return lines.join(QLatin1Char('\n')) + QLatin1Char('\n');
}

Expected<Submission> LocalScheduler::submit(const QString& runDir)
{
    // setsid: its own session, so the job outlives the app and a cancel can reach the whole group.
    const QString command =
        // The last job's ending is cleared before the new one starts (a poll in between would read
        // it as the new job's), unless a job.sh still runs there: that one keeps its files, and the
        // new job.sh leaves at once (it cannot take the folder's lock).
        // job.pending is there before job.sh starts: until it has its slots the job is pending, never
        // running (a poll between its start and its first wait saw it running, then requeued).
        QStringLiteral("cd %1 && { ! flock -n job.lock true || { rm -f exit_code cancel_requested && "
                       "echo 'starting: waiting for its slots (cores)' > job.pending; }; } && "
                       "{ setsid nohup /bin/bash job.sh >> job.out 2>&1 < /dev/null & echo $!; }")
            .arg(shellQuote(runDir));
    auto r = m_transport.exec(command, 30000);
    if (!r) return r.error();
    const QString pid = QString::fromUtf8(r->out).trimmed();
    static const QRegularExpression numeric(QStringLiteral("^[0-9]+$"));
    if (r->exitCode != 0 || !numeric.match(pid).hasMatch())
        return Error{ErrorCode::SchedulerRejected,
                     QStringLiteral("cannot start job.sh: %1").arg(QString::fromUtf8(r->err + r->out).trimmed()), runDir};
    return Submission{pid, QString::fromUtf8(r->out + r->err), r->exitCode, QString()};
}

QString LocalScheduler::queryCommand(const QList<JobRef>& jobs) const
{
    // Per job: "@job <id>" then "exit <code>" (finished), "running", "pending <why>" (job.sh waits
    // for slots), or "gone". A pid is only ours
    // while its working directory is the run folder (pids get reused); /proc names the physical
    // folder, so the run folder is compared as `pwd -P` sees it (a workspace behind a symlink). Liveness is asked first: a
    // job writes exit_code and then exits, so "no exit_code, then no process" would call a job
    // that ended between the two checks gone (it was, once, in the concurrent test).
    QStringList cmd;
    for (const auto& j : jobs) {
        cmd << QStringLiteral(
                   "d=%1; p=%2; echo \"@job $p\"; "
                   "if [ ! -f \"$d/exit_code\" ] && kill -0 \"$p\" 2>/dev/null && "
                   "[ \"$(readlink /proc/$p/cwd)\" = \"$(cd \"$d\" 2>/dev/null && pwd -P)\" ]; then "
                   "if [ -f \"$d/job.pending\" ]; then echo \"pending $(head -c 200 \"$d/job.pending\")\"; else echo running; fi; "
                   "elif [ -f \"$d/exit_code\" ]; then echo \"exit $(cat \"$d/exit_code\")\"; [ -f \"$d/cancel_requested\" ] && "
                   "echo cancelled; "
                   "else echo gone; fi")
                   .arg(shellQuote(j.runDir), shellQuote(j.jobId));
    }
    return cmd.isEmpty() ? QStringLiteral("true") : cmd.join(QStringLiteral("; "));
}

QHash<QString, JobStatus> LocalScheduler::parseQuery(const QByteArray& output, const QList<JobRef>& jobs) const
{
    QHash<QString, JobStatus> out;
    for (const auto& j : jobs) out.insert(j.jobId, JobStatus{});
    QString current;
    for (const QByteArray& raw : output.split('\n')) {
        const QString line = QString::fromUtf8(raw).trimmed();
        if (line.startsWith(QLatin1String("@job "))) {
            current = line.mid(5);
            continue;
        }
        if (!out.contains(current)) continue;
        JobStatus& st = out[current];
        if (line == QLatin1String("running")) {
            st = {true, RunState::Running, QStringLiteral("RUNNING"), QString()};
        } else if (line.startsWith(QLatin1String("pending"))) {  // waiting for slots; the reason follows
            st = {true, RunState::Queued, QStringLiteral("PENDING"), line.mid(8).trimmed()};
        } else if (line.startsWith(QLatin1String("exit "))) {
            const int code = line.mid(5).toInt();
            st.known = true;
            st.reason = QStringLiteral("exit %1").arg(code);
            st.schedulerState = code == 0 ? QStringLiteral("COMPLETED") : QStringLiteral("FAILED");
            st.state = code == 0 ? RunState::Completed : RunState::Failed;
            if (code == 75) {  // the trainer checkpointed on USR1/TERM and stopped
                st.state = RunState::Cancelled;
                st.schedulerState = QStringLiteral("STOPPED");
                st.reason = QStringLiteral("exit 75: checkpointed; requeue resumes it");
            }
        } else if (line == QLatin1String("cancelled") && st.known && st.state == RunState::Failed) {
            // Killed after a cancel. A job that exited 0 (or 75, checkpointed) despite a cancel
            // ended the way its exit code says.
            st.state = RunState::Cancelled;
            st.schedulerState = QStringLiteral("CANCELLED");
        }
        // "gone": not known; the poller falls back to the run's own files.
    }
    return out;
}

Expected<QString> LocalScheduler::findJob(const JobRef& ref)
{
    auto pid = m_transport.readAt(ref.runDir + QStringLiteral("/job.pid"), 0, 64);
    if (!pid) return pid.error().code == ErrorCode::TransportNoFile ? Expected<QString>(QString()) : Expected<QString>(pid.error());
    const QString found = QString::fromUtf8(*pid).trimmed();
    return found == ref.jobId ? QString() : found;  // the job of an earlier submit is no answer
}

Status LocalScheduler::cancel(const JobRef& job, const QString& signal)
{
    static const QRegularExpression sig(QStringLiteral("^[A-Z0-9]{1,10}$"));
    if (!signal.isEmpty() && !sig.match(signal).hasMatch())
        return Error{ErrorCode::SchedulerSignal, QStringLiteral("not a signal name: '%1'").arg(signal), job.runDir};
    // A pid is the job only while job.sh runs in the run folder (pids are reused). A job that has
    // ended is left alone, and no cancel is noted for it: the poll records how it really ended.
    const QString alive = QStringLiteral("d=%1; p=%2; if [ -f \"$d/exit_code\" ] || ! kill -0 \"$p\" 2>/dev/null || "
                                         "[ \"$(readlink /proc/$p/cwd)\" != \"$(cd \"$d\" 2>/dev/null && pwd -P)\" ]; then echo 'the job "
                                         "is not running (it has ended)' >&2; exit 3; fi; ")
                              .arg(shellQuote(job.runDir), shellQuote(job.jobId));
    QString command;
    if (signal.isEmpty()) {
        // Ask nicely (the trainer checkpoints on TERM), then kill the whole session after 30 s.
        command = alive +
            QStringLiteral("touch \"$d/cancel_requested\"; kill -TERM \"$p\"; "
                           "( for i in $(seq 1 60); do kill -0 \"$p\" 2>/dev/null || exit 0; sleep 0.5; done; "
                           "kill -KILL -- -\"$p\" ) >/dev/null 2>&1 </dev/null &");
    } else {
        command = alive + QStringLiteral("kill -%1 \"$p\"").arg(signal);
    }
    auto r = m_transport.exec(command, 30000);
    if (!r) return r.error();
    if (r->exitCode == 3) return Error{ErrorCode::SchedulerUnknownJob, QString::fromUtf8(r->err).trimmed(), job.runDir};
    if (r->exitCode != 0)
        return Error{ErrorCode::SchedulerRejected,
                     QStringLiteral("cannot signal the job: %1").arg(QString::fromUtf8(r->err + r->out).trimmed()), job.runDir};
    return Done{};
}

Expected<QString> LocalScheduler::requeue(const JobRef& job)
{
    auto s = submit(job.runDir);
    if (!s) return s.error();
    return s->jobId;
}

}  // namespace scaledesk
