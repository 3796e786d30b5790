#include "config/configresolve.h"
#include "config/yamllocation.h"

#include <yaml-cpp/yaml.h>

#include <QFileInfo>
#include <QSet>
#include <QStringList>

#include <functional>
#include <optional>

namespace scaledesk {

namespace {
// Aliases share nodes, so a small file can name an enormous tree ("billion laughs"): resolution
// visits at most this many nodes, and says so when a file would take more.
constexpr int kMaxNodes = 200000;

struct Budget {
    int left = kMaxNodes;
    void spend(const YAML::Node& node)
    {
        if (--left < 0)
            throw YAML::Exception(node.Mark(),
                                  "the config expands to more than " + std::to_string(kMaxNodes) +
                                      " values (aliases nested inside aliases?); refused");
    }
};

// The top-level name whose node is `node` (anchors make merge sources the same node).
QString ownerOf(const YAML::Node& root, const YAML::Node& node)
{
    for (auto it = root.begin(); it != root.end(); ++it)
        if (it->second.is(node)) return QString::fromStdString(it->first.Scalar());
    return QString();
}

struct Entry {
    YAML::Node node;
    QString owner;  // the named config (or anchor) whose mapping holds the setting
};

// Resolves merge keys of a mapping into (key → node and owner): own keys first, then each source
// in order (earlier sources win), recursively, as YAML's merge does.
void mergeInto(const YAML::Node& root, const YAML::Node& map, const QString& owner, std::map<std::string, Entry>& out, int depth,
               Budget& budget)
{
    if (depth > 64) throw YAML::Exception(map.Mark(), "merge keys nest too deep (a cycle?)");
    for (auto it = map.begin(); it != map.end(); ++it) {
        budget.spend(it->second);
        const std::string key = it->first.as<std::string>();
        if (key != "<<" && !out.count(key)) out.emplace(key, Entry{it->second, owner});
    }
    const YAML::Node sources = map["<<"];
    if (!sources) return;
    auto from = [&](const YAML::Node& src) {
        const QString o = ownerOf(root, src);
        mergeInto(root, src, o.isEmpty() ? owner : o, out, depth + 1, budget);
    };
    if (sources.IsMap()) {
        from(sources);
    } else if (sources.IsSequence()) {
        for (const auto& src : sources) {
            if (!src.IsMap()) throw YAML::Exception(src.Mark(), "a merge source must be a mapping");
            from(src);
        }
    } else {
        throw YAML::Exception(sources.Mark(), "'<<' must be a mapping or a list of mappings");
    }
}

void flatten(const YAML::Node& root, const YAML::Node& node, const QString& owner, const QString& prefix, QMap<QString, ConfigValue>& out,
             int depth, Budget& budget)
{
    budget.spend(node);
    if (depth > 256) throw YAML::Exception(node.Mark(), "the config nests more than 256 levels deep; refused");
    const int line = node.Mark().is_null() ? 0 : node.Mark().line + 1;
    if (node.IsMap()) {
        std::map<std::string, Entry> merged;
        mergeInto(root, node, owner, merged, depth, budget);
        for (const auto& [k, e] : merged)
            flatten(root, e.node, e.owner,
                    prefix.isEmpty() ? QString::fromStdString(k) : prefix + QLatin1Char('.') + QString::fromStdString(k), out, depth + 1,
                    budget);
    } else if (node.IsSequence()) {
        QStringList items;
        bool scalars = true;
        for (const auto& e : node) {
            budget.spend(e);
            if (!e.IsScalar())
                scalars = false;
            else
                items << QString::fromStdString(e.Scalar());
        }
        if (scalars) {
            out.insert(prefix, ConfigValue{QLatin1Char('[') + items.join(QStringLiteral(", ")) + QLatin1Char(']'), owner, line});
        } else {
            int i = 0;
            for (const auto& e : node) flatten(root, e, owner, prefix + QStringLiteral("[%1]").arg(i++), out, depth + 1, budget);
        }
    } else if (node.IsScalar()) {
        out.insert(prefix, ConfigValue{QString::fromStdString(node.Scalar()), owner, line});
    } else {
        out.insert(prefix, ConfigValue{QString(), owner, line});
    }
}
// A config file that is not there, or cannot be read, in words (yaml-cpp says only "bad file").
std::optional<Error> unreadable(const QString& path)
{
    const QFileInfo fi(path);
    if (!fi.exists()) return Error{ErrorCode::ConfigMissing, QStringLiteral("no such file"), path};
    if (!fi.isFile()) return Error{ErrorCode::ConfigMissing, QStringLiteral("not a file"), path};
    if (!fi.isReadable()) return Error{ErrorCode::ConfigMissing, QStringLiteral("cannot read the file (permissions)"), path};
    return std::nullopt;
}
}  // namespace

Expected<QMap<QString, ConfigValue>> resolvedConfigWithSources(const QString& yamlPath, const QString& name)
{
    if (auto e = unreadable(yamlPath)) return *e;
    try {
        const YAML::Node root = YAML::LoadFile(yamlPath.toStdString());
        if (!root.IsMap()) return Error{ErrorCode::ConfigInvalid, QStringLiteral("expected a mapping of named configs"), yamlPath};
        const YAML::Node cfg = root[name.toStdString()];
        if (!cfg) return Error{ErrorCode::ConfigInvalid, QStringLiteral("no config named '%1'").arg(name), yamlPath};
        if (!cfg.IsMap())
            return Error{ErrorCode::ConfigInvalid, QStringLiteral("config '%1' is not a mapping").arg(name),
                         yamlLocation(yamlPath, cfg.Mark())};
        QMap<QString, ConfigValue> out;
        Budget budget;
        flatten(root, cfg, name, QString(), out, 0, budget);
        return out;
    } catch (const YAML::Exception& e) {
        return Error{ErrorCode::ConfigYaml, QString::fromStdString(e.msg), yamlLocation(yamlPath, e.mark)};
    }
}

Expected<QMap<QString, QString>> resolvedConfig(const QString& yamlPath, const QString& name)
{
    auto withSources = resolvedConfigWithSources(yamlPath, name);
    if (!withSources) return withSources.error();
    QMap<QString, QString> out;
    for (auto it = withSources->begin(); it != withSources->end(); ++it) out.insert(it.key(), it.value().value);
    return out;
}

Expected<QMap<QString, QStringList>> configParents(const QString& yamlPath)
{
    if (auto e = unreadable(yamlPath)) return *e;
    try {
        const YAML::Node root = YAML::LoadFile(yamlPath.toStdString());
        if (!root.IsMap()) return Error{ErrorCode::ConfigInvalid, QStringLiteral("expected a mapping of named configs"), yamlPath};
        QMap<QString, QStringList> out;
        for (auto it = root.begin(); it != root.end(); ++it) {
            QStringList parents;
            const YAML::Node sources = it->second.IsMap() ? it->second["<<"] : YAML::Node();
            if (sources && sources.IsMap())
                parents << ownerOf(root, sources);
            else if (sources && sources.IsSequence())
                for (const auto& e : sources) parents << ownerOf(root, e);
            out.insert(QString::fromStdString(it->first.Scalar()), parents);
        }
        return out;
    } catch (const YAML::Exception& e) {
        return Error{ErrorCode::ConfigYaml, QString::fromStdString(e.msg), yamlLocation(yamlPath, e.mark)};
    }
}

Expected<QStringList> configNames(const QString& yamlPath)
{
    if (auto e = unreadable(yamlPath)) return *e;
    try {
        const YAML::Node root = YAML::LoadFile(yamlPath.toStdString());
        if (!root.IsMap()) return Error{ErrorCode::ConfigInvalid, QStringLiteral("expected a mapping of named configs"), yamlPath};
        QStringList names;
        for (auto it = root.begin(); it != root.end(); ++it) names << QString::fromStdString(it->first.Scalar());
        return names;
    } catch (const YAML::Exception& e) {
        return Error{ErrorCode::ConfigYaml, QString::fromStdString(e.msg), yamlLocation(yamlPath, e.mark)};
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
