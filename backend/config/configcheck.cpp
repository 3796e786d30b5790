#include "config/configcheck.h"

#include <QProcess>

namespace scaledesk {

QStringList trainerConfigCheckArguments(const QString& configFile, const QString& names)
{
    return {QStringLiteral("--yaml_config"), configFile,         QStringLiteral("--check_configs"), names,
            QStringLiteral("--threads"),     QStringLiteral("1")};
}

Status checkConfigWithTrainer(const QString& trainer, const QString& configFile, const QString& configName)
{
    QProcess p;
    p.start(trainer, trainerConfigCheckArguments(configFile, configName));
    if (!p.waitForStarted(10000))
        return Error{ErrorCode::TrainerMissing, QStringLiteral("cannot run %1 to check the config: %2").arg(trainer, p.errorString()),
                     configFile};
    if (!p.waitForFinished(30000)) {
        p.kill();
        p.waitForFinished(1000);
        return Error{ErrorCode::TrainerMissing, QStringLiteral("%1 did not finish checking the config in 30 s").arg(trainer), configFile};
    }
    if (p.exitStatus() != QProcess::NormalExit)
        return Error{ErrorCode::TrainerMissing, QStringLiteral("%1 crashed while checking the config").arg(trainer), configFile};
    if (p.exitCode() == 0) return Done{};
    // "scaledesk-train: error: FILE:LINE:COL: what [config NAME]": the location is the trainer's.
    const QString text = QString::fromUtf8(p.readAllStandardError()).trimmed();
    QString first = text.section(QLatin1Char('\n'), 0, 0);
    const QString prefix = QStringLiteral("scaledesk-train: error: ");
    if (first.startsWith(prefix)) first = first.mid(prefix.size());
    const QString suffix = QStringLiteral(" [config %1]").arg(configName);
    if (first.endsWith(suffix)) first.chop(suffix.size());
    if (first.isEmpty()) first = QStringLiteral("the trainer refused the config (exit %1)").arg(p.exitCode());
    // The message carries the trainer's own file:line:col; the location field stays empty so that
    // it is not printed twice.
    return Error{ErrorCode::ConfigInvalid, QStringLiteral("config '%1' is refused by the trainer: %2").arg(configName, first), QString()};
}

}  // namespace scaledesk
