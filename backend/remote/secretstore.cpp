#include "remote/secretstore.h"

#include <qt6keychain/keychain.h>

#include <QEventLoop>

namespace scaledesk {

namespace {
// QtKeychain jobs answer by signal; a local loop waits for that one signal. The jobs talk to
// D-Bus, which needs an event loop in this thread, so a plain wait would never return.
bool runJob(QKeychain::Job& job)
{
    job.setAutoDelete(false);
    QEventLoop loop;
    QObject::connect(&job, &QKeychain::Job::finished, &loop, &QEventLoop::quit);
    job.start();
    loop.exec();
    return job.error() == QKeychain::NoError;
}

Error keyringError(const QKeychain::Job& job, const QString& key)
{
    const QString why = job.error() == QKeychain::NoBackendAvailable
        ? QStringLiteral("no system keyring is available (%1)").arg(job.errorString())
        : job.errorString();
    return Error{ErrorCode::Keyring, why, key};
}
}  // namespace

SecretStore::SecretStore(QString service) : m_service(std::move(service)) {}

Expected<std::optional<QString>> SecretStore::read(const QString& key) const
{
    QKeychain::ReadPasswordJob job(m_service);
    job.setKey(key);
    job.setInsecureFallback(false);
    if (runJob(job)) return std::optional<QString>(job.textData());
    if (job.error() == QKeychain::EntryNotFound) return std::optional<QString>();
    return keyringError(job, key);
}

Status SecretStore::write(const QString& key, const QString& secret) const
{
    QKeychain::WritePasswordJob job(m_service);
    job.setKey(key);
    job.setInsecureFallback(false);
    job.setTextData(secret);
    if (!runJob(job)) return keyringError(job, key);
    return Done{};
}

Status SecretStore::remove(const QString& key) const
{
    QKeychain::DeletePasswordJob job(m_service);
    job.setKey(key);
    job.setInsecureFallback(false);
    if (!runJob(job) && job.error() != QKeychain::EntryNotFound) return keyringError(job, key);
    return Done{};
}

}  // namespace scaledesk
