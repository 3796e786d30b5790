// Key passphrases and the system keyring, against a real GNOME Keyring on a private D-Bus session
// (tests/sandbox/with-keyring.sh) and the SSH sandbox's passphrase-protected key: entered once,
// remembered only when the profile opts in and the connection worked, never written to a file.
#include "clitest.h"
#include "remote/secretstore.h"

#include <QDirIterator>
#include <QTemporaryDir>

using namespace scaledesk;
using namespace scaledesk::test;

namespace {
QString sandboxDir()
{
    const QString d = qEnvironmentVariable("SCALEDESK_SSH_SANDBOX_DIR");
    return d.isEmpty() ? QStringLiteral("/tmp/scaledesk-ssh-sandbox") : d;
}
QByteArray slurp(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}
}  // namespace

class TestCliKeyring : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_tmp;
    Cli m_cli;
    QString m_passphrase;

    void addProfile(const QString& name, bool remember)
    {
        const QString path = m_tmp.filePath(name + QStringLiteral(".yaml"));
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(QStringLiteral("kind: ssh+slurm\nhost: 127.0.0.1\nport: 26822\nuser: root\nidentity_file: %1\nknown_hosts: %2\n"
                               "remote_root: %3\nremember_secrets: %4\ntrainer: {path: /bin/true}\n")
                    .arg(sandboxDir() + QStringLiteral("/id_ed25519_pass"), sandboxDir() + QStringLiteral("/known_hosts"),
                         m_tmp.filePath(QStringLiteral("remote")), remember ? QStringLiteral("true") : QStringLiteral("false"))
                    .toUtf8());
        f.close();
        const auto r = m_cli.run({QStringLiteral("profiles"), QStringLiteral("add"), path});
        QVERIFY2(r.exitCode == 0, qPrintable(r.all()));
    }
    // An askpass program that counts its calls and answers `answer`.
    void askpass(const QString& answer)
    {
        const QString script = m_tmp.filePath(QStringLiteral("askpass.sh"));
        QFile f(script);
        QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
        f.write(QStringLiteral("#!/bin/sh\necho \"$1\" >> %1\nprintf '%s\\n' '%2'\n")
                    .arg(m_tmp.filePath(QStringLiteral("asked")), answer)
                    .toUtf8());
        f.close();
        QFile::setPermissions(script, QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
        m_cli.env.insert(QStringLiteral("SCALEDESK_ASKPASS"), script);
    }
    int asked() const { return slurp(m_tmp.filePath(QStringLiteral("asked"))).count('\n'); }
    bool connects(const QString& profile) const
    {
        const auto r = m_cli.run({QStringLiteral("profiles"), QStringLiteral("test"), profile, QStringLiteral("--connect-only")});
        return r.out.contains(QStringLiteral("ok   connect to root@127.0.0.1:26822"));
    }

private slots:
    void initTestCase()
    {
        QVERIFY2(!qEnvironmentVariableIsEmpty("DBUS_SESSION_BUS_ADDRESS"), "run under tests/sandbox/with-keyring.sh");
        m_passphrase = QString::fromUtf8(slurp(sandboxDir() + QStringLiteral("/passphrase"))).trimmed();
        QVERIFY2(!m_passphrase.isEmpty(), "the SSH sandbox is not running");
        m_cli.workspace = m_tmp.filePath(QStringLiteral("ws"));
        m_cli.env.remove(QStringLiteral("SSH_AUTH_SOCK"));
    }

    void secretStoreRoundTrip()
    {
        SecretStore store(QStringLiteral("ScaleDesk-test"));
        auto missing = store.read(QStringLiteral("nothing here"));
        QVERIFY2(missing, qPrintable(missing ? QString() : missing.error().text()));
        QVERIFY(!missing->has_value());
        QVERIFY(store.write(QStringLiteral("k"), QStringLiteral("s3cret ü")));
        auto back = store.read(QStringLiteral("k"));
        QVERIFY(back && back->has_value());
        QCOMPARE(**back, QStringLiteral("s3cret ü"));
        QVERIFY(store.remove(QStringLiteral("k")));
        QVERIFY(!store.read(QStringLiteral("k"))->has_value());
    }

    void wrongPassphraseIsNotRemembered()
    {
        addProfile(QStringLiteral("wrong"), true);
        askpass(QStringLiteral("not the passphrase"));
        QVERIFY(!connects(QStringLiteral("wrong")));
        QVERIFY(asked() >= 1);
        auto stored = SecretStore().read(QStringLiteral("passphrase:") + sandboxDir() + QStringLiteral("/id_ed25519_pass"));
        QVERIFY(stored);
        QVERIFY(!stored->has_value());
    }

    void rememberedPassphraseIsNotAskedAgain()
    {
        QFile::remove(m_tmp.filePath(QStringLiteral("asked")));
        addProfile(QStringLiteral("remember"), true);
        askpass(m_passphrase);
        QVERIFY(connects(QStringLiteral("remember")));
        QCOMPARE(asked(), 1);
        QVERIFY(connects(QStringLiteral("remember")));
        QCOMPARE(asked(), 1);  // the keyring answered
        // Not in any file of the workspace or the test folder (but the askpass script that knows it).
        QDirIterator it(m_tmp.path(), QDir::Files | QDir::Hidden, QDirIterator::Subdirectories);
        while (it.hasNext()) {
            const QString f = it.next();
            if (f.endsWith(QLatin1String("/askpass.sh"))) continue;
            QVERIFY2(!slurp(f).contains(m_passphrase.toUtf8()), qPrintable(f));
        }
    }

    void withoutOptInEveryConnectionAsks()
    {
        QVERIFY(SecretStore().remove(QStringLiteral("passphrase:") + sandboxDir() + QStringLiteral("/id_ed25519_pass")));
        QFile::remove(m_tmp.filePath(QStringLiteral("asked")));
        addProfile(QStringLiteral("ask"), false);
        askpass(m_passphrase);
        QVERIFY(connects(QStringLiteral("ask")));
        QVERIFY(connects(QStringLiteral("ask")));
        QCOMPARE(asked(), 2);
        QVERIFY(!SecretStore().read(QStringLiteral("passphrase:") + sandboxDir() + QStringLiteral("/id_ed25519_pass"))->has_value());
    }
};

QTEST_GUILESS_MAIN(TestCliKeyring)
#include "tst_cli_keyring.moc"
