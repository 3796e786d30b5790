#include "remote/sshtransport.h"

#include "core/showntext.h"

#include "scheduler/shellquote.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QRandomGenerator>
#include <QRegularExpression>

#include <libssh/callbacks.h>
#include <libssh/libssh.h>
#include <libssh/server.h>  // ssh_send_keepalive: declared with the server API, but a client request
#include <libssh/sftp.h>

#include <fcntl.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <deque>
#include <mutex>

namespace scaledesk {

namespace {

constexpr qint64 kChunk = 64 * 1024;  // below OpenSSH's 256 KiB SFTP message limit
constexpr int kPassphraseTries = 3;

QString fromC(const char* s) { return s ? QString::fromUtf8(s) : QString(); }

Error error(ErrorCode code, QString message, QString location = {}) { return Error{code, std::move(message), std::move(location)}; }

// A ProxyCommand string goes through libssh's %-expansion, then /bin/sh.
QString escapePercent(QString s) { return s.replace(QLatin1Char('%'), QStringLiteral("%%")); }

struct Hop {
    QString userHost;
    QString port;
};

// "[user@]host[:port]" or "[user@][v6addr][:port]".
Hop parseHop(const QString& hop)
{
    Hop h{hop.trimmed(), {}};
    const int at = h.userHost.lastIndexOf(QLatin1Char('@'));
    const int colon = h.userHost.lastIndexOf(QLatin1Char(':'));
    const int bracket = h.userHost.lastIndexOf(QLatin1Char(']'));
    if (colon > at && colon > bracket && h.userHost.count(QLatin1Char(':')) == 1) {
        h.port = h.userHost.mid(colon + 1);
        h.userHost.truncate(colon);
    } else if (bracket > at && colon == bracket + 1) {
        h.port = h.userHost.mid(colon + 1);
        h.userHost.truncate(colon);
    }
    h.userHost.remove(QLatin1Char('[')).remove(QLatin1Char(']'));
    return h;
}

// libssh 0.10 has no ProxyJump option (0.11 does), but its config parser turns ProxyJump into a
// ProxyCommand of OpenSSH's client; we do the same for SshOptions::proxyJump. BatchMode: the jump
// host's ssh has no terminal to ask on, so it must fail rather than hang.
QString proxyCommandFor(const QString& proxyJump, const QString& sshConfigFile, const QString& host, unsigned port)
{
    QStringList hops = proxyJump.split(QLatin1Char(','), Qt::SkipEmptyParts);
    const Hop last = parseHop(hops.takeLast());
    QStringList words{QStringLiteral("ssh"), QStringLiteral("-o"), QStringLiteral("BatchMode=yes")};
    if (!sshConfigFile.isEmpty()) words << QStringLiteral("-F") << sshConfigFile;
    if (!hops.isEmpty()) words << QStringLiteral("-J") << hops.join(QLatin1Char(','));
    if (!last.port.isEmpty()) words << QStringLiteral("-p") << last.port;
    words << QStringLiteral("--") << last.userHost;
    // -W before the destination: the target as resolved, quoted here (libssh would put its %h
    // into the command unquoted, for /bin/sh to read).
    words.insert(words.size() - 2, QStringLiteral("-W"));
    words.insert(words.size() - 2, QStringLiteral("[%1]:%2").arg(host).arg(port));
    return escapePercent(shellJoin(words));
}

QString authMethodNames(int methods)
{
    QStringList names;
    if (methods & SSH_AUTH_METHOD_PUBLICKEY) names << QStringLiteral("publickey");
    if (methods & SSH_AUTH_METHOD_INTERACTIVE) names << QStringLiteral("keyboard-interactive");
    if (methods & SSH_AUTH_METHOD_PASSWORD) names << QStringLiteral("password");
    if (methods & SSH_AUTH_METHOD_GSSAPI_MIC) names << QStringLiteral("gssapi-with-mic");
    if (methods & SSH_AUTH_METHOD_HOSTBASED) names << QStringLiteral("hostbased");
    return names.isEmpty() ? QStringLiteral("none") : names.join(QStringLiteral(", "));
}

}  // namespace

struct SshTransport::Impl {
    SshOptions opts;
    SshCallbacks callbacks;
    QString user, host;  // resolved through the SSH config
    unsigned port = 22;
    QString description;

    std::mutex mutex;      // serialises every call: libssh sessions are not thread-safe
    bool notSent = false;  // the last operation failed before its command left (exec: the channel did not open)
    ssh_session session = nullptr;
    sftp_session sftp = nullptr;
    ssh_callbacks_struct sessionCallbacks{};
    QString home;
    QElapsedTimer idle;
    bool broken = false;  // an operation saw the connection die: reconnect before the next one

    std::atomic<quint64> roundTrips{0}, bytesRead{0}, bytesWritten{0}, connects{0};

    ~Impl() { drop(); }

    // A session with options and config applied, not connected.
    Expected<ssh_session> newSession()
    {
        ssh_session s = ssh_new();
        if (!s) return error(ErrorCode::TransportConnect, QStringLiteral("out of memory creating an SSH session"));
        auto fail = [&](const QString& what) -> Expected<ssh_session> {
            Error e = error(ErrorCode::TransportConnect, what + QStringLiteral(": ") + fromC(ssh_get_error(s)), opts.host);
            ssh_free(s);
            return e;
        };
        const QByteArray hostBytes = opts.host.toUtf8();
        if (ssh_options_set(s, SSH_OPTIONS_HOST, hostBytes.constData()) != SSH_OK)
            return fail(QStringLiteral("invalid host '%1'").arg(opts.host));
        QString config = opts.sshConfigFile;
        if (config.isEmpty()) {
            const QString mine = QDir::homePath() + QStringLiteral("/.ssh/config");
            if (QFileInfo::exists(mine)) config = mine;
        }
        if (!config.isEmpty()) {
            if (!QFileInfo::exists(config)) return fail(QStringLiteral("SSH config '%1' not found").arg(config));
            if (ssh_options_parse_config(s, QFile::encodeName(config).constData()) != SSH_OK)
                return fail(QStringLiteral("cannot read SSH config '%1'").arg(config));
        }
        // Never let ssh_connect read /etc/ssh/ssh_config or ~/.ssh/config behind our back.
        bool processConfig = false;
        ssh_options_set(s, SSH_OPTIONS_PROCESS_CONFIG, &processConfig);
        if (opts.port > 0) {
            unsigned p = unsigned(opts.port);
            ssh_options_set(s, SSH_OPTIONS_PORT, &p);
        }
        if (!opts.user.isEmpty()) ssh_options_set(s, SSH_OPTIONS_USER, opts.user.toUtf8().constData());
        if (!opts.knownHostsFile.isEmpty()) ssh_options_set(s, SSH_OPTIONS_KNOWNHOSTS, QFile::encodeName(opts.knownHostsFile).constData());
        long timeout = qMax(1, opts.connectTimeoutS);
        ssh_options_set(s, SSH_OPTIONS_TIMEOUT, &timeout);

        char* value = nullptr;
        if (ssh_options_get(s, SSH_OPTIONS_USER, &value) != SSH_OK) {
            ssh_options_set(s, SSH_OPTIONS_USER, nullptr);  // the local user
            ssh_options_get(s, SSH_OPTIONS_USER, &value);
        }
        user = fromC(value);
        ssh_string_free_char(value);
        value = nullptr;
        if (ssh_options_get(s, SSH_OPTIONS_HOST, &value) == SSH_OK) host = fromC(value);
        ssh_string_free_char(value);
        ssh_options_get_port(s, &port);
        if (!opts.proxyJump.isEmpty())
            ssh_options_set(s, SSH_OPTIONS_PROXYCOMMAND,
                            proxyCommandFor(opts.proxyJump, opts.sshConfigFile, host, port).toUtf8().constData());
        description = QStringLiteral("%1@%2:%3").arg(user, host).arg(port);
        return s;
    }

    void drop()
    {
        if (sftp) sftp_free(sftp);
        sftp = nullptr;
        if (session) {
            if (ssh_is_connected(session)) ssh_disconnect(session);
            ssh_free(session);
        }
        session = nullptr;
        home.clear();
        broken = false;
    }

    bool alive() const { return session && ssh_is_connected(session); }

    // The connection may outlive the SFTP server process (the server side was killed or
    // restarted): an SFTP channel at EOF is as dead as the session for our purposes.
    bool usable() const
    {
        return alive() && !broken && (!sftp || (!ssh_channel_is_eof(sftp->channel) && !ssh_channel_is_closed(sftp->channel)));
    }

    // Passphrases for keys that ssh_userauth_publickey_auto loads (default keys, IdentityFile).
    static int authCallback(const char* /*prompt*/, char* buf, size_t len, int /*echo*/, int /*verify*/, void* userdata)
    {
        auto* self = static_cast<Impl*>(userdata);
        if (!self->callbacks.passphrase || len == 0) return SSH_ERROR;
        char* identity = nullptr;
        ssh_userauth_publickey_auto_get_current_identity(self->session, &identity);
        const QString file = identity ? QFile::decodeName(identity) : QStringLiteral("(unknown key)");
        ssh_string_free_char(identity);
        const std::optional<QString> answer = self->callbacks.passphrase(file);
        if (!answer) return SSH_ERROR;
        QByteArray bytes = answer->toUtf8();
        if (size_t(bytes.size()) >= len) return SSH_ERROR;
        std::memcpy(buf, bytes.constData(), size_t(bytes.size()) + 1);
        bytes.fill('\0');
        return SSH_OK;
    }

    Status connect()
    {
        drop();
        Expected<ssh_session> created = newSession();
        if (!created) return created.error();
        session = *created;
        sessionCallbacks = ssh_callbacks_struct{};
        sessionCallbacks.userdata = this;
        sessionCallbacks.auth_function = &Impl::authCallback;
        ssh_callbacks_init(&sessionCallbacks);
        ssh_set_callbacks(session, &sessionCallbacks);

        if (ssh_connect(session) != SSH_OK) {
            // The location names the host; the message says what failed and what to check.
            const QString why = fromC(ssh_get_error(session));
            QString hint;
            if (why.contains(QLatin1String("resolve"), Qt::CaseInsensitive))
                hint = QStringLiteral("check the host name, or its alias in the SSH config");
            else if (why.contains(QLatin1String("refused"), Qt::CaseInsensitive))
                hint = QStringLiteral("check the port and that an SSH server runs there");
            else if (why.contains(QLatin1String("timeout"), Qt::CaseInsensitive) ||
                     why.contains(QLatin1String("timed out"), Qt::CaseInsensitive))
                hint = QStringLiteral("check the network (VPN) or the profile's proxy_jump");
            else if (why.contains(QLatin1String("proxy"), Qt::CaseInsensitive))
                hint = QStringLiteral("check the proxy_jump host: it must be reachable without questions (agent or unencrypted key)");
            Error e = error(ErrorCode::TransportConnect,
                            QStringLiteral("cannot connect: %1%2")
                                .arg(why, hint.isEmpty() ? QString() : QStringLiteral(" (") + hint + QLatin1Char(')')),
                            description);
            drop();
            return e;
        }
        if (Status st = verifyHostKey(); !st) {
            drop();
            return st;
        }
        if (Status st = authenticate(); !st) {
            drop();
            return st;
        }
        sftp = sftp_new(session);
        if (!sftp || sftp_init(sftp) != SSH_OK) {
            Error e = error(ErrorCode::TransportConnect,
                            QStringLiteral("cannot start SFTP (is the sftp subsystem enabled?): %1").arg(fromC(ssh_get_error(session))),
                            description);
            drop();
            return e;
        }
        roundTrips += 1;
        ++connects;
        idle.start();
        return Done{};
    }

    Status verifyHostKey()
    {
        ssh_key key = nullptr;
        if (ssh_get_server_publickey(session, &key) != SSH_OK)
            return error(ErrorCode::TransportHostKey, QStringLiteral("%1 sent no host key").arg(description), description);
        unsigned char* hash = nullptr;
        size_t hashLen = 0;
        QString fingerprint;
        if (ssh_get_publickey_hash(key, SSH_PUBLICKEY_HASH_SHA256, &hash, &hashLen) == SSH_OK) {
            char* text = ssh_get_fingerprint_hash(SSH_PUBLICKEY_HASH_SHA256, hash, hashLen);
            fingerprint = fromC(text);
            ssh_string_free_char(text);
            ssh_clean_pubkey_hash(&hash);
        }
        const QString keyType = fromC(ssh_key_type_to_char(ssh_key_type(key)));
        ssh_key_free(key);
        const QString hostPort = QStringLiteral("%1:%2").arg(host).arg(port);
        const QString knownHosts = opts.knownHostsFile.isEmpty() ? QStringLiteral("~/.ssh/known_hosts") : opts.knownHostsFile;
        const QString entry = port == 22 ? host : QStringLiteral("[%1]:%2").arg(host).arg(port);

        switch (ssh_session_is_known_server(session)) {
        case SSH_KNOWN_HOSTS_OK: return Done{};
        case SSH_KNOWN_HOSTS_CHANGED:
        case SSH_KNOWN_HOSTS_OTHER:
            return error(ErrorCode::TransportHostKey,
                         QStringLiteral("the host key of %1 has CHANGED: it now offers %2 key %3, which does not match "
                                        "the key recorded in %4. Someone may be intercepting the connection, or the "
                                        "host was reinstalled. If you trust the new key, remove the old line for %5 "
                                        "from %4 (ssh-keygen -R '%5' -f %4) and connect again.")
                             .arg(hostPort, keyType, fingerprint, knownHosts, entry),
                         description);
        case SSH_KNOWN_HOSTS_UNKNOWN:
        case SSH_KNOWN_HOSTS_NOT_FOUND: break;
        case SSH_KNOWN_HOSTS_ERROR:
        default:
            return error(
                ErrorCode::TransportHostKey,
                QStringLiteral("cannot check the host key of %1 against %2: %3").arg(hostPort, knownHosts, fromC(ssh_get_error(session))),
                description);
        }
        const bool accepted = callbacks.acceptNewHostKey && callbacks.acceptNewHostKey(hostPort, keyType, fingerprint);
        if (!accepted)
            return error(ErrorCode::TransportHostKey,
                         QStringLiteral("the host key of %1 is unknown (%2 key %3) and was not accepted; check the "
                                        "fingerprint with the cluster's administrators, then connect again and "
                                        "accept it (--accept-new-host-key)")
                             .arg(hostPort, keyType, fingerprint),
                         description);
        if (ssh_session_update_known_hosts(session) != SSH_OK)
            return error(
                ErrorCode::TransportHostKey,
                QStringLiteral("cannot record the host key of %1 in %2: %3").arg(hostPort, knownHosts, fromC(ssh_get_error(session))),
                description);
        return Done{};
    }

    Error authError(const QString& why, int offered)
    {
        return error(ErrorCode::TransportAuth,
                     QStringLiteral("authentication as %1@%2 failed%3 (the server offers: %4)")
                         .arg(user, host, why.isEmpty() ? QString() : QStringLiteral(": ") + why, authMethodNames(offered)),
                     description);
    }

    // The result of one method: SUCCESS ends, PARTIAL goes on to the next method (2FA), anything
    // else tries the next method with the same list.
    Status authenticate()
    {
        int rc = ssh_userauth_none(session, nullptr);
        if (rc == SSH_AUTH_SUCCESS) return Done{};
        if (rc == SSH_AUTH_ERROR) return connectionError(QStringLiteral("authentication"));
        int offered = ssh_userauth_list(session, nullptr);
        QString why;

        auto next = [&](int result) -> std::optional<Status> {
            if (result == SSH_AUTH_SUCCESS) return Status(Done{});
            if (result == SSH_AUTH_ERROR && !alive()) return Status(connectionError(QStringLiteral("authentication")));
            if (result == SSH_AUTH_PARTIAL) offered = ssh_userauth_list(session, nullptr);
            return std::nullopt;
        };

        if ((offered & SSH_AUTH_METHOD_PUBLICKEY) && qEnvironmentVariableIsSet("SSH_AUTH_SOCK")) {
            if (auto done = next(ssh_userauth_agent(session, nullptr))) return *done;
        }
        if (offered & SSH_AUTH_METHOD_PUBLICKEY) {
            int result = SSH_AUTH_DENIED;
            if (!opts.identityFile.isEmpty())
                result = identityFileAuth(&why);
            else
                result = ssh_userauth_publickey_auto(session, nullptr, nullptr);
            if (auto done = next(result)) return *done;
        }
        if (offered & SSH_AUTH_METHOD_INTERACTIVE) {
            if (!callbacks.keyboardInteractive) {
                if (why.isEmpty()) why = QStringLiteral("the server asks questions (keyboard-interactive) and nobody can answer");
            } else {
                bool aborted = false;
                const int result = keyboardInteractive(&aborted, &why);
                if (aborted) return authError(QStringLiteral("cancelled"), offered);
                if (auto done = next(result)) return *done;
            }
        }
        return authError(why, offered);
    }

    int identityFileAuth(QString* why)
    {
        const QByteArray file = QFile::encodeName(
            QDir::fromNativeSeparators(opts.identityFile).replace(QRegularExpression(QStringLiteral("^~(?=/|$)")), QDir::homePath()));
        const QString name = QFile::decodeName(file);
        if (!QFileInfo::exists(name)) {
            *why = QStringLiteral("identity file %1 not found").arg(name);
            return SSH_AUTH_DENIED;
        }
        ssh_key key = nullptr;
        int rc = ssh_pki_import_privkey_file(file.constData(), nullptr, nullptr, nullptr, &key);
        for (int attempt = 0; rc != SSH_OK && attempt < kPassphraseTries; ++attempt) {
            if (!callbacks.passphrase) break;
            const std::optional<QString> passphrase = callbacks.passphrase(name);
            if (!passphrase) break;
            QByteArray bytes = passphrase->toUtf8();
            rc = ssh_pki_import_privkey_file(file.constData(), bytes.constData(), nullptr, nullptr, &key);
            bytes.fill('\0');
        }
        if (rc != SSH_OK) {
            *why = QStringLiteral("cannot load the key %1 (wrong or missing passphrase?)").arg(name);
            return SSH_AUTH_DENIED;
        }
        const int result = ssh_userauth_publickey(session, nullptr, key);
        ssh_key_free(key);
        if (result == SSH_AUTH_DENIED) *why = QStringLiteral("the server refused the key %1").arg(name);
        return result;
    }

    int keyboardInteractive(bool* aborted, QString* why)
    {
        // Bounded: a server that keeps sending rounds (with or without prompts), or a round of more
        // prompts than a login asks, is refused; what it says reaches the user as bounded plain text
        // (shownText: no terminal escapes, no control characters).
        constexpr int kMaxRounds = 16, kMaxEmptyRounds = 4, kMaxPrompts = 8;
        int rounds = 0, empty = 0;
        int rc = ssh_userauth_kbdint(session, nullptr, nullptr);
        while (rc == SSH_AUTH_INFO) {
            if (++rounds > kMaxRounds) {
                *why = QStringLiteral("the server asked more than %1 rounds of questions").arg(kMaxRounds);
                return SSH_AUTH_DENIED;
            }
            const int n = ssh_userauth_kbdint_getnprompts(session);
            if (n > kMaxPrompts) {
                *why = QStringLiteral("the server asked %1 questions at once (at most %2 are answered)").arg(n).arg(kMaxPrompts);
                return SSH_AUTH_DENIED;
            }
            QList<SshCallbacks::Prompt> prompts;
            for (int i = 0; i < n; ++i) {
                char echo = 0;
                const char* text = ssh_userauth_kbdint_getprompt(session, unsigned(i), &echo);
                prompts.append({shownText(fromC(text), 500), echo != 0});
            }
            // Servers (PAM) may send rounds without prompts; they expect an empty answer.
            if (n == 0 && ++empty > kMaxEmptyRounds) return SSH_AUTH_DENIED;
            if (n > 0) {
                const std::optional<QStringList> answers =
                    callbacks.keyboardInteractive(shownText(fromC(ssh_userauth_kbdint_getname(session)), 200),
                                                  shownText(fromC(ssh_userauth_kbdint_getinstruction(session)), 2000), prompts);
                if (!answers || answers->size() < n) {
                    *aborted = true;
                    return SSH_AUTH_DENIED;
                }
                for (int i = 0; i < n; ++i) {
                    QByteArray bytes = answers->at(i).toUtf8();
                    ssh_userauth_kbdint_setanswer(session, unsigned(i), bytes.constData());
                    bytes.fill('\0');
                }
            }
            rc = ssh_userauth_kbdint(session, nullptr, nullptr);
        }
        return rc;
    }

    Error connectionError(const QString& during)
    {
        broken = true;
        return error(ErrorCode::TransportConnect,
                     QStringLiteral("lost the connection to %1 during %2: %3")
                         .arg(description, during, fromC(session ? ssh_get_error(session) : "no session")),
                     description);
    }

    // Opens the session on first use; after keepaliveS idle, checks it with a keepalive (which
    // waits for the server's reply) and reopens it when it has died.
    Status ensureConnected()
    {
        if (session && opts.keepaliveS > 0 && idle.isValid() && idle.elapsed() > qint64(opts.keepaliveS) * 1000) {
            ssh_send_keepalive(session);
            roundTrips += 1;
        }
        if (session && !usable()) drop();
        if (!session) return connect();
        return Done{};
    }

    // Runs one operation; when it fails because the session died, reopens the session and, for an
    // idempotent operation, runs it once more. Any other one returns its error: it may have run.
    template <typename T, typename Op>
    Expected<T> withSession(Op op, Idempotent idempotent = Idempotent::Yes)
    {
        std::lock_guard<std::mutex> lock(mutex);
        for (int attempt = 0;; ++attempt) {
            if (Status st = ensureConnected(); !st) return st.error();
            notSent = false;
            Expected<T> result = op();
            const bool died = !result && !usable();
            if (!died || attempt > 0 || (idempotent == Idempotent::No && !notSent)) {
                if (usable())
                    idle.start();
                else
                    drop();
                return result;
            }
            drop();
        }
    }

    Expected<QString> homeDir()
    {
        if (home.isEmpty()) {
            char* path = sftp_canonicalize_path(sftp, ".");
            roundTrips += 1;
            if (!path) return sftpError(QStringLiteral("~"), QStringLiteral("find the home folder"));
            home = QString::fromUtf8(path);
            ssh_string_free_char(path);
        }
        return home;
    }

    Expected<QString> expand(const QString& path)
    {
        if (path == QLatin1String("~") || path.startsWith(QLatin1String("~/"))) {
            Expected<QString> h = homeDir();
            if (!h) return h;
            return path.size() <= 2 ? *h : (*h == QLatin1String("/") ? QString() : *h) + path.mid(1);
        }
        return path;
    }

    Error sftpError(const QString& path, const QString& action)
    {
        const int code = sftp ? sftp_get_error(sftp) : SSH_FX_NO_CONNECTION;
        if (!usable() || code == SSH_FX_CONNECTION_LOST || code == SSH_FX_NO_CONNECTION)
            return connectionError(action + QStringLiteral(" ") + path);
        switch (code) {
        case SSH_FX_NO_SUCH_FILE:
        case SSH_FX_NO_SUCH_PATH:
            return error(ErrorCode::TransportNoFile, QStringLiteral("%1: no such file or folder on %2").arg(path, description), path);
        case SSH_FX_PERMISSION_DENIED:
        case SSH_FX_WRITE_PROTECT:
            return error(ErrorCode::TransportPermission,
                         QStringLiteral("%1: permission denied on %2 (cannot %3)").arg(path, description, action), path);
        default:
            return error(ErrorCode::TransportIo,
                         QStringLiteral("%1: cannot %2 on %3 (SFTP status %4: %5)")
                             .arg(path, action, description)
                             .arg(code)
                             .arg(fromC(ssh_get_error(session))),
                         path);
        }
    }

    // `input`, when given, goes to the command's standard input; it is written as the peer's window
    // allows while its output is read, so neither side waits on the other.
    Expected<ExecResult> exec(const QString& command, int timeoutMs, const QByteArray* input = nullptr)
    {
        QElapsedTimer clock;
        clock.start();
        ssh_channel channel = ssh_channel_new(session);
        if (!channel) {
            notSent = true;
            return connectionError(QStringLiteral("exec"));
        }
        auto finish = [&](auto result) {
            ssh_channel_close(channel);
            ssh_channel_free(channel);
            return result;
        };
        roundTrips += 1;
        // A channel that did not open carried no command: that failure may be retried whatever
        // the command. Once the exec request is on its way, nobody knows whether it ran.
        if (ssh_channel_open_session(channel) != SSH_OK) notSent = true;
        if (notSent || ssh_channel_request_exec(channel, command.toUtf8().constData()) != SSH_OK) {
            Error e = alive()
                ? error(ErrorCode::TransportIo,
                        QStringLiteral("%1 refused to run a command: %2").arg(description, fromC(ssh_get_error(session))), description)
                : connectionError(QStringLiteral("exec"));
            return finish(Expected<ExecResult>(e));
        }
        ExecResult result;
        char buffer[16384];
        auto drain = [&]() -> bool {
            for (int isStderr = 0; isStderr <= 1; ++isStderr) {
                const int n = ssh_channel_read_nonblocking(channel, buffer, sizeof buffer, isStderr);
                if (n == SSH_ERROR) return false;
                if (n > 0) (isStderr ? result.err : result.out).append(buffer, n);
            }
            return true;
        };
        for (qsizetype sent = 0; input && sent < input->size();) {
            const uint32_t window = ssh_channel_window_size(channel);
            if (window > 0) {
                const int n = ssh_channel_write(channel, input->constData() + sent,
                                                uint32_t(std::min<qsizetype>({qsizetype(window), qsizetype(32768), input->size() - sent})));
                if (n == SSH_ERROR) return finish(Expected<ExecResult>(connectionError(QStringLiteral("exec"))));
                sent += n;
            }
            if (!drain()) return finish(Expected<ExecResult>(connectionError(QStringLiteral("exec"))));
            if (window == 0 && ssh_channel_poll_timeout(channel, 10, 0) == SSH_ERROR)
                return finish(Expected<ExecResult>(connectionError(QStringLiteral("exec"))));
            if (clock.elapsed() > timeoutMs)
                return finish(Expected<ExecResult>(error(
                    ErrorCode::TransportTimeout,
                    QStringLiteral("the script did not finish within %1 s on %2").arg(timeoutMs / 1000.0).arg(description), description)));
        }
        ssh_channel_send_eof(channel);  // the end of stdin (or nothing at all): a command that reads it ends

        for (;;) {
            bool gotData = false;
            for (int isStderr = 0; isStderr <= 1; ++isStderr) {
                const int n = ssh_channel_read_nonblocking(channel, buffer, sizeof buffer, isStderr);
                if (n == SSH_ERROR) return finish(Expected<ExecResult>(connectionError(QStringLiteral("exec"))));
                if (n > 0) {
                    (isStderr ? result.err : result.out).append(buffer, n);
                    gotData = true;
                }
            }
            if (gotData) continue;
            if (ssh_channel_is_eof(channel) || ssh_channel_is_closed(channel)) break;
            const qint64 left = timeoutMs - clock.elapsed();
            if (left <= 0) {
                ssh_channel_request_send_signal(channel, "KILL");
                return finish(
                    Expected<ExecResult>(error(ErrorCode::TransportTimeout,
                                               QStringLiteral("'%1' did not finish within %2 s on %3")
                                                   .arg(command.left(60) + (command.size() > 60 ? QStringLiteral("…") : QString()))
                                                   .arg(timeoutMs / 1000.0)
                                                   .arg(description),
                                               description)));
            }
            // Wakes on stdout data, EOF or after at most 50 ms (for stderr and the deadline).
            if (ssh_channel_poll_timeout(channel, int(qMin<qint64>(left, 50)), 0) == SSH_ERROR)
                return finish(Expected<ExecResult>(connectionError(QStringLiteral("exec"))));
        }
        const int status = ssh_channel_get_exit_status(channel);
        // A channel also reads as closed when its session died under it: without an exit status
        // from a live session nobody knows how the command ended, so that is a connection error,
        // not an exit code of -1.
        if (status < 0 && !alive()) return finish(Expected<ExecResult>(connectionError(QStringLiteral("exec"))));
        result.exitCode = status < 0 ? -1 : status;
        return finish(Expected<ExecResult>(std::move(result)));
    }

    Expected<RemoteFileInfo> stat(const QString& rawPath)
    {
        Expected<QString> path = expand(rawPath);
        if (!path) return path.error();
        sftp_attributes attrs = sftp_stat(sftp, path->toUtf8().constData());
        roundTrips += 1;
        if (!attrs) return sftpError(rawPath, QStringLiteral("stat"));
        RemoteFileInfo info;
        info.size = qint64(attrs->size);
        info.mtime = qint64(attrs->mtime64 ? attrs->mtime64 : attrs->mtime);
        info.isDir = attrs->type == SSH_FILEXFER_TYPE_DIRECTORY;
        sftp_attributes_free(attrs);
        return info;
    }

    // Reads up to `maxBytes` from the file's offset into `data` with up to kReadsInFlight requests
    // of kChunk outstanding (libssh's async reads): a round trip per 1 MiB, not per 64 KiB. Answers
    // are taken in order; the first short one (the end of the file) ends the read, and the answers
    // still in flight are collected and dropped, so the bytes returned are always contiguous.
    std::optional<Error> readPipelined(sftp_file file, qint64 maxBytes, QByteArray& data, const QString& rawPath)
    {
        constexpr int kReadsInFlight = 16;
        std::deque<std::pair<int, qint64>> inFlight;  // request id, bytes asked
        qint64 asked = 0;
        bool ended = false;
        std::optional<Error> failed;
        QByteArray scratch;
        while (true) {
            while (!ended && !failed && inFlight.size() < kReadsInFlight && asked < maxBytes) {
                const qint64 want = qMin(kChunk, maxBytes - asked);
                const int id = sftp_async_read_begin(file, uint32_t(want));
                if (id < 0) {
                    failed = sftpError(rawPath, QStringLiteral("read"));
                    break;
                }
                if (inFlight.empty()) roundTrips += 1;  // the requests sent while none was answered share one
                inFlight.emplace_back(id, want);
                asked += want;
            }
            if (inFlight.empty()) break;
            const auto [id, want] = inFlight.front();
            inFlight.pop_front();
            const bool keep = !ended && !failed;  // else an answer after the end: collected and dropped
            QByteArray& into = keep ? data : scratch;
            const qsizetype before = into.size();
            into.resize(before + want);
            const int n = sftp_async_read(file, into.data() + before, uint32_t(want), uint32_t(id));
            into.resize(before + qMax(0, n));
            if (!keep) {
                scratch.clear();
                if (n < 0) break;  // the session is broken: nothing more will be answered
                continue;
            }
            if (n < 0) {
                failed = sftpError(rawPath, QStringLiteral("read"));
                break;
            }
            if (n < want) ended = true;  // the end of the file (or a short answer): the rest is asked for next time
        }
        return failed;
    }

    Expected<QByteArray> readAt(const QString& rawPath, qint64 offset, qint64 maxBytes)
    {
        Expected<QString> path = expand(rawPath);
        if (!path) return path.error();
        sftp_file file = sftp_open(sftp, path->toUtf8().constData(), O_RDONLY, 0);
        roundTrips += 1;
        if (!file) return sftpError(rawPath, QStringLiteral("read"));
        QByteArray data;
        std::optional<Error> failed;
        if (maxBytes > 0 && sftp_seek64(file, quint64(qMax<qint64>(0, offset))) == 0) {
            data.reserve(int(qMin<qint64>(maxBytes, 64 * 1024 * 1024)));
            failed = readPipelined(file, maxBytes, data, rawPath);
        }
        sftp_close(file);
        roundTrips += 1;
        if (failed) return *failed;
        bytesRead += quint64(data.size());
        return data;
    }

    Status writeFile(const QString& rawPath, const QByteArray& data, int mode)
    {
        Expected<QString> path = expand(rawPath);
        if (!path) return path.error();
        const QByteArray target = path->toUtf8();
        const QByteArray part = target + ".part-" + QByteArray::number(QRandomGenerator::global()->generate64(), 36);
        sftp_file file = sftp_open(sftp, part.constData(), O_WRONLY | O_CREAT | O_TRUNC, mode_t(mode & 07777));
        roundTrips += 1;
        if (!file) return sftpError(rawPath, QStringLiteral("write"));
        auto abandon = [&](Error e) -> Status {
            sftp_unlink(sftp, part.constData());
            roundTrips += 1;
            return e;
        };
        for (qint64 pos = 0; pos < data.size();) {
            const qint64 n = qMin(kChunk, qint64(data.size()) - pos);
            const ssize_t written = sftp_write(file, data.constData() + pos, size_t(n));
            roundTrips += 1;
            if (written <= 0) {
                Error e = sftpError(rawPath, QStringLiteral("write"));
                sftp_close(file);
                return abandon(e);
            }
            pos += written;
        }
        const int closed = sftp_close(file);
        roundTrips += 1;
        if (closed != SSH_OK) return abandon(sftpError(rawPath, QStringLiteral("write")));
        // sftp_open's mode passes through the server's umask; set it exactly.
        if (sftp_chmod(sftp, part.constData(), mode_t(mode & 07777)) != 0) {
            roundTrips += 1;
            return abandon(sftpError(rawPath, QStringLiteral("set the mode of")));
        }
        roundTrips += 1;
        if (sftp_rename(sftp, part.constData(), target.constData()) != 0) {
            roundTrips += 1;
            // SFTP v3 rename (OpenSSH without posix-rename in libssh 0.10) refuses an existing
            // target: remove it and rename again. A reader may briefly see no file, never half of one.
            sftp_attributes existing = sftp_lstat(sftp, target.constData());
            roundTrips += 1;
            const bool replaceable = existing && existing->type != SSH_FILEXFER_TYPE_DIRECTORY;
            if (existing) sftp_attributes_free(existing);
            if (!replaceable || sftp_unlink(sftp, target.constData()) != 0 ||
                sftp_rename(sftp, part.constData(), target.constData()) != 0) {
                roundTrips += 2;
                return abandon(sftpError(rawPath, QStringLiteral("replace")));
            }
            roundTrips += 2;
        } else {
            roundTrips += 1;
        }
        bytesWritten += quint64(data.size());
        return Done{};
    }

    Status makeDirs(const QString& rawPath)
    {
        Expected<QString> expanded = expand(rawPath);
        if (!expanded) return expanded.error();
        const QString path = QDir::cleanPath(*expanded);
        auto isDir = [&](const QString& p) -> std::optional<bool> {  // nullopt: does not exist
            sftp_attributes attrs = sftp_stat(sftp, p.toUtf8().constData());
            roundTrips += 1;
            if (!attrs) return std::nullopt;
            const bool dir = attrs->type == SSH_FILEXFER_TYPE_DIRECTORY;
            sftp_attributes_free(attrs);
            return dir;
        };
        if (std::optional<bool> dir = isDir(path); dir && *dir) return Done{};
        const QStringList parts = path.split(QLatin1Char('/'));
        QString prefix;
        for (int i = 0; i < parts.size(); ++i) {
            prefix += (i == 0 ? QString() : QStringLiteral("/")) + parts[i];
            if (prefix.isEmpty() || prefix == QLatin1String(".")) continue;
            if (sftp_mkdir(sftp, prefix.toUtf8().constData(), 0755) == 0) {
                roundTrips += 1;
                continue;
            }
            roundTrips += 1;
            Error mkdirError = sftpError(prefix, QStringLiteral("create the folder"));
            const std::optional<bool> dir = isDir(prefix);
            if (dir && *dir) continue;  // it exists (EEXIST, or a parent we may not write to)
            if (dir)
                return error(ErrorCode::TransportIo,
                             QStringLiteral("%1: cannot create the folder on %2: %3 is a file").arg(rawPath, description, prefix), rawPath);
            return mkdirError;
        }
        return Done{};
    }
};

SshTransport::SshTransport(SshOptions options, SshCallbacks callbacks) : d(std::make_unique<Impl>())
{
    d->opts = std::move(options);
    d->callbacks = std::move(callbacks);
    // Resolve user, host and port through the config now, so describe() is right before the
    // first connection (and never needs the lock).
    if (Expected<ssh_session> s = d->newSession())
        ssh_free(*s);
    else
        d->description = d->opts.host;
}

SshTransport::~SshTransport() = default;

QString SshTransport::describe() const { return d->description; }

Expected<ExecResult> SshTransport::exec(const QString& command, int timeoutMs, Idempotent idempotent)
{
    return d->withSession<ExecResult>([&] { return d->exec(command, timeoutMs); }, idempotent);
}

Expected<ExecResult> SshTransport::execScript(const QByteArray& script, int timeoutMs, Idempotent idempotent)
{
    return d->withSession<ExecResult>([&] { return d->exec(QStringLiteral("/bin/sh -s"), timeoutMs, &script); }, idempotent);
}

Status SshTransport::writeFile(const QString& path, const QByteArray& data, int mode)
{
    return d->withSession<Done>([&] { return d->writeFile(path, data, mode); });
}

Expected<RemoteFileInfo> SshTransport::stat(const QString& path)
{
    return d->withSession<RemoteFileInfo>([&] { return d->stat(path); });
}

Expected<QByteArray> SshTransport::readAt(const QString& path, qint64 offset, qint64 maxBytes)
{
    return d->withSession<QByteArray>([&] { return d->readAt(path, offset, maxBytes); });
}

Status SshTransport::makeDirs(const QString& path)
{
    return d->withSession<Done>([&] { return d->makeDirs(path); });
}

Expected<QString> SshTransport::absolutePath(const QString& path)
{
    return d->withSession<QString>([&]() -> Expected<QString> {
        Expected<QString> expanded = d->expand(path);
        if (!expanded || expanded->startsWith(QLatin1Char('/'))) return expanded;
        Expected<QString> home = d->homeDir();  // relative paths are relative to the home folder in SFTP and exec
        if (!home) return home;
        return *home + QLatin1Char('/') + *expanded;
    });
}

TransportStats SshTransport::stats() const
{
    TransportStats s;
    s.roundTrips = d->roundTrips;
    s.bytesRead = d->bytesRead;
    s.bytesWritten = d->bytesWritten;
    s.connects = d->connects;
    return s;
}

}  // namespace scaledesk

namespace scaledesk {
QString libsshVersion() { return QString::fromLatin1(ssh_version(0)); }
}  // namespace scaledesk
