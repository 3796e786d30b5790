// One chatty run does not delay the others: 20 active runs on the sandbox (sshd + SLURM), 19 of
// them writing a step line every 100 ms, polled at the window's pace for runs whose files grow
// (PollSettings::growingMs after each poll ends). The live latency
// of those 19 (from the line's write to its arrival in the local mirror) is measured for a while
// without a burst, then while the 20th run prints 100 MB at once; the p95 ratio is the result.
// The peer is the same poller in the same run, without the burst.
//
//   tests/sandbox/slurm-sandbox.sh start && tests/sandbox/ssh-sandbox.sh start
//   ninja -C build bench-burst            (or: build/tests/bench_burst [seconds per phase, default 20])
#include "heldruns.h"
#include "remote/sshtransport.h"
#include "runs/pollscheduler.h"
#include "runs/runpoller.h"
#include "scheduler/slurmscheduler.h"

#include <QCoreApplication>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QThread>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

using namespace scaledesk;

namespace {
double now() { return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count(); }

[[noreturn]] void die(const QString& what)
{
    std::fprintf(stderr, "bench_burst: %s\n", qPrintable(what));
    std::exit(1);
}

double percentile(std::vector<double> v, double p)
{
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, std::size_t(p * double(v.size() - 1) + 0.5))];
}

// The latency of every line that arrived in the mirrors of runs 1.. since the last call.
class Arrivals {
public:
    Arrivals(const RunStore& store, const QStringList& ids) : m_store(store), m_ids(ids), m_offsets(std::size_t(ids.size()), 0) {}
    void collect(std::vector<double>& into)
    {
        const double t = now();
        for (qsizetype i = 1; i < m_ids.size(); ++i) {
            QFile f(m_store.workspace().runDir(m_ids[i]) + QStringLiteral("/metrics.jsonl"));
            if (!f.open(QIODevice::ReadOnly) || !f.seek(m_offsets[std::size_t(i)])) continue;
            while (!f.atEnd()) {
                const QByteArray line = f.readLine();
                if (!line.endsWith('\n')) break;
                m_offsets[std::size_t(i)] += line.size();
                const double written = QJsonDocument::fromJson(line).object().value(QStringLiteral("t")).toDouble();
                if (written > 1e9) into.push_back(t - written);
            }
        }
    }

private:
    const RunStore& m_store;
    QStringList m_ids;
    std::vector<qint64> m_offsets;
};
}  // namespace

int main(int argc, char** argv)
{
    QCoreApplication app(argc, argv);
    const int seconds = argc > 1 ? std::max(2, QByteArray(argv[1]).toInt()) : 20;
    SshTransport ssh(test::sandboxSshOptions());
    SlurmScheduler slurm(ssh);
    QTemporaryDir local;
    auto store = RunStore::open(Workspace(local.filePath(QStringLiteral("ws"))));
    if (!store) die(store.error().text());
    constexpr int kRuns = 20;
    auto held = test::setUpHeldRuns(ssh, **store, QStringLiteral("/tmp/scaledesk-bench-burst"), kRuns, 1);
    if (!held) die(held.error().text());
    RunPoller poller(**store, ssh, slurm);
    if (auto first = poller.poll(held->runIds); !first) die(first.error().text());
    Arrivals arrivals(**store, held->runIds);
    std::vector<double> ignored;
    arrivals.collect(ignored);

    // The 19 steady writers: a step line with its write time in each run, every 100 ms.
    std::atomic<bool> stop{false};
    std::thread writer([&] {
        std::vector<FILE*> files;
        for (int i = 1; i < kRuns; ++i) files.push_back(std::fopen(qPrintable(held->dir(i) + QStringLiteral("/metrics.jsonl")), "ab"));
        for (int step = 1; !stop; ++step) {
            for (FILE* f : files) {
                std::fprintf(f, "{\"kind\":\"step\",\"step\":%d,\"epoch\":1,\"t\":%.6f,\"loss\":0.5,\"lr\":0.001,\"step_s\":0.1}\n", step,
                             now());
                std::fflush(f);
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
        for (FILE* f : files) std::fclose(f);
    });

    const qint64 gapMs = PollSettings().growingMs;
    auto phase = [&](const char* name, std::vector<double>& latencies) {
        const double end = now() + seconds;
        int polls = 0;
        quint64 bytes = 0;
        double longest = 0;
        while (now() < end) {
            const double t0 = now();
            auto r = poller.poll(held->runIds);
            if (!r) die(r.error().text());
            longest = std::max(longest, now() - t0);
            bytes += r->bytesRead;
            ++polls;
            arrivals.collect(latencies);
            QThread::msleep(gapMs);
        }
        std::printf("%-14s %6d polls, %9.1f MB read, longest poll %6.0f ms, %6zu lines: latency p50 %6.0f ms, p95 %6.0f ms\n", name, polls,
                    bytes / 1e6, longest * 1000, latencies.size(), percentile(latencies, 0.5) * 1000, percentile(latencies, 0.95) * 1000);
    };
    std::vector<double> quiet, burst;
    phase("without burst", quiet);
    {
        // Run 0 prints 100 MB between two polls.
        QFile f(held->dir(0) + QStringLiteral("/metrics.jsonl"));
        if (!f.open(QIODevice::Append)) die(f.errorString());
        const QByteArray line = R"({"kind":"step","step":1,"epoch":1,"t":1764480000.0,"loss":0.5,"lr":0.001,"step_s":0.1,"pad":")" +
            QByteArray(400, 'p') + "\"}\n";
        QByteArray block;
        while (block.size() < (1 << 20)) block += line;
        for (qint64 written = 0; written < 100LL * 1000 * 1000; written += block.size()) f.write(block);
    }
    phase("with 100 MB burst", burst);
    stop = true;
    writer.join();
    QFile mirror0((*store)->workspace().runDir(held->runIds[0]) + QStringLiteral("/metrics.jsonl"));
    std::printf("poll gap %lld ms (the window's, for runs whose files grow); burst run mirrored: %.1f of %.1f MB\n", (long long)gapMs,
                mirror0.size() / 1e6, QFile(held->dir(0) + QStringLiteral("/metrics.jsonl")).size() / 1e6);
    std::printf("ratio p95 with/without burst: %.2fx (target <= 1.5x)\n",
                percentile(burst, 0.95) / std::max(1e-9, percentile(quiet, 0.95)));
    test::cancelAll(ssh, *held);
    return 0;
}
