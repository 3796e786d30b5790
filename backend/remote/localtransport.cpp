#include "remote/localtransport.h"

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QSaveFile>

namespace scaledesk {

namespace {
QString expandHome(const QString& path)
{
    if (path == QLatin1String("~")) return QDir::homePath();
    if (path.startsWith(QLatin1String("~/"))) return QDir::homePath() + path.mid(1);
    return path;
}

Error fileError(const QFileDevice& f, const QString& path)
{
    if (f.error() == QFileDevice::PermissionsError || (QFileInfo::exists(path) && !QFileInfo(path).isReadable()))
        return Error{ErrorCode::TransportPermission, QStringLiteral("permission denied"), path};
    if (!QFileInfo::exists(path)) return Error{ErrorCode::TransportNoFile, QStringLiteral("no such file"), path};
    return Error{ErrorCode::TransportIo, f.errorString(), path};
}
}  // namespace

Expected<ExecResult> LocalTransport::exec(const QString& command, int timeoutMs, Idempotent)
{
    return run({QStringLiteral("-c"), command}, nullptr, timeoutMs, command.left(60));
}

Expected<ExecResult> LocalTransport::execScript(const QByteArray& script, int timeoutMs, Idempotent)
{
    return run({QStringLiteral("-s")}, &script, timeoutMs, QString::fromUtf8(script.left(60)));
}

Expected<ExecResult> LocalTransport::run(const QStringList& shellArgs, const QByteArray* input, int timeoutMs, const QString& what)
{
    ++m_stats.roundTrips;
    QProcess p;
    p.setProgram(QStringLiteral("/bin/sh"));
    p.setArguments(shellArgs);
    if (!input) p.setStandardInputFile(QProcess::nullDevice());
    p.start();
    if (input && p.waitForStarted(10000)) {
        p.write(*input);
        p.closeWriteChannel();
    }
    if (!p.waitForStarted(10000))
        return Error{ErrorCode::TransportIo, QStringLiteral("cannot start /bin/sh: ") + p.errorString(), QStringLiteral("local")};
    if (!p.waitForFinished(timeoutMs)) {
        p.kill();
        p.waitForFinished(5000);
        return Error{ErrorCode::TransportTimeout, QStringLiteral("no answer after %1 s from: %2").arg(timeoutMs / 1000.0).arg(what),
                     QStringLiteral("local")};
    }
    ExecResult r;
    r.out = p.readAllStandardOutput();
    r.err = p.readAllStandardError();
    r.exitCode = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    return r;
}

Status LocalTransport::writeFile(const QString& path0, const QByteArray& data, int mode)
{
    const QString path = expandHome(path0);
    ++m_stats.roundTrips;
    QSaveFile f(path);
    if (!f.open(QIODevice::WriteOnly)) return fileError(f, QFileInfo(path).absolutePath());
    f.write(data);
    if (!f.commit()) return Error{ErrorCode::TransportIo, f.errorString(), path};
    QFileDevice::Permissions perms;
    const std::pair<int, QFileDevice::Permission> bits[] = {
        {0400, QFileDevice::ReadOwner}, {0200, QFileDevice::WriteOwner}, {0100, QFileDevice::ExeOwner},
        {0040, QFileDevice::ReadGroup}, {0020, QFileDevice::WriteGroup}, {0010, QFileDevice::ExeGroup},
        {0004, QFileDevice::ReadOther}, {0002, QFileDevice::WriteOther}, {0001, QFileDevice::ExeOther}};
    for (const auto& [bit, perm] : bits)
        if (mode & bit) perms |= perm;
    QFile::setPermissions(path, perms);
    m_stats.bytesWritten += quint64(data.size());
    return Done{};
}

Expected<RemoteFileInfo> LocalTransport::stat(const QString& path0)
{
    const QString path = expandHome(path0);
    ++m_stats.roundTrips;
    const QFileInfo fi(path);
    if (!fi.exists()) return Error{ErrorCode::TransportNoFile, QStringLiteral("no such file"), path};
    RemoteFileInfo info;
    info.size = fi.size();
    info.mtime = fi.lastModified().toSecsSinceEpoch();
    info.isDir = fi.isDir();
    return info;
}

Expected<QByteArray> LocalTransport::readAt(const QString& path0, qint64 offset, qint64 maxBytes)
{
    const QString path = expandHome(path0);
    ++m_stats.roundTrips;
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return fileError(f, path);
    if (offset >= f.size()) return QByteArray();
    if (!f.seek(offset)) return Error{ErrorCode::TransportIo, f.errorString(), path};
    QByteArray data = f.read(maxBytes);
    m_stats.bytesRead += quint64(data.size());
    return data;
}

Status LocalTransport::makeDirs(const QString& path0)
{
    const QString path = expandHome(path0);
    ++m_stats.roundTrips;
    if (QFileInfo(path).isDir()) return Done{};
    if (!QDir().mkpath(path)) {
        QString parent = path;
        while (!parent.isEmpty() && !QFileInfo::exists(parent)) parent = QFileInfo(parent).absolutePath();
        if (QFileInfo::exists(parent) && !QFileInfo(parent).isDir())
            return Error{ErrorCode::TransportIo, QStringLiteral("not a folder"), parent};
        return Error{ErrorCode::TransportPermission, QStringLiteral("cannot create the folder"), path};
    }
    return Done{};
}

Expected<QString> LocalTransport::absolutePath(const QString& path) { return QDir::cleanPath(QDir(expandHome(path)).absolutePath()); }

}  // namespace scaledesk
