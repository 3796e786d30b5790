#include "runs/runsubmitter.h"

#include "config/configresolve.h"
#include "runs/deploy.h"
#include "runs/handover.h"
#include "scheduler/shellquote.h"

#include <yaml-cpp/yaml.h>

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QLockFile>
#include <QSaveFile>

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

Expected<QString> profileTrainer(Transport& t, const ClusterProfile& p)
{
    if (p.trainerDeploy) return deployedTrainer(t, p);
    if (p.trainerPath.isEmpty())
        return Error{ErrorCode::TrainerMissing,
                     QStringLiteral("no scaledesk-train for profile %1: set trainer.path, or SCALEDESK_TRAIN").arg(p.name), QString()};
    return p.trainerPath;
}

RunSubmitter::RunSubmitter(RunStore& store, Transport& transport, Scheduler& scheduler, ClusterProfile profile)
    : m_store(store), m_transport(transport), m_scheduler(scheduler), m_profile(std::move(profile))
{}

Status RunSubmitter::checkConfig(const QString& configFile, const QString& configName)
{
    if (!QFileInfo(configFile).isFile()) return Error{ErrorCode::ConfigMissing, QStringLiteral("no such config file"), configFile};
    try {
        const YAML::Node root = YAML::LoadFile(configFile.toStdString());
        if (!root.IsMap()) return Error{ErrorCode::ConfigInvalid, QStringLiteral("expected a mapping of named configs"), configFile};
        if (!root[configName.toStdString()])
            return Error{ErrorCode::ConfigInvalid, QStringLiteral("no config named '%1' in the file").arg(configName), configFile};
    } catch (const YAML::Exception& e) {
        return Error{ErrorCode::ConfigYaml, QStringLiteral("malformed YAML: ") + QString::fromStdString(e.msg),
                     QStringLiteral("%1:%2:%3").arg(configFile).arg(e.mark.line + 1).arg(e.mark.column + 1)};
    }
    return Done{};
}

Expected<QString> RunSubmitter::remoteRunDir(const QString& runId)
{
    if (m_remoteRoot.isEmpty()) {
        auto root = m_transport.absolutePath(m_profile.remoteRoot);
        if (!root) return root.error();
        m_remoteRoot = *root;
    }
    return m_remoteRoot + QStringLiteral("/runs/") + runId;
}

JobRequest RunSubmitter::request(const RunPoint& point, const SubmitOptions& o) const
{
    JobRequest r;
    r.profile = m_profile;
    r.point = point;
    r.configName = o.configName;
    r.trainerPath = o.trainerPath;
    r.trainerArgs = o.trainerArgs;
    r.dataDir = o.dataDir;
    // Data under the remote root is linked relative to the run folder (<root>/runs/<id>), so a
    // copied or moved root (the local profile's lives in the workspace) keeps working.
    if (!m_remoteRoot.isEmpty() && r.dataDir.startsWith(m_remoteRoot + QLatin1Char('/')))
        r.dataDir = QDir(m_remoteRoot + QStringLiteral("/runs/") + point.runId).relativeFilePath(r.dataDir);
    return r;
}

Expected<QString> RunSubmitter::render(const RunPoint& point, const SubmitOptions& options)
{
    return m_scheduler.renderScript(request(point, options));
}

Expected<RunRecord> RunSubmitter::submit(const RunPoint& point, const SubmitOptions& o)
{
    QString why;
    if (!RunStore::validRunId(point.runId, &why)) return Error{ErrorCode::RunId, why, point.runId};
    // A benchmark job (point.task) with no config file has no config.yaml.
    const bool withConfig = point.task.isEmpty() || !o.configFile.isEmpty();
    QByteArray configBytes;
    if (withConfig) {
        QFile config(o.configFile);
        if (!config.open(QIODevice::ReadOnly)) return Error{ErrorCode::ConfigMissing, config.errorString(), o.configFile};
        configBytes = config.readAll();
    }

    RunRecord rec;
    rec.id = point.runId;
    rec.sweep = point.sweep;
    rec.profile = m_profile.name;
    rec.configFile = withConfig ? QFileInfo(o.configFile).absoluteFilePath() : QString();
    rec.configName = o.configName;
    rec.strategy = point.strategy;
    rec.nodes = point.nodes;
    rec.ranksPerNode = point.ranksPerNode;
    rec.repetition = point.repetition;
    rec.localBatch = point.localBatch;
    rec.scaling = point.scaling;
    rec.task = point.task;
    rec.transition(RunState::Draft);
    // Held for the whole submit: a poll (of this process or another) leaves a run alone while its
    // submit is under way, and reconciles it only once the submitting process is gone.
    const QString localDir = m_store.workspace().runDir(rec.id);
    QDir().mkpath(localDir);
    QLockFile submitting(localDir + QStringLiteral("/.submitting"));
    submitting.setStaleLockTime(0);
    if (!submitting.tryLock(0)) return Error{ErrorCode::RunExists, QStringLiteral("another process is submitting this run"), rec.id};
    // Recorded before the first remote action (create refuses an id that exists).
    rec.submitStep = QStringLiteral("upload");
    rec.transition(RunState::Submitting, QStringLiteral("uploading to %1").arg(m_transport.describe()));
    if (auto ok = m_store.create(rec); !ok) return ok.error();

    // Every later step changes the stored record under its lock, never a copy of it.
    auto record = [&](const std::function<void(RunRecord&)>& change) -> Status {
        auto saved = m_store.update(rec.id, [&](RunRecord& r) {
            change(r);
            return Status(Done{});
        });
        if (!saved) return saved.error();
        rec = *saved;
        return Done{};
    };
    auto fail = [&](const Error& e) -> Expected<RunRecord> {
        if (auto ok = record([&](RunRecord& r) { r.transition(RunState::SubmitFailed, QStringLiteral("failed to submit: ") + e.text()); });
            !ok)
            return ok.error();
        return e;
    };

    // The exact config the run gets, in the mirror too: comparisons and reports read it there.
    if (withConfig) {
        QSaveFile local(m_store.workspace().runDir(rec.id) + QStringLiteral("/config.yaml"));
        if (!local.open(QIODevice::WriteOnly) || local.write(configBytes) != configBytes.size() || !local.commit())
            return fail(
                Error{ErrorCode::StoreIo, QStringLiteral("cannot write the run's config: ") + local.errorString(), local.fileName()});
    }

    auto dir = remoteRunDir(point.runId);
    if (!dir) return fail(dir.error());
    if (auto ok = record([&](RunRecord& r) { r.remoteDir = *dir; }); !ok) return ok.error();
    if (auto ok = m_transport.makeDirs(rec.remoteDir); !ok) return fail(ok.error());
    if (withConfig)
        if (auto ok = m_transport.writeFile(rec.remoteDir + QStringLiteral("/config.yaml"), configBytes); !ok) return fail(ok.error());
    const QString script = m_scheduler.renderScript(request(point, o));
    if (auto ok = m_transport.writeFile(rec.remoteDir + QLatin1Char('/') + m_scheduler.scriptName(), script.toUtf8(), 0755); !ok)
        return fail(ok.error());

    if (auto ok = record([&](RunRecord& r) {
            r.submitStep = QStringLiteral("sbatch");
            r.transition(RunState::Submitting, QStringLiteral("handing the job to %1").arg(m_scheduler.kind()));
        });
        !ok)
        return ok.error();
    auto handed = handOver(m_store, m_scheduler, rec.id, m_scheduler.kind());
    if (!handed) return fail(handed.error());
    return *handed;
}

}  // namespace scaledesk
