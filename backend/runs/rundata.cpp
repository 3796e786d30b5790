#include "runs/rundata.h"

#include "config/configresolve.h"
#include "scheduler/shellquote.h"

#include <QDir>

namespace scaledesk {

Expected<QString> ensureGeneratedData(Transport& t, const ClusterProfile& profile, const QString& trainer)
{
    auto root = t.absolutePath(profile.remoteRoot);
    if (!root) return root.error();
    const QString dir = *root + QStringLiteral("/data/generated");
    if (t.stat(dir + QStringLiteral("/valid.h5"))) return dir;
    auto made = t.exec(
        QStringLiteral("mkdir -p %1 && %2 make-data --out %1 --box 128 --val-box 96").arg(shellQuote(dir), shellQuote(trainer)), 600000);
    if (!made) return made.error();
    if (made->exitCode != 0) return Error{ErrorCode::DataMake, QString::fromUtf8(made->err + made->out).trimmed(), dir};
    return dir;
}

namespace {
// The data loader the trainer will use: --data_loader_config in its arguments (the last one
// given, as CLI11 takes it), else the config's.
QString dataLoaderOf(const QMap<QString, ConfigValue>& config, const QStringList& trainerArgs)
{
    QString loader = config.value(QStringLiteral("data_loader_config")).value;
    const QString flag = QStringLiteral("--data_loader_config");
    for (qsizetype i = 0; i < trainerArgs.size(); ++i) {
        if (trainerArgs[i] == flag && i + 1 < trainerArgs.size())
            loader = trainerArgs[i + 1];
        else if (trainerArgs[i].startsWith(flag + QLatin1Char('=')))
            loader = trainerArgs[i].mid(flag.size() + 1);
    }
    return loader.trimmed().remove(QLatin1Char('\'')).remove(QLatin1Char('"'));
}
}  // namespace

Expected<QList<RunDataPath>> runDataPaths(const SubmitOptions& o)
{
    if (o.configFile.isEmpty()) return QList<RunDataPath>();  // a benchmark job reads no data
    auto config = resolvedConfigWithSources(o.configFile, o.configName);
    if (!config) return config.error();
    if (dataLoaderOf(*config, o.trainerArgs) == QLatin1String("synthetic")) return QList<RunDataPath>();
    QList<RunDataPath> paths;
    for (const QString& key : {QStringLiteral("train_path"), QStringLiteral("val_path")}) {
        const ConfigValue v = config->value(key);
        const QString path = v.value.trimmed();
        if (path.isEmpty()) continue;  // the trainer's own config check names a missing key
        paths << RunDataPath{key, path, QStringLiteral("%1:%2").arg(o.configFile).arg(v.line)};
    }
    return paths;
}

namespace {
// What the run's `data` link is called in its folder: a relative data path under it is found there.
const QString kDataLink = QStringLiteral("data/");

// The link rule (checkDataLink) on paths already read from the config.
Status checkDataLinkOf(const QList<RunDataPath>& paths, const SubmitOptions& o, bool linked)
{
    for (const RunDataPath& p : paths) {
        if (p.path.startsWith(QLatin1Char('/'))) continue;
        if (linked && QDir::cleanPath(p.path).startsWith(kDataLink)) continue;
        return Error{
            ErrorCode::DataMissing,
            QStringLiteral("%1 '%2' (config %3) is relative to the run's new folder, where only its `data` link can "
                           "provide it%4: generate the cpu configs' data (submit --make-data; in the launch dialog, "
                           "\"Generate the cpu configs' data\"), link a folder that holds it (--data DIR), or "
                           "give an absolute path")
                .arg(p.key, p.path, o.configName,
                     linked ? QStringLiteral(", and the path is not under data/") : QStringLiteral(", and this launch links no data")),
            p.where};
    }
    return Done{};
}
}  // namespace

Status checkDataLink(const SubmitOptions& o, bool linked)
{
    auto paths = runDataPaths(o);
    if (!paths) return paths.error();
    return checkDataLinkOf(*paths, o, linked);
}

Expected<QStringList> checkRunData(Transport& t, const SubmitOptions& o, const QString& firstRunDir)
{
    auto paths = runDataPaths(o);
    if (!paths) return paths.error();
    if (auto ok = checkDataLinkOf(*paths, o, !o.dataDir.isEmpty()); !ok) return ok.error();
    QStringList warnings;
    for (const RunDataPath& p : *paths) {
        if (p.path.startsWith(QLatin1Char('/'))) {
            if (auto found = t.stat(p.path); !found) {
                if (found.error().code != ErrorCode::TransportNoFile) return found.error();
                warnings << QStringLiteral("%1: %2 '%3' (config %4) is not on %5; the job must see it, or it fails when it starts")
                                .arg(p.where, p.key, p.path, o.configName, t.describe());
            }
            continue;
        }
        const QString dir = o.dataDir.startsWith(QLatin1Char('/')) ? o.dataDir : firstRunDir + QLatin1Char('/') + o.dataDir;
        const QString file = QDir::cleanPath(dir + QLatin1Char('/') + QDir::cleanPath(p.path).mid(kDataLink.size()));
        if (auto found = t.stat(file); !found) {
            if (found.error().code != ErrorCode::TransportNoFile) return found.error();
            return Error{ErrorCode::DataMissing,
                         QStringLiteral("%1 '%2' (config %3) would be %4 through the run's `data` link to %5, and there is no such "
                                        "file on %6")
                             .arg(p.key, p.path, o.configName, file, o.dataDir, t.describe()),
                         p.where};
        }
    }
    return warnings;
}

}  // namespace scaledesk
