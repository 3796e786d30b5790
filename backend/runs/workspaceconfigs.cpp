#include "runs/workspaceconfigs.h"

#include "runs/deploy.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>

namespace scaledesk {

Expected<QString> workspaceConfigFile(const Workspace& ws)
{
    const QString configs = ws.root() + QStringLiteral("/configs/unet.yaml");
    if (QFileInfo::exists(configs)) return configs;
    const QString shipped = bundledTrainerSources() + QStringLiteral("/configs/unet.yaml");
    if (!QDir().mkpath(QFileInfo(configs).absolutePath()))
        return Error{ErrorCode::StoreIo, QStringLiteral("cannot create the workspace's configs folder"), QFileInfo(configs).absolutePath()};
    // Copied under another name and renamed: a second process never reads half a file.
    const QString part = configs + QStringLiteral(".part");
    QFile::remove(part);
    if (!QFile::copy(shipped, part))
        return Error{ErrorCode::ConfigMissing, QStringLiteral("cannot copy the shipped configs to %1").arg(configs), shipped};
    QFile::setPermissions(part, QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ReadGroup | QFileDevice::ReadOther);
    if (!QFile::rename(part, configs) && !QFileInfo::exists(configs))
        return Error{ErrorCode::StoreIo, QStringLiteral("cannot write the workspace's configs"), configs};
    QFile::remove(part);
    return configs;
}

}  // namespace scaledesk
