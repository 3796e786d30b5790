// SshTransport against two real OpenSSH servers on loopback (tests/sandbox/ssh-sandbox.sh, started
// by CTest as the "ssh" fixture): port 26822 takes root's keys, port 26823 keyboard-interactive for
// the unprivileged user scaledesk-kbd (root bypasses file permissions, so permission errors are
// checked through that user). known_hosts files are always copies in a QTemporaryDir.
#include "remote/sshtransport.h"
#include "scheduler/shellquote.h"

#include <QCryptographicHash>
#include <QDateTime>
#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QRandomGenerator>
#include <QTemporaryDir>
#include <QTest>

#include <QThread>
#include <thread>

#include <memory>

using namespace scaledesk;

namespace {

QString readText(const QString& path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return {};
    return QString::fromUtf8(f.readAll()).trimmed();
}

bool writeText(const QString& path, const QByteArray& text)
{
    QFile f(path);
    return f.open(QIODevice::WriteOnly | QIODevice::Truncate) && f.write(text) == text.size();
}

QString run(const QString& program, const QStringList& args)
{
    QProcess p;
    p.start(program, args);
    p.waitForFinished(30000);
    return QString::fromUtf8(p.readAllStandardOutput()).trimmed();
}

QByteArray randomBytes(qsizetype n)
{
    QByteArray data(n, Qt::Uninitialized);
    QRandomGenerator gen(20240601);
    for (qsizetype i = 0; i < n; ++i) data[i] = char(gen.bounded(256));
    return data;
}

// A valid ed25519 key that is not the sandbox's: the "host key changed" case.
const char kOtherHostKey[] = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAUXHmN4hOcQQVgfWVoIDH6u64qccna42KrxiCJsSREv";

}  // namespace

class TestSshTransport : public QObject {
    Q_OBJECT

    QString m_dir;  // the sandbox folder
    int m_port = 26822;
    int m_kbdPort = 26823;
    QString m_kbdUser = QStringLiteral("scaledesk-kbd");
    QString m_fingerprint;  // "SHA256:…" of the sandbox host key
    QString m_hostKeyBase64;
    QTemporaryDir m_tmp;
    QString m_knownHosts;  // a copy of the sandbox's known_hosts
    std::unique_ptr<SshTransport> m_root;
    QString m_area;  // "~/scaledesk-ssh-test-<random>" on the server, as root

    QString sandboxFile(const QString& name) const { return m_dir + QLatin1Char('/') + name; }

    SshOptions rootOptions() const
    {
        SshOptions o;
        o.host = QStringLiteral("127.0.0.1");
        o.port = m_port;
        o.user = QStringLiteral("root");
        o.identityFile = sandboxFile(QStringLiteral("id_ed25519"));
        o.knownHostsFile = m_knownHosts;
        o.connectTimeoutS = 10;
        return o;
    }

    SshOptions kbdOptions() const
    {
        SshOptions o;
        o.host = QStringLiteral("127.0.0.1");
        o.port = m_kbdPort;
        o.user = m_kbdUser;
        o.knownHostsFile = m_knownHosts;
        o.connectTimeoutS = 10;
        return o;
    }

    // Answers every keyboard-interactive prompt with `answer`, counting the rounds.
    static SshCallbacks answering(const QString& answer, int* rounds, QList<SshCallbacks::Prompt>* seen = nullptr)
    {
        SshCallbacks cb;
        cb.keyboardInteractive = [=](const QString&, const QString&,
                                     const QList<SshCallbacks::Prompt>& prompts) -> std::optional<QStringList> {
            ++*rounds;
            if (seen) *seen += prompts;
            return QStringList(QList<QString>(prompts.size(), answer));
        };
        return cb;
    }

    QString remote(const QString& name) const { return m_area + QLatin1Char('/') + name; }

    // Ends every connection the key-auth server holds, as a server restart or network drop would.
    // Cuts the sandbox's connections as a network failure would (tests/sandbox/ssh-sandbox.sh drop).
    void killSessions() const
    {
        QCOMPARE(QProcess::execute(QStringLiteral(SCALEDESK_SOURCE_DIR "/tests/sandbox/ssh-sandbox.sh"), {QStringLiteral("drop")}), 0);
    }

private slots:
    void initTestCase()
    {
        m_dir = qEnvironmentVariable("SCALEDESK_SSH_SANDBOX_DIR", QStringLiteral("/tmp/scaledesk-ssh-sandbox"));
        QVERIFY2(QFile::exists(sandboxFile(QStringLiteral("known_hosts"))),
                 qPrintable(QStringLiteral("no SSH sandbox in %1: run tests/sandbox/ssh-sandbox.sh start (CTest's "
                                           "\"ssh\" fixture does)")
                                .arg(m_dir)));
        if (qEnvironmentVariableIsSet("SCALEDESK_SSH_PORT")) m_port = qEnvironmentVariableIntValue("SCALEDESK_SSH_PORT");
        if (qEnvironmentVariableIsSet("SCALEDESK_SSH_KBD_PORT")) m_kbdPort = qEnvironmentVariableIntValue("SCALEDESK_SSH_KBD_PORT");
        qunsetenv("SSH_AUTH_SOCK");  // the developer's agent must not decide these tests
        QVERIFY(m_tmp.isValid());

        m_knownHosts = m_tmp.filePath(QStringLiteral("known_hosts"));
        QVERIFY(QFile::copy(sandboxFile(QStringLiteral("known_hosts")), m_knownHosts));
        const QString pub = sandboxFile(QStringLiteral("ssh_host_ed25519_key.pub"));
        m_fingerprint = run(QStringLiteral("ssh-keygen"), {QStringLiteral("-lf"), pub}).section(QLatin1Char(' '), 1, 1);
        QVERIFY(m_fingerprint.startsWith(QLatin1String("SHA256:")));
        m_hostKeyBase64 = readText(pub).section(QLatin1Char(' '), 1, 1);

        m_root = std::make_unique<SshTransport>(rootOptions());
        m_area = QStringLiteral("~/scaledesk-ssh-test-%1").arg(QRandomGenerator::global()->generate(), 0, 16);
        const Status made = m_root->makeDirs(m_area);
        QVERIFY2(made, qPrintable(made ? QString() : made.error().text()));
    }

    void cleanupTestCase()
    {
        if (!m_root) return;
        const auto removed = m_root->exec(QStringLiteral("rm -rf ") + m_area.mid(2).prepend(QStringLiteral("\"$HOME\"/")) +
                                          QStringLiteral(" /tmp/scaledesk-ssh-private-%1").arg(m_port));
        QVERIFY2(removed && removed->exitCode == 0, "cleanup of the test area failed");
    }

    void describeNamesTheTarget() { QCOMPARE(m_root->describe(), QStringLiteral("root@127.0.0.1:%1").arg(m_port)); }

    void exec_data()
    {
        QTest::addColumn<QString>("command");
        QTest::addColumn<QByteArray>("out");
        QTest::addColumn<QByteArray>("err");
        QTest::addColumn<int>("exitCode");
        QTest::newRow("stdout") << QStringLiteral("printf 'a\\nb'") << QByteArray("a\nb") << QByteArray() << 0;
        QTest::newRow("stderr and exit code") << QStringLiteral("echo oops >&2; exit 3") << QByteArray() << QByteArray("oops\n") << 3;
        QTest::newRow("both streams") << QStringLiteral("echo out; echo err >&2; echo out2; false") << QByteArray("out\nout2\n")
                                      << QByteArray("err\n") << 1;
        QTest::newRow("1 MB of output") << QStringLiteral("head -c 1000000 /dev/zero | tr '\\0' x") << QByteArray(1000000, 'x')
                                        << QByteArray() << 0;
        QTest::newRow("stdin is closed") << QStringLiteral("cat; echo done") << QByteArray("done\n") << QByteArray() << 0;
        QTest::newRow("shell semantics") << QStringLiteral("x='a b'; set -- $x; echo $#") << QByteArray("2\n") << QByteArray() << 0;
        QTest::newRow("killed by a signal") << QStringLiteral("kill -KILL $$") << QByteArray() << QByteArray() << -1;
    }
    void exec()
    {
        QFETCH(QString, command);
        QFETCH(QByteArray, out);
        QFETCH(QByteArray, err);
        QFETCH(int, exitCode);
        const Expected<ExecResult> warm = m_root->exec(QStringLiteral("true"));  // connected before counting
        QVERIFY2(warm, qPrintable(warm ? QString() : warm.error().text()));
        const TransportStats before = m_root->stats();
        const Expected<ExecResult> r = m_root->exec(command);
        QVERIFY2(r, qPrintable(r ? QString() : r.error().text()));
        QCOMPARE(r->out, out);
        QCOMPARE(r->err, err);
        QCOMPARE(r->exitCode, exitCode);
        QCOMPARE(m_root->stats().roundTrips, before.roundTrips + 1);
    }

    void execTimeoutEndsTheCommand()
    {
        const quint64 connects = m_root->stats().connects;
        QElapsedTimer clock;
        clock.start();
        const Expected<ExecResult> r = m_root->exec(QStringLiteral("sleep 6; echo never"), 700);
        QVERIFY(!r);
        QCOMPARE(r.error().code, ErrorCode::TransportTimeout);
        QVERIFY2(r.error().message.contains(QStringLiteral("'sleep 6; echo never'")), qPrintable(r.error().message));
        QVERIFY2(clock.elapsed() < 5000, "the timeout did not end the call");
        // The session survives a timeout: same connection, next command runs.
        const Expected<ExecResult> next = m_root->exec(QStringLiteral("echo still here"));
        QVERIFY2(next, qPrintable(next ? QString() : next.error().text()));
        QCOMPARE(next->out, QByteArray("still here\n"));
        QCOMPARE(m_root->stats().connects, connects);
        // The command is killed, not left running on the login node. (sshd refuses signals to root's
        // sessions, "session signalling requires privilege separation", so this is the kbd user's.)
        int rounds = 0;
        SshTransport kbd(kbdOptions(), answering(readText(sandboxFile(QStringLiteral("kbd-password"))), &rounds));
        const Expected<ExecResult> killed = kbd.exec(QStringLiteral("sleep 37"), 300);
        QVERIFY(!killed);
        QCOMPARE(killed.error().code, ErrorCode::TransportTimeout);
        QTRY_VERIFY_WITH_TIMEOUT(kbd.exec(QStringLiteral("pgrep -fx 'sleep 37'"))->exitCode == 1, 3000);
        const QString longCommand = QStringLiteral("sleep 6 # ") + QString(100, QLatin1Char('z'));
        const Expected<ExecResult> cut = m_root->exec(longCommand, 300);
        QVERIFY(!cut);
        QVERIFY2(cut.error().message.contains(longCommand.left(60)) && !cut.error().message.contains(longCommand.left(61)),
                 qPrintable(cut.error().message));
    }

    void readAt_data()
    {
        QTest::addColumn<qint64>("offset");
        QTest::addColumn<qint64>("maxBytes");
        QTest::addColumn<QByteArray>("expected");
        QTest::newRow("head") << qint64(0) << qint64(4) << QByteArray("0123");
        QTest::newRow("middle") << qint64(3) << qint64(2) << QByteArray("34");
        QTest::newRow("runs past the end") << qint64(8) << qint64(100) << QByteArray("89");
        QTest::newRow("at the end") << qint64(10) << qint64(5) << QByteArray();
        QTest::newRow("past the end") << qint64(50) << qint64(5) << QByteArray();
        QTest::newRow("zero bytes") << qint64(3) << qint64(0) << QByteArray();
    }
    void readAt()
    {
        QFETCH(qint64, offset);
        QFETCH(qint64, maxBytes);
        QFETCH(QByteArray, expected);
        const QString path = remote(QStringLiteral("digits.txt"));
        QVERIFY(m_root->writeFile(path, "0123456789"));
        const Expected<QByteArray> got = m_root->readAt(path, offset, maxBytes);
        QVERIFY2(got, qPrintable(got ? QString() : got.error().text()));
        QCOMPARE(*got, expected);
    }

    void writeStatReadThreeMegabytes()
    {
        const QByteArray data = randomBytes(3 * 1024 * 1024);
        const QString path = remote(QStringLiteral("big.bin"));
        const TransportStats before = m_root->stats();
        const Status written = m_root->writeFile(path, data);
        QVERIFY2(written, qPrintable(written ? QString() : written.error().text()));
        const Expected<RemoteFileInfo> info = m_root->stat(path);
        QVERIFY2(info, qPrintable(info ? QString() : info.error().text()));
        QCOMPARE(info->size, qint64(data.size()));
        QVERIFY(!info->isDir);
        QVERIFY(qAbs(info->mtime - QDateTime::currentSecsSinceEpoch()) < 120);
        const Expected<QByteArray> all = m_root->readAt(path, 0, 4 * 1024 * 1024);
        QVERIFY2(all, qPrintable(all ? QString() : all.error().text()));
        QCOMPARE(all->size(), data.size());
        QVERIFY(*all == data);
        const Expected<QByteArray> tail = m_root->readAt(path, data.size() - 10, 100);
        QVERIFY(tail);
        QCOMPARE(*tail, data.right(10));
        const TransportStats after = m_root->stats();
        QCOMPARE(after.bytesWritten - before.bytesWritten, quint64(data.size()));
        QCOMPARE(after.bytesRead - before.bytesRead, quint64(data.size() + 10));
        // What a shell on the server sees is the same file.
        const Expected<ExecResult> sum =
            m_root->exec(QStringLiteral("md5sum < ") + m_area.mid(2).prepend(QStringLiteral("\"$HOME\"/")) + QStringLiteral("/big.bin"));
        QVERIFY(sum);
        QCOMPARE(sum->out.left(32), QCryptographicHash::hash(data, QCryptographicHash::Md5).toHex());
    }

    void writeFileReplacesAtomicallyWithTheMode()
    {
        const QString path = remote(QStringLiteral("replace/config.yaml"));
        QVERIFY(m_root->makeDirs(remote(QStringLiteral("replace"))));
        QVERIFY(m_root->writeFile(path, "first version\n", 0600));
        const Status second = m_root->writeFile(path, "second\n", 0640);
        QVERIFY2(second, qPrintable(second ? QString() : second.error().text()));
        const QString dir = m_area.mid(2).prepend(QStringLiteral("\"$HOME\"/")) + QStringLiteral("/replace");
        const Expected<ExecResult> r = m_root->exec(QStringLiteral("cd %1 && cat config.yaml && stat -c %a config.yaml && ls -A").arg(dir));
        QVERIFY(r);
        // New content, the new mode, and no temporary file left behind.
        QCOMPARE(QString::fromUtf8(r->out), QStringLiteral("second\n640\nconfig.yaml\n"));
    }

    void makeDirs()
    {
        const QString deep = remote(QStringLiteral("a/b/c"));
        const Status made = m_root->makeDirs(deep);
        QVERIFY2(made, qPrintable(made ? QString() : made.error().text()));
        const Expected<RemoteFileInfo> info = m_root->stat(deep);
        QVERIFY(info);
        QVERIFY(info->isDir);
        QVERIFY2(m_root->makeDirs(deep), "mkdir -p of an existing folder must succeed");
        QVERIFY(m_root->makeDirs(remote(QStringLiteral("a/b/c/../d"))));
        QVERIFY(m_root->stat(remote(QStringLiteral("a/b/d")))->isDir);
        // A file in the way is an error that names the path.
        QVERIFY(m_root->writeFile(remote(QStringLiteral("a/file")), "x"));
        const Status blocked = m_root->makeDirs(remote(QStringLiteral("a/file/sub")));
        QVERIFY(!blocked);
        QVERIFY2(blocked.error().message.contains(remote(QStringLiteral("a/file/sub"))), qPrintable(blocked.error().message));
    }

    void missingFile_data()
    {
        QTest::addColumn<QString>("operation");
        QTest::newRow("stat") << QStringLiteral("stat");
        QTest::newRow("readAt") << QStringLiteral("readAt");
        QTest::newRow("readAt in a missing folder") << QStringLiteral("readAt-dir");
    }
    void missingFile()
    {
        QFETCH(QString, operation);
        const QString path =
            operation == QLatin1String("readAt-dir") ? remote(QStringLiteral("no-such-dir/file")) : remote(QStringLiteral("no-such-file"));
        const Error e = operation == QLatin1String("stat") ? m_root->stat(path).error() : m_root->readAt(path, 0, 10).error();
        QCOMPARE(e.code, ErrorCode::TransportNoFile);
        QVERIFY2(e.message.contains(path), qPrintable(e.message));
    }

    void permissionDeniedAsAnUnprivilegedUser_data()
    {
        QTest::addColumn<QString>("operation");
        QTest::newRow("readAt of a mode 000 file") << QStringLiteral("own-000");
        QTest::newRow("stat under another user's 0700 folder") << QStringLiteral("stat-private");
        QTest::newRow("writeFile into another user's 0700 folder") << QStringLiteral("write-private");
    }
    void permissionDeniedAsAnUnprivilegedUser()
    {
        QFETCH(QString, operation);
        const QString password = readText(sandboxFile(QStringLiteral("kbd-password")));
        int rounds = 0;
        SshTransport kbd(kbdOptions(), answering(password, &rounds));
        const QString privateDir = QStringLiteral("/tmp/scaledesk-ssh-private-%1").arg(m_port);
        QVERIFY(m_root->exec(QStringLiteral("mkdir -p %1 && chmod 0700 %1 && echo s > %1/secret").arg(privateDir)));

        QString path;
        Error e;
        if (operation == QLatin1String("own-000")) {
            path = QStringLiteral("~/unreadable.txt");
            const Status written = kbd.writeFile(path, "secret", 0);
            QVERIFY2(written, qPrintable(written ? QString() : written.error().text()));
            e = kbd.readAt(path, 0, 10).error();
        } else if (operation == QLatin1String("stat-private")) {
            path = privateDir + QStringLiteral("/secret");
            e = kbd.stat(path).error();
        } else {
            path = privateDir + QStringLiteral("/new.txt");
            e = kbd.writeFile(path, "x").error();
        }
        QCOMPARE(e.code, ErrorCode::TransportPermission);
        QVERIFY2(e.message.contains(path), qPrintable(e.message));
        QVERIFY(kbd.exec(QStringLiteral("rm -f ~/unreadable.txt")));
    }

    void tildeIsTheRemoteHome()
    {
        const Expected<ExecResult> home = m_root->exec(QStringLiteral("printf %s \"$HOME\""));
        QVERIFY(home);
        const QString h = QString::fromUtf8(home->out);
        QCOMPARE(*m_root->absolutePath(QStringLiteral("~")), h);
        QCOMPARE(*m_root->absolutePath(QStringLiteral("~/")), h);
        QCOMPARE(*m_root->absolutePath(QStringLiteral("~/runs/r1")), h + QStringLiteral("/runs/r1"));
        QCOMPARE(*m_root->absolutePath(QStringLiteral("/scratch/x")), QStringLiteral("/scratch/x"));
        QCOMPARE(*m_root->absolutePath(QStringLiteral("rel/x")), h + QStringLiteral("/rel/x"));
        QVERIFY(m_root->writeFile(remote(QStringLiteral("tilde.txt")), "via sftp"));
        const Expected<ExecResult> cat = m_root->exec(QStringLiteral("cat ") + *m_root->absolutePath(remote(QStringLiteral("tilde.txt"))));
        QVERIFY(cat);
        QCOMPARE(cat->out, QByteArray("via sftp"));
    }

    void hostileNames_data()
    {
        QTest::addColumn<QString>("name");
        QTest::newRow("spaces") << QStringLiteral("my run  dir");
        QTest::newRow("quotes") << QStringLiteral("it's \"quoted\"");
        QTest::newRow("command substitution") << QStringLiteral("$(touch x) `touch x`; touch x");
        QTest::newRow("unicode") << QStringLiteral("données-实验-ü");
        QTest::newRow("all of them") << QStringLiteral("a b'c\"$(touch x)é");
    }
    void hostileNames()
    {
        QFETCH(QString, name);
        const QString dir = remote(name);
        const QString file = dir + QLatin1Char('/') + name + QStringLiteral(".txt");
        QVERIFY(m_root->makeDirs(dir));
        const Status written = m_root->writeFile(file, name.toUtf8());
        QVERIFY2(written, qPrintable(written ? QString() : written.error().text()));
        QCOMPARE(m_root->stat(file)->size, qint64(name.toUtf8().size()));
        QCOMPARE(*m_root->readAt(file, 0, 1000), name.toUtf8());
        // The shell on the server sees the same name, and nothing inside it ran.
        const QString absDir = *m_root->absolutePath(dir);
        const Expected<ExecResult> r = m_root->exec(QStringLiteral("cd %1 && ls -A && cat %2 && ls -A ~ | grep -cx x")
                                                        .arg(shellQuote(absDir), shellQuote(name + QStringLiteral(".txt"))));
        QVERIFY(r);
        QCOMPARE(QString::fromUtf8(r->out), name + QStringLiteral(".txt\n") + name + QStringLiteral("0\n"));
    }

    void configAliasResolves()
    {
        SshOptions o;
        o.host = QStringLiteral("sandbox");
        o.sshConfigFile = sandboxFile(QStringLiteral("ssh_config"));
        o.knownHostsFile = m_knownHosts;
        SshTransport t(o);
        QCOMPARE(t.describe(), QStringLiteral("root@127.0.0.1:%1").arg(m_port));
        const Expected<ExecResult> r = t.exec(QStringLiteral("id -un"));
        QVERIFY2(r, qPrintable(r ? QString() : r.error().text()));
        QCOMPARE(r->out, QByteArray("root\n"));
        // Options that are set win over the config.
        o.port = 1;
        QCOMPARE(SshTransport(o).describe(), QStringLiteral("root@127.0.0.1:1"));
    }

    void proxyJumpThroughTheSandbox()
    {
        SshOptions o = rootOptions();
        o.proxyJump = QStringLiteral("sandbox");  // resolved by ssh -F with the same config
        o.sshConfigFile = sandboxFile(QStringLiteral("ssh_config"));
        SshTransport t(o);
        const Expected<ExecResult> r = t.exec(QStringLiteral("echo through the jump"));
        QVERIFY2(r, qPrintable(r ? QString() : r.error().text()));
        QCOMPARE(r->out, QByteArray("through the jump\n"));
        // A jump host that cannot be reached fails the connection, though the target itself could be.
        o.proxyJump = QStringLiteral("root@127.0.0.1:1");
        SshTransport broken(o);
        const Expected<ExecResult> failed = broken.exec(QStringLiteral("true"));
        QVERIFY(!failed);
        QCOMPARE(failed.error().code, ErrorCode::TransportConnect);
    }

    void keyFileNotAuthorised()
    {
        SshOptions o = rootOptions();
        o.identityFile = sandboxFile(QStringLiteral("ssh_host_ed25519_key"));  // a valid key root does not authorise
        SshTransport t(o);
        const Expected<ExecResult> r = t.exec(QStringLiteral("true"));
        QVERIFY(!r);
        QCOMPARE(r.error().code, ErrorCode::TransportAuth);
        QVERIFY2(r.error().message.contains(QStringLiteral("root@127.0.0.1")) && r.error().message.contains(QStringLiteral("publickey")),
                 qPrintable(r.error().message));
    }

    void passphraseKey_data()
    {
        QTest::addColumn<QString>("answer");  // "<right>" for the sandbox's passphrase, "<cancel>" for nullopt
        QTest::addColumn<bool>("succeeds");
        QTest::addColumn<int>("calls");
        QTest::newRow("right passphrase") << QStringLiteral("<right>") << true << 1;
        QTest::newRow("wrong passphrase: three tries") << QStringLiteral("wrong") << false << 3;
        QTest::newRow("cancelled") << QStringLiteral("<cancel>") << false << 1;
    }
    void passphraseKey()
    {
        QFETCH(QString, answer);
        QFETCH(bool, succeeds);
        QFETCH(int, calls);
        const QString passphrase = readText(sandboxFile(QStringLiteral("passphrase")));
        QVERIFY(!passphrase.isEmpty());
        SshOptions o = rootOptions();
        o.identityFile = sandboxFile(QStringLiteral("id_ed25519_pass"));
        int asked = 0;
        QString askedFor;
        SshCallbacks cb;
        cb.passphrase = [&](const QString& keyFile) -> std::optional<QString> {
            ++asked;
            askedFor = keyFile;
            if (answer == QLatin1String("<cancel>")) return std::nullopt;
            return answer == QLatin1String("<right>") ? passphrase : answer;
        };
        SshTransport t(o, cb);
        const Expected<ExecResult> r = t.exec(QStringLiteral("echo in"));
        QCOMPARE(asked, calls);
        QCOMPARE(askedFor, o.identityFile);
        if (succeeds) {
            QVERIFY2(r, qPrintable(r ? QString() : r.error().text()));
            QCOMPARE(r->out, QByteArray("in\n"));
        } else {
            QVERIFY(!r);
            QCOMPARE(r.error().code, ErrorCode::TransportAuth);
            QVERIFY2(r.error().message.contains(o.identityFile), qPrintable(r.error().message));
        }
    }

    void keyboardInteractive()
    {
        const QString password = readText(sandboxFile(QStringLiteral("kbd-password")));
        int rounds = 0;
        QList<SshCallbacks::Prompt> prompts;
        SshTransport t(kbdOptions(), answering(password, &rounds, &prompts));
        const Expected<ExecResult> r = t.exec(QStringLiteral("id -un"));
        QVERIFY2(r, qPrintable(r ? QString() : r.error().text()));
        QCOMPARE(r->out, (m_kbdUser + QLatin1Char('\n')).toUtf8());
        QVERIFY(rounds >= 1);
        QVERIFY(!prompts.isEmpty());
        QVERIFY2(prompts.first().text.contains(QStringLiteral("assword")), qPrintable(prompts.first().text));
        QVERIFY2(!prompts.first().echo, "a password prompt must not echo");
    }

    void keyboardInteractiveRefused_data()
    {
        QTest::addColumn<int>("mode");  // 0 wrong answer, 1 cancelled, 2 no callback
        QTest::newRow("wrong answer") << 0;
        QTest::newRow("cancelled") << 1;
        QTest::newRow("no callback") << 2;
    }
    void keyboardInteractiveRefused()
    {
        QFETCH(int, mode);
        int rounds = 0;
        SshCallbacks cb;
        if (mode == 0)
            cb = answering(QStringLiteral("not-the-password"), &rounds);
        else if (mode == 1)
            cb.keyboardInteractive = [&](const QString&, const QString&, const QList<SshCallbacks::Prompt>&) -> std::optional<QStringList> {
                ++rounds;
                return std::nullopt;
            };
        SshTransport t(kbdOptions(), cb);
        const Expected<ExecResult> r = t.exec(QStringLiteral("true"));
        QVERIFY(!r);
        QCOMPARE(r.error().code, ErrorCode::TransportAuth);
        QVERIFY2(r.error().message.contains(m_kbdUser + QStringLiteral("@127.0.0.1")), qPrintable(r.error().message));
        QVERIFY2(r.error().message.contains(QStringLiteral("keyboard-interactive")), qPrintable(r.error().message));
        QCOMPARE(rounds > 0, mode != 2);
    }

    void unknownHostKeyRefused_data()
    {
        QTest::addColumn<bool>("withCallback");
        QTest::newRow("no callback") << false;
        QTest::newRow("callback says no") << true;
    }
    void unknownHostKeyRefused()
    {
        QFETCH(bool, withCallback);
        QTemporaryDir dir;
        SshOptions o = rootOptions();
        o.knownHostsFile = dir.filePath(QStringLiteral("known_hosts"));  // does not exist yet
        int asked = 0;
        SshCallbacks cb;
        if (withCallback)
            cb.acceptNewHostKey = [&](const QString&, const QString&, const QString&) {
                ++asked;
                return false;
            };
        SshTransport t(o, cb);
        const Expected<ExecResult> r = t.exec(QStringLiteral("true"));
        QVERIFY(!r);
        QCOMPARE(r.error().code, ErrorCode::TransportHostKey);
        QVERIFY2(r.error().message.contains(m_fingerprint), qPrintable(r.error().message));
        QVERIFY2(r.error().message.contains(QStringLiteral("--accept-new-host-key")), qPrintable(r.error().message));
        QCOMPARE(asked, withCallback ? 1 : 0);
        QVERIFY2(readText(o.knownHostsFile).isEmpty(), "a refused key must not be recorded");
    }

    void newHostKeyAcceptedAndRecorded()
    {
        QTemporaryDir dir;
        SshOptions o = rootOptions();
        o.knownHostsFile = dir.filePath(QStringLiteral("known_hosts"));
        QStringList offered;
        SshCallbacks cb;
        cb.acceptNewHostKey = [&](const QString& host, const QString& type, const QString& fingerprint) {
            offered << host << type << fingerprint;
            return true;
        };
        {
            SshTransport t(o, cb);
            const Expected<ExecResult> r = t.exec(QStringLiteral("echo ok"));
            QVERIFY2(r, qPrintable(r ? QString() : r.error().text()));
        }
        QCOMPARE(offered, (QStringList{QStringLiteral("127.0.0.1:%1").arg(m_port), QStringLiteral("ssh-ed25519"), m_fingerprint}));
        const QString recorded = readText(o.knownHostsFile);
        QVERIFY2(recorded.contains(QStringLiteral("[127.0.0.1]:%1").arg(m_port)) && recorded.contains(m_hostKeyBase64),
                 qPrintable(recorded));
        // Next time the key is known: nobody is asked.
        offered.clear();
        SshTransport again(o, cb);
        QVERIFY(again.exec(QStringLiteral("true")));
        QVERIFY(offered.isEmpty());
    }

    void changedHostKeyAlwaysRefused()
    {
        QTemporaryDir dir;
        SshOptions o = rootOptions();
        o.knownHostsFile = dir.filePath(QStringLiteral("known_hosts"));
        const QByteArray line = QStringLiteral("[127.0.0.1]:%1 ").arg(m_port).toUtf8() + kOtherHostKey + '\n';
        QVERIFY(writeText(o.knownHostsFile, line));
        int asked = 0;
        SshCallbacks cb;
        cb.acceptNewHostKey = [&](const QString&, const QString&, const QString&) {
            ++asked;
            return true;
        };
        SshTransport t(o, cb);
        const Expected<ExecResult> r = t.exec(QStringLiteral("true"));
        QVERIFY(!r);
        QCOMPARE(r.error().code, ErrorCode::TransportHostKey);
        const QString& m = r.error().message;
        QVERIFY2(m.contains(QStringLiteral("127.0.0.1:%1").arg(m_port)) && m.contains(m_fingerprint) &&
                     m.contains(QStringLiteral("CHANGED")) && m.contains(o.knownHostsFile),
                 qPrintable(m));
        QCOMPARE(asked, 0);
        QFile f(o.knownHostsFile);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QCOMPARE(f.readAll(), line);  // untouched
    }

    void connectionRefused()
    {
        SshOptions o = rootOptions();
        o.port = 1;  // nothing listens on tcpmux
        SshTransport t(o);
        QElapsedTimer clock;
        clock.start();
        const Expected<ExecResult> r = t.exec(QStringLiteral("true"));
        QVERIFY(!r);
        QCOMPARE(r.error().code, ErrorCode::TransportConnect);
        // The host once (the location), what failed and what to check.
        const QString text = r.error().text();
        QCOMPARE(text.count(QStringLiteral("root@127.0.0.1:1")), 1);
        QVERIFY2(text.startsWith(QStringLiteral("root@127.0.0.1:1: cannot connect: ")), qPrintable(text));
        QVERIFY2(text.contains(QStringLiteral("check the port")), qPrintable(text));
        QVERIFY(clock.elapsed() < 5000);
        QCOMPARE(t.stats().connects, quint64(0));
    }

    void keepaliveAfterIdle()
    {
        SshOptions o = rootOptions();
        o.keepaliveS = 1;
        SshTransport t(o);
        QVERIFY(t.exec(QStringLiteral("true")));
        quint64 before = t.stats().roundTrips;
        QVERIFY(t.exec(QStringLiteral("true")));
        QCOMPARE(t.stats().roundTrips - before, quint64(1));  // busy: no keepalive
        QThread::msleep(1200);
        before = t.stats().roundTrips;
        QVERIFY(t.exec(QStringLiteral("true")));
        QCOMPARE(t.stats().roundTrips - before, quint64(2));  // idle: a keepalive, then the exec
        QCOMPARE(t.stats().connects, quint64(1));
    }

    // A command that is not safe to repeat (sbatch, a signal) is never run twice: when the session
    // dies while it runs, the caller gets the error, and the command ran exactly once.
    void aCommandThatMustNotRepeatIsNotRetried()
    {
        SshOptions o = rootOptions();
        o.keepaliveS = 0;
        SshTransport t(o);
        QVERIFY(t.exec(QStringLiteral("true")));
        const QString marker = QStringLiteral("/tmp/scaledesk-once-%1").arg(QRandomGenerator::global()->generate());
        // It counts its runs in a file, then outlives the session that started it. The session dies
        // once the command has started (a loaded machine may take longer than any fixed delay to get
        // there; a session that dies before the command was sent may rightly be reopened for it).
        std::thread killer([&] {
            for (int i = 0; i < 300 && !QFile::exists(marker); ++i) QThread::msleep(100);
            killSessions();
        });
        const Expected<ExecResult> r = t.exec(QStringLiteral("echo run >> %1; sleep 5").arg(marker), 60000, Idempotent::No);
        killer.join();
        QVERIFY2(
            !r,
            r ? qPrintable(
                    QStringLiteral("exit %1 out '%2' err '%3'").arg(r->exitCode).arg(QString::fromUtf8(r->out), QString::fromUtf8(r->err)))
              : "");
        QVERIFY2(r.error().code == ErrorCode::TransportConnect || r.error().code == ErrorCode::TransportIo, qPrintable(r.error().text()));
        QThread::msleep(500);
        QFile f(marker);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QCOMPARE(f.readAll(), QByteArray("run\n"));
        f.remove();
        // The transport reconnects on the next call.
        QVERIFY(t.exec(QStringLiteral("true"), 60000, Idempotent::Yes));
    }

    void reconnectsAfterTheSessionDrops_data()
    {
        QTest::addColumn<int>("keepaliveS");
        QTest::newRow("noticed by the failing call") << 0;
        QTest::newRow("noticed by the keepalive") << 1;
    }
    void reconnectsAfterTheSessionDrops()
    {
        QFETCH(int, keepaliveS);
        SshOptions o = rootOptions();
        o.keepaliveS = keepaliveS;
        SshTransport t(o);
        QVERIFY(t.exec(QStringLiteral("true")));
        QCOMPARE(t.stats().connects, quint64(1));

        killSessions();
        if (keepaliveS > 0) QThread::msleep(1200);
        // A command that is safe to repeat (a read, a poll) runs on the new session.
        const Expected<ExecResult> r = t.exec(QStringLiteral("echo again"), 60000, Idempotent::Yes);
        QVERIFY2(r, qPrintable(r ? QString() : r.error().text()));
        QCOMPARE(r->out, QByteArray("again\n"));
        QCOMPARE(t.stats().connects, quint64(2));

        // SFTP calls reconnect the same way.
        killSessions();
        const Expected<RemoteFileInfo> info = t.stat(QStringLiteral("~"));
        QVERIFY2(info, qPrintable(info ? QString() : info.error().text()));
        QVERIFY(info->isDir);
        QCOMPARE(t.stats().connects, quint64(3));
    }
};

QTEST_GUILESS_MAIN(TestSshTransport)
#include "tst_sshtransport.moc"
