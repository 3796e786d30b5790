#include "runs/runpoller.h"

#include "scheduler/jobscript.h"
#include "scheduler/shellquote.h"

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLockFile>
#include <QRegularExpression>
#include <QSaveFile>

namespace scaledesk {

namespace {
constexpr qint64 kChunk = 8 << 20;
constexpr qint64 kInline = 1 << 20;
constexpr qint64 kUnknownSubmitWindowS = 600;
constexpr qsizetype kMaxCommand = 64 * 1024;
constexpr int kSchedulerBudgetS = 25;

bool isWholeFile(const QString& name) { return name == QLatin1String("manifest.json") || name == QLatin1String("exit_code"); }

// The line that says why a run failed: the trainer's manifest error, else the last line of the
// job's log that reports an error.
QString failureDetail(const QString& mirrorDir, const QString& jobId)
{
    const QString error = readRunManifest(mirrorDir).value(QStringLiteral("error")).toString();
    if (!error.isEmpty()) return error;
    // The trainer's own one-line error first, then whatever else reported an error (srun, MPI).
    for (const QByteArray& needle : {QByteArray("scaledesk-train: error:"), QByteArray("error")}) {
        for (const QString& name : {QStringLiteral("slurm-%1.out").arg(jobId), QStringLiteral("job.out"), QStringLiteral("out.log")}) {
            QFile f(mirrorDir + QLatin1Char('/') + name);
            if (!f.open(QIODevice::ReadOnly)) continue;
            f.seek(std::max<qint64>(0, f.size() - 64 * 1024));
            const QList<QByteArray> lines = f.readAll().split('\n');
            for (auto it = lines.rbegin(); it != lines.rend(); ++it)
                if (it->toLower().contains(needle)) return QString::fromUtf8(it->trimmed()).left(300);
        }
    }
    return QString();
}
}  // namespace

RunPoller::RunPoller(RunStore& store, Transport& transport, Scheduler& scheduler)
    : m_store(store), m_transport(transport), m_scheduler(scheduler)
{}

void RunPoller::reconcileSubmitting(RunRecord& r, PollReport& report)
{
    if (r.state != RunState::Submitting) return;
    const bool handedOver = r.submitStep == QLatin1String("sbatch") || r.submitStep == QLatin1String("sbatch-unknown");
    if (!handedOver || r.remoteDir.isEmpty()) {
        r.transition(RunState::SubmitFailed,
                     QStringLiteral("failed to submit: the app stopped while uploading, before the job was handed to the scheduler"));
        report.changed << r.id;
        return;
    }
    auto job = m_scheduler.findJob({QString(), r.remoteDir, slurmJobName(r.id)});
    if (!job) {
        report.problems << r.id + QStringLiteral(": ") + job.error().text();
        return;  // try again next poll
    }
    if (job->isEmpty()) {
        // A submit whose answer was lost (a timeout, a dropped connection) may still be running on
        // the login node: its job can appear minutes later, so it is looked for that long.
        const QDateTime since = r.history.isEmpty() ? QDateTime() : r.history.last().when;
        if (r.submitStep == QLatin1String("sbatch-unknown") && since.isValid() &&
            since.secsTo(QDateTime::currentDateTimeUtc()) < kUnknownSubmitWindowS) {
            report.problems << r.id + QStringLiteral(": no job yet for a submit whose outcome is unknown; looking again");
            return;
        }
        r.transition(RunState::SubmitFailed,
                     r.submitStep == QLatin1String("sbatch-unknown")
                         ? QStringLiteral("failed to submit: %1 has no job for this run %2 s after a submit whose answer was lost")
                               .arg(m_scheduler.kind())
                               .arg(kUnknownSubmitWindowS)
                         : QStringLiteral("failed to submit: the app stopped during the submit and %1 has no job for this run")
                               .arg(m_scheduler.kind()));
    } else {
        r.jobId = *job;
        r.submitStep = QStringLiteral("recorded");
        r.transition(RunState::Queued, QStringLiteral("found job %1 after an interrupted submit").arg(r.jobId));
    }
    report.changed << r.id;
}

QStringList RunPoller::followedFiles(const RunRecord& r) const
{
    // Only names this app chose: fixed ones, the job's own output, the ranks' logs, and what the
    // mirror already holds under those patterns. Nothing else in a run folder (which may sit on a
    // shared, group-writable scratch file system) is ever named, listed or read.
    QStringList names{QStringLiteral("metrics.jsonl"), QStringLiteral("epochs.csv"),    QStringLiteral("out.log"),
                      QStringLiteral("job.out"),       QStringLiteral("manifest.json"), QStringLiteral("exit_code")};
    if (!r.jobId.isEmpty()) names << QStringLiteral("slurm-%1.out").arg(r.jobId);
    for (int rank = 1; rank < r.nodes * r.ranksPerNode; ++rank) names << QStringLiteral("rank-%1.log").arg(rank);
    static const QRegularExpression ours(QStringLiteral("^(slurm-[0-9]+(_[0-9]+)?\\.out|rank-[0-9]+\\.log)$"));
    const QDir mirror(m_store.workspace().runDir(r.id));
    for (const QString& name : mirror.entryList({QStringLiteral("slurm-*.out"), QStringLiteral("rank-*.log")}, QDir::Files))
        if (ours.match(name).hasMatch() && !names.contains(name)) names << name;
    return names;
}

QString RunPoller::fileCommand(int index, const RunRecord& r, const QStringList& names) const
{
    // Per file that exists: "@file <size> <mtime> <name>", then, when it grew by at most kInline
    // bytes since the mirror's size (append-only files) or changed at all (whole files), "@data <n>"
    // and exactly n bytes: the read is padded with zeros if the file shrank meanwhile, and
    // "@end <size>" after it tells the parser whether to trust them. Every value in the command is
    // this app's (names, offsets), and what the shell computes comes from stat of those files.
    const QString local = m_store.workspace().runDir(r.id);
    QStringList calls;
    for (const QString& name : names) {
        if (isWholeFile(name)) {
            const QString sig = r.mtimes.contains(name)
                ? QStringLiteral("%1 %2").arg(QFileInfo(local + QLatin1Char('/') + name).size()).arg(r.mtimes.value(name))
                : QString();
            calls << QStringLiteral("sd_f %1 -1 '%2'").arg(shellQuote(name), sig);
        } else {
            calls << QStringLiteral("sd_f %1 %2").arg(shellQuote(name)).arg(QFileInfo(local + QLatin1Char('/') + name).size());
        }
    }
    // Entries with names outside [A-Za-z0-9._-], or starting with '-', are counted, never named.
    return QStringLiteral(
               "echo '@run %1'; if [ -d %2 ]; then ( cd -- %2 && %3; "
               "echo \"@odd $(find . -mindepth 1 -maxdepth 1 \\( -name '*[!A-Za-z0-9._-]*' -o -name '-*' \\) -printf x | wc -c)\" ); "
               "else echo '@gone'; fi")
        .arg(index)
        .arg(shellQuote(r.remoteDir), calls.join(QStringLiteral("; ")));
}

// The shell function every file command calls: sd_f NAME OFFSET [SIGNATURE]. OFFSET -1 is a whole
// file, sent again only when its "size mtime" differs from SIGNATURE.
QString RunPoller::fileFunction()
{
    return QStringLiteral(
               "sd_f() { [ -f \"$1\" ] || return 0; s=$(stat -c %s -- \"$1\"); m=$(stat -c %Y -- \"$1\"); echo \"@file $s $m $1\"; "
               "o=$2; if [ \"$o\" -lt 0 ]; then [ \"$s $m\" = \"$3\" ] && return 0; o=0; fi; n=$((s - o)); "
               "if [ \"$n\" -gt 0 ] && [ \"$n\" -le %1 ]; then echo \"@data $n\"; "
               "{ tail -c +$((o + 1)) -- \"$1\" | head -c \"$n\"; cat /dev/zero; } | head -c \"$n\"; "
               "echo; echo \"@end $(stat -c %s -- \"$1\")\"; fi; }")
        .arg(kInline);
}

QHash<int, RunPoller::Seen> RunPoller::parseFiles(const QByteArray& out, const QHash<int, QStringList>& asked)
{
    QHash<int, Seen> seen;
    int current = -1;
    qsizetype pos = 0;
    auto nextLine = [&](QByteArray* line) {
        if (pos >= out.size()) return false;
        qsizetype nl = out.indexOf('\n', pos);
        if (nl < 0) nl = out.size();
        *line = out.mid(pos, nl - pos);
        pos = nl + 1;
        return true;
    };
    auto number = [](const QByteArray& text, qint64* value) {
        bool ok = false;
        *value = text.toLongLong(&ok);
        return ok && *value >= 0;
    };
    QByteArray line;
    while (nextLine(&line)) {
        if (line.startsWith("@run ")) {
            bool ok = false;
            const int index = line.mid(5).toInt(&ok);
            current = ok && asked.contains(index) ? index : -1;  // a run this poll did not ask about is not one
            if (current >= 0) seen[current];
        } else if (current >= 0 && line == "@gone") {
            seen[current].gone = true;
        } else if (current >= 0 && line.startsWith("@odd ")) {
            qint64 odd = 0;
            if (number(line.mid(5).trimmed(), &odd)) seen[current].oddNames = int(qMin<qint64>(odd, 1 << 20));
        } else if (current >= 0 && line.startsWith("@file ")) {
            const QList<QByteArray> f = line.mid(6).split(' ');
            if (f.size() != 3) continue;
            FileSeen fs;
            fs.name = QString::fromUtf8(f[2]);
            // Only a file this poll asked for, with sizes that are numbers.
            if (!asked.value(current).contains(fs.name) || !number(f[0], &fs.size) || !number(f[1], &fs.mtime)) continue;
            seen[current].files << fs;
        } else if (current >= 0 && line.startsWith("@data ") && !seen[current].files.isEmpty()) {
            qint64 n = 0;
            // Overflow-safe: n is compared with what is left, never added to pos first.
            if (!number(line.mid(6), &n) || n > out.size() - pos) break;  // a cut-off answer: the rest is unusable
            FileSeen& fs = seen[current].files.last();
            fs.data = out.mid(pos, qsizetype(n));
            pos += qsizetype(n);
            if (pos < out.size()) ++pos;  // the echo's newline
            QByteArray end;
            qint64 endSize = 0;
            if (nextLine(&end) && end.startsWith("@end ") && number(end.mid(5), &endSize) && endSize >= fs.size)
                fs.inlined = true;
            else
                fs.data.clear();  // the file shrank while it was read: read it again next poll
        }
    }
    return seen;
}

void RunPoller::mirror(RunRecord& r, const FileSeen& f, PollReport& report)
{
    const QString& name = f.name;
    const qint64 size = f.size;
    const QString local = m_store.workspace().runDir(r.id) + QLatin1Char('/') + name;
    const QString remote = r.remoteDir + QLatin1Char('/') + name;
    if (isWholeFile(name)) {
        if (r.mtimes.value(name, -1) == f.mtime && QFileInfo(local).size() == size) return;
        QByteArray data;
        if (f.inlined) {
            data = f.data;
        } else {
            while (data.size() < size) {
                auto chunk = m_transport.readAt(remote, data.size(), std::min<qint64>(kChunk, size - data.size()));
                if (!chunk) {
                    report.problems << r.id + QStringLiteral(": ") + chunk.error().text();
                    return;
                }
                if (chunk->isEmpty()) break;
                data += *chunk;
                report.bytesRead += quint64(chunk->size());
            }
        }
        report.bytesNew += quint64(data.size());
        QSaveFile out(local);
        if (out.open(QIODevice::WriteOnly)) {
            out.write(data);
            if (out.commit()) r.mtimes[name] = f.mtime;
        }
        return;
    }
    // Append-only: the mirror's own size is the offset, so a crash between the write and the
    // record never duplicates or drops bytes.
    qint64 offset = QFileInfo(local).size();
    if (size < offset) {
        QFile::remove(local + QStringLiteral(".prev"));
        QFile::rename(local, local + QStringLiteral(".prev"));
        report.problems << r.id +
                QStringLiteral(": %1 shrank from %2 to %3 bytes (restarted); the old copy is %1.prev").arg(name).arg(offset).arg(size);
        offset = 0;
    }
    if (size == offset) return;
    QFile out(local);
    if (!out.open(QIODevice::Append)) {
        report.problems << r.id + QStringLiteral(": cannot write the mirror %1: %2").arg(local, out.errorString());
        return;
    }
    // Inline bytes start at the offset the command was built with, which is this mirror's size
    // unless the file shrank (then they do not line up and are not used).
    if (f.inlined && offset + f.data.size() == size) {
        out.write(f.data);
        offset = size;
        report.bytesNew += quint64(f.data.size());
    }
    while (offset < size) {
        auto chunk = m_transport.readAt(remote, offset, std::min<qint64>(kChunk, size - offset));
        if (!chunk) {
            report.problems << r.id + QStringLiteral(": ") + chunk.error().text();
            break;
        }
        if (chunk->isEmpty()) break;
        out.write(*chunk);
        offset += chunk->size();
        report.bytesNew += quint64(chunk->size());
        report.bytesRead += quint64(chunk->size());
    }
    out.close();
    r.offsets[name] = offset;
}

void RunPoller::advance(RunRecord& r, const Seen& s, const QHash<QString, JobStatus>& states, PollReport& report)
{
    if (!r.jobId.isEmpty() && isActive(r.state) && r.state != RunState::Submitting && !states.contains(r.jobId)) {
        report.problems << r.id + QStringLiteral(": %1 did not answer; the state is unchanged").arg(m_scheduler.kind());
    } else if (!r.jobId.isEmpty() && isActive(r.state) && r.state != RunState::Submitting) {
        const JobStatus st = states.value(r.jobId);
        QString note =
            QStringLiteral("%1: %2%3")
                .arg(m_scheduler.kind(), st.schedulerState, st.reason.isEmpty() ? QString() : QStringLiteral(" (%1)").arg(st.reason));
        if (st.known) {
            RunState next = st.state;
            // A job that ran and is pending again was requeued (preempted, or it checkpointed
            // before its time limit); it stays "requeued" until it runs again.
            if (next == RunState::Queued && (r.state == RunState::Running || r.state == RunState::Requeued)) next = RunState::Requeued;
            // Only an ending consults the manifest: no file read per run per poll while runs go on.
            const QJsonObject m = isFinal(next) ? readRunManifest(m_store.workspace().runDir(r.id)) : QJsonObject();
            const QString status = m.value(QStringLiteral("status")).toString();
            // The trainer's manifest is the truth about training: a job script that exits 0
            // after a failed launch is not a finished run.
            if (next == RunState::Completed && !m.isEmpty() && status != QLatin1String("finished")) {
                next = RunState::Failed;
                note = QStringLiteral("%1 says %2, but the trainer's manifest says '%3'")
                           .arg(m_scheduler.kind(), st.schedulerState, status.isEmpty() ? QStringLiteral("?") : status);
            }
            // A short job can start and end between two polls: its manifest says when it ran.
            if (isFinal(next) && (r.state == RunState::Queued || r.state == RunState::Requeued) && !m.isEmpty()) {
                const QDateTime started = QDateTime::fromString(m.value(QStringLiteral("start_utc")).toString(), Qt::ISODateWithMs);
                if (started.isValid()) {
                    r.transition(RunState::Running, QStringLiteral("trainer started (between two polls; time from its manifest)"));
                    r.history.last().when = started.toUTC();
                }
            }
            if (next == RunState::Failed && next != r.state) {
                const QString detail = failureDetail(m_store.workspace().runDir(r.id), r.jobId);
                if (!detail.isEmpty()) note += QStringLiteral(": ") + detail;
            }
            if (next != r.state) r.transition(next, note);
        } else {
            // The scheduler forgot the job: the run's own manifest says how it ended.
            const QJsonObject m = readRunManifest(m_store.workspace().runDir(r.id));
            const QString status = m.value(QStringLiteral("status")).toString();
            if (status == QLatin1String("finished"))
                r.transition(RunState::Completed, QStringLiteral("manifest: finished"));
            else if (status == QLatin1String("failed"))
                r.transition(RunState::Failed, QStringLiteral("manifest: failed: ") + m.value(QStringLiteral("error")).toString());
            else if (status == QLatin1String("preempted"))
                r.transition(RunState::Cancelled, QStringLiteral("stopped after a checkpoint; requeue resumes it"));
            else if (s.gone)
                r.transition(RunState::Lost,
                             QStringLiteral("the run folder was deleted on the cluster and %1 no longer knows job %2")
                                 .arg(m_scheduler.kind(), r.jobId));
            else
                r.transition(RunState::Lost,
                             QStringLiteral("%1 no longer knows job %2 and the run left no final status").arg(m_scheduler.kind(), r.jobId));
        }
    }
}

Expected<PollReport> RunPoller::poll(const QStringList& runIds)
{
    PollReport report;
    const TransportStats before = m_transport.stats();
    QList<RunRecord> runs;
    for (const QString& id : runIds) {
        auto r = m_store.load(id);
        if (!r) {
            report.problems << r.error().text();
            continue;
        }
        runs << *r;
    }
    for (auto& r : runs) {
        if (r.state != RunState::Submitting) continue;
        // A submit still under way (this process or another one holds its submit lock) is left to it.
        QLockFile submitting(m_store.workspace().runDir(r.id) + QStringLiteral("/.submitting"));
        submitting.setStaleLockTime(0);
        if (!submitting.tryLock(0)) continue;
        auto updated = m_store.update(r.id, [&](RunRecord& cur) {
            if (cur.state == RunState::Submitting) reconcileSubmitting(cur, report);
            return Status(Done{});
        });
        if (updated)
            r = *updated;
        else
            report.problems << updated.error().text();
    }

    // One round trip: the scheduler's view, then per run whether its folder exists, the size and
    // mtime of each followed file and, inline, the bytes it grew by (up to kInline per file).
    QList<JobRef> jobs;
    for (const auto& r : runs)
        if (!r.jobId.isEmpty() && isActive(r.state)) jobs << JobRef{r.jobId, r.remoteDir, slurmJobName(r.id)};
    // Commands of at most kMaxCommand bytes (one argv string is capped at 128 KiB on Linux): the
    // scheduler's view first, with a time budget of its own so a slow controller cannot starve the
    // file half, then as many runs' files as fit; more runs, more round trips.
    QStringList commands;
    QString cmd = jobs.isEmpty()
        ? QString()
        : QStringLiteral("timeout %1 /bin/sh -c %2; ").arg(kSchedulerBudgetS).arg(shellQuote(m_scheduler.queryCommand(jobs)));
    cmd += fileFunction() + QStringLiteral("; echo @files");
    QHash<int, QStringList> asked;
    for (int i = 0; i < runs.size(); ++i) {
        if (runs[i].remoteDir.isEmpty()) continue;
        asked[i] = followedFiles(runs[i]);
        const QString part = fileCommand(i, runs[i], asked[i]);
        if (cmd.size() + part.size() + 2 > kMaxCommand && cmd.size() > 0) {
            commands << cmd;
            cmd = fileFunction() + QStringLiteral("; echo @files");
        }
        cmd += QStringLiteral("; ") + part;
    }
    commands << cmd;
    QByteArray schedulerPart, filesPart;
    for (int k = 0; k < commands.size(); ++k) {
        auto out = m_transport.exec(commands[k], 60000, Idempotent::Yes);
        if (!out) return out.error();
        report.bytesRead += quint64(out->out.size());
        const qsizetype filesAt = out->out.indexOf("@files\n");
        if (k == 0) schedulerPart = filesAt < 0 ? out->out : out->out.left(filesAt);
        if (filesAt >= 0) filesPart += out->out.mid(filesAt + 7);
    }
    report.commands = int(commands.size());
    const QHash<QString, JobStatus> states = m_scheduler.parseQuery(schedulerPart, jobs);
    const QHash<int, Seen> seen = parseFiles(filesPart, asked);

    for (int i = 0; i < runs.size(); ++i) {
        const RunRecord& asked = runs[i];
        ++report.runs;
        const Seen s = seen.value(i);
        if (s.gone) report.problems << asked.id + QStringLiteral(": the run folder %1 was deleted on the cluster").arg(asked.remoteDir);
        if (s.oddNames > 0)
            report.problems << asked.id + QStringLiteral(": %1 entries with unusual names in the run folder are ignored").arg(s.oddNames);
        // The mirror and the record change together under the run's lock, so the window and the
        // command line polling one workspace never append the same bytes twice or lose an update.
        RunLock lock(m_store.workspace(), asked.id);
        if (!lock.isLocked()) {
            report.problems << asked.id + QStringLiteral(": the run is locked by another process; polled next time");
            continue;
        }
        auto updated = m_store.update(
            asked.id,
            [&](RunRecord& r) {
                for (const auto& f : s.files) mirror(r, f, report);
                // The scheduler's answer is about the job this poll asked for: when the run moved on
                // meanwhile (a requeue, another process's poll), the next poll asks again.
                if (r.state == asked.state && r.jobId == asked.jobId) advance(r, s, states, report);
                return Status(Done{});
            },
            &lock);
        if (!updated) {
            report.problems << updated.error().text();
            continue;
        }
        if (updated->state != asked.state) report.changed << asked.id;
    }
    report.changed.removeDuplicates();
    const TransportStats after = m_transport.stats();
    report.roundTrips = after.roundTrips - before.roundTrips;
    return report;
}

}  // namespace scaledesk
