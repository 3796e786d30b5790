#pragma once

#include "expected.h"

#include <QMap>
#include <QString>

namespace scaledesk {

/// The named config `name` of a NERSC-style YAML file (anchors, `<<:` merge keys: earlier sources
/// win, the config's own keys win over all), flattened to dotted keys ("lr_schedule.start_lr")
/// with each scalar as written ('None' stays 'None'). Errors name file:line:column.
Expected<QMap<QString, QString>> resolvedConfig(const QString& yamlPath, const QString& name);

/// The named configs of a file, in file order (anchors-only entries included).
Expected<QStringList> configNames(const QString& yamlPath);

/// Keys whose values differ between the maps (a key missing from some counts as different).
QStringList differingKeys(const QList<QMap<QString, QString>>& configs);

}  // namespace scaledesk
