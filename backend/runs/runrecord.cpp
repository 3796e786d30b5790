#include "runs/runrecord.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>

#include <array>
#include <cmath>
#include <utility>

namespace scaledesk {

namespace {
constexpr std::array<std::pair<RunState, const char*>, 11> kNames{{
    {RunState::Draft, "draft"},
    {RunState::Submitting, "submitting"},
    {RunState::Queued, "queued"},
    {RunState::Running, "running"},
    {RunState::Requeued, "requeued"},
    {RunState::Completed, "completed"},
    {RunState::Failed, "failed"},
    {RunState::Cancelled, "cancelled"},
    {RunState::Timeout, "timeout"},
    {RunState::SubmitFailed, "submit-failed"},
    {RunState::Lost, "lost"},
}};
}  // namespace

QString runStateName(RunState state)
{
    for (const auto& [s, n] : kNames)
        if (s == state) return QString::fromLatin1(n);
    return QStringLiteral("unknown");
}

bool runStateFromName(const QString& name, RunState* state)
{
    for (const auto& [s, n] : kNames)
        if (name == QLatin1String(n)) {
            *state = s;
            return true;
        }
    return false;
}

bool isFinal(RunState s)
{
    return s == RunState::Completed || s == RunState::Failed || s == RunState::Cancelled || s == RunState::Timeout ||
        s == RunState::SubmitFailed || s == RunState::Lost;
}

bool isActive(RunState s)
{
    return s == RunState::Submitting || s == RunState::Queued || s == RunState::Running || s == RunState::Requeued;
}

void RunRecord::transition(RunState to, const QString& note)
{
    if (!history.isEmpty() && history.last().state == to && (note.isEmpty() || history.last().note == note)) return;
    history.append({to, QDateTime::currentDateTimeUtc(), note});
    state = to;
    if (!note.isEmpty()) message = note;
}

QDateTime RunRecord::created() const { return history.isEmpty() ? QDateTime() : history.first().when; }

QJsonObject RunRecord::toJson() const
{
    QJsonArray hist;
    for (const auto& t : history)
        hist.append(QJsonObject{{QStringLiteral("state"), runStateName(t.state)},
                                {QStringLiteral("t"), t.when.toString(Qt::ISODateWithMs)},
                                {QStringLiteral("note"), t.note}});
    QJsonObject off;
    for (auto it = offsets.begin(); it != offsets.end(); ++it) off.insert(it.key(), double(it.value()));
    QJsonObject mt;
    for (auto it = mtimes.begin(); it != mtimes.end(); ++it) mt.insert(it.key(), double(it.value()));
    QJsonObject j{
        {QStringLiteral("schema"), 1},
        {QStringLiteral("id"), id},
        {QStringLiteral("sweep"), sweep},
        {QStringLiteral("profile"), profile},
        {QStringLiteral("config_file"), configFile},
        {QStringLiteral("config_name"), configName},
        {QStringLiteral("strategy"), strategy},
        {QStringLiteral("nodes"), nodes},
        {QStringLiteral("ranks_per_node"), ranksPerNode},
        {QStringLiteral("repetition"), repetition},
        {QStringLiteral("local_batch"), localBatch},
        {QStringLiteral("scaling"), scaling},
        {QStringLiteral("remote_dir"), remoteDir},
        {QStringLiteral("job_id"), jobId},
        {QStringLiteral("submit_step"), submitStep},
        {QStringLiteral("state"), runStateName(state)},
        {QStringLiteral("message"), message},
        {QStringLiteral("history"), hist},
        {QStringLiteral("offsets"), off},
        {QStringLiteral("mtimes"), mt},
    };
    if (!task.isEmpty()) j.insert(QStringLiteral("task"), task);
    if (imported())
        j.insert(QStringLiteral("origin"), QJsonObject{{QStringLiteral("kind"), originKind}, {QStringLiteral("path"), originPath}});
    return j;
}

bool RunRecord::fromJson(const QJsonObject& j, RunRecord* r, QString* error)
{
    auto str = [&](const char* key) { return j.value(QLatin1String(key)).toString(); };
    RunRecord out;
    out.id = str("id");
    if (out.id.isEmpty()) {
        *error = QStringLiteral("field 'id' is missing");
        return false;
    }
    if (!runStateFromName(str("state"), &out.state)) {
        *error = QStringLiteral("field 'state': unknown state '%1'").arg(str("state"));
        return false;
    }
    out.sweep = str("sweep");
    out.profile = str("profile");
    out.configFile = str("config_file");
    out.configName = str("config_name");
    out.strategy = str("strategy");
    out.nodes = j.value(QStringLiteral("nodes")).toInt(1);
    out.ranksPerNode = j.value(QStringLiteral("ranks_per_node")).toInt(1);
    out.repetition = j.value(QStringLiteral("repetition")).toInt(1);
    out.localBatch = j.value(QStringLiteral("local_batch")).toInt(0);
    out.scaling = str("scaling");
    out.task = str("task");
    out.remoteDir = str("remote_dir");
    out.jobId = str("job_id");
    out.submitStep = str("submit_step");
    out.message = str("message");
    const QJsonObject origin = j.value(QStringLiteral("origin")).toObject();
    out.originKind = origin.value(QStringLiteral("kind")).toString();
    out.originPath = origin.value(QStringLiteral("path")).toString();
    for (const auto& v : j.value(QStringLiteral("history")).toArray()) {
        const QJsonObject t = v.toObject();
        RunTransition tr;
        if (!runStateFromName(t.value(QStringLiteral("state")).toString(), &tr.state)) {
            *error = QStringLiteral("field 'history': unknown state '%1'").arg(t.value(QStringLiteral("state")).toString());
            return false;
        }
        tr.when = QDateTime::fromString(t.value(QStringLiteral("t")).toString(), Qt::ISODateWithMs);
        tr.note = t.value(QStringLiteral("note")).toString();
        out.history.append(tr);
    }
    // Byte offsets and mtimes: whole numbers from 0 to 2^53 (what a JSON double holds exactly).
    for (auto [field, into] : {std::pair{"offsets", &out.offsets}, std::pair{"mtimes", &out.mtimes}}) {
        const QJsonObject o = j.value(QLatin1String(field)).toObject();
        for (auto it = o.begin(); it != o.end(); ++it) {
            const double v = it.value().toDouble(-1);
            if (!(v >= 0 && v <= 9007199254740992.0) || v != std::floor(v)) {
                *error = QStringLiteral("field '%1': '%2' is not a whole number from 0 to 2^53").arg(QLatin1String(field), it.key());
                return false;
            }
            into->insert(it.key(), qint64(v));
        }
    }
    *r = std::move(out);
    return true;
}

QJsonObject readRunManifest(const QString& runDir)
{
    QFile f(runDir + QStringLiteral("/manifest.json"));
    if (!f.open(QIODevice::ReadOnly)) return {};
    return QJsonDocument::fromJson(f.readAll()).object();
}

}  // namespace scaledesk
