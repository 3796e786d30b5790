#include "runs/runstore.h"

#include <QAtomicInt>
#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonDocument>
#include <QLockFile>
#include <QMutex>
#include <QSaveFile>
#include <QSet>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QStandardPaths>
#include <QThread>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <map>

namespace scaledesk {

namespace {
constexpr int kSchema = 4;
constexpr int kLockWaitMs = 30000;

// One mutex per run (by workspace and id) for the threads of this process; the lock file's flock
// is for other processes (two threads' flocks on their own descriptors would also exclude each
// other, but the mutex makes waiting cheap and fair).
std::shared_ptr<QMutex> runMutex(const QString& key)
{
    static QMutex guard;
    static std::map<QString, std::shared_ptr<QMutex>> mutexes;
    QMutexLocker locker(&guard);
    auto& m = mutexes[key];
    if (!m) m = std::make_shared<QMutex>();
    return m;
}

// Workspaces whose index passed PRAGMA quick_check in this process: later opens (one per worker
// thread or pool task) check only the schema version, so opening a store stays cheap.
bool indexChecked(const QString& path, bool mark)
{
    static QMutex guard;
    static QSet<QString> checked;
    QMutexLocker locker(&guard);
    if (mark) checked.insert(path);
    return checked.contains(path);
}

Error ioError(const QString& what, const QString& path) { return Error{ErrorCode::StoreIo, what, path}; }
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
QString Workspace::relative(const QString& path) const
{
    return path.startsWith(m_root + QLatin1Char('/')) ? path.mid(m_root.size() + 1) : path;
}

QString Workspace::absolute(const QString& path) const
{
    if (path.isEmpty() || path.startsWith(QLatin1Char('/')) || path.startsWith(QLatin1Char('~'))) return path;
    return m_root + QLatin1Char('/') + path;
}

bool Workspace::hasRun(const QString& runId) const { return QFile::exists(runDir(runId) + QStringLiteral("/run.json")); }

RunSummary RunSummary::of(const RunRecord& r)
{
    RunSummary s;
    s.id = r.id;
    s.sweep = r.sweep;
    s.profile = r.profile;
    s.strategy = r.strategy;
    s.nodes = r.nodes;
    s.ranksPerNode = r.ranksPerNode;
    s.state = r.state;
    s.jobId = r.jobId;
    s.created = r.created().toString(Qt::ISODateWithMs);
    s.updated = r.history.isEmpty() ? QString() : r.history.last().when.toString(Qt::ISODateWithMs);
    s.origin = r.originPath;
    s.message = r.message;
    return s;
}

namespace {
// True when the index's columns for the two records are equal.
bool sameIndexRow(const RunRecord& a, const RunRecord& b)
{
    const RunSummary x = RunSummary::of(a), y = RunSummary::of(b);
    return x.id == y.id && x.sweep == y.sweep && x.profile == y.profile && x.strategy == y.strategy && x.nodes == y.nodes &&
        x.ranksPerNode == y.ranksPerNode && x.state == y.state && x.jobId == y.jobId && x.created == y.created && x.updated == y.updated &&
        x.message == y.message && a.configFile == b.configFile && a.configName == b.configName;
}
}  // namespace

Status Workspace::ensure() const
{
    for (const QString& d : {m_root, profilesDir(), runsDir()})
        if (!QDir().mkpath(d)) return ioError(QStringLiteral("cannot create the workspace folder"), d);
    return Done{};
}

struct RunLock::Impl {
    std::shared_ptr<QMutex> mutex;
    int fd = -1;
};

// Other processes: flock(2) on runs/<id>/.lock, a file that stays. The kernel releases the lock
// when its process ends, however it ends, so no lock is ever stale; and taking it creates no file
// (a poll of 1,000 runs takes 1,000 locks: a lock file made and removed each time cost about
// 0.5 s on ext4). Closed on exec, so no job the app starts inherits it.
RunLock::RunLock(const Workspace& ws, const QString& runId) : m_impl(std::make_unique<Impl>())
{
    const QString dir = ws.runDir(runId);
    m_impl->mutex = runMutex(dir);
    m_impl->mutex->lock();
    QDir().mkpath(dir);
    m_impl->fd = ::open(QFile::encodeName(dir + QStringLiteral("/.lock")).constData(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (m_impl->fd < 0) return;
    QElapsedTimer waited;
    waited.start();
    for (int pause = 1;; pause = std::min(pause * 2, 50)) {
        if (::flock(m_impl->fd, LOCK_EX | LOCK_NB) == 0) {
            m_locked = true;
            return;
        }
        if ((errno != EWOULDBLOCK && errno != EINTR) || waited.elapsed() > kLockWaitMs) return;
        QThread::msleep(pause);
    }
}

RunLock::~RunLock()
{
    if (m_impl->fd >= 0) ::close(m_impl->fd);  // releases the flock
    m_impl->mutex->unlock();
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

Expected<RunStore*> RunStore::forThisThread(const Workspace& workspace)
{
    thread_local std::map<QString, std::unique_ptr<RunStore>> stores;
    auto& store = stores[workspace.root()];
    if (!store) {
        auto opened = open(workspace);
        if (!opened) {
            stores.erase(workspace.root());
            return opened.error();
        }
        store = std::move(opened).value();
    }
    return store.get();
}

bool RunStore::indexUsable(QString* why)
{
    QSqlDatabase db = QSqlDatabase::database(m_connection);
    QSqlQuery q(db);
    if (!indexChecked(m_workspace.indexPath(), false)) {
        if (!q.exec(QStringLiteral("PRAGMA quick_check")) || !q.next()) {
            *why = QStringLiteral("unreadable (%1)").arg(q.lastError().text());
            return false;
        }
        if (q.value(0).toString() != QLatin1String("ok")) {
            *why = QStringLiteral("corrupt (%1)").arg(q.value(0).toString());
            return false;
        }
    }
    if (!q.exec(QStringLiteral("PRAGMA user_version")) || !q.next() || q.value(0).toInt() != kSchema) {
        *why = QStringLiteral("missing or of another schema");
        return false;
    }
    indexChecked(m_workspace.indexPath(), true);
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
    // Another process (the window and the command line share workspaces) may be rebuilding it
    // right now: one rebuild at a time, and none when the other one has just made it usable.
    QLockFile rebuilding(m_workspace.indexPath() + QStringLiteral(".lock"));
    rebuilding.setStaleLockTime(0);
    if (!rebuilding.tryLock(kLockWaitMs)) return ioError(QStringLiteral("another process holds the index lock"), rebuilding.fileName());
    if (m_rebuildReason.isEmpty() && indexUsable(&why)) return Done{};
    if (m_rebuildReason.isEmpty())
        m_rebuildReason = existed ? QStringLiteral("the index was ") + why : QStringLiteral("there was no index");
    if (auto n = rebuildIndex(); !n) return n.error();
    return Done{};
}

Expected<int> RunStore::rebuildIndex()
{
    const QString path = m_workspace.indexPath();
    QSqlDatabase db = QSqlDatabase::database(m_connection, false);
    // A readable database is rebuilt in place, in one transaction, so a process that has it open
    // keeps a valid file; only one that cannot be read at all is deleted and made anew.
    bool readable = db.isOpen();
    if (readable) {
        QSqlQuery check(db);
        readable = check.exec(QStringLiteral("PRAGMA quick_check")) && check.next() && check.value(0).toString() == QLatin1String("ok");
    }
    if (!readable) {
        db.close();
        for (const QString& suffix : {QString(), QStringLiteral("-journal"), QStringLiteral("-wal"), QStringLiteral("-shm")})
            QFile::remove(path + suffix);
        if (!db.open()) return ioError(QStringLiteral("cannot create the run index: ") + db.lastError().text(), path);
    }
    QSqlQuery q(db);
    auto fail = [&](const QString& what) -> Expected<int> {
        const QString why = q.lastError().text();
        db.rollback();
        return ioError(what + why, path);
    };
    if (!db.transaction()) return ioError(QStringLiteral("cannot write the run index: ") + db.lastError().text(), path);
    if (!q.exec(QStringLiteral("DROP TABLE IF EXISTS runs")) ||
        !q.exec(QStringLiteral(
            "CREATE TABLE runs (id TEXT PRIMARY KEY, sweep TEXT, profile TEXT, strategy TEXT, nodes INTEGER,"
            " ranks_per_node INTEGER, state TEXT, job_id TEXT, created TEXT, updated TEXT, config_file TEXT, config_name TEXT,"
            " origin TEXT, message TEXT)")) ||
        !q.exec(QStringLiteral("CREATE INDEX runs_sweep ON runs(sweep)")) ||
        !q.exec(QStringLiteral("CREATE INDEX runs_state ON runs(state)")) ||
        !q.exec(QStringLiteral("CREATE INDEX runs_config ON runs(config_file, config_name)")))
        return fail(QStringLiteral("cannot create the run index: "));
    m_warnings.clear();
    int n = 0;
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
    if (!q.exec(QStringLiteral("PRAGMA user_version = %1").arg(kSchema))) return fail(QStringLiteral("cannot write the run index: "));
    if (!db.commit()) return ioError(QStringLiteral("cannot write the run index: ") + db.lastError().text(), path);
    indexChecked(path, true);
    return n;  // rows named in the .stale marker were read again too; list() finds them current
}

Status RunStore::upsert(const RunRecord& r) const
{
    const RunSummary s = RunSummary::of(r);
    QSqlQuery q(QSqlDatabase::database(m_connection));
    q.prepare(
        QStringLiteral("INSERT OR REPLACE INTO runs (id, sweep, profile, strategy, nodes, ranks_per_node, state, job_id, created, updated,"
                       " config_file, config_name, origin, message) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"));
    for (const QVariant& v :
         {QVariant(s.id), QVariant(s.sweep), QVariant(s.profile), QVariant(s.strategy), QVariant(s.nodes), QVariant(s.ranksPerNode),
          QVariant(runStateName(s.state)), QVariant(s.jobId), QVariant(s.created), QVariant(s.updated),
          QVariant(m_workspace.relative(r.configFile)), QVariant(r.configName), QVariant(s.origin), QVariant(s.message)})
        q.addBindValue(v);
    if (!q.exec()) return ioError(QStringLiteral("cannot update the run index: ") + q.lastError().text(), m_workspace.indexPath());
    return Done{};
}

Status RunStore::create(const RunRecord& record)
{
    QString why;
    if (!validRunId(record.id, &why)) return Error{ErrorCode::RunId, why, record.id};
    RunLock lock(m_workspace, record.id);
    if (!lock.isLocked()) return ioError(QStringLiteral("cannot lock the run record"), m_workspace.runDir(record.id));
    if (exists(record.id)) return Error{ErrorCode::RunExists, QStringLiteral("a run with this id exists; choose another name"), record.id};
    return write(record);
}

Expected<RunRecord> RunStore::update(const QString& runId, const std::function<Status(RunRecord&)>& change, const RunLock* held)
{
    if (!exists(runId)) return Error{ErrorCode::RunUnknown, QStringLiteral("no such run"), runId};
    std::unique_ptr<RunLock> own;
    if (!held) {
        own = std::make_unique<RunLock>(m_workspace, runId);
        if (!own->isLocked())
            return ioError(QStringLiteral("cannot lock the run record (another process holds it)"), m_workspace.runDir(runId));
    }
    auto current = load(runId);
    if (!current) return current.error();
    RunRecord r = *current;
    if (auto ok = change(r); !ok) return ok.error();
    if (r.id != runId) return Error{ErrorCode::Usage, QStringLiteral("an update cannot change a run's id"), runId};
    if (r.toJson() == current->toJson()) return r;  // nothing changed: no write, no index churn
    // Only the mirror's bookkeeping moved (a poll that brought bytes): the mirror resumes from the
    // local files' sizes, so a record that lost this write to a power cut costs a re-read of a
    // whole-file mirror, never data. It skips the fsync that 1,000 runs per poll would each pay.
    RunRecord sameElse = r;
    sameElse.offsets = current->offsets;
    sameElse.mtimes = current->mtimes;
    const bool bookkeepingOnly = sameElse.toJson() == current->toJson();
    // Only the offsets' values moved (the same files, the same whole-file mtimes): nothing reads
    // them back (a mirror resumes from its local file's size; the record's offsets only say which
    // files it has), so the record is not rewritten at all: at 1,000 growing runs that is 1,000
    // file creations and renames a poll saves. The next write of the record stores them.
    if (bookkeepingOnly && r.mtimes == current->mtimes && r.offsets.keys() == current->offsets.keys()) return r;
    if (auto ok = write(r, &*current, bookkeepingOnly ? Durability::Renamed : Durability::Synced); !ok) return ok.error();
    return r;
}

Status RunStore::save(const RunRecord& record)
{
    QString why;
    if (!validRunId(record.id, &why)) return Error{ErrorCode::RunId, why, record.id};
    RunLock lock(m_workspace, record.id);
    if (!lock.isLocked()) return ioError(QStringLiteral("cannot lock the run record"), m_workspace.runDir(record.id));
    return write(record);
}

Status RunStore::write(const RunRecord& record, const RunRecord* before, Durability durability)
{
    QString why;
    if (!validRunId(record.id, &why)) return Error{ErrorCode::RunId, why, record.id};
    const QString dir = m_workspace.runDir(record.id);
    if (!QDir().mkpath(dir)) return ioError(QStringLiteral("cannot create the run folder"), dir);
    // Paths inside the workspace are kept relative to it (the local profile's run folders, the
    // workspace's configs), so a copied or moved workspace acts on itself, not on the original.
    RunRecord relative = record;
    relative.remoteDir = m_workspace.relative(record.remoteDir);
    relative.configFile = m_workspace.relative(record.configFile);
    const QByteArray json = QJsonDocument(relative.toJson()).toJson(QJsonDocument::Indented);
    const QString path = dir + QStringLiteral("/run.json");
    if (durability == Durability::Synced) {
        QSaveFile f(path);
        if (!f.open(QIODevice::WriteOnly)) return ioError(f.errorString(), f.fileName());
        f.write(json);
        if (!f.commit()) return ioError(QStringLiteral("cannot write: ") + f.errorString(), f.fileName());
    } else {
        // Still all or nothing for readers: a new file renamed over the old one.
        QFile f(dir + QStringLiteral("/.run.json.%1.tmp").arg(QCoreApplication::applicationPid()));
        if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate) || f.write(json) != json.size() || !f.flush()) {
            f.remove();
            return ioError(QStringLiteral("cannot write: ") + f.errorString(), path);
        }
        f.close();
        if (std::rename(QFile::encodeName(f.fileName()).constData(), QFile::encodeName(path).constData()) != 0) {
            const QString err = QString::fromLocal8Bit(std::strerror(errno));
            f.remove();
            return ioError(QStringLiteral("cannot write: ") + err, path);
        }
    }
    if (before && sameIndexRow(*before, record)) return Done{};
    if (auto ok = upsert(record); !ok) {
        // run.json, the truth, is written; the index row is behind it. Later updates may leave
        // the row's columns as they are (and write none), so the row is named for repair: the
        // next list(), in this process or another, reads it again from run.json.
        if (auto marked = markStale(record.id); !marked)
            return ioError(ok.error().message + QStringLiteral("; and it could not be marked for repair: ") + marked.error().message,
                           m_workspace.indexPath());
    }
    return Done{};
}

QString RunStore::stalePath() const { return m_workspace.indexPath() + QStringLiteral(".stale"); }

Status RunStore::markStale(const QString& runId) const
{
    QLockFile lock(stalePath() + QStringLiteral(".lock"));
    if (!lock.tryLock(kLockWaitMs)) return ioError(QStringLiteral("cannot lock"), lock.fileName());
    QFile f(stalePath());
    const QByteArray line = runId.toUtf8() + '\n';
    if (!f.open(QIODevice::Append) || f.write(line) != line.size() || !f.flush())
        return ioError(QStringLiteral("cannot write: ") + f.errorString(), f.fileName());
    return Done{};
}

void RunStore::repairStaleRows() const
{
    if (!QFile::exists(stalePath())) return;
    QLockFile lock(stalePath() + QStringLiteral(".lock"));
    if (!lock.tryLock(kLockWaitMs)) return;  // the next list() tries again
    QFile f(stalePath());
    if (!f.open(QIODevice::ReadOnly)) return;
    QSet<QString> ids;
    for (const QByteArray& line : f.readAll().split('\n'))
        if (!line.isEmpty()) ids.insert(QString::fromUtf8(line));
    f.close();
    QByteArray still;
    for (const QString& id : ids) {
        auto r = load(id);
        bool fixed = false;
        if (r) {
            fixed = bool(upsert(*r));
        } else if (r.error().code == ErrorCode::RunUnknown) {  // deleted since: its row goes too
            QSqlQuery q(QSqlDatabase::database(m_connection));
            q.prepare(QStringLiteral("DELETE FROM runs WHERE id = ?"));
            q.addBindValue(id);
            fixed = q.exec();
        } else {
            fixed = true;  // an unreadable run.json: the next rebuildIndex() reports it; nothing to copy now
        }
        if (!fixed) still += id.toUtf8() + '\n';
    }
    if (still.isEmpty()) {
        f.remove();
    } else {
        QSaveFile out(stalePath());
        if (out.open(QIODevice::WriteOnly)) {
            out.write(still);
            out.commit();
        }
    }
}

Expected<RunRecord> RunStore::load(const QString& runId) const
{
    const QString path = m_workspace.runDir(runId) + QStringLiteral("/run.json");
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) {
        if (!f.exists()) return Error{ErrorCode::RunUnknown, QStringLiteral("no such run"), runId};
        return ioError(f.errorString(), path);
    }
    QJsonParseError pe;
    const QJsonDocument doc = QJsonDocument::fromJson(f.readAll(), &pe);
    if (pe.error != QJsonParseError::NoError || !doc.isObject())
        return Error{ErrorCode::RunCorrupt, QStringLiteral("not a run record: %1 at byte %2").arg(pe.errorString()).arg(pe.offset), path};
    RunRecord r;
    QString error;
    if (!RunRecord::fromJson(doc.object(), &r, &error)) return Error{ErrorCode::RunCorrupt, error, path};
    if (r.id != runId) return Error{ErrorCode::RunCorrupt, QStringLiteral("field 'id' is '%1', not the folder name").arg(r.id), path};
    r.remoteDir = m_workspace.absolute(r.remoteDir);
    r.configFile = m_workspace.absolute(r.configFile);
    return r;
}

bool RunStore::exists(const QString& runId) const { return m_workspace.hasRun(runId); }

QList<RunSummary> RunStore::list(const QString& sweep) const
{
    repairStaleRows();
    QSqlQuery q(QSqlDatabase::database(m_connection));
    q.setForwardOnly(true);  // one pass: no cache of every row beside the list (100,000 runs at a cold start)
    q.prepare(sweep.isEmpty()
                  ? QStringLiteral("SELECT id, sweep, profile, strategy, nodes, ranks_per_node, state, job_id, created, updated,"
                                   " origin, message FROM runs ORDER BY created, id")
                  : QStringLiteral("SELECT id, sweep, profile, strategy, nodes, ranks_per_node, state, job_id, created, updated,"
                                   " origin, message FROM runs WHERE sweep = ? ORDER BY created, id"));
    if (!sweep.isEmpty()) q.addBindValue(sweep);
    QList<RunSummary> out;
    if (!q.exec()) return out;
    while (q.next()) {
        RunSummary& s = out.emplace_back();
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
        s.origin = q.value(10).toString();
        s.message = q.value(11).toString();
    }
    return out;
}

QString RunStore::latestRunOf(const QString& configFile, const QString& configName) const
{
    QSqlQuery q(QSqlDatabase::database(m_connection));
    q.prepare(QStringLiteral("SELECT id FROM runs WHERE config_file = ? AND config_name = ? ORDER BY created DESC, id DESC LIMIT 1"));
    q.addBindValue(m_workspace.relative(configFile));
    q.addBindValue(configName);
    if (!q.exec() || !q.next()) return QString();
    return q.value(0).toString();
}

QStringList RunStore::activeRunIds() const
{
    QStringList ids;
    for (const auto& s : list())
        if (isActive(s.state)) ids << s.id;
    return ids;
}

}  // namespace scaledesk
