// Never two jobs: the SSH connection to the sandbox runs through a TCP relay on loopback that the
// test cuts right after slurmctld accepted the sbatch and before its answer reaches the app (held
// back by the relay), 20 times; and an sbatch whose answer comes after the command timeout, 20
// times. Each time there is exactly one job for the run, and the run is followed to its end.
#include "onejobrequest.h"
#include "remote/sshtransport.h"
#include "runs/runactions.h"
#include "runs/runpoller.h"
#include "scheduler/jobscript.h"
#include "scheduler/slurmscheduler.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <deque>
#include <mutex>
#include <thread>

using namespace scaledesk;

namespace {
using Clock = std::chrono::steady_clock;

QString sandboxDir()
{
    const QString d = qEnvironmentVariable("SCALEDESK_SSH_SANDBOX_DIR");
    return d.isEmpty() ? QStringLiteral("/tmp/scaledesk-ssh-sandbox") : d;
}

// A TCP relay 127.0.0.1:port() → 127.0.0.1:target. It can hold back what the server sends for a
// while (delay), and cut every connection at once.
class Relay {
public:
    explicit Relay(int target) : m_target(target)
    {
        m_listen = ::socket(AF_INET, SOCK_STREAM, 0);
        int one = 1;
        ::setsockopt(m_listen, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        ::bind(m_listen, reinterpret_cast<sockaddr*>(&a), sizeof a);
        ::listen(m_listen, 16);
        socklen_t len = sizeof a;
        ::getsockname(m_listen, reinterpret_cast<sockaddr*>(&a), &len);
        m_port = ntohs(a.sin_port);
        m_thread = std::thread([this] { run(); });
    }
    ~Relay()
    {
        m_stop = true;
        m_thread.join();
        cutNow();
        ::close(m_listen);
    }
    int port() const { return m_port; }
    void setDelay(int ms) { m_delayMs = ms; }
    /// Drops every connection, and whatever was held back for it.
    void cut() { m_cutRequested = true; }

private:
    struct Link {
        int client = -1, server = -1;
        std::deque<std::pair<Clock::time_point, QByteArray>> held;  // server → client, with release times
    };
    void cutNow()
    {
        for (auto& l : m_links) {
            ::close(l.client);
            ::close(l.server);
        }
        m_links.clear();
    }
    void run()
    {
        while (!m_stop) {
            if (m_cutRequested.exchange(false)) cutNow();
            std::vector<pollfd> fds{{m_listen, POLLIN, 0}};
            for (auto& l : m_links) {
                fds.push_back({l.client, POLLIN, 0});
                fds.push_back({l.server, POLLIN, 0});
            }
            ::poll(fds.data(), fds.size(), 5);
            const std::size_t polled = m_links.size();  // a link accepted below has no fds until the next poll
            if (fds[0].revents & POLLIN) {
                const int c = ::accept(m_listen, nullptr, nullptr);
                const int s = ::socket(AF_INET, SOCK_STREAM, 0);
                sockaddr_in a{};
                a.sin_family = AF_INET;
                a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
                a.sin_port = htons(uint16_t(m_target));
                if (c >= 0 && ::connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0)
                    m_links.push_back({c, s, {}});
                else {
                    ::close(c);
                    ::close(s);
                }
            }
            char buf[65536];
            for (std::size_t i = 0; i < polled; ++i) {
                Link& l = m_links[i];
                bool dead = false;
                if (fds[1 + 2 * i].revents & (POLLIN | POLLHUP | POLLERR)) {
                    const ssize_t n = ::read(l.client, buf, sizeof buf);
                    if (n <= 0 || ::write(l.server, buf, size_t(n)) != n) dead = true;
                }
                if (fds[2 + 2 * i].revents & (POLLIN | POLLHUP | POLLERR)) {
                    const ssize_t n = ::read(l.server, buf, sizeof buf);
                    if (n <= 0)
                        dead = true;
                    else
                        l.held.emplace_back(Clock::now() + std::chrono::milliseconds(m_delayMs.load()), QByteArray(buf, int(n)));
                }
                while (!dead && !l.held.empty() && l.held.front().first <= Clock::now()) {
                    const QByteArray& b = l.held.front().second;
                    if (::write(l.client, b.constData(), size_t(b.size())) != b.size()) dead = true;
                    l.held.pop_front();
                }
                if (dead) {
                    ::close(l.client);
                    ::close(l.server);
                    m_links.erase(m_links.begin() + long(i));
                    break;  // the fds no longer line up; poll again
                }
            }
        }
    }
    int m_target;
    int m_listen = -1;
    int m_port = 0;
    std::vector<Link> m_links;
    std::thread m_thread;
    std::atomic<bool> m_stop{false}, m_cutRequested{false};
    std::atomic<int> m_delayMs{0};
};

QStringList jobsNamed(const QString& name)
{
    QProcess p;
    p.start(QStringLiteral("squeue"),
            {QStringLiteral("-h"), QStringLiteral("-t"), QStringLiteral("all"), QStringLiteral("-n"), name, QStringLiteral("-o"),
             QStringLiteral("%i")});
    p.waitForFinished(20000);
    return QString::fromUtf8(p.readAllStandardOutput()).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
}
}  // namespace

class TestSubmitFaults : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_tmp;
    std::unique_ptr<Relay> m_relay;
    std::unique_ptr<RunStore> m_store;
    QString m_knownHosts;

    SshOptions options() const
    {
        SshOptions o;
        o.host = QStringLiteral("127.0.0.1");
        o.port = m_relay->port();
        o.user = QStringLiteral("root");
        o.identityFile = sandboxDir() + QStringLiteral("/id_ed25519");
        o.knownHostsFile = m_knownHosts;
        o.connectTimeoutS = 10;
        o.keepaliveS = 0;
        return o;
    }
    LaunchRequest request(const QString& id) const
    {
        return test::oneJobRequest(id, QStringLiteral("relay"), m_tmp.filePath(QStringLiteral("remote")),
                                   m_tmp.filePath(QStringLiteral("configs.yaml")));
    }
    // Polls (through the relay, as the app would) until the run has ended.
    bool followToTheEnd(const QString& id, Transport& t, Scheduler& s)
    {
        RunPoller poller(*m_store, t, s);
        QElapsedTimer clock;
        clock.start();
        while (clock.elapsed() < 120000) {
            auto polled = poller.poll({id});
            auto r = m_store->load(id);
            if (r && isFinal(r->state)) return r->state == RunState::Completed;
            QThread::msleep(300);
        }
        return false;
    }

    // Returns once the run's record says the submit reached sbatch (or `done` is set).
    void waitForTheSbatchStep(const QString& id, const std::atomic<bool>& done)
    {
        const QString record = m_store->workspace().runDir(id) + QStringLiteral("/run.json");
        while (!done) {
            QFile f(record);
            if (f.open(QIODevice::ReadOnly) && f.readAll().contains("\"submit_step\": \"sbatch\"")) return;
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
        }
    }

private slots:
    void initTestCase()
    {
        QVERIFY2(QFile::exists(sandboxDir() + QStringLiteral("/known_hosts")), "the SSH sandbox is not running");
        QVERIFY2(!qEnvironmentVariableIsEmpty("SLURM_CONF"), "the SLURM sandbox is not configured");
        m_relay = std::make_unique<Relay>(26822);
        // The sandbox's host key, for the relay's address.
        QFile in(sandboxDir() + QStringLiteral("/known_hosts"));
        QVERIFY(in.open(QIODevice::ReadOnly));
        const QByteArray line = in.readLine();
        m_knownHosts = m_tmp.filePath(QStringLiteral("known_hosts"));
        QFile out(m_knownHosts);
        QVERIFY(out.open(QIODevice::WriteOnly));
        out.write(QByteArray(line).replace("[127.0.0.1]:26822", QStringLiteral("[127.0.0.1]:%1").arg(m_relay->port()).toUtf8()));
        out.close();
        QFile configs(m_tmp.filePath(QStringLiteral("configs.yaml")));
        QVERIFY(configs.open(QIODevice::WriteOnly));
        configs.write("any: {}\n");
        configs.close();
        auto store = RunStore::open(Workspace(m_tmp.filePath(QStringLiteral("ws"))));
        QVERIFY(store);
        m_store = std::move(store).value();
    }

    // The connection drops after slurmctld took the job, before its answer arrived.
    void aCutAfterSbatchNeverMakesTwoJobs()
    {
        for (int k = 0; k < 20; ++k) {
            const QString id = QStringLiteral("cut-%1").arg(k);
            SshTransport t(options());
            SlurmScheduler s(t, 20000);
            m_relay->setDelay(0);
            std::atomic<bool> done{false};
            bool cut = false;
            // Watches the record: once the submit reaches sbatch, the server's answers are held back;
            // once SLURM lists the job, the connection is cut with the answer still in the relay.
            std::thread watcher([&] {
                waitForTheSbatchStep(id, done);
                m_relay->setDelay(3000);
                while (!done) {
                    if (!jobsNamed(slurmJobName(id)).isEmpty()) {
                        m_relay->cut();
                        cut = true;
                        break;
                    }
                    std::this_thread::sleep_for(std::chrono::milliseconds(20));
                }
            });
            RunActions actions(*m_store, t, s);
            auto launched = actions.launch(request(id));
            done = true;
            watcher.join();
            m_relay->setDelay(0);
            QVERIFY2(launched, qPrintable(launched ? QString() : launched.error().text()));
            QVERIFY2(cut, "the job never showed in squeue");
            // The outcome was unknown: the run waits to be looked up, it did not fail and was not sent twice.
            const RunRecord after = *m_store->load(id);
            QVERIFY2(after.state == RunState::Submitting || after.state == RunState::Queued, qPrintable(after.message));
            SshTransport t2(options());
            SlurmScheduler s2(t2, 20000);
            QVERIFY2(followToTheEnd(id, t2, s2), qPrintable(m_store->load(id)->message));
            QCOMPARE(jobsNamed(slurmJobName(id)).size(), 1);
            QCOMPARE(m_store->load(id)->jobId, jobsNamed(slurmJobName(id)).first().trimmed());
        }
    }

    // sbatch answers after the command's timeout: the same.
    void anSbatchSlowerThanTheTimeoutNeverMakesTwoJobs()
    {
        for (int k = 0; k < 20; ++k) {
            const QString id = QStringLiteral("slow-%1").arg(k);
            SshTransport t(options());
            SlurmScheduler s(t, 1500);  // slurm.command_timeout
            std::atomic<bool> done{false};
            std::thread watcher([&] {
                waitForTheSbatchStep(id, done);
                m_relay->setDelay(2500);  // every answer from now on is late
            });
            RunActions actions(*m_store, t, s);
            auto launched = actions.launch(request(id));
            done = true;
            watcher.join();
            m_relay->setDelay(0);
            QVERIFY2(launched, qPrintable(launched ? QString() : launched.error().text()));
            const RunRecord after = *m_store->load(id);
            QCOMPARE(after.state, RunState::Submitting);
            QVERIFY2(after.message.contains(QStringLiteral("outcome is unknown")), qPrintable(after.message));
            // The submitter's one answer: the outcome is unknown, and the run is followed (looked for).
            QCOMPARE(launched->outcomes.size(), 1);
            QCOMPARE(launched->outcomes.first().kind, SubmitOutcome::Kind::Unknown);
            QCOMPARE(launched->unknown(), QStringList{id});
            QCOMPARE(launched->submitted().size(), 1);
            QVERIFY2(launched->summary().contains(QStringLiteral("being looked for")), qPrintable(launched->summary()));
            QThread::msleep(3000);  // the late answer drains
            SshTransport t2(options());
            SlurmScheduler s2(t2, 20000);
            QVERIFY2(followToTheEnd(id, t2, s2), qPrintable(m_store->load(id)->message));
            QCOMPARE(jobsNamed(slurmJobName(id)).size(), 1);
        }
    }
};

QTEST_GUILESS_MAIN(TestSubmitFaults)
#include "tst_submit_faults.moc"
