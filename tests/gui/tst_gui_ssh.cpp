// The window's connections ask in dialogs: a passphrase-protected key on the SSH sandbox makes the
// live poll ask for the passphrase; the dialog is answered as a user would, and the poll goes on.
// A refused dialog (Cancel) gives a clear error on the status line, and the GUI thread never waits.
#include "workspacecontroller.h"

#include <QApplication>
#include <QDialogButtonBox>
#include <QFile>
#include <QInputDialog>
#include <QLineEdit>
#include <QPushButton>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>

using namespace scaledesk;
using namespace scaledesk::gui;

namespace {
QString sandboxDir()
{
    const QString d = qEnvironmentVariable("SCALEDESK_SSH_SANDBOX_DIR");
    return d.isEmpty() ? QStringLiteral("/tmp/scaledesk-ssh-sandbox") : d;
}

// Answers the next input dialog that appears with `text` (or cancels it), and records its label.
void answerNextDialog(const QString& text, bool accept, QString* label)
{
    auto* timer = new QTimer;
    QObject::connect(timer, &QTimer::timeout, timer, [=] {
        auto* d = qobject_cast<QInputDialog*>(QApplication::activeModalWidget());
        if (!d) return;
        *label = d->labelText();
        if (accept) {
            d->setTextValue(text);
            d->accept();
        } else {
            d->reject();
        }
        timer->deleteLater();
    });
    timer->start(50);
}
}  // namespace

class TestGuiSsh : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_tmp;

    void makeWorkspace(const QString& root)
    {
        QDir().mkpath(root + QStringLiteral("/profiles"));
        QFile p(root + QStringLiteral("/profiles/pass.yaml"));
        QVERIFY(p.open(QIODevice::WriteOnly));
        p.write(QStringLiteral("kind: ssh+slurm\nhost: 127.0.0.1\nport: 26822\nuser: root\nidentity_file: %1/id_ed25519_pass\n"
                               "known_hosts: %1/known_hosts\nremote_root: %2\ntrainer: {path: /bin/true}\n")
                    .arg(sandboxDir(), m_tmp.filePath(QStringLiteral("remote")))
                    .toUtf8());
        p.close();
        auto store = RunStore::open(Workspace(root));
        QVERIFY(store);
        RunRecord r;
        r.id = QStringLiteral("remote-run");
        r.profile = QStringLiteral("pass");
        r.remoteDir = m_tmp.filePath(QStringLiteral("remote/runs/remote-run"));
        r.jobId = QStringLiteral("999999");
        r.transition(RunState::Queued, QStringLiteral("slurm: job 999999"));
        QVERIFY((*store)->save(r));
    }

private slots:
    void passphraseIsAskedInADialog()
    {
        QFile pf(sandboxDir() + QStringLiteral("/passphrase"));
        QVERIFY2(pf.open(QIODevice::ReadOnly), "the SSH sandbox is not running");
        const QString passphrase = QString::fromUtf8(pf.readAll()).trimmed();
        const QString root = m_tmp.filePath(QStringLiteral("ws"));
        makeWorkspace(root);
        QString label;
        answerNextDialog(passphrase, true, &label);
        WorkspaceController controller(root);
        QStringList messages;
        connect(&controller, &WorkspaceController::message, this, [&](const QString& m) { messages << m; });
        QStringList updated;
        connect(&controller, &WorkspaceController::runsUpdated, this, [&](const QStringList& ids) { updated << ids; });
        // The first poll connects, the key needs its passphrase: the dialog shows while the
        // worker waits, and this thread keeps running its event loop (QTRY spins it).
        QTRY_VERIFY_WITH_TIMEOUT(updated.contains(QStringLiteral("remote-run")), 30000);
        QVERIFY2(label.contains(QStringLiteral("id_ed25519_pass")), qPrintable(label));
        QCOMPARE(controller.prompter().asked(), 1);
        for (const QString& m : messages) QVERIFY2(!m.contains(QStringLiteral("transport.auth")) && !m.contains(QStringLiteral("cannot log in")), qPrintable(m));
    }

    void cancelledDialogIsAClearError()
    {
        const QString root = m_tmp.filePath(QStringLiteral("ws2"));
        makeWorkspace(root);
        QString label;
        answerNextDialog(QString(), false, &label);
        WorkspaceController controller(root);
        QStringList messages;
        connect(&controller, &WorkspaceController::message, this, [&](const QString& m) { messages << m; });
        QTRY_VERIFY_WITH_TIMEOUT(!messages.isEmpty(), 30000);
        QVERIFY2(messages.join(QLatin1Char('\n')).contains(QStringLiteral("profile pass")), qPrintable(messages.join(QLatin1Char('\n'))));
        QVERIFY(!label.isEmpty());
    }
};

QTEST_MAIN(TestGuiSsh)
#include "tst_gui_ssh.moc"
