// The dialogs (gui/dialogs): the launch dialog (why it cannot launch, one rank per GPU, unique
// names it remembers, its size), and text from a server shown as plain text.
#include "guitest.h"

using namespace scaledesk;
using namespace scaledesk::gui;
using namespace scaledesk::gui::test;

class TestGuiDialogs : public GuiTestCase {
    Q_OBJECT
private slots:
    void launchDialogSaysWhyItCannotLaunch()
    {
        const QString root = m_tmp.filePath(QStringLiteral("launch-ws"));
        LaunchDialog d(root, QStringLiteral(SCALEDESK_SOURCE_DIR "/configs/unet.yaml"));
        QCOMPARE(d.configCombo()->currentText(), QStringLiteral("cpu-tiny"));
        QVERIFY2(d.canLaunch(), qPrintable(d.whyNot()));
        d.ranksEdit()->setText(QStringLiteral("1,2"));
        QVERIFY(d.summary().startsWith(QStringLiteral("2 job(s) on local (this machine)")));
        QVERIFY2(!d.summary().contains(QStringLiteral("node-hours")), qPrintable(d.summary()));  // a laptop has no node-hours
        QStringList ids;
        for (const RunPoint& p : d.request().points) ids << p.runId + QStringLiteral("/%1").arg(p.worldSize());
        // The default sweep name is unique: <config>-<date>-<n>.
        const QString sweep = QStringLiteral("cpu-tiny-%1-1").arg(QDate::currentDate().toString(QStringLiteral("yyyyMMdd")));
        QCOMPARE(d.sweepEdit()->text(), sweep);
        QCOMPARE(ids, (QStringList{sweep + QStringLiteral("-ddp-1x1-r1/1"), sweep + QStringLiteral("-ddp-1x2-r1/2")}));
        QVERIFY(d.makeDataCheck()->isChecked());  // a cpu config on the local profile: its data is generated
        QCOMPARE(d.request().options.configName, QStringLiteral("cpu-tiny"));
        QVERIFY2(d.preview().contains(QStringLiteral("mpirun")), qPrintable(d.preview()));  // the local job script
        // No run of the config has finished on the profile: no model to predict with, and it says so.
        QTRY_VERIFY_WITH_TIMEOUT(d.prediction().contains(QStringLiteral("No prediction")), 20000);
        QVERIFY2(d.prediction().contains(QStringLiteral("no completed run of config 'cpu-tiny' on profile 'local'")),
                 qPrintable(d.prediction()));
        d.nodesEdit()->setText(QStringLiteral("1,x"));
        QVERIFY(!d.canLaunch());
        QVERIFY(d.whyNot().startsWith(QStringLiteral("Nodes")));
        d.nodesEdit()->setText(QStringLiteral("1"));
        d.timeEdit()->setText(QStringLiteral("soon"));
        QVERIFY(!d.canLaunch());
        QVERIFY(d.whyNot().contains(QStringLiteral("not a SLURM time")));
        d.timeEdit()->setText(QStringLiteral("00:20:00"));
        QVERIFY(d.canLaunch());
        // Without its data the cpu config's runs could not start: Launch is off, and says which line.
        d.makeDataCheck()->click();
        QVERIFY(!d.canLaunch());
        QVERIFY2(d.whyNot().contains(QStringLiteral("configs/unet.yaml:89: train_path 'data/train.h5' (config cpu-tiny)")) &&
                     d.whyNot().contains(QStringLiteral("Generate the cpu configs' data")),
                 qPrintable(d.whyNot()));
        if (const QString shots = qEnvironmentVariable("SCALEDESK_SCREENSHOT_DIR"); !shots.isEmpty()) {
            d.show();
            QTest::qWait(100);
            d.grab().save(shots + QStringLiteral("/launch-no-data.png"));
        }
        d.makeDataCheck()->click();
        QVERIFY2(d.canLaunch(), qPrintable(d.whyNot()));
        d.configCombo()->setEditable(true);
        d.configCombo()->setCurrentText(QStringLiteral("no-such-config"));
        QVERIFY(!d.canLaunch());
        QVERIFY(d.whyNot().contains(QStringLiteral("no config named 'no-such-config'")));
    }

    // A GPU profile: one rank per GPU by default, and more ranks than GPUs are refused, with the
    // numbers, by the same check as the command line's.
    void launchDialogGivesEachGpuARank()
    {
        const QString root = m_tmp.filePath(QStringLiteral("gpu-ws"));
        QVERIFY(QDir().mkpath(root + QStringLiteral("/profiles")));
        QFile p(root + QStringLiteral("/profiles/gpu4.yaml"));
        QVERIFY(p.open(QIODevice::WriteOnly));
        p.write("kind: ssh+slurm\nhost: gpu.invalid\nremote_root: /r\nslurm:\n  gpus_per_node: 4\ntrainer: {path: /t}\n");
        p.close();
        LaunchDialog d(root, QStringLiteral(SCALEDESK_SOURCE_DIR "/configs/unet.yaml"));
        QCOMPARE(d.ranksEdit()->text(), QStringLiteral("1"));  // the local profile first: one rank
        d.profileCombo()->setCurrentIndex(d.profileCombo()->findData(QStringLiteral("gpu4")));
        QCOMPARE(d.ranksEdit()->text(), QStringLiteral("4"));
        d.configCombo()->setCurrentIndex(d.configCombo()->findText(QStringLiteral("bs64_opt")));
        QVERIFY2(d.canLaunch(), qPrintable(d.whyNot()));
        QVERIFY2(d.preview().contains(QStringLiteral("#SBATCH --ntasks-per-node=4\n")), qPrintable(d.preview()));
        QVERIFY2(d.preview().contains(QStringLiteral("#SBATCH --gpus-per-node=4\n")), qPrintable(d.preview()));
        d.ranksEdit()->setText(QStringLiteral("8"));
        QVERIFY(!d.canLaunch());
        QVERIFY2(d.whyNot().contains(QStringLiteral("8 ranks on a node of profile gpu4, whose nodes have 4 GPU(s)")),
                 qPrintable(d.whyNot()));
    }

    // Names are unique by default, a name that is taken keeps the dialog open with the field marked,
    // and the last launch's settings come back for the profile.
    void launchDialogKeepsNamesUniqueAndRemembers()
    {
        const QString root = m_tmp.filePath(QStringLiteral("names-ws"));
        const QString date = QDate::currentDate().toString(QStringLiteral("yyyyMMdd"));
        {
            auto store = RunStore::open(Workspace(root));
            QVERIFY(store);
            RunRecord r;
            r.id = QStringLiteral("cpu-tiny-%1-1-ddp-1x1-r1").arg(date);
            r.profile = QStringLiteral("local");
            r.transition(RunState::Completed);
            QVERIFY((*store)->save(r));
        }
        {
            LaunchDialog d(root, QStringLiteral(SCALEDESK_SOURCE_DIR "/configs/unet.yaml"));
            QCOMPARE(d.sweepEdit()->text(), QStringLiteral("cpu-tiny-%1-2").arg(date));  // -1 is taken
            QVERIFY(d.canLaunch());
            d.sweepEdit()->setText(QStringLiteral("cpu-tiny-%1-1").arg(date));
            QVERIFY(!d.canLaunch());
            QVERIFY2(d.whyNot().startsWith(QStringLiteral("Sweep name:")), qPrintable(d.whyNot()));
            QVERIFY(d.sweepEdit()->styleSheet().contains(QStringLiteral("border")));
            QVERIFY(!d.buttons()->button(QDialogButtonBox::Ok)->isEnabled());
            d.sweepEdit()->setText(QStringLiteral("fresh"));
            QVERIFY(d.canLaunch());
            QVERIFY(d.sweepEdit()->styleSheet().isEmpty());
            d.nodesEdit()->setText(QStringLiteral("1,2"));
            d.stopOnFailureCheck()->setChecked(true);
            QTest::mouseClick(d.buttons()->button(QDialogButtonBox::Ok), Qt::LeftButton);
            QCOMPARE(d.result(), int(QDialog::Accepted));
        }
        LaunchDialog again(root, QStringLiteral(SCALEDESK_SOURCE_DIR "/configs/unet.yaml"));
        QCOMPARE(again.nodesEdit()->text(), QStringLiteral("1,2"));
        QVERIFY(again.stopOnFailureCheck()->isChecked());
        QCOMPARE(again.request().onFailure, OnSubmitFailure::Stop);
    }

    // What a server says (a keyboard-interactive name, instruction and prompt) and what a command
    // printed (a failed deploy's build log) are shown as the characters they are: markup is not
    // rendered, a link is not a link, terminal escapes are gone, and a flood is cut.
    void textFromAServerIsShownAsPlainText()
    {
        Prompter prompter;
        const SshCallbacks cb = prompter.callbacks(QStringLiteral("hostile"));
        QString shown;
        bool linked = true;
        QTimer::singleShot(0, this, [&] {
            QTRY_VERIFY(qobject_cast<QInputDialog*>(QApplication::activeModalWidget()));
            auto* dialog = qobject_cast<QInputDialog*>(QApplication::activeModalWidget());
            auto* label = dialog->findChild<QLabel*>();
            QVERIFY(label);
            QTextDocument doc;
            doc.setHtml(label->text());
            shown = doc.toPlainText();
            linked = label->text().contains(QStringLiteral("<a "));
            if (const QString shots = qEnvironmentVariable("SCALEDESK_SCREENSHOT_DIR"); !shots.isEmpty())
                dialog->grab().save(shots + QStringLiteral("/login-prompt-plain.png"));
            dialog->setTextValue(QStringLiteral("123456"));
            dialog->accept();
        });
        const auto answers = cb.keyboardInteractive(QStringLiteral("<b>Duo</b>"),
                                                    QStringLiteral("\x1b[31m<a href='http://evil.example'>click</a>\x1b[0m ") +
                                                        QString(10000, QLatin1Char('x')),
                                                    {{QStringLiteral("<img src='x'>Passcode: "), false}});
        QVERIFY(answers);
        QCOMPARE(*answers, QStringList{QStringLiteral("123456")});
        QVERIFY2(shown.contains(QStringLiteral("<b>Duo</b>")), qPrintable(shown));
        QVERIFY2(shown.contains(QStringLiteral("<a href='http://evil.example'>click</a>")), qPrintable(shown));
        QVERIFY2(shown.contains(QStringLiteral("<img src='x'>Passcode: ")), qPrintable(shown));
        QVERIFY(!shown.contains(QChar(0x1b)));
        QVERIFY2(shown.contains(QStringLiteral(" more characters)")), qPrintable(shown.right(80)));
        QVERIFY(shown.size() < 5000);
        QVERIFY(!linked);

        QString boxText;
        Qt::TextFormat format = Qt::RichText;
        QTimer::singleShot(0, this, [&] {
            QTRY_VERIFY(qobject_cast<QMessageBox*>(QApplication::activeModalWidget()));
            auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget());
            boxText = box->text();
            format = box->textFormat();
            if (const QString shots = qEnvironmentVariable("SCALEDESK_SCREENSHOT_DIR"); !shots.isEmpty())
                box->grab().save(shots + QStringLiteral("/message-plain.png"));
            box->accept();
        });
        plainMessage(nullptr, QMessageBox::Warning, QStringLiteral("Deploy"),
                     QStringLiteral("the trainer build failed:\n<h1>\x1b]0;title\x07"
                                    "big</h1>") +
                         QString(100000, QLatin1Char('z')));
        QCOMPARE(format, Qt::PlainText);
        QVERIFY2(boxText.startsWith(QStringLiteral("the trainer build failed:\n<h1>big</h1>")), qPrintable(boxText.left(80)));
        QVERIFY(boxText.size() < 5000);
    }

    // The dialog fits a 720 px screen with its buttons on it: the job script is folded away until
    // asked for (issue 34: the preview took half the height and pushed Launch off an 800 px screen).
    void launchDialogFitsA720pxScreen()
    {
        const QString root = m_tmp.filePath(QStringLiteral("fit-ws"));
        LaunchDialog d(root, QStringLiteral(SCALEDESK_SOURCE_DIR "/configs/unet.yaml"));
        d.show();
        QVERIFY(QTest::qWaitForWindowExposed(&d));
        QVERIFY2(d.height() <= 720, qPrintable(QString::number(d.height())));
        QVERIFY(d.buttons()->isVisible());
        QVERIFY(d.buttons()->geometry().bottom() <= d.height());
        QVERIFY(!d.scriptToggle()->isChecked());
        if (const QString shots = qEnvironmentVariable("SCALEDESK_SCREENSHOT_DIR"); !shots.isEmpty())
            d.grab().save(shots + QStringLiteral("/launch-dialog.png"));
        d.scriptToggle()->click();
        QTRY_VERIFY(d.findChild<QPlainTextEdit*>()->isVisible());
        QVERIFY(d.findChild<QPlainTextEdit*>()->toPlainText().contains(QStringLiteral("#!/bin/bash")));
        if (const QString shots = qEnvironmentVariable("SCALEDESK_SCREENSHOT_DIR"); !shots.isEmpty())
            d.grab().save(shots + QStringLiteral("/launch-dialog-script.png"));
        d.scriptToggle()->click();
        QTRY_VERIFY(d.height() <= 720);
    }
};

QTEST_MAIN(TestGuiDialogs)
#include "tst_gui_dialogs.moc"
