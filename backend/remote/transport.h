#pragma once

#include "core/status.h"

#include <QByteArray>
#include <QString>

namespace scaledesk {

/// What a command printed and how it ended.
struct ExecResult {
    QByteArray out;
    QByteArray err;
    int exitCode = -1;  ///< -1 when killed by a signal or the exit status was not reported
};

/// A file on the far side of a transport.
struct RemoteFileInfo {
    qint64 size = 0;
    qint64 mtime = 0;  ///< seconds since the epoch
    bool isDir = false;
};

/// What a transport has done since it was created (for the poll benchmark and the status line).
struct TransportStats {
    quint64 roundTrips = 0;  ///< exec calls plus SFTP requests that waited for an answer
    quint64 bytesRead = 0;   ///< payload bytes of readAt
    quint64 bytesWritten = 0;
    quint64 connects = 0;  ///< successful (re)connects
};

/// Whether a command may simply be run again when the connection dropped while it ran. Reads,
/// polls and lookups may; sbatch, scontrol requeue, a signal, a deploy build or a data generation
/// may not (the first one may have happened), and the caller gets the error instead.
enum class Idempotent { No, Yes };

/// How the app reaches the machine where runs live: a cluster over SSH, or this machine. One
/// object per profile; the calls block, so they run on the profile's worker thread (never the GUI
/// thread). Paths are on the far side; a leading "~/" is the remote home. Error codes:
/// "transport.connect", "transport.auth", "transport.hostkey", "transport.timeout",
/// "transport.nofile", "transport.permission", "transport.io".
class Transport {
public:
    virtual ~Transport() = default;

    /// "user@host:port" or "local": for messages.
    virtual QString describe() const = 0;

    /// Runs `command` with /bin/sh semantics on the far side (a login environment is not
    /// assumed). A non-zero exit is not an error: it is in the result. A transport that reconnects
    /// runs the command again after a dropped connection only when it is `idempotent`; file
    /// operations (below) are always repeated safely.
    virtual Expected<ExecResult> exec(const QString& command, int timeoutMs = 60000, Idempotent idempotent = Idempotent::No) = 0;

    /// Runs `script` by /bin/sh read from its standard input: no limit on its length (one argv
    /// string is capped at 128 KiB on Linux) and one shell start for all of it. The default passes
    /// it as a command, for transports of tests.
    virtual Expected<ExecResult> execScript(const QByteArray& script, int timeoutMs = 60000, Idempotent idempotent = Idempotent::No)
    {
        return exec(QString::fromUtf8(script), timeoutMs, idempotent);
    }

    /// Writes `data` to `path` through a temporary file and a rename, so a reader never sees half
    /// a file; `mode` is the permission bits of the result.
    virtual Status writeFile(const QString& path, const QByteArray& data, int mode = 0644) = 0;

    /// size, mtime, isDir of `path`; error "transport.nofile" when it does not exist.
    virtual Expected<RemoteFileInfo> stat(const QString& path) = 0;

    /// Up to `maxBytes` bytes from `offset` (fewer at the end of the file; empty at or past it).
    virtual Expected<QByteArray> readAt(const QString& path, qint64 offset, qint64 maxBytes) = 0;

    /// mkdir -p.
    virtual Status makeDirs(const QString& path) = 0;

    /// `~/x` → the absolute path on the far side.
    virtual Expected<QString> absolutePath(const QString& path) = 0;

    virtual TransportStats stats() const = 0;
};

}  // namespace scaledesk
