#pragma once

#include "remote/transport.h"

#include <QList>
#include <QString>
#include <QStringList>

#include <functional>
#include <memory>
#include <optional>

namespace scaledesk {

/// Where and how to reach a host over SSH. Empty fields come from the SSH config, then from
/// OpenSSH's defaults; fields that are set win over the config.
struct SshOptions {
    QString host;              ///< a host name, an address or a ~/.ssh/config alias
    int port = 0;              ///< 0: from the SSH config, else 22
    QString user;              ///< empty: from the SSH config, else the local user
    QString identityFile;      ///< empty: the agent and the default keys (and IdentityFile from the config)
    QString proxyJump;         ///< `[user@]host[:port]`, comma-separated for a chain; run through `ssh -W`
    QString knownHostsFile;    ///< empty: ~/.ssh/known_hosts (or UserKnownHostsFile from the config)
    QString sshConfigFile;     ///< empty: ~/.ssh/config when it exists
    int connectTimeoutS = 15;  ///< also bounds each blocking SFTP request and the keepalive
    int keepaliveS = 30;       ///< after this long idle, the next call first checks the session is alive
};

/// Questions the transport asks the user. All optional; each is called on the thread that called
/// the transport method, while that method blocks.
struct SshCallbacks {
    /// The host's key is not in known_hosts: return true to trust it and record it there. `host`
    /// is "host:port". Null (or false) refuses the connection. Never called for a changed key.
    std::function<bool(const QString& host, const QString& keyType, const QString& sha256Fingerprint)> acceptNewHostKey;
    /// The passphrase of an encrypted key file; nullopt gives up on that key. Never stored.
    std::function<std::optional<QString>(const QString& keyFile)> passphrase;
    /// A keyboard-interactive round (passwords, one-time codes): one answer per prompt, in order;
    /// nullopt aborts authentication.
    struct Prompt {
        QString text;
        bool echo = false;  ///< false: the answer is secret (do not show it)
    };
    std::function<std::optional<QStringList>(const QString& name, const QString& instruction, const QList<Prompt>& prompts)>
        keyboardInteractive;
};

/// The libssh this program runs with (for the About dialog).
QString libsshVersion();

/// The Transport of an `ssh+slurm` profile, over libssh: one SSH session and one SFTP session,
/// opened on the first call and reused by every call (each exec is a new channel on it).
///
/// Host keys: a key in known_hosts that matches is accepted; a key that differs from the one
/// recorded (or a different key type) is always refused ("transport.hostkey"); an unknown key is
/// recorded only when SshCallbacks::acceptNewHostKey says so.
///
/// Authentication, in order: none; the ssh-agent (when SSH_AUTH_SOCK is set); the identity file
/// (asking SshCallbacks::passphrase up to three times when it is encrypted) or, without one,
/// libssh's default keys and the config's IdentityFile; keyboard-interactive through
/// SshCallbacks::keyboardInteractive. A server that asks for several methods (2FA) gets them in
/// that order.
///
/// A session that has died (network drop, server restart) is reopened once and the call retried
/// once; every operation is idempotent. All methods block. One object must not be used from two
/// threads at once (calls are serialised by a mutex, so a second thread would only wait); stats()
/// and describe() may be called from any thread.
class SshTransport : public Transport {
public:
    explicit SshTransport(SshOptions options, SshCallbacks callbacks = {});
    ~SshTransport() override;
    SshTransport(const SshTransport&) = delete;
    SshTransport& operator=(const SshTransport&) = delete;

    /// "user@host:port" after the SSH config is applied (host is the resolved HostName).
    QString describe() const override;
    Expected<ExecResult> exec(const QString& command, int timeoutMs = 60000, Idempotent idempotent = Idempotent::No) override;
    Expected<ExecResult> execScript(const QByteArray& script, int timeoutMs = 60000, Idempotent idempotent = Idempotent::No) override;
    Status writeFile(const QString& path, const QByteArray& data, int mode = 0644) override;
    Expected<RemoteFileInfo> stat(const QString& path) override;
    Expected<QByteArray> readAt(const QString& path, qint64 offset, qint64 maxBytes) override;
    Status makeDirs(const QString& path) override;
    Expected<QString> absolutePath(const QString& path) override;
    TransportStats stats() const override;

private:
    struct Impl;
    std::unique_ptr<Impl> d;
};

}  // namespace scaledesk
