#include "runs/runstore.h"

#include <QAtomicInt>
#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QSaveFile>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QStandardPaths>

namespace scaledesk {

namespace {
constexpr int kSchema = 1;

Error ioError(const QString& what, const QString& path)
{
    return Error{QStringLiteral("store.io"), what, path};
}
}  // namespace

Workspace::Workspace(QString root) : m_root(QDir::cleanPath(QDir(root).absolutePath())) {}

QString Workspace::defaultRoot()
{
    const QString env = qEnvironmentVariable("SCALEDESK_HOME");
    if (!env.isEmpty()) return env;
    return QStandardPaths::writableLocation(QStandardPaths::GenericDataLocation) + QStringLiteral("/scaledesk");
}

QString Workspace::profilesDir() const { return m_root + QStringLiteral("/profiles"); }
QString Workspace::runsDir() const { return m_root + QStringLiteral("/runs"); }
QString Workspace::runDir(const QString& runId) const { return runsDir() + QLatin1Char('/') + runId; }
QString Workspace::indexPath() const { return m_root + QStringLiteral("/index.sqlite"); }

Status Workspace::ensure() const
{
    for (const QString& d : {m_root, profilesDir(), runsDir()})
        if (!QDir().mkpath(d)) return ioError(QStringLiteral("cannot create the workspace folder"), d);
    return Done{};
}

bool RunStore::validRunId(const QString& id, QString* why)
{
    auto no = [&](const QString& reason) {
        if (why) *why = reason;
        return false;
    };
    if (id.isEmpty()) return no(QStringLiteral("a run id cannot be empty"));
    if (id.size() > 200) return no(QStringLiteral("a run id has at most 200 characters"));
    if (id == QLatin1String(".") || id == QLatin1String("..")) return no(QStringLiteral("'.' and '..' are not run ids"));
    for (QChar c : id) {
        if (c == QLatin1Char('/')) return no(QStringLiteral("a run id cannot contain '/'"));
        if (c.category() == QChar::Other_Control) return no(QStringLiteral("a run id cannot contain control characters"));
    }
    return true;
}

RunStore::RunStore(Workspace workspace) : m_workspace(std::move(workspace))
{
    static QAtomicInt counter;
    m_connection = QStringLiteral("scaledesk-runstore-%1").arg(counter.fetchAndAddRelaxed(1));
}

RunStore::~RunStore()
{
    {
        QSqlDatabase db = QSqlDatabase::database(m_connection, false);
        if (db.isValid()) db.close();
    }
    QSqlDatabase::removeDatabase(m_connection);
}

Expected<std::unique_ptr<RunStore>> RunStore::open(const Workspace& workspace)
{
    if (auto ok = workspace.ensure(); !ok) return ok.error();
    std::unique_ptr<RunStore> store(new RunStore(workspace));
    if (auto ok = store->openIndex(); !ok) return ok.error();
    return store;
}

bool RunStore::indexUsable(QString* why)
{
    QSqlDatabase db = QSqlDatabase::database(m_connection);
    QSqlQuery q(db);
    if (!q.exec(QStringLiteral("PRAGMA quick_check")) || !q.next()) {
        *why = QStringLiteral("unreadable (%1)").arg(q.lastError().text());
        return false;
    }
    if (q.value(0).toString() != QLatin1String("ok")) {
        *why = QStringLiteral("corrupt (%1)").arg(q.value(0).toString());
        return false;
    }
    if (!q.exec(QStringLiteral("PRAGMA user_version")) || !q.next() || q.value(0).toInt() != kSchema) {
        *why = QStringLiteral("missing or of another schema");
        return false;
    }
    return true;
}

Status RunStore::openIndex()
{
    const QString path = m_workspace.indexPath();
    const bool existed = QFile::exists(path);
    {
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), m_connection);
        db.setDatabaseName(path);
        db.setConnectOptions(QStringLiteral("QSQLITE_BUSY_TIMEOUT=5000"));
        if (!db.open()) {
            // A file that is not a database at all: move it aside and start over.
            m_rebuildReason = QStringLiteral("the index could not be opened: ") + db.lastError().text();
        }
    }
    QString why;
    if (m_rebuildReason.isEmpty() && indexUsable(&why)) return Done{};
    if (m_rebuildReason.isEmpty()) m_rebuildReason = existed ? QStringLiteral("the index was ") + why : QStringLiteral("there was no index");
    if (auto n = rebuildIndex(); !n) return n.error();
    return Done{};
}

Expected<int> RunStore::rebuildIndex()
{
    const QString path = m_workspace.indexPath();
    {
        QSqlDatabase db = QSqlDatabase::database(m_connection, false);
        db.close();
    }
    for (const QString& suffix : {QString(), QStringLiteral("-journal"), QStringLiteral("-wal"), QStringLiteral("-shm")})
        QFile::remove(path + suffix);
    QSqlDatabase db = QSqlDatabase::database(m_connection, false);
    if (!db.open()) return ioError(QStringLiteral("cannot create the run index: ") + db.lastError().text(), path);
    QSqlQuery q(db);
    const QString create = QStringLiteral(
        "CREATE TABLE runs (id TEXT PRIMARY KEY, sweep TEXT, profile TEXT, strategy TEXT, nodes INTEGER,"
        " ranks_per_node INTEGER, state TEXT, job_id TEXT, created TEXT, updated TEXT)");
    if (!q.exec(create) || !q.exec(QStringLiteral("CREATE INDEX runs_sweep ON runs(sweep)")) ||
        !q.exec(QStringLiteral("CREATE INDEX runs_state ON runs(state)")))
        return ioError(QStringLiteral("cannot create the run index: ") + q.lastError().text(), path);
    m_warnings.clear();
    int n = 0;
    db.transaction();
    const QDir runs(m_workspace.runsDir());
    for (const QString& id : runs.entryList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name)) {
        auto r = load(id);
        if (!r) {
            m_warnings << r.error().text();
            continue;
        }
        if (auto ok = upsert(*r); !ok) {
            db.rollback();
            return ok.error();
        }
        ++n;
    }
    if (!q.exec(QStringLiteral("PRAGMA user_version = %1").arg(kSchema))) {
        db.rollback();
        return ioError(QStringLiteral("cannot write the run index: ") + q.lastError().text(), path);
    }
    db.commit();
    return n;
}

Status RunStore::upsert(const RunRecord& r)
{
    QSqlQuery q(QSqlDatabase::database(m_connection));
    q.prepare(QStringLiteral(
        "INSERT OR REPLACE INTO runs (id, sweep, profile, strategy, nodes, ranks_per_node, state, job_id, created, updated)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"));
    q.addBindValue(r.id);
    q.addBindValue(r.sweep);
    q.addBindValue(r.profile);
    q.addBindValue(r.strategy);
    q.addBindValue(r.nodes);
    q.addBindValue(r.ranksPerNode);
    q.addBindValue(runStateName(r.state));
    q.addBindValue(r.jobId);
    q.addBindValue(r.created().toString(Qt::ISODateWithMs));
    q.addBindValue(r.history.isEmpty() ? QString() : r.history.last().when.toString(Qt::ISODateWithMs));
    if (!q.exec())
        return ioError(QStringLiteral("cannot update the run index: ") + q.lastError().text(), m_workspace.indexPath());
    return Done{};
}

Status RunStore::save(const RunRecord& record)
{
    QString why;
    if (!validRunId(record.id, &why)) return Error{QStringLiteral("run.id"), why, record.id};
    const QString dir = m_workspace.runDir(record.id);
    if (!QDir().mkpath(dir)) return ioError(QStringLiteral("cannot create the run folder"), dir);
    QSaveFile f(dir + QStringLiteral("/run.json"));
    if (!f.open(QIODevice::WriteOnly)) return ioError(f.errorString(), f.fileName());
    f.write(QJsonDocument(record.toJson()).toJson(QJsonDocument::Indented));
    if (!f.commit()) return ioError(QStringLiteral("cannot write: ") + f.errorString(), f.fileName());
    return upsert(record);
}

Expected<RunRecord> RunStore::load(const QString& runId) const
{
    const QString path = m_workspace.runDir(runId) + QStringLiteral("/run.json");
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) {
        if (!f.exists()) return Error{QStringLiteral("run.unknown"), QStringLiteral("no such run"), runId};
        return ioError(f.errorString(), path);
    }
    QJsonParseError pe;
    const QJsonDocument doc = QJsonDocument::fromJson(f.readAll(), &pe);
    if (pe.error != QJsonParseError::NoError || !doc.isObject())
        return Error{QStringLiteral("run.corrupt"),
                     QStringLiteral("not a run record: %1 at byte %2").arg(pe.errorString()).arg(pe.offset), path};
    RunRecord r;
    QString error;
    if (!RunRecord::fromJson(doc.object(), &r, &error)) return Error{QStringLiteral("run.corrupt"), error, path};
    if (r.id != runId)
        return Error{QStringLiteral("run.corrupt"), QStringLiteral("field 'id' is '%1', not the folder name").arg(r.id), path};
    return r;
}

bool RunStore::exists(const QString& runId) const
{
    return QFile::exists(m_workspace.runDir(runId) + QStringLiteral("/run.json"));
}

QList<RunSummary> RunStore::list(const QString& sweep) const
{
    QSqlQuery q(QSqlDatabase::database(m_connection));
    q.prepare(sweep.isEmpty()
                  ? QStringLiteral("SELECT id, sweep, profile, strategy, nodes, ranks_per_node, state, job_id, created, updated"
                                   " FROM runs ORDER BY created, id")
                  : QStringLiteral("SELECT id, sweep, profile, strategy, nodes, ranks_per_node, state, job_id, created, updated"
                                   " FROM runs WHERE sweep = ? ORDER BY created, id"));
    if (!sweep.isEmpty()) q.addBindValue(sweep);
    QList<RunSummary> out;
    if (!q.exec()) return out;
    while (q.next()) {
        RunSummary s;
        s.id = q.value(0).toString();
        s.sweep = q.value(1).toString();
        s.profile = q.value(2).toString();
        s.strategy = q.value(3).toString();
        s.nodes = q.value(4).toInt();
        s.ranksPerNode = q.value(5).toInt();
        runStateFromName(q.value(6).toString(), &s.state);
        s.jobId = q.value(7).toString();
        s.created = q.value(8).toString();
        s.updated = q.value(9).toString();
        out << s;
    }
    return out;
}

QStringList RunStore::activeRunIds() const
{
    QStringList ids;
    for (const auto& s : list())
        if (isActive(s.state)) ids << s.id;
    return ids;
}

}  // namespace scaledesk
