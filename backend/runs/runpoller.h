#pragma once

#include "runs/runstore.h"
#include "scheduler/scheduler.h"

namespace scaledesk {

/// What one poll did, for the status line and the poll benchmark.
struct PollReport {
    int runs = 0;            ///< runs polled
    QStringList changed;     ///< runs whose state changed
    quint64 roundTrips = 0;  ///< transport round trips this poll used
    quint64 bytesRead = 0;   ///< bytes that came back: the poll command's output plus SFTP reads
    quint64 bytesNew = 0;    ///< bytes the followed files grew by
    int commands = 0;        ///< exec calls of the poll (one per 64 KiB of command)
    QStringList problems;    ///< per-run messages (a deleted run folder, an unreadable file)
};

/// Follows the active runs of one profile. One poll = one exec (one more per 64 KiB of command)
/// that prints the scheduler's view of every job, the size and mtime of every followed file and
/// the bytes each file grew by (inline, up to 1 MiB per file; an SFTP read at the mirror's offset
/// beyond that). Only file names the app chose are followed; nothing from a run folder reaches the
/// shell. Files are mirrored into the workspace run folder: append-only files (metrics.jsonl,
/// epochs.csv, slurm-*.out, job.out, rank-*.log) by their new bytes from the mirror's own size,
/// so a restart resumes exactly; a file that shrank (a requeued job restarting its log) is kept
/// as <name>.prev and mirrored again from 0; manifest.json and exit_code are copied whole when
/// they change. Runs left in `submitting` by a killed app are reconciled first.
class RunPoller {
public:
    RunPoller(RunStore& store, Transport& transport, Scheduler& scheduler);
    Expected<PollReport> poll(const QStringList& runIds);

    /// One followed file in a poll's answer.
    struct FileSeen {
        QString name;
        qint64 size = 0;
        qint64 mtime = 0;
        bool inlined = false;  ///< `data` holds the bytes from the mirror's size (whole file: all of it)
        QByteArray data;
    };
    /// What a poll's answer says about one run folder.
    struct Seen {
        bool gone = false;
        int oddNames = 0;  ///< entries with unusual names, ignored
        QList<FileSeen> files;
    };
    /// Parses the file half of a poll's answer. `asked`: per run index, the file names the poll
    /// asked for; anything else in the answer is dropped. Pure and bounded (the fuzz target's).
    static QHash<int, Seen> parseFiles(const QByteArray& output, const QHash<int, QStringList>& asked);

private:
    QStringList followedFiles(const RunRecord& r) const;
    QString fileCommand(int index, const RunRecord& r, const QStringList& names) const;
    static QString fileFunction();
    void reconcileSubmitting(RunRecord& r, PollReport& report);
    void mirror(RunRecord& r, const FileSeen& f, PollReport& report);
    /// Moves the run's state on the scheduler's answer and the run's own files.
    void advance(RunRecord& r, const Seen& seen, const QHash<QString, JobStatus>& states, PollReport& report);
    RunStore& m_store;
    Transport& m_transport;
    Scheduler& m_scheduler;
};

}  // namespace scaledesk
