// The window's connections ask in dialogs: a passphrase-protected key on the SSH sandbox makes the
// live poll ask for the passphrase; the dialog is answered as a user would, and the poll goes on.
// A refused dialog (Cancel) gives a clear error on the status line, and the GUI thread never waits.
#include "workspacecontroller.h"

#include "config/profiles.h"
#include <QApplication>
#include <QDialogButtonBox>
#include <QDir>
#include <QFile>
#include <QInputDialog>
#include <QLineEdit>
#include <QPushButton>
#include <QSignalSpy>
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
        for (const QString& m : messages)
            QVERIFY2(!m.contains(QStringLiteral("transport.auth")) && !m.contains(QStringLiteral("cannot log in")), qPrintable(m));
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

    // SLURM forgets finished jobs (MinJobAge). A requeue from the window then submits the run
    // folder again, through the same lifecycle layer as `scaledesk requeue`.
    void windowRequeueResubmitsWhenSlurmForgotTheJob()
    {
#ifndef SCALEDESK_TRAIN_BIN
        QSKIP("the trainer is not built");
#else
        QVERIFY2(!qEnvironmentVariableIsEmpty("SLURM_CONF"), "the SLURM sandbox is not configured");
        qputenv("SCALEDESK_SSH_CONFIG", (sandboxDir() + QStringLiteral("/ssh_config")).toUtf8());
        qunsetenv("SSH_AUTH_SOCK");
        const QString root = m_tmp.filePath(QStringLiteral("ws-requeue"));
        QDir().mkpath(root + QStringLiteral("/profiles"));
        QVERIFY(QFile::copy(sandboxDir() + QStringLiteral("/known_hosts"), m_tmp.filePath(QStringLiteral("known_hosts-rq"))));
        QFile p(root + QStringLiteral("/profiles/sb.yaml"));
        QVERIFY(p.open(QIODevice::WriteOnly));
        p.write(QStringLiteral("kind: ssh+slurm\nhost: sandbox\nknown_hosts: \"%1\"\nremote_root: \"%2\"\nmaster_port: 29660\n"
                               "slurm:\n  cpus_per_task: 1\n  time_limit: \"00:10:00\"\n  mpi: pmix\n  signal_seconds: 0\n"
                               "trainer:\n  path: \"%3\"\n")
                    .arg(m_tmp.filePath(QStringLiteral("known_hosts-rq")), m_tmp.filePath(QStringLiteral("remote-rq")),
                         QStringLiteral(SCALEDESK_TRAIN_BIN))
                    .toUtf8());
        p.close();
        auto profile = findProfile(Workspace(root), QStringLiteral("sb"));
        QVERIFY2(profile, qPrintable(profile ? QString() : profile.error().text()));
        const QString id = QStringLiteral("forgotten");
        {
            WorkspaceController controller(root);
            LaunchRequest r;
            r.profile = *profile;
            RunPoint pt;
            pt.runId = id;
            pt.strategy = QStringLiteral("ddp");
            r.points = {pt};
            r.options.configFile = QStringLiteral(SCALEDESK_SOURCE_DIR "/configs/unet.yaml");
            r.options.configName = QStringLiteral("cpu-tiny");
            r.makeData = true;
            QSignalSpy launched(&controller, &WorkspaceController::launchFinished);
            controller.launch(r);
            QTRY_COMPARE_WITH_TIMEOUT(launched.size(), 1, 180000);
            QVERIFY2(launched.at(0).at(0).toBool(), qPrintable(launched.at(0).at(1).toString()));
            QTRY_VERIFY_WITH_TIMEOUT(controller.snapshot(id) && controller.snapshot(id)->record.state == RunState::Completed, 300000);
        }
        // As if SLURM had forgotten it: the record names a job id it has never seen.
        {
            auto store = RunStore::open(Workspace(root));
            QVERIFY(store);
            QVERIFY((*store)->update(id, [](RunRecord& r) {
                r.jobId = QStringLiteral("999999");
                return Status(Done{});
            }));
        }
        WorkspaceController controller(root);
        controller.loadRun(id);
        QTRY_VERIFY(controller.snapshot(id));
        QVERIFY(controller.check(RunAction::Requeue, id).allowed);
        QVERIFY(!controller.check(RunAction::Requeue, id).confirm.isEmpty());  // completed: the window asks first
        QSignalSpy acted(&controller, &WorkspaceController::actionFinished);
        controller.requeue(id, true);
        QTRY_COMPARE_WITH_TIMEOUT(acted.size(), 1, 120000);
        QVERIFY2(acted.at(0).at(2).toBool(), qPrintable(acted.at(0).at(3).toString()));
        const RunRecord after = controller.snapshot(id)->record;
        QVERIFY(after.jobId != QLatin1String("999999"));
        QVERIFY2(after.message.contains(QStringLiteral("resubmitted by the user (slurm no longer knew job 999999)")),
                 qPrintable(after.message));
        QTRY_VERIFY_WITH_TIMEOUT(controller.snapshot(id)->record.state == RunState::Completed, 300000);
#endif
    }
};

QTEST_MAIN(TestGuiSsh)
#include "tst_gui_ssh.moc"
