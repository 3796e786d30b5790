#include "config/metricsources.h"
#include "config/yamllocation.h"

#include <yaml-cpp/yaml.h>

#include <QFileInfo>

namespace scaledesk {

namespace {

QString q(const std::string& s) { return QString::fromStdString(s); }

Error refusal(const QString& file, const YAML::Node& at, const QString& what)
{
    return Error{ErrorCode::ConfigInvalid, QStringLiteral("metrics.") + what, yamlLocation(file, at.Mark())};
}

Expected<MetricSources::Pattern> pattern(const QString& file, const YAML::Node& node)
{
    if (!node.IsScalar()) return refusal(file, node, QStringLiteral("patterns: expected a list of regular expressions"));
    const QString text = q(node.Scalar());
    MetricSources::Pattern p;
    p.re = QRegularExpression(text);
    if (!p.re.isValid())
        return refusal(file, node,
                       QStringLiteral("patterns: '%1' does not compile: %2 at character %3")
                           .arg(text, p.re.errorString())
                           .arg(p.re.patternErrorOffset() + 1));
    const QStringList groups = p.re.namedCaptureGroups();
    p.epoch = groups.contains(QStringLiteral("epoch"));
    if (!p.epoch && !groups.contains(QStringLiteral("step")))
        return refusal(file, node,
                       QStringLiteral("patterns: '%1' needs a group (?<step>...) or (?<epoch>...) to say what a match is").arg(text));
    if (p.epoch && !groups.contains(QStringLiteral("train_time")))
        return refusal(file, node,
                       QStringLiteral("patterns: '%1' reads epochs and needs a group (?<train_time>...), the epoch's seconds").arg(text));
    int values = 0;
    for (const QString& g : groups)
        if (!g.isEmpty() && g != QLatin1String("step") && g != QLatin1String("epoch")) ++values;
    if (values == 0)
        return refusal(file, node, QStringLiteral("patterns: '%1' has no named group for a value, e.g. (?<loss>\\S+)").arg(text));
    return p;
}

}  // namespace

QStringList epochFields()
{
    return {QStringLiteral("train_time"), QStringLiteral("samples"),  QStringLiteral("train_loss"),
            QStringLiteral("val_loss"),   QStringLiteral("val_time"), QStringLiteral("lr")};
}

Expected<MetricSources> parseMetricSources(const QString& file, const YAML::Node& node)
{
    MetricSources s;
    if (!node.IsMap())
        return Error{ErrorCode::ConfigInvalid, QStringLiteral("metrics: expected a mapping (tensorboard, tags, nersc, patterns)"),
                     yamlLocation(file, node.Mark())};
    static const QStringList keys{QStringLiteral("tensorboard"), QStringLiteral("tags"), QStringLiteral("nersc"),
                                  QStringLiteral("patterns")};
    for (const auto& kv : node) {
        const QString key = q(kv.first.as<std::string>());
        if (!keys.contains(key))
            return refusal(file, kv.first, QStringLiteral("%1: unknown key; there are %2").arg(key, keys.join(QStringLiteral(", "))));
    }
    if (const auto tb = node["tensorboard"]) {
        static const QRegularExpression folder(QStringLiteral("^[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)*$"));
        const QString dir = tb.IsScalar() ? q(tb.Scalar()) : QString();
        if (!folder.match(dir).hasMatch() || dir.split(QLatin1Char('/')).contains(QStringLiteral("..")))
            return refusal(file, tb,
                           QStringLiteral("tensorboard: a folder inside the run folder, e.g. logs (letters, digits, ._-; no ..)"));
        s.tensorboard = dir;
    }
    if (const auto tags = node["tags"]) {
        if (!s.tensorboard.isEmpty() && !tags.IsMap()) return refusal(file, tags, QStringLiteral("tags: expected a mapping name: tag"));
        if (s.tensorboard.isEmpty()) return refusal(file, tags, QStringLiteral("tags: only with tensorboard"));
        static const QRegularExpression name(QStringLiteral("^(epoch\\.)?[A-Za-z_][A-Za-z0-9_]*$"));
        for (const auto& kv : tags) {
            const QString n = q(kv.first.as<std::string>());
            if (!name.match(n).hasMatch() || !kv.second.IsScalar())
                return refusal(file, kv.first, QStringLiteral("tags: '%1' must be a field name (or epoch.<field>) with a tag").arg(n));
            if (n.startsWith(QLatin1String("epoch.")) && !epochFields().contains(n.mid(6)))
                return refusal(file, kv.first, QStringLiteral("tags: an epoch has %1").arg(epochFields().join(QStringLiteral(", "))));
            s.tags.insert(n, q(kv.second.Scalar()));
        }
        bool epochs = false;
        for (auto it = s.tags.cbegin(); it != s.tags.cend(); ++it) epochs = epochs || it.key().startsWith(QLatin1String("epoch."));
        if (epochs && !s.tags.contains(QStringLiteral("epoch.train_time")))
            return refusal(file, tags, QStringLiteral("tags: epoch fields need epoch.train_time, the epoch's seconds"));
    }
    if (const auto nersc = node["nersc"]) {
        if (!nersc.IsScalar() || !YAML::convert<bool>::decode(nersc, s.nersc))
            return refusal(file, nersc, QStringLiteral("nersc: true or false"));
    }
    if (const auto patterns = node["patterns"]) {
        if (!patterns.IsSequence()) return refusal(file, patterns, QStringLiteral("patterns: expected a list of regular expressions"));
        for (const auto& item : patterns) {
            auto p = pattern(file, item);
            if (!p) return p.error();
            s.patterns << *p;
        }
    }
    if (!s.isSet())
        return Error{ErrorCode::ConfigInvalid, QStringLiteral("metrics: give tensorboard, nersc or patterns"),
                     yamlLocation(file, node.Mark())};
    return s;
}

Expected<MetricSources> loadMetricSources(const QString& file)
{
    if (!QFileInfo(file).isFile()) return Error{ErrorCode::ConfigMissing, QStringLiteral("no such run definition"), file};
    try {
        const YAML::Node root = YAML::LoadFile(file.toStdString());
        if (!root.IsMap() || !root["metrics"]) return MetricSources{};
        return parseMetricSources(file, root["metrics"]);
    } catch (const YAML::Exception& e) {
        return Error{ErrorCode::ConfigYaml, QStringLiteral("malformed YAML: ") + q(e.msg), yamlLocation(file, e.mark)};
    }
}

}  // namespace scaledesk
