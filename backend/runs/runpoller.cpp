#include "runs/runpoller.h"
#include "runs/derivedmetrics.h"

#include "scheduler/jobscript.h"
#include "scheduler/shellquote.h"

#include <QDateTime>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLockFile>
#include <QRandomGenerator>
#include <QRegularExpression>
#include <QSaveFile>
#include <QSet>

namespace scaledesk {

namespace {
constexpr qint64 kChunk = 8 << 20;
constexpr qint64 kInline = 1 << 20;
/// Bytes before the mirror's end that each append read asks for again: when they differ, the file
/// was truncated and grew again (a requeued job's slurm-*.out), and it is mirrored anew, not spliced.
constexpr qint64 kOverlap = 16;
// What one poll may bring back: the inline reads of all runs together (one exec, which must end
// well within its timeout), and per run over the transport. A run that printed more catches up
// over the next polls, and the other runs of the profile go on updating meanwhile.
// And in time: reads at an offset (what did not fit inline) stop for this poll once the poll has
// run kReadTimeMs, after at least one chunk of kTimedChunk, so a run that printed 100 MB adds
// about that much to a poll and the other runs' lines keep arriving at the poll's pace (bench_burst).
constexpr qint64 kInlineBudget = 8 << 20;
constexpr qint64 kRunBudget = 32 << 20;
constexpr qint64 kReadTimeMs = 300;
constexpr qint64 kTimedChunk = 1 << 20;
constexpr qint64 kUnknownSubmitWindowS = 600;
constexpr qsizetype kStatBatch = 2000;  // files per stat (each one its own argument; far below ARG_MAX)
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
    auto job = m_scheduler.findJob({r.jobId, r.remoteDir, slurmJobName(r.id)});
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
    QStringList names;
    // A command run whose metrics come from its output or event files gets them made here
    // (derivedmetrics.h); its folder's own metrics.jsonl and epochs.csv are not read.
    if (!sourcesOf(r).isSet()) names << QStringLiteral("metrics.jsonl") << QStringLiteral("epochs.csv");
    names << QStringLiteral("out.log") << QStringLiteral("job.out") << QStringLiteral("manifest.json") << QStringLiteral("exit_code");
    if (r.task == QLatin1String("bench-comm")) names << QStringLiteral("comm.jsonl");  // scaledesk calibrate's timings
    if (r.task == QLatin1String("command")) names << QStringLiteral("code.diff");      // the user's code's uncommitted changes
    if (!r.jobId.isEmpty()) names << QStringLiteral("slurm-%1.out").arg(r.jobId);
    for (int rank = 1; rank < r.nodes * r.ranksPerNode; ++rank) names << QStringLiteral("rank-%1.log").arg(rank);
    static const QRegularExpression ours(QStringLiteral("^(slurm-[0-9]+(_[0-9]+)?\\.out|rank-[0-9]+\\.log)$"));
    const QDir mirror(m_store.workspace().runDir(r.id));
    for (const QString& name : mirror.entryList({QStringLiteral("slurm-*.out"), QStringLiteral("rank-*.log")}, QDir::Files))
        if (ours.match(name).hasMatch() && !names.contains(name)) names << name;
    return names;
}

const MetricSources& RunPoller::sourcesOf(const RunRecord& r) const
{
    static const MetricSources none;
    if (r.task != QLatin1String("command")) return none;
    auto it = m_sources.find(r.id);
    if (it == m_sources.end()) {
        // The definition as it was launched (the submitter checked it then).
        auto loaded = loadMetricSources(m_store.workspace().runDir(r.id) + QStringLiteral("/run.yaml"));
        it = m_sources.insert(r.id, loaded ? *loaded : MetricSources{});
    }
    return *it;
}

void RunPoller::parseEventFiles(const QByteArray& output, const QHash<int, QString>& folders, QHash<int, Seen>& seen)
{
    static const QRegularExpression plain(QStringLiteral("^([A-Za-z0-9_.-]+/){0,2}events\\.out\\.tfevents\\.[A-Za-z0-9_.-]+$"));
    for (const QByteArray& line : output.split('\n')) {
        if (!line.startsWith("@tb ")) continue;
        const QList<QByteArray> f = line.mid(4).split(' ');
        if (f.size() != 4) continue;
        bool okRun = false, okSize = false, okTime = false;
        const int run = f[0].toInt(&okRun);
        const qint64 size = f[1].toLongLong(&okSize);
        const double mtime = f[2].toDouble(&okTime);
        const QString path = QString::fromUtf8(f[3]);
        if (!okRun || !okSize || !okTime || size < 0 || !folders.contains(run) || !plain.match(path).hasMatch() ||
            path.split(QLatin1Char('/')).contains(QStringLiteral("..")))
            continue;
        FileSeen fs;
        fs.name = folders.value(run) + QLatin1Char('/') + path;
        fs.size = size;
        fs.mtime = qint64(mtime);
        seen[run].files << fs;
    }
}

QHash<int, RunPoller::Seen> RunPoller::parseSizes(const QByteArray& out, const QList<AskedFile>& asked)
{
    QHash<QByteArray, int> byPath, byDir;
    for (int i = 0; i < asked.size(); ++i) {
        byPath.insert(asked[i].path.toUtf8(), i);
        byDir.insert(asked[i].path.left(asked[i].path.size() - asked[i].name.size() - 1).toUtf8(), asked[i].run);
    }
    auto number = [](const QByteArray& text, qint64* value) {
        bool ok = false;
        *value = text.toLongLong(&ok);
        return ok && *value >= 0;
    };
    QSet<int> runs;
    for (const AskedFile& a : asked) runs.insert(a.run);
    QHash<int, Seen> seen;
    for (const QByteArray& line : out.split('\n')) {
        qint64 a = 0, b = 0;
        if (line.startsWith("@gone ")) {
            if (number(line.mid(6), &a) && runs.contains(int(a))) seen[int(a)].gone = true;
            continue;
        }
        if (line.startsWith("@odd ")) {  // one line per odd entry, by its folder
            const auto dir = byDir.constFind(line.mid(5));
            if (dir != byDir.constEnd() && seen[*dir].oddNames < (1 << 20)) ++seen[*dir].oddNames;
            continue;
        }
        // "<size> <mtime> <path>", the path exactly as asked: anything else is not an answer.
        const qsizetype s1 = line.indexOf(' '), s2 = s1 < 0 ? -1 : line.indexOf(' ', s1 + 1);
        if (s2 < 0 || !number(line.left(s1), &a) || !number(line.mid(s1 + 1, s2 - s1 - 1), &b)) continue;
        const auto it = byPath.constFind(line.mid(s2 + 1));
        if (it == byPath.constEnd()) continue;
        FileSeen fs;
        fs.name = asked[*it].name;
        fs.size = a;
        fs.mtime = b;
        seen[asked[*it].run].files << fs;
    }
    return seen;
}

QHash<int, QByteArray> RunPoller::parseData(const QByteArray& out, const QByteArray& nonce, const QHash<int, qint64>& expected)
{
    QHash<int, QByteArray> data;
    qsizetype pos = 0;
    while (pos < out.size()) {
        const qsizetype nl = out.indexOf('\n', pos);
        if (nl < 0) break;
        const QList<QByteArray> head = out.mid(pos, nl - pos).split(' ');
        pos = nl + 1;
        if (head.size() != 3 || head[0] != "@data") continue;
        bool okK = false, okN = false;
        const int key = head[1].toInt(&okK);
        const qint64 n = head[2].toLongLong(&okN);
        if (!okK || !okN || n < 0 || expected.value(key, -1) != n) continue;
        // The bytes, then "\n@end <nonce> <key>\n". A read cut short (the file shrank) puts the
        // sentinel early: the bytes are dropped and the parse goes on from the sentinel. The nonce
        // is this poll's own, so a file cannot forge it.
        const QByteArray sentinel = "\n@end " + nonce + ' ' + QByteArray::number(key) + '\n';
        if (n <= out.size() - pos && out.mid(pos + qsizetype(n), sentinel.size()) == sentinel) {
            data.insert(key, out.mid(pos, qsizetype(n)));
            pos += qsizetype(n) + sentinel.size();
            continue;
        }
        const qsizetype at = out.indexOf(sentinel, pos);
        if (at < 0) break;  // a cut-off answer: the rest is unusable
        pos = at + sentinel.size();
    }
    return data;
}

namespace {
// Moves a mirror aside as <file>.prev, or .prev-2, .prev-3, … when earlier copies are there (a job
// requeued many times keeps every attempt's log); returns the new name.
QString keepOldCopy(const QString& local)
{
    QString old = local + QStringLiteral(".prev");
    for (int n = 2; QFile::exists(old); ++n) old = local + QStringLiteral(".prev-%1").arg(n);
    QFile::rename(local, old);
    return old;
}
}  // namespace

bool RunPoller::mirrorIsCurrent(const RunRecord& r, const Seen& s) const
{
    const QString dir = m_store.workspace().runDir(r.id) + QLatin1Char('/');
    for (const FileSeen& f : s.files) {
        if (QFileInfo(dir + f.name).size() != f.size) return false;
        if (isWholeFile(f.name) && r.mtimes.value(f.name, -1) != f.mtime) return false;
    }
    return true;
}

bool RunPoller::mirror(RunRecord& r, const FileSeen& f, PollReport& report, qint64& budget)
{
    const QString& name = f.name;
    const qint64 size = f.size;
    const QString local = m_store.workspace().runDir(r.id) + QLatin1Char('/') + name;
    const QString remote = r.remoteDir + QLatin1Char('/') + name;
    if (isWholeFile(name)) {
        if (r.mtimes.value(name, -1) == f.mtime && QFileInfo(local).size() == size) return true;
        QByteArray data;
        if (f.inlined) {
            data = f.data;
        } else {
            if (size > budget) return false;  // whole or not at all: next poll
            while (data.size() < size) {
                auto chunk = m_transport.readAt(remote, data.size(), std::min<qint64>(kChunk, size - data.size()));
                if (!chunk) {
                    report.problems << r.id + QStringLiteral(": ") + chunk.error().text();
                    return false;
                }
                if (chunk->isEmpty()) break;
                data += *chunk;
                budget -= chunk->size();
                report.bytesRead += quint64(chunk->size());
            }
        }
        report.bytesNew += quint64(data.size());
        QSaveFile out(local);
        if (out.open(QIODevice::WriteOnly)) {
            out.write(data);
            if (out.commit()) {
                r.mtimes[name] = f.mtime;
                return data.size() == size;
            }
        }
        report.problems << r.id + QStringLiteral(": cannot write the mirror %1: %2").arg(local, out.errorString());
        return false;
    }
    // Append-only: the mirror's own size is the offset, so a crash between the write and the
    // record never duplicates or drops bytes.
    qint64 offset = QFileInfo(local).size();
    if (size == offset) return true;
    const qint64 overlap = std::min(kOverlap, offset);
    bool rewritten = size < offset;
    if (!rewritten && overlap > 0) {
        // The bytes before the mirror's end must still be there: else the file was truncated and
        // grew again, and appending would splice two files into one.
        QByteArray before;
        if (f.inlined && f.overlap == overlap && offset + f.data.size() - f.overlap == size) {
            before = f.data.left(overlap);
        } else {
            auto read = m_transport.readAt(remote, offset - overlap, overlap);
            if (!read) {
                report.problems << r.id + QStringLiteral(": ") + read.error().text();
                return false;
            }
            before = *read;
        }
        QFile mine(local);
        rewritten = !mine.open(QIODevice::ReadOnly) || !mine.seek(offset - overlap) || mine.read(overlap) != before;
    }
    if (rewritten) {
        const QString old = keepOldCopy(local);
        report.problems << r.id +
                QStringLiteral(": %1 was restarted (now %2 bytes; the mirror had %3); the old copy is %4")
                    .arg(name)
                    .arg(size)
                    .arg(offset)
                    .arg(QFileInfo(old).fileName());
        offset = 0;
    }
    if (name.contains(QLatin1Char('/'))) QDir().mkpath(QFileInfo(local).path());  // an event file in its folder
    QFile out(local);
    if (!out.open(QIODevice::Append)) {
        report.problems << r.id + QStringLiteral(": cannot write the mirror %1: %2").arg(local, out.errorString());
        return false;
    }
    // Inline bytes start at the offset the read was asked from, which is this mirror's size
    // unless another process appended meanwhile or the file shrank (then they do not line up).
    if (f.inlined && !rewritten && offset + f.data.size() - f.overlap == size) {
        out.write(f.data.mid(f.overlap));
        offset = size;
        report.bytesNew += quint64(f.data.size() - f.overlap);
    }
    while (offset < size && budget > 0 && readTimeLeft()) {
        m_rangedReads = true;
        auto chunk = m_transport.readAt(remote, offset, std::min({kTimedChunk, size - offset, budget}));
        if (!chunk) {
            report.problems << r.id + QStringLiteral(": ") + chunk.error().text();
            break;
        }
        if (chunk->isEmpty()) break;
        out.write(*chunk);
        offset += chunk->size();
        budget -= chunk->size();
        report.bytesNew += quint64(chunk->size());
        report.bytesRead += quint64(chunk->size());
    }
    const bool written = out.error() == QFileDevice::NoError;
    out.close();
    r.offsets[name] = offset;
    return written && offset == size;
}

void RunPoller::advance(RunRecord& r, const Seen& s, const QHash<QString, JobStatus>& states, PollReport& report, bool mirrored)
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
            // A finished run is a complete run: it ends only once its mirror holds every byte.
            if (isFinal(next) && !mirrored) {
                report.problems << r.id + QStringLiteral(": the job ended (%1); fetching the rest of its files").arg(st.schedulerState);
                return;
            }
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
            if (next != r.state)
                r.transition(next, note);
            else if (isActive(next))
                r.message = note;  // why it still waits ("PENDING (Resources)"), for the run list
        } else {
            // The scheduler forgot the job: the run's own manifest says how it ended, once the
            // mirror holds all of it.
            if (!mirrored) {
                report.problems << r.id + QStringLiteral(": the job has ended; fetching the rest of its files");
                return;
            }
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

bool RunPoller::readTimeLeft() const { return !m_rangedReads || m_pollClock.elapsed() < kReadTimeMs; }

QList<RunRecord> RunPoller::loadRuns(const QStringList& runIds, PollReport& report)
{
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
    return runs;
}

Expected<RunPoller::FirstAnswer> RunPoller::askSizes(const QList<RunRecord>& runs, PollReport& report)
{
    // The first round trip: the scheduler's view, then for every run whether its folder exists and
    // the size and mtime of each followed file. It is one script on the shell's standard input
    // (no argv limit, one shell start however many runs), with one `stat` per kStatBatch files:
    // the far side starts a handful of processes per poll, not some per run. The scheduler's query
    // has a time budget of its own, so a slow controller cannot starve the rest.
    QList<JobRef> jobs;
    for (const auto& r : runs)
        if (!r.jobId.isEmpty() && isActive(r.state)) jobs << JobRef{r.jobId, r.remoteDir, slurmJobName(r.id)};
    QList<AskedFile> asked;
    QStringList script;
    if (!jobs.isEmpty())
        script << QStringLiteral("timeout %1 /bin/sh -c %2").arg(kSchedulerBudgetS).arg(shellQuote(m_scheduler.queryCommand(jobs)));
    script << QStringLiteral("echo @files");
    // Whether the far side has Perl, so that the bytes' script carries one way of reading, not two.
    script << QStringLiteral("command -v perl >/dev/null 2>&1 && echo @perl");
    QStringList paths, newDirs;
    QHash<int, QString> tbFolders;  // run -> its TensorBoard folder
    auto flushStat = [&] {
        if (!paths.isEmpty())
            script << QStringLiteral("stat -c '%s %Y %n' -- ") + paths.join(QLatin1Char(' ')) + QStringLiteral(" 2>/dev/null");
        paths.clear();
    };
    auto flushFind = [&] {
        // Entries with other names are counted (by their folder; never named), the first time a run is polled.
        if (!newDirs.isEmpty())
            script
                << QStringLiteral(
                       "find %1 -mindepth 1 -maxdepth 1 \\( -name '*[!A-Za-z0-9._-]*' -o -name '-*' \\) -printf '@odd %h\\n' 2>/dev/null")
                       .arg(newDirs.join(QLatin1Char(' ')));
        newDirs.clear();
    };
    for (int i = 0; i < runs.size(); ++i) {
        const RunRecord& r = runs[i];
        if (r.remoteDir.isEmpty()) continue;
        for (const QString& name : followedFiles(r)) {
            asked << AskedFile{i, name, r.remoteDir + QLatin1Char('/') + name};
            paths << shellQuote(asked.last().path);
            if (paths.size() >= kStatBatch) flushStat();
        }
        script << QStringLiteral("[ -d %1 ] || echo '@gone %2'").arg(shellQuote(r.remoteDir)).arg(i);
        if (const QString& tb = sourcesOf(r).tensorboard; !tb.isEmpty()) {
            tbFolders.insert(i, tb);
            script << QStringLiteral("find %1 -maxdepth 3 -type f -name 'events.out.tfevents.*' -printf '@tb %2 %s %T@ %P\\n' 2>/dev/null")
                          .arg(shellQuote(r.remoteDir + QLatin1Char('/') + tb))
                          .arg(i);
        }
        if (r.offsets.isEmpty() && r.mtimes.isEmpty()) newDirs << shellQuote(r.remoteDir);
        if (newDirs.size() >= kStatBatch / 8) flushFind();
    }
    flushStat();
    flushFind();
    QByteArray schedulerPart, sizesPart;
    {
        const QByteArray bytes = script.join(QLatin1Char('\n')).toUtf8() + '\n';
        report.bytesSent += quint64(bytes.size());
        QElapsedTimer waited;
        waited.start();
        auto out = m_transport.execScript(bytes, 60000, Idempotent::Yes);
        report.farSideMs += waited.elapsed();
        if (!out) return out.error();
        report.bytesRead += quint64(out->out.size());
        const qsizetype filesAt = out->out.indexOf("@files\n");
        schedulerPart = filesAt < 0 ? out->out : out->out.left(filesAt);
        if (filesAt >= 0) sizesPart = out->out.mid(filesAt + 7);
        report.commands = 1;
    }
    FirstAnswer answer;
    answer.states = m_scheduler.parseQuery(schedulerPart, jobs);
    answer.seen = parseSizes(sizesPart, asked);
    if (!tbFolders.isEmpty()) parseEventFiles(sizesPart, tbFolders, answer.seen);
    answer.havePerl = sizesPart.startsWith("@perl\n");
    return answer;
}

void RunPoller::readNewBytes(const QList<RunRecord>& runs, QHash<int, Seen>& seen, bool havePerl, PollReport& report)
{
    // The second round trip, only when files grew: the new bytes of each (whole files when they
    // changed), up to kInline per file, by offsets this app computed. Beyond that, reads at the offset.
    const QByteArray nonce = QByteArray::number(QRandomGenerator::global()->generate64(), 16);
    QList<std::pair<int, int>> reads;  // (run, index of its file)
    QHash<int, qint64> expected;
    QStringList perlReads, ddReads;
    qint64 inlineBudget = kInlineBudget;
    for (auto it = seen.begin(); it != seen.end(); ++it) {
        const RunRecord& r = runs[it.key()];
        const QString local = m_store.workspace().runDir(r.id);
        for (int f = 0; f < it->files.size(); ++f) {
            const FileSeen& fs = it->files[f];
            const qint64 have = QFileInfo(local + QLatin1Char('/') + fs.name).size();
            qint64 from = have, n = fs.size - have;
            if (isWholeFile(fs.name)) {
                if (r.mtimes.value(fs.name, -1) == fs.mtime && have == fs.size) continue;
                from = 0;
                n = fs.size;
            }
            if (n <= 0 || n > kInline || inlineBudget < n) continue;  // read over the transport instead
            if (!isWholeFile(fs.name)) {
                it->files[f].overlap = std::min(kOverlap, have);
                from -= it->files[f].overlap;
                n += it->files[f].overlap;
            }
            inlineBudget -= n;
            const int key = int(reads.size());
            reads << std::pair{it.key(), f};
            expected.insert(key, n);
            const QString path = r.remoteDir + QLatin1Char('/') + fs.name;
            // Perl reads every file in one process (the path hex-encoded: only digits and letters
            // reach it); without Perl, one dd per file.
            if (havePerl)
                perlReads << QStringLiteral("%1 %2 %3 %4").arg(key).arg(n).arg(from).arg(QString::fromLatin1(path.toUtf8().toHex()));
            else
                ddReads << QStringLiteral("echo '@data %1 %2'; dd if=%3 iflag=skip_bytes,count_bytes skip=%4 count=%2 bs=1M status=none "
                                          "2>/dev/null; echo; echo '@end %5 %1'")
                               .arg(key)
                               .arg(n)
                               .arg(shellQuote(path))
                               .arg(from)
                               .arg(QString::fromLatin1(nonce));
        }
    }
    QStringList dataScript;
    if (!reads.isEmpty() && havePerl) {
        // The nonce is the first line of perl's standard input, never in its argv: `ps` on the
        // login node shows every user the program, not the here-document.
        dataScript << QStringLiteral("perl -e '%1' <<'SD_READS'")
                          .arg(QStringLiteral(
                              "binmode STDOUT; my $z = <STDIN>; chomp $z; while (<STDIN>) { chomp; my ($k, $n, $o, $h) = split / /; "
                              "my $b = q(); if (open(my $f, q(<:raw), pack(q(H*), $h))) { seek($f, $o, 0); read($f, $b, $n); close($f); } "
                              "print qq(\\@data $k $n\\n), $b, qq(\\n\\@end $z $k\\n); }"))
                   << QString::fromLatin1(nonce) << perlReads << QStringLiteral("SD_READS");
    } else if (!reads.isEmpty()) {
        dataScript << ddReads;
    }
    if (!dataScript.isEmpty()) {
        const QByteArray bytes = dataScript.join(QLatin1Char('\n')).toUtf8() + '\n';
        report.bytesSent += quint64(bytes.size());
        QElapsedTimer waited;
        waited.start();
        auto out = m_transport.execScript(bytes, 60000, Idempotent::Yes);
        report.farSideMs += waited.elapsed();
        ++report.commands;
        if (out) {
            report.bytesRead += quint64(out->out.size());
            const QHash<int, QByteArray> data = parseData(out->out, nonce, expected);
            for (auto d = data.begin(); d != data.end(); ++d) {
                FileSeen& fs = seen[reads[d.key()].first].files[reads[d.key()].second];
                fs.data = d.value();
                fs.inlined = true;
            }
        } else {
            // The states are still this poll's: they are recorded; the bytes come over the
            // transport below (within each run's budget) or with the next poll.
            report.problems << QStringLiteral("reading the runs' new bytes: ") + out.error().text();
        }
    }
}

void RunPoller::applyToRun(const RunRecord& asked, const Seen& s, const QHash<QString, JobStatus>& states, PollReport& report)
{
    if (s.gone) report.problems << asked.id + QStringLiteral(": the run folder %1 was deleted on the cluster").arg(asked.remoteDir);
    if (s.oddNames > 0)
        report.problems << asked.id + QStringLiteral(": %1 entries with unusual names in the run folder are ignored").arg(s.oddNames);
    // Nothing new for this run (its mirror is current, and the scheduler's answer changes nothing):
    // no lock, no second read of its record. Most runs of a big poll are like this.
    if (mirrorIsCurrent(asked, s)) {
        RunRecord probe = asked;
        PollReport scratch;
        advance(probe, s, states, scratch, true);
        if (probe.toJson() == asked.toJson()) {
            report.problems << scratch.problems;
            return;
        }
    }
    // The mirror and the record change together under the run's lock, so the window and the
    // command line polling one workspace never append the same bytes twice or lose an update.
    RunLock lock(m_store.workspace(), asked.id);
    if (!lock.isLocked()) {
        report.problems << asked.id + QStringLiteral(": the run is locked by another process; polled next time");
        return;
    }
    auto updated = m_store.update(
        asked.id,
        [&](RunRecord& r) {
            qint64 budget = kRunBudget;
            bool mirrored = true;
            for (const auto& f : s.files) mirrored = mirror(r, f, report, budget) && mirrored;
            // The scheduler's answer is about the job this poll asked for: when the run moved on
            // meanwhile (a requeue, another process's poll), the next poll asks again.
            if (r.state == asked.state && r.jobId == asked.jobId) advance(r, s, states, report, mirrored);
            if (const MetricSources& sources = sourcesOf(r); sources.isSet()) {
                QStringList outputs;
                for (const QString& name : followedFiles(r))
                    if (name == QLatin1String("job.out") ||
                        (name.startsWith(QLatin1String("slurm-")) && name.endsWith(QLatin1String(".out"))))
                        outputs << name;
                if (auto derived = deriveMetrics(m_store.workspace().runDir(r.id), sources, outputs, !isActive(r.state)); !derived)
                    report.problems << r.id + QStringLiteral(": ") + derived.error().text();
            }
            return Status(Done{});
        },
        &lock);
    if (!updated) {
        report.problems << updated.error().text();
        return;
    }
    if (updated->state != asked.state || updated->message != asked.message) report.changed << asked.id;
}

Expected<PollReport> RunPoller::poll(const QStringList& runIds)
{
    m_pollClock.start();
    m_rangedReads = false;
    PollReport report;
    const TransportStats before = m_transport.stats();
    const QList<RunRecord> runs = loadRuns(runIds, report);
    auto answer = askSizes(runs, report);
    if (!answer) return answer.error();
    readNewBytes(runs, answer->seen, answer->havePerl, report);
    for (int i = 0; i < runs.size(); ++i) {
        ++report.runs;
        applyToRun(runs[i], answer->seen.value(i), answer->states, report);
    }
    report.changed.removeDuplicates();
    const TransportStats after = m_transport.stats();
    report.roundTrips = after.roundTrips - before.roundTrips;
    return report;
}

}  // namespace scaledesk
