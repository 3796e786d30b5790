// The window's connections ask in dialogs: a passphrase-protected key on the SSH sandbox makes the
// live poll ask for the passphrase; the dialog is answered as a user would, and the poll goes on.
// A refused dialog (Cancel) gives a clear error on the status line, and the GUI thread never waits.
#include "dialogs/clusterwizard.h"
#include "dialogs/launchdialog.h"
#include "workspace/workspacecontroller.h"

#include "config/profiles.h"
#include <QApplication>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QDir>
#include <QFile>
#include <QInputDialog>
#include <QLineEdit>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QProcess>
#include <QPushButton>
#include <QRadioButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>
#include <QTimer>

using namespace scaledesk;
using namespace scaledesk::gui;

namespace {
// A picture of `w` for the docs and for a look, when SCALEDESK_SCREENSHOT_DIR is set.
void shoot(QWidget& w, const QString& name)
{
    if (const QString dir = qEnvironmentVariable("SCALEDESK_SCREENSHOT_DIR"); !dir.isEmpty()) w.grab().save(dir + QLatin1Char('/') + name);
}

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
#ifdef SCALEDESK_TRAIN_BIN
// Launches one cpu-tiny run on `profile` through the window's controller and waits until it completed.
void launchAndComplete(WorkspaceController& controller, const ClusterProfile& profile, const QString& id)
{
    LaunchRequest r;
    r.profile = profile;
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
#endif
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

    // The add-cluster wizard against the SSH+SLURM sandbox, as a user fills it: the SSH config's
    // alias is offered, the new host key is asked in the usual dialog, the sandbox's partition and
    // CPU count are read, the profile it writes passes `scaledesk profiles test` once the
    // wizard's Deploy has put the trainer there, and a run launched on it completes.
    void wizardAddsTheSandboxAndARunCompletes()
    {
#ifndef SCALEDESK_TRAIN_BIN
        QSKIP("the trainer is not built");
#else
        QVERIFY2(!qEnvironmentVariableIsEmpty("SLURM_CONF"), "the SLURM sandbox is not configured");
        qputenv("SCALEDESK_SSH_CONFIG", (sandboxDir() + QStringLiteral("/ssh_config")).toUtf8());
        qputenv("SCALEDESK_TRAIN", SCALEDESK_TRAIN_BIN);
        qunsetenv("SSH_AUTH_SOCK");
        const QString root = m_tmp.filePath(QStringLiteral("ws-wizard"));
        WorkspaceController controller(root);
        ClusterWizard wz(controller);
        wz.show();
        QVERIFY(QTest::qWaitForWindowExposed(&wz));
        QStringList offered;
        for (int i = 0; i < wz.hostBox()->count(); ++i) offered << wz.hostBox()->itemText(i);
        QVERIFY2(offered.contains(QStringLiteral("sandbox")), qPrintable(offered.join(QLatin1Char(','))));
        QVERIFY(!wz.button(QWizard::NextButton)->isEnabled());  // no name, no host yet
        wz.nameEdit()->setText(QStringLiteral("wz"));
        wz.hostBox()->setCurrentText(QStringLiteral("sandbox"));
        wz.knownHostsEdit()->setText(m_tmp.filePath(QStringLiteral("known_hosts-wz")));  // empty: the host key is new
        wz.rootEdit()->setText(m_tmp.filePath(QStringLiteral("remote-wz")));
        QVERIFY(wz.button(QWizard::NextButton)->isEnabled());

        // The host key question: answered Yes in its dialog.
        int hostKeyAsked = 0;
        QTimer answer;
        connect(&answer, &QTimer::timeout, this, [&] {
            auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget());
            if (!box || !box->windowTitle().startsWith(QStringLiteral("Unknown host"))) return;
            ++hostKeyAsked;
            box->button(QMessageBox::Yes)->click();
        });
        answer.start(50);
        wz.next();
        QCOMPARE(wz.currentId(), int(ClusterWizard::ClusterPage));
        QTRY_VERIFY_WITH_TIMEOUT(wz.probed(), 60000);
        QCOMPARE(hostKeyAsked, 1);
        QVERIFY(wz.facts().slurmVersion.startsWith(QStringLiteral("slurm")));
        QCOMPARE(wz.facts().partitions.size(), 1);
        const PartitionInfo part = wz.facts().partitions.first();
        QCOMPARE(part.name, QStringLiteral("debug"));
        QVERIFY(part.isDefault);
        QCOMPARE(part.cpusPerNode, QThread::idealThreadCount());  // the sandbox's node has this machine's CPUs (nproc)
        QCOMPARE(part.gpusPerNode, 0);
        QCOMPARE(part.timeLimit, QStringLiteral("UNLIMITED"));
        QVERIFY(wz.probeLog()->toPlainText().contains(QStringLiteral("partition debug (default)")));
        shoot(wz, QStringLiteral("wizard-cluster.png"));
        QVERIFY(wz.button(QWizard::NextButton)->isEnabled());

        wz.next();
        QCOMPARE(wz.currentId(), int(ClusterWizard::SettingsPage));
        QVERIFY(wz.partitionBox()->currentText().startsWith(QStringLiteral("debug")));
        QCOMPARE(wz.gpusBox()->value(), 0);
        wz.timeEdit()->setText(QStringLiteral("ten minutes"));  // not a SLURM time: Next waits
        QVERIFY(!wz.button(QWizard::NextButton)->isEnabled());
        wz.timeEdit()->setText(QStringLiteral("00:10:00"));
        QVERIFY(wz.button(QWizard::NextButton)->isEnabled());
        shoot(wz, QStringLiteral("wizard-settings.png"));

        wz.next();
        QCOMPARE(wz.currentId(), int(ClusterWizard::TrainerPage));
        wz.prebuiltButton()->setChecked(true);  // the sandbox is this machine
        wz.next();
        QCOMPARE(wz.currentId(), int(ClusterWizard::CheckPage));
        const QString file = root + QStringLiteral("/profiles/wz.yaml");
        QCOMPARE(wz.savedFile(), file);
        auto saved = loadClusterProfile(file);
        QVERIFY2(saved, qPrintable(saved ? QString() : saved.error().text()));
        QCOMPARE(saved->host, QStringLiteral("sandbox"));
        QCOMPARE(saved->slurm.partition, QStringLiteral("debug"));
        QCOMPARE(saved->slurm.timeLimit, QStringLiteral("00:10:00"));
        QVERIFY(saved->trainerDeploy && saved->trainerPrebuilt);

        // The first check finds no trainer there and offers Deploy; after it every check passes.
        QTRY_VERIFY_WITH_TIMEOUT(!wz.checking() && !wz.checks().isEmpty(), 60000);
        QVERIFY2(wz.checkLog()->toPlainText().contains(QStringLiteral("✘ trainer")), qPrintable(wz.checkLog()->toPlainText()));
        QVERIFY(wz.deployButton()->isEnabled());
        QSignalSpy deployed(&wz, &ClusterWizard::deployFinished);
        QSignalSpy checked(&wz, &ClusterWizard::checkFinished);
        wz.deployButton()->click();
        QTRY_COMPARE_WITH_TIMEOUT(deployed.size(), 1, 120000);
        QVERIFY2(deployed.at(0).at(0).toBool(), qPrintable(deployed.at(0).at(1).toString()));
        QTRY_COMPARE_WITH_TIMEOUT(checked.size(), 1, 60000);
        QVERIFY2(checked.at(0).at(0).toBool(), qPrintable(wz.checkLog()->toPlainText()));
        QVERIFY(wz.button(QWizard::FinishButton)->isEnabled());
        shoot(wz, QStringLiteral("wizard-check.png"));
        wz.accept();

        // `scaledesk profiles test` accepts the profile the wizard wrote.
        QProcess cli;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("SCALEDESK_HOME"), root);
        cli.setProcessEnvironment(env);
        cli.start(QStringLiteral(SCALEDESK_CLI), {QStringLiteral("profiles"), QStringLiteral("test"), QStringLiteral("wz")});
        QVERIFY(cli.waitForFinished(120000));
        const QString out = QString::fromUtf8(cli.readAllStandardOutput() + cli.readAllStandardError());
        QVERIFY2(cli.exitCode() == 0, qPrintable(out));
        QVERIFY2(out.contains(QStringLiteral("ok   trainer")), qPrintable(out));

        // A run launched on it completes.
        auto profile = findProfile(Workspace(root), QStringLiteral("wz"));
        QVERIFY(profile);
        launchAndComplete(controller, *profile, QStringLiteral("wizard-run"));
        if (QTest::currentTestFailed()) return;

        // After that one 1-rank run and no calibration: 1 rank is predicted (100 %, the base), 2
        // ranks are not: no efficiency number, but what to measure (issue 36).
        {
            LaunchDialog before(root, QStringLiteral(SCALEDESK_SOURCE_DIR "/configs/unet.yaml"));
            before.profileCombo()->setCurrentIndex(before.profileCombo()->findData(QStringLiteral("wz")));
            before.configCombo()->setCurrentText(QStringLiteral("cpu-tiny"));
            before.ranksEdit()->setText(QStringLiteral("1,2"));
            QTRY_VERIFY_WITH_TIMEOUT(before.prediction().contains(QStringLiteral("fitted to")) ||
                                         before.prediction().contains(QStringLiteral("No prediction")),
                                     60000);
            const QString unmeasured = before.prediction();
            QVERIFY2(unmeasured.contains(QStringLiteral("100 % (the base)")), qPrintable(unmeasured));
            QVERIFY2(unmeasured.contains(QStringLiteral("not measured: communication (no collective timed")), qPrintable(unmeasured));
            QVERIFY2(unmeasured.contains(QStringLiteral("scaledesk calibrate --profile wz --nodes 1 --ranks-per-node 2")),
                     qPrintable(unmeasured));
            // The base's 100 %, no other efficiency (the note under the table says what a range is).
            const qsizetype note = unmeasured.indexOf(QStringLiteral("Ranges: 90 % range (nominal)"));
            QVERIFY2(note > 0, qPrintable(unmeasured));
            QCOMPARE(unmeasured.left(note).count(QLatin1Char('%')), 1);
            before.show();
            QTest::qWait(200);  // the dialog grows to its prediction once shown
            shoot(before, QStringLiteral("launch-dialog-not-measured.png"));
        }

        // The launch dialog predicts a sweep on the sandbox before it is launched: the model fitted
        // to wizard-run (1 rank), with the profile's calibration (`scaledesk calibrate`, a 2-rank
        // bench-comm job under SLURM) for the communication.
        QProcess cal;
        cal.setProcessEnvironment(env);
        cal.start(QStringLiteral(SCALEDESK_CLI),
                  {QStringLiteral("calibrate"), QStringLiteral("--profile"), QStringLiteral("wz"), QStringLiteral("--nodes"),
                   QStringLiteral("1"), QStringLiteral("--ranks-per-node"), QStringLiteral("2"), QStringLiteral("--sizes"),
                   QStringLiteral("64K,1M,4M"), QStringLiteral("--reps"), QStringLiteral("3"), QStringLiteral("--name"),
                   QStringLiteral("cal-wz"), QStringLiteral("--wait")});
        QVERIFY(cal.waitForFinished(300000));
        const QString calOut = QString::fromUtf8(cal.readAllStandardOutput() + cal.readAllStandardError());
        QVERIFY2(cal.exitCode() == 0, qPrintable(calOut));
        QVERIFY2(calOut.contains(QStringLiteral("cal-wz-1x2: ")) && calOut.contains(QStringLiteral("comm.jsonl")), qPrintable(calOut));
        LaunchDialog d(root, QStringLiteral(SCALEDESK_SOURCE_DIR "/configs/unet.yaml"));
        d.profileCombo()->setCurrentIndex(d.profileCombo()->findData(QStringLiteral("wz")));
        d.configCombo()->setCurrentText(QStringLiteral("cpu-tiny"));
        d.ranksEdit()->setText(QStringLiteral("1,2"));
        QVERIFY2(d.canLaunch(), qPrintable(d.whyNot()));
        QTRY_VERIFY_WITH_TIMEOUT(
            d.prediction().contains(QStringLiteral("fitted to")) || d.prediction().contains(QStringLiteral("No prediction")), 60000);
        const QString predicted = d.prediction();
        QVERIFY2(predicted.contains(QStringLiteral("fitted to 1 completed run(s) of cpu-tiny on wz: wizard-run")), qPrintable(predicted));
        QVERIFY2(predicted.contains(QStringLiteral("ddp")) && predicted.contains(QStringLiteral("1 × 1")) &&
                     predicted.contains(QStringLiteral("1 × 2")) && predicted.contains(QStringLiteral("node-hours")) &&
                     predicted.contains(QStringLiteral("< 0.001")),  // a short epoch's node-hours, shown (not taken for a tag)
                 qPrintable(predicted));
        QCOMPARE(predicted.count(QStringLiteral("(the base)")), 1);  // 1 × 1 only, whatever 1 × 2 predicts
        QVERIFY2(d.summary().startsWith(QStringLiteral("2 job(s) on wz")), qPrintable(d.summary()));  // the job count, as before
        d.show();
        QTest::qWait(200);
        shoot(d, QStringLiteral("launch-dialog-prediction.png"));
#endif
    }

    // A connection error names the host once and says what to check.
    void connectionErrorNamesTheHostOnce()
    {
        const QString root = m_tmp.filePath(QStringLiteral("ws-bad-host"));
        WorkspaceController controller(root);
        ClusterWizard wz(controller);
        wz.show();
        wz.nameEdit()->setText(QStringLiteral("nowhere"));
        wz.hostBox()->setCurrentText(QStringLiteral("no-such-host.invalid"));
        wz.userEdit()->setText(QStringLiteral("alice"));
        wz.next();
        QSignalSpy probed(&wz, &ClusterWizard::probeFinished);
        QTRY_COMPARE_WITH_TIMEOUT(probed.size(), 1, 60000);
        QVERIFY(!wz.probed());
        QVERIFY(!wz.button(QWizard::NextButton)->isEnabled());
        const QString log = wz.probeLog()->toPlainText();
        const QString error = log.section(QStringLiteral("✘ "), -1).section(QLatin1Char('\n'), 0, 0);
        QCOMPARE(error.count(QStringLiteral("no-such-host.invalid")), 2);  // alice@host:22 once, and libssh's "resolve hostname …"
        QCOMPARE(error.count(QStringLiteral("alice@")), 1);
        QVERIFY2(error.contains(QStringLiteral("check the host name")), qPrintable(error));
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
            launchAndComplete(controller, *profile, id);
            if (QTest::currentTestFailed()) return;
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
