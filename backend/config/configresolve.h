#pragma once

#include "core/expected.h"

#include <QMap>
#include <QString>

namespace scaledesk {

/// The named config `name` of a NERSC-style YAML file (anchors, `<<:` merge keys: earlier sources
/// win, the config's own keys win over all), flattened to dotted keys ("lr_schedule.start_lr")
/// with each scalar as written ('None' stays 'None'). Errors name file:line:column.
Expected<QMap<QString, QString>> resolvedConfig(const QString& yamlPath, const QString& name);

/// A resolved value and where it comes from: the named config (or anchor) that set it and the
/// line of that setting.
struct ConfigValue {
    QString value;
    QString from;  ///< the top-level config (or anchor) whose mapping holds the setting
    int line = 0;  ///< 1-based
};
Expected<QMap<QString, ConfigValue>> resolvedConfigWithSources(const QString& yamlPath, const QString& name);

/// For each named config, the configs it merges from (its `<<:` sources, by their top-level name).
Expected<QMap<QString, QStringList>> configParents(const QString& yamlPath);

/// The named configs of a file, in file order (anchors-only entries included).
Expected<QStringList> configNames(const QString& yamlPath);

/// Keys whose values differ between the maps (a key missing from some counts as different).
QStringList differingKeys(const QList<QMap<QString, QString>>& configs);

}  // namespace scaledesk
