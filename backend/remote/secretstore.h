#pragma once

#include "core/expected.h"
#include "remote/transport.h"

#include <QString>

#include <optional>

namespace scaledesk {

/// Secrets (key passphrases) in the system keyring — the Secret Service (GNOME Keyring, KWallet)
/// through QtKeychain — for profiles that opt in with `remember_secrets: true`. Nothing is ever
/// written anywhere else. The calls block until the keyring answers, so they run where the
/// transport's callbacks run (a worker thread, or the command line's main thread).
class SecretStore {
public:
    explicit SecretStore(QString service = QStringLiteral("ScaleDesk"));
    /// nullopt when nothing is stored under `key`; an error when there is no keyring or it refused.
    Expected<std::optional<QString>> read(const QString& key) const;
    Status write(const QString& key, const QString& secret) const;
    Status remove(const QString& key) const;

private:
    QString m_service;
};

}  // namespace scaledesk
