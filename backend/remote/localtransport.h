#pragma once

#include "remote/transport.h"

namespace scaledesk {

/// The Transport of `local` profiles: commands run under /bin/sh on this machine and files are
/// this machine's files. Same contract and error codes as SshTransport.
class LocalTransport final : public Transport {
public:
    QString describe() const override { return QStringLiteral("local"); }
    Expected<ExecResult> exec(const QString& command, int timeoutMs = 60000, Idempotent idempotent = Idempotent::No) override;
    Expected<ExecResult> execScript(const QByteArray& script, int timeoutMs = 60000, Idempotent idempotent = Idempotent::No) override;
    Status writeFile(const QString& path, const QByteArray& data, int mode = 0644) override;
    Expected<RemoteFileInfo> stat(const QString& path) override;
    Expected<QByteArray> readAt(const QString& path, qint64 offset, qint64 maxBytes) override;
    Status makeDirs(const QString& path) override;
    Expected<QString> absolutePath(const QString& path) override;
    TransportStats stats() const override { return m_stats; }

private:
    Expected<ExecResult> run(const QStringList& shellArgs, const QByteArray* input, int timeoutMs, const QString& what);
    TransportStats m_stats;
};

}  // namespace scaledesk
