#pragma once
// Where in a YAML file something is, as every error of the config readers names it.

#include <QString>

#include <yaml-cpp/mark.h>

namespace scaledesk {

/// "file:line:column" (1-based) for a yaml-cpp mark, or the file alone when the mark is unknown.
inline QString yamlLocation(const QString& file, const YAML::Mark& mark)
{
    return mark.is_null() ? file : QStringLiteral("%1:%2:%3").arg(file).arg(mark.line + 1).arg(mark.column + 1);
}

}  // namespace scaledesk
