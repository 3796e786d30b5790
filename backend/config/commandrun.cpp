#include "config/commandrun.h"
#include "config/metricsources.h"
#include "config/yamllocation.h"

#include "runs/sweep.h"

#include <yaml-cpp/yaml.h>

#include <QDir>
#include <QFileInfo>
#include <QRegularExpression>
#include <functional>

namespace scaledesk {

namespace {

QString q(const std::string& s) { return QString::fromStdString(s); }

struct Refusal {
    Error error;
};

[[noreturn]] void refuse(const QString& file, const YAML::Node& at, const QString& what)
{
    throw Refusal{Error{ErrorCode::ConfigInvalid, what, yamlLocation(file, at.Mark())}};
}

/// Fills or checks a template: each {name} is looked up; `{{`/`}}` are braces. With `values` null
/// only the names are checked (a refusal names the first unknown one).
QString expand(const QString& text, const std::function<QString(const QString&)>& value, QString* unknown)
{
    QString out;
    out.reserve(text.size());
    for (qsizetype i = 0; i < text.size(); ++i) {
        const QChar c = text[i];
        if ((c == QLatin1Char('{') || c == QLatin1Char('}')) && i + 1 < text.size() && text[i + 1] == c) {
            out += c;
            ++i;
            continue;
        }
        if (c == QLatin1Char('}')) {
            if (unknown) *unknown = QStringLiteral("a '}' without its '{' (write }} for a brace)");
            return out;
        }
        if (c != QLatin1Char('{')) {
            out += c;
            continue;
        }
        const qsizetype end = text.indexOf(QLatin1Char('}'), i + 1);
        if (end < 0) {
            if (unknown) *unknown = QStringLiteral("a '{' without its '}' (write {{ for a brace)");
            return out;
        }
        const QString name = text.mid(i + 1, end - i - 1);
        if (!commandPlaceholders().contains(name)) {
            if (unknown)
                *unknown =
                    QStringLiteral("no placeholder {%1}; there are {%2}").arg(name, commandPlaceholders().join(QStringLiteral("}, {")));
            return out;
        }
        out += value ? value(name) : QString();
        i = end;
    }
    return out;
}

QString checkedTemplate(const QString& file, const YAML::Node& node, const QString& key)
{
    if (!node.IsScalar()) refuse(file, node, QStringLiteral("%1: expected a string").arg(key));
    const QString text = q(node.Scalar());
    QString problem;
    expand(text, {}, &problem);
    if (!problem.isEmpty()) refuse(file, node, QStringLiteral("%1 '%2': %3").arg(key, text, problem));
    return text;
}

QStringList checkedList(const QString& file, const YAML::Node& node, const QString& key)
{
    if (!node.IsSequence()) refuse(file, node, QStringLiteral("%1: expected a list of strings, e.g. [python3, train.py]").arg(key));
    QStringList items;
    for (const auto& item : node) items << checkedTemplate(file, item, key);
    return items;
}

/// `code` (a folder here, sent at each launch), or `code_on_cluster` (a path there, a template),
/// and `sync`'s limits for the first.
void parseCode(const QString& file, const YAML::Node& root, CommandRun& run)
{
    const auto code = root["code"];
    const auto there = root["code_on_cluster"];
    if (code && there)
        refuse(file, there, QStringLiteral("code_on_cluster: give either `code` (a folder here, sent) or `code_on_cluster`"));
    if (code) {
        run.code = checkedTemplate(file, code, QStringLiteral("code"));
        if (run.code.contains(QLatin1Char('{')))
            refuse(file, code,
                   QStringLiteral("code: a folder on this machine, sent at each launch, takes no placeholders (a path on the cluster "
                                  "goes in code_on_cluster)"));
        // A relative folder is the definition's own neighbourhood, wherever the command is given from.
        if (run.code.startsWith(QLatin1String("~/"))) run.code = QDir::homePath() + run.code.mid(1);
        run.code = QDir::cleanPath(QFileInfo(file).absoluteDir().filePath(run.code));
        if (!QFileInfo(run.code).isDir()) refuse(file, code, QStringLiteral("code: no folder %1 on this machine").arg(run.code));
        run.sendCode = true;
    } else if (there) {
        run.code = checkedTemplate(file, there, QStringLiteral("code_on_cluster"));
        if (run.code.contains(QLatin1String("{code}"))) refuse(file, there, QStringLiteral("code_on_cluster: cannot name itself ({code})"));
        if (!run.code.startsWith(QLatin1Char('/')) && !run.code.startsWith(QLatin1String("~/")) && !run.code.startsWith(QLatin1Char('{')))
            refuse(file, there, QStringLiteral("code_on_cluster: give an absolute path or ~/... on the cluster"));
    }
    if (const auto sync = root["sync"]) {
        if (!code) refuse(file, sync, QStringLiteral("sync: only for `code`, the folder that is sent"));
        if (!sync.IsMap()) refuse(file, sync, QStringLiteral("sync: expected a mapping {max_file_mb: N, max_total_mb: N}"));
        for (const auto& kv : sync) {
            const QString key = q(kv.first.as<std::string>());
            qint64* limit = key == QLatin1String("max_file_mb") ? &run.syncMaxFileBytes
                : key == QLatin1String("max_total_mb")          ? &run.syncMaxTotalBytes
                                                                : nullptr;
            if (!limit) refuse(file, kv.first, QStringLiteral("sync: unknown key '%1'; there are max_file_mb, max_total_mb").arg(key));
            double mb = 0;
            if (!kv.second.IsScalar() || !YAML::convert<double>::decode(kv.second, mb) || !(mb > 0) || mb > 1e6)
                refuse(file, kv.second, QStringLiteral("sync.%1: expected a number of megabytes above 0").arg(key));
            *limit = qint64(mb * (1 << 20));
        }
    }
}

CommandRun parse(const QString& file, const YAML::Node& root)
{
    if (!root.IsMap()) refuse(file, root, QStringLiteral("a run definition is a mapping with a `command` list"));
    CommandRun run;
    run.file = file;
    static const QStringList keys{QStringLiteral("command"),     QStringLiteral("code"),     QStringLiteral("code_on_cluster"),
                                  QStringLiteral("sync"),        QStringLiteral("setup"),    QStringLiteral("env"),
                                  QStringLiteral("stop_signal"), QStringLiteral("variants"), QStringLiteral("metrics"),
                                  QStringLiteral("torchrun")};
    for (const auto& kv : root) {
        const QString key = q(kv.first.as<std::string>());
        if (!keys.contains(key))
            refuse(file, kv.first, QStringLiteral("unknown key '%1'; a run definition has %2").arg(key, keys.join(QStringLiteral(", "))));
    }
    if (!root["command"]) refuse(file, root, QStringLiteral("no `command`: give the program and its arguments as a list"));
    run.command = checkedList(file, root["command"], QStringLiteral("command"));
    if (run.command.isEmpty() || run.command.first().trimmed().isEmpty())
        refuse(file, root["command"], QStringLiteral("command: give at least the program to run"));
    parseCode(file, root, run);
    if (const auto setup = root["setup"]) {
        if (!setup.IsScalar()) refuse(file, setup, QStringLiteral("setup: expected shell lines as one string (use |)"));
        run.setup = q(setup.Scalar());
    }
    if (const auto env = root["env"]) {
        if (!env.IsMap()) refuse(file, env, QStringLiteral("env: expected a mapping NAME: value"));
        static const QRegularExpression name(QStringLiteral("^[A-Za-z_][A-Za-z0-9_]*$"));
        for (const auto& kv : env) {
            const QString n = q(kv.first.as<std::string>());
            if (!name.match(n).hasMatch()) refuse(file, kv.first, QStringLiteral("env: '%1' is not a variable name").arg(n));
            run.environment.push_back({n, checkedTemplate(file, kv.second, QStringLiteral("env.") + n)});
        }
    }
    if (const auto stop = root["stop_signal"]) {
        // srun forwards these to every task; INT would be srun's own (the first prints its status).
        static const QStringList stopSignals{QStringLiteral("USR1"), QStringLiteral("USR2"), QStringLiteral("TERM"), QStringLiteral("HUP")};
        QString name = stop.IsScalar() ? q(stop.Scalar()).toUpper() : QString();
        if (name.startsWith(QLatin1String("SIG"))) name = name.mid(3);
        if (!stopSignals.contains(name))
            refuse(file, stop, QStringLiteral("stop_signal: one of %1").arg(stopSignals.join(QStringLiteral(", "))));
        run.stopSignal = name;
    }
    if (const auto variants = root["variants"]) {
        if (!variants.IsMap()) refuse(file, variants, QStringLiteral("variants: expected a mapping name: [extra arguments]"));
        // A variant's name is part of its runs' ids and folders.
        static const QRegularExpression safe(QStringLiteral("^[A-Za-z0-9][A-Za-z0-9_.]{0,31}$"));
        for (const auto& kv : variants) {
            const QString n = q(kv.first.as<std::string>());
            if (!safe.match(n).hasMatch())
                refuse(file, kv.first, QStringLiteral("variants: '%1' must be 1-32 letters, digits, '_' or '.' (it names runs)").arg(n));
            run.variants.push_back({n, checkedList(file, kv.second, QStringLiteral("variants.") + n)});
        }
    }
    if (const auto torchrun = root["torchrun"]) {
        run.torchrun = torchrun.IsScalar() ? QStringList{checkedTemplate(file, torchrun, QStringLiteral("torchrun"))}
                                           : checkedList(file, torchrun, QStringLiteral("torchrun"));
        if (run.torchrun.isEmpty() || run.torchrun.first().trimmed().isEmpty())
            refuse(file, torchrun,
                   QStringLiteral("torchrun: the command that starts torchrun, e.g. torchrun or [python3, -m, torch.distributed.run]"));
        // torchrun hands TERM, INT and HUP to its workers; USR1 and USR2 would end it instead.
        if (!root["stop_signal"]) run.stopSignal = QStringLiteral("TERM");
        if (run.stopSignal != QLatin1String("TERM") && run.stopSignal != QLatin1String("HUP"))
            refuse(file, root["stop_signal"],
                   QStringLiteral("stop_signal: torchrun passes only TERM and HUP on to its workers (not %1)").arg(run.stopSignal));
    }
    if (const auto metrics = root["metrics"]) {
        auto sources = parseMetricSources(file, metrics);
        if (!sources) throw Refusal{sources.error()};
        run.metrics = *sources;
    }
    // Without variants a sweep's runs are all of one kind: "default", with no extra arguments.
    if (run.variants.isEmpty()) run.variants.push_back({QStringLiteral("default"), {}});
    return run;
}

}  // namespace

QStringList CommandRun::variantNames() const
{
    QStringList names;
    for (const auto& [name, args] : variants) names << name;
    return names;
}

QStringList commandPlaceholders()
{
    static const QStringList names{QStringLiteral("run_id"),     QStringLiteral("run_dir"),    QStringLiteral("sweep"),
                                   QStringLiteral("variant"),    QStringLiteral("nodes"),      QStringLiteral("ranks_per_node"),
                                   QStringLiteral("world_size"), QStringLiteral("repetition"), QStringLiteral("local_batch"),
                                   QStringLiteral("code")};
    return names;
}

Expected<CommandRun> loadCommandRun(const QString& file)
{
    if (!QFileInfo(file).isFile()) return Error{ErrorCode::ConfigMissing, QStringLiteral("no such run definition"), file};
    try {
        return parse(file, YAML::LoadFile(file.toStdString()));
    } catch (const Refusal& r) {
        return r.error;
    } catch (const YAML::Exception& e) {
        return Error{ErrorCode::ConfigYaml, QStringLiteral("malformed YAML: ") + q(e.msg), yamlLocation(file, e.mark)};
    }
}

bool usesPlaceholder(const CommandRun& run, const QString& name)
{
    QStringList all = run.command;
    all << run.code << run.torchrun;
    for (const auto& [n, value] : run.environment) all << value;
    for (const auto& [n, args] : run.variants) all << args;
    // The templates' own reader finds the placeholders ({{local_batch}} is literal text, not one).
    bool used = false;
    for (const QString& text : all)
        expand(
            text,
            [&](const QString& placeholder) {
                used = used || placeholder == name;
                return QString();
            },
            nullptr);
    return used;
}

bool isCommandRunFile(const QString& file)
{
    try {
        const YAML::Node root = YAML::LoadFile(file.toStdString());
        return root.IsMap() && root["command"];
    } catch (const YAML::Exception&) {
        return false;
    }
}

Status checkCommandBatch(const CommandRun& run, const SweepSpec& spec)
{
    if (!usesPlaceholder(run, QStringLiteral("local_batch")) || spec.scaling == SweepSpec::Scaling::Strong || spec.localBatch > 0)
        return Done{};
    return Error{ErrorCode::Usage,
                 QStringLiteral("the command takes {local_batch}: give a per-rank batch (--local-batch N) or strong scaling's "
                                "global batch (--scaling strong --global-batch N)"),
                 run.file};
}

namespace {
QString fill(const CommandRun& run, const QString& text, const CommandValues& v)
{
    const RunPoint& p = *v.point;
    return expand(
        text,
        [&](const QString& name) -> QString {
            if (name == QLatin1String("run_id")) return p.runId;
            if (name == QLatin1String("run_dir")) return v.runDir;
            if (name == QLatin1String("sweep")) return p.sweep;
            if (name == QLatin1String("variant")) return p.strategy;
            if (name == QLatin1String("nodes")) return QString::number(p.nodes);
            if (name == QLatin1String("ranks_per_node")) return QString::number(p.ranksPerNode);
            if (name == QLatin1String("world_size")) return QString::number(p.worldSize());
            if (name == QLatin1String("repetition")) return QString::number(p.repetition);
            if (name == QLatin1String("local_batch")) return QString::number(p.localBatch);
            if (name == QLatin1String("code")) return fill(run, run.code, v);  // parse refused {code} inside code
            return QString();
        },
        nullptr);
}
}  // namespace

QStringList commandArguments(const CommandRun& run, const CommandValues& values)
{
    QStringList argv;
    for (const QString& item : run.command) argv << fill(run, item, values);
    for (const auto& [name, args] : run.variants)
        if (name == values.point->strategy)
            for (const QString& item : args) argv << fill(run, item, values);
    return argv;
}

QString commandCode(const CommandRun& run, const CommandValues& values) { return fill(run, run.code, values); }

QStringList commandTorchrun(const CommandRun& run, const CommandValues& values)
{
    QStringList argv;
    for (const QString& item : run.torchrun) argv << fill(run, item, values);
    return argv;
}

QList<std::pair<QString, QString>> commandEnvironment(const CommandRun& run, const CommandValues& values)
{
    QList<std::pair<QString, QString>> env;
    for (const auto& [name, value] : run.environment) env.push_back({name, fill(run, value, values)});
    return env;
}

}  // namespace scaledesk
