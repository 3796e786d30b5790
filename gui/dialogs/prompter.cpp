#include "dialogs/prompter.h"

#include "core/showntext.h"
#include "dialogs/plainmessage.h"

#include <QApplication>
#include <QInputDialog>
#include <QLabel>
#include <QMessageBox>
#include <QSemaphore>
#include <QThread>

#include <memory>

namespace scaledesk::gui {

Prompter::Prompter(QObject* parent) : QObject(parent) {}

Prompter::~Prompter() { m_closing = true; }

std::optional<QString> Prompter::ask(const std::function<std::optional<QString>()>& dialog)
{
    if (QThread::currentThread() == thread()) return dialog();  // already on the GUI thread
    ++m_asked;
    struct Pending {
        QSemaphore done;
        std::optional<QString> answer;
    };
    auto pending = std::make_shared<Pending>();
    QMetaObject::invokeMethod(
        this,
        [pending, dialog] {
            pending->answer = dialog();
            pending->done.release();
        },
        Qt::QueuedConnection);
    // Wait for the user, but let a closing window end the wait (its sessions wait for us).
    while (!pending->done.tryAcquire(1, 100))
        if (m_closing) return std::nullopt;
    return pending->answer;
}

SshCallbacks Prompter::callbacks(const QString& profileName)
{
    SshCallbacks cb;
    cb.acceptNewHostKey = [this, profileName](const QString& host, const QString& type, const QString& fp) {
        const auto answer = ask([=]() -> std::optional<QString> {
            const auto b = QMessageBox::question(QApplication::activeWindow(), tr("Unknown host — %1").arg(profileName),
                                                 tr("The host %1 is not in known_hosts.\n\nIts %2 key fingerprint is\n%3\n\n"
                                                    "Trust it, record it and connect?")
                                                     .arg(host, type, fp));
            return b == QMessageBox::Yes ? std::optional<QString>(QStringLiteral("yes")) : std::nullopt;
        });
        return answer.has_value();
    };
    cb.passphrase = [this, profileName](const QString& keyFile) {
        return ask([=]() -> std::optional<QString> {
            bool ok = false;
            const QString p = QInputDialog::getText(QApplication::activeWindow(), tr("Passphrase — %1").arg(profileName),
                                                    tr("Passphrase for %1:").arg(keyFile), QLineEdit::Password, QString(), &ok);
            return ok ? std::optional<QString>(p) : std::nullopt;
        });
    };
    cb.keyboardInteractive = [this, profileName](const QString& name, const QString& instruction,
                                                 const QList<SshCallbacks::Prompt>& prompts) -> std::optional<QStringList> {
        QStringList answers;
        for (const auto& pr : prompts) {
            const auto a = ask([=]() -> std::optional<QString> {
                // Each part bounded on its own, so a long instruction never hides the question.
                const QString text = (name.isEmpty() ? QString() : shownText(name, 200) + QLatin1Char('\n')) +
                    (instruction.isEmpty() ? QString() : shownText(instruction, 2000) + QLatin1Char('\n')) + shownText(pr.text, 500);
                QInputDialog dialog(QApplication::activeWindow());
                dialog.setWindowTitle(tr("Login — %1").arg(profileName));
                dialog.setLabelText(labelText(text));
                dialog.setTextEchoMode(pr.echo ? QLineEdit::Normal : QLineEdit::Password);
                // The server's words wrap, anywhere if they must: a line without spaces does not make
                // the dialog wider than the screen.
                if (auto* label = dialog.findChild<QLabel*>()) {
                    label->setWordWrap(true);
                    label->setMaximumWidth(640);
                }
                if (dialog.exec() != QDialog::Accepted) return std::nullopt;
                return std::optional<QString>(dialog.textValue());
            });
            if (!a) return std::nullopt;
            answers << *a;
        }
        return answers;
    };
    return cb;
}

}  // namespace scaledesk::gui
