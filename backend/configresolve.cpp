#include "configresolve.h"

#include <yaml-cpp/yaml.h>

#include <QSet>
#include <QStringList>

#include <functional>

namespace scaledesk {

namespace {
QString where(const QString& file, const YAML::Mark& m)
{
    return m.is_null() ? file : QStringLiteral("%1:%2:%3").arg(file).arg(m.line + 1).arg(m.column + 1);
}

// Resolves merge keys of a mapping into (key → node), own keys first, then sources in order.
void mergeInto(const YAML::Node& map, std::map<std::string, YAML::Node>& out, int depth)
{
    if (depth > 64) throw YAML::Exception(map.Mark(), "merge keys nest too deep (a cycle?)");
    for (auto it = map.begin(); it != map.end(); ++it) {
        const std::string key = it->first.as<std::string>();
        if (key != "<<" && !out.count(key)) out.emplace(key, it->second);
    }
    const YAML::Node sources = map["<<"];
    if (!sources) return;
    if (sources.IsMap()) {
        mergeInto(sources, out, depth + 1);
    } else if (sources.IsSequence()) {
        for (const auto& s : sources) {
            if (!s.IsMap()) throw YAML::Exception(s.Mark(), "a merge source must be a mapping");
            mergeInto(s, out, depth + 1);
        }
    } else {
        throw YAML::Exception(sources.Mark(), "'<<' must be a mapping or a list of mappings");
    }
}

void flatten(const YAML::Node& node, const QString& prefix, QMap<QString, QString>& out, int depth)
{
    if (node.IsMap()) {
        std::map<std::string, YAML::Node> merged;
        mergeInto(node, merged, depth);
        for (const auto& [k, v] : merged)
            flatten(v, prefix.isEmpty() ? QString::fromStdString(k) : prefix + QLatin1Char('.') + QString::fromStdString(k), out, depth + 1);
    } else if (node.IsSequence()) {
        QStringList items;
        bool scalars = true;
        for (const auto& e : node) {
            if (!e.IsScalar()) scalars = false;
            else items << QString::fromStdString(e.Scalar());
        }
        if (scalars) {
            out.insert(prefix, QLatin1Char('[') + items.join(QStringLiteral(", ")) + QLatin1Char(']'));
        } else {
            int i = 0;
            for (const auto& e : node) flatten(e, prefix + QStringLiteral("[%1]").arg(i++), out, depth + 1);
        }
    } else if (node.IsScalar()) {
        out.insert(prefix, QString::fromStdString(node.Scalar()));
    } else {
        out.insert(prefix, QString());
    }
}
}  // namespace

Expected<QMap<QString, QString>> resolvedConfig(const QString& yamlPath, const QString& name)
{
    try {
        const YAML::Node root = YAML::LoadFile(yamlPath.toStdString());
        if (!root.IsMap()) return Error{QStringLiteral("config.invalid"), QStringLiteral("expected a mapping of named configs"), yamlPath};
        const YAML::Node cfg = root[name.toStdString()];
        if (!cfg) return Error{QStringLiteral("config.invalid"), QStringLiteral("no config named '%1'").arg(name), yamlPath};
        if (!cfg.IsMap())
            return Error{QStringLiteral("config.invalid"), QStringLiteral("config '%1' is not a mapping").arg(name), where(yamlPath, cfg.Mark())};
        QMap<QString, QString> out;
        flatten(cfg, QString(), out, 0);
        return out;
    } catch (const YAML::Exception& e) {
        return Error{QStringLiteral("config.yaml"), QString::fromStdString(e.msg), where(yamlPath, e.mark)};
    }
}

namespace {
// The top-level name whose node is `node` (anchors make merge sources the same node).
QString ownerOf(const YAML::Node& root, const YAML::Node& node)
{
    for (auto it = root.begin(); it != root.end(); ++it)
        if (it->second.is(node)) return QString::fromStdString(it->first.Scalar());
    return QString();
}

void flattenWithSources(const YAML::Node& root, const YAML::Node& node, const QString& owner, const QString& prefix,
                        QMap<QString, ConfigValue>& out, int depth)
{
    if (depth > 64) throw YAML::Exception(node.Mark(), "merge keys nest too deep (a cycle?)");
    // Own keys first, then each merge source in order (earlier sources win), recursively.
    for (auto it = node.begin(); it != node.end(); ++it) {
        const std::string key = it->first.as<std::string>();
        if (key == "<<") continue;
        const QString k = prefix.isEmpty() ? QString::fromStdString(key) : prefix + QLatin1Char('.') + QString::fromStdString(key);
        const YAML::Node v = it->second;
        if (v.IsMap()) {
            bool any = false;
            for (auto jt = out.begin(); jt != out.end(); ++jt)
                if (jt.key().startsWith(k + QLatin1Char('.'))) any = true;
            if (!any) flattenWithSources(root, v, owner, k, out, depth + 1);
        } else if (!out.contains(k)) {
            QMap<QString, QString> one;
            flatten(v, k, one, depth + 1);
            for (auto jt = one.begin(); jt != one.end(); ++jt) out.insert(jt.key(), ConfigValue{jt.value(), owner, it->second.Mark().line + 1});
        }
    }
    const YAML::Node sources = node["<<"];
    if (!sources) return;
    QList<YAML::Node> list;
    if (sources.IsMap()) list << sources;
    else if (sources.IsSequence())
        for (const auto& e : sources) list << e;
    for (const YAML::Node& src : list) {
        if (!src.IsMap()) throw YAML::Exception(src.Mark(), "a merge source must be a mapping");
        const QString srcOwner = ownerOf(root, src);
        flattenWithSources(root, src, srcOwner.isEmpty() ? owner : srcOwner, prefix, out, depth + 1);
    }
}
}  // namespace

Expected<QMap<QString, ConfigValue>> resolvedConfigWithSources(const QString& yamlPath, const QString& name)
{
    try {
        const YAML::Node root = YAML::LoadFile(yamlPath.toStdString());
        if (!root.IsMap()) return Error{QStringLiteral("config.invalid"), QStringLiteral("expected a mapping of named configs"), yamlPath};
        const YAML::Node cfg = root[name.toStdString()];
        if (!cfg || !cfg.IsMap()) return Error{QStringLiteral("config.invalid"), QStringLiteral("no config named '%1'").arg(name), yamlPath};
        QMap<QString, ConfigValue> out;
        flattenWithSources(root, cfg, name, QString(), out, 0);
        return out;
    } catch (const YAML::Exception& e) {
        return Error{QStringLiteral("config.yaml"), QString::fromStdString(e.msg), where(yamlPath, e.mark)};
    }
}

Expected<QMap<QString, QStringList>> configParents(const QString& yamlPath)
{
    try {
        const YAML::Node root = YAML::LoadFile(yamlPath.toStdString());
        if (!root.IsMap()) return Error{QStringLiteral("config.invalid"), QStringLiteral("expected a mapping of named configs"), yamlPath};
        QMap<QString, QStringList> out;
        for (auto it = root.begin(); it != root.end(); ++it) {
            QStringList parents;
            const YAML::Node sources = it->second.IsMap() ? it->second["<<"] : YAML::Node();
            if (sources && sources.IsMap()) parents << ownerOf(root, sources);
            else if (sources && sources.IsSequence())
                for (const auto& e : sources) parents << ownerOf(root, e);
            out.insert(QString::fromStdString(it->first.Scalar()), parents);
        }
        return out;
    } catch (const YAML::Exception& e) {
        return Error{QStringLiteral("config.yaml"), QString::fromStdString(e.msg), where(yamlPath, e.mark)};
    }
}

Expected<QStringList> configNames(const QString& yamlPath)
{
    try {
        const YAML::Node root = YAML::LoadFile(yamlPath.toStdString());
        if (!root.IsMap()) return Error{QStringLiteral("config.invalid"), QStringLiteral("expected a mapping of named configs"), yamlPath};
        QStringList names;
        for (auto it = root.begin(); it != root.end(); ++it) names << QString::fromStdString(it->first.Scalar());
        return names;
    } catch (const YAML::Exception& e) {
        return Error{QStringLiteral("config.yaml"), QString::fromStdString(e.msg), where(yamlPath, e.mark)};
    }
}

QStringList differingKeys(const QList<QMap<QString, QString>>& configs)
{
    QSet<QString> keys;
    for (const auto& c : configs)
        for (auto it = c.begin(); it != c.end(); ++it) keys.insert(it.key());
    QStringList out;
    for (const QString& k : keys) {
        bool same = true;
        for (const auto& c : configs)
            if (!c.contains(k) || c.value(k) != configs.first().value(k)) same = false;
        if (!same) out << k;
    }
    out.sort();
    return out;
}

}  // namespace scaledesk
