#pragma once

#include "remote/sshtransport.h"

#include <QObject>

#include <atomic>

class QWidget;

namespace scaledesk::gui {

/// The questions a connection asks the user (a new host key, a key's passphrase, a 2FA code),
/// asked in dialogs on the GUI thread while the connection's worker thread waits. A worker never
/// blocks the GUI thread: it waits on a semaphore and gives up when the window closes.
class Prompter : public QObject {
    Q_OBJECT
public:
    explicit Prompter(QObject* parent = nullptr);
    ~Prompter() override;
    /// Callbacks for an SshTransport; safe to call from any thread but the GUI thread's.
    SshCallbacks callbacks(const QString& profileName);
    /// From now on every question is answered "no" at once (the window is closing; its sessions
    /// wait for their workers, which must not wait for a dialog).
    void close() { m_closing = true; }
    /// Questions asked so far (for the status bar and tests).
    int asked() const { return m_asked.load(); }

private:
    std::optional<QString> ask(const std::function<std::optional<QString>()>& dialog);
    std::atomic_bool m_closing{false};
    std::atomic_int m_asked{0};
};

}  // namespace scaledesk::gui
