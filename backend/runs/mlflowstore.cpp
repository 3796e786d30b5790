#include "runs/mlflowstore.h"

#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QFileInfo>

#include <yaml-cpp/yaml.h>

#include <limits>

namespace scaledesk::mlflow {

namespace {

Expected<YAML::Node> loadMeta(const QString& path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return Error{ErrorCode::ImportSource, f.errorString(), path};
    try {
        YAML::Node node = YAML::Load(f.readAll().toStdString());
        if (!node.IsMap()) return Error{ErrorCode::ImportSource, QStringLiteral("meta.yaml is not a mapping"), path};
        return node;
    } catch (const YAML::Exception& e) {
        return Error{ErrorCode::ImportSource, QString::fromStdString(e.msg), QStringLiteral("%1:%2").arg(path).arg(e.mark.line + 1)};
    }
}

QString text(const YAML::Node& meta, const char* key)
{
    const YAML::Node v = meta[key];
    return v && v.IsScalar() ? QString::fromStdString(v.Scalar()) : QString();
}

// Every file under `dir` as key → its text (trimmed): params/ and tags/.
QMap<QString, QString> keyFiles(const QString& dir)
{
    QMap<QString, QString> out;
    QDirIterator it(dir, QDir::Files, QDirIterator::Subdirectories);
    while (it.hasNext()) {
        const QString path = it.next();
        QFile f(path);
        if (f.open(QIODevice::ReadOnly)) out.insert(QDir(dir).relativeFilePath(path), QString::fromUtf8(f.readAll()).trimmed());
    }
    return out;
}

QList<MetricPoint> readMetric(const QString& path, QStringList* warnings)
{
    QList<MetricPoint> out;
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) {
        *warnings << QStringLiteral("%1: %2").arg(path, f.errorString());
        return out;
    }
    int lineNo = 0;
    for (const QByteArray& raw : f.readAll().split('\n')) {
        ++lineNo;
        const QByteArray line = raw.trimmed();
        if (line.isEmpty()) continue;
        const QList<QByteArray> cells = line.simplified().split(' ');
        bool okT = false, okV = false, okS = true;
        MetricPoint p;
        if (cells.size() == 2 || cells.size() == 3) {
            p.timestampMs = cells[0].toLongLong(&okT);
            p.value = cells[1].toDouble(&okV);
            if (!okV && (cells[1] == "nan" || cells[1] == "NaN")) {
                p.value = std::numeric_limits<double>::quiet_NaN();
                okV = true;
            }
            if (cells.size() == 3) p.step = cells[2].toLongLong(&okS);
        }
        if (!okT || !okV || !okS) {
            *warnings
                << QStringLiteral("%1:%2: not `timestamp value step`: %3").arg(path).arg(lineNo).arg(QString::fromUtf8(line.left(60)));
            continue;
        }
        out << p;
    }
    return out;
}

}  // namespace

bool isExperimentDir(const QString& dir)
{
    const QString meta = dir + QStringLiteral("/meta.yaml");
    if (!QFileInfo::exists(meta)) return false;
    auto node = loadMeta(meta);
    return node && (*node)["experiment_id"] && !(*node)["run_id"] && !(*node)["run_uuid"];
}

Expected<Experiment> readExperiment(const QString& dir)
{
    auto meta = loadMeta(dir + QStringLiteral("/meta.yaml"));
    if (!meta) return meta.error();
    Experiment e;
    e.dir = dir;
    e.id = text(*meta, "experiment_id");
    e.name = text(*meta, "name");
    for (const QString& sub : QDir(dir).entryList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name)) {
        const QString runDir = QDir(dir).filePath(sub);
        const QString metaPath = runDir + QStringLiteral("/meta.yaml");
        if (!QFileInfo::exists(metaPath)) continue;  // not a run (MLflow keeps other folders here, such as models/)
        auto rm = loadMeta(metaPath);
        if (!rm) return rm.error();
        if (text(*rm, "lifecycle_stage") == QLatin1String("deleted")) continue;
        Run r;
        r.dir = runDir;
        r.id = text(*rm, "run_id");
        if (r.id.isEmpty()) r.id = text(*rm, "run_uuid");
        if (r.id.isEmpty()) return Error{ErrorCode::ImportSource, QStringLiteral("meta.yaml has no run_id"), metaPath};
        r.status = text(*rm, "status").toInt();
        r.startMs = text(*rm, "start_time").toLongLong();
        r.endMs = text(*rm, "end_time").toLongLong();
        r.params = keyFiles(runDir + QStringLiteral("/params"));
        r.tags = keyFiles(runDir + QStringLiteral("/tags"));
        r.name = text(*rm, "run_name");
        if (r.name.isEmpty()) r.name = r.tags.value(QStringLiteral("mlflow.runName"));
        r.parentId = r.tags.value(QStringLiteral("mlflow.parentRunId"));
        const QString metricsDir = runDir + QStringLiteral("/metrics");
        QDirIterator it(metricsDir, QDir::Files, QDirIterator::Subdirectories);
        while (it.hasNext()) {
            const QString path = it.next();
            r.metrics.insert(QDir(metricsDir).relativeFilePath(path), readMetric(path, &e.warnings));
        }
        e.runs << r;
    }
    return e;
}

}  // namespace scaledesk::mlflow
