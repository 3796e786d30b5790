// The multi-node SLURM sandbox (tests/sandbox/slurm-sandbox.sh with SCALEDESK_SANDBOX_NODES=2: two
// slurmd on this host, nodes sd1 and sd2) under the lifecycle layer, with the real trainer: a sweep
// over --nodes 1,2 whose job scripts take MASTER_ADDR from the first node and whose 2-node run
// trains across both nodes (gloo over SLURM's variables: --mpi=pmix cannot span two slurmd of one
// host), and `scaledesk calibrate`'s benchmark jobs at 1 and 2 nodes, which the planner reads as
// within- and across-node timings. The transport is the local one: sbatch, squeue and the mirror
// run here, against the sandbox's slurm.conf (SLURM_CONF), as they would on a login node.
#include "analysis/planner.h"
#include "config/commandrun.h"
#include "remote/localtransport.h"
#include "runs/runactions.h"
#include "runs/runpoller.h"
#include "scheduler/slurmscheduler.h"

#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>

using namespace scaledesk;

class TestMultiNode : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_tmp;
    std::unique_ptr<RunStore> m_store;
    LocalTransport m_transport;
    SlurmScheduler m_slurm{m_transport};
    ClusterProfile m_profile;

    // Polls through the lifecycle layer's poller until no run of `ids` is active (10 min at most).
    bool waitFor(const QStringList& ids)
    {
        QElapsedTimer t;
        t.start();
        RunPoller poller(*m_store, m_transport, m_slurm);
        while (t.elapsed() < 600000) {
            if (auto report = poller.poll(ids); !report) qWarning() << report.error().text();
            bool active = false;
            for (const QString& id : ids) active = active || isActive(m_store->load(id)->state);
            if (!active) return true;
            QThread::msleep(500);
        }
        return false;
    }
    LaunchResult launch(const LaunchRequest& req)
    {
        RunActions actions(*m_store, m_transport, m_slurm);
        auto launched = actions.launch(req, {});
        if (!launched) qFatal("%s", qPrintable(launched.error().text()));
        return *launched;
    }

private slots:
    void initTestCase()
    {
        QVERIFY2(qEnvironmentVariable("SLURM_CONF").contains(QStringLiteral("2n")), "SLURM_CONF is not the 2-node sandbox's");
        auto s = RunStore::open(Workspace(m_tmp.filePath(QStringLiteral("ws"))));
        QVERIFY(s);
        m_store = std::move(s).value();
        m_profile.name = QStringLiteral("twonode");
        m_profile.kind = ProfileKind::SshSlurm;
        m_profile.remoteRoot = m_tmp.filePath(QStringLiteral("remote"));
        m_profile.trainerPath = QStringLiteral(SCALEDESK_TRAIN_BIN);
        m_profile.slurm.cpusPerTask = 1;
        m_profile.slurm.mpi = QStringLiteral("none");  // gloo over SLURM's variables
        m_profile.slurm.timeLimit = QStringLiteral("00:10:00");
        m_profile.slurm.requeue = false;
        m_profile.masterPort = 29771;
    }

    void aSweepOverOneAndTwoNodesTrainsAcrossBoth()
    {
        SweepSpec spec;
        spec.name = QStringLiteral("mn");
        spec.nodes = {1, 2};
        spec.ranksPerNode = {1};
        spec.localBatch = 2;
        auto points = expandSweep(spec);
        QVERIFY(points);
        LaunchRequest req;
        req.profile = m_profile;
        req.points = *points;
        req.options.configFile = QStringLiteral(SCALEDESK_SOURCE_DIR "/configs/unet.yaml");
        req.options.configName = QStringLiteral("cpu-tiny");
        req.options.trainerArgs = {QStringLiteral("--backend"), QStringLiteral("gloo")};
        req.makeData = true;
        const LaunchResult r = launch(req);
        QVERIFY2(r.complete(), qPrintable(r.summary()));
        const QStringList ids{QStringLiteral("mn-ddp-1x1-r1"), QStringLiteral("mn-ddp-2x1-r1")};
        QVERIFY(waitFor(ids));
        for (const QString& id : ids) {
            const RunRecord rec = *m_store->load(id);
            QVERIFY2(rec.state == RunState::Completed, qPrintable(id + QStringLiteral(": ") + rec.message));
        }
        // The 2-node run: one rank on each node, rendezvous at the first node's address.
        const QJsonObject m = readRunManifest(m_store->workspace().runDir(QStringLiteral("mn-ddp-2x1-r1")));
        QCOMPARE(m.value(QStringLiteral("nodes")).toInt(), 2);
        QCOMPARE(m.value(QStringLiteral("world_size")).toInt(), 2);
        QCOMPARE(m.value(QStringLiteral("backend")).toString(), QStringLiteral("gloo"));
        QCOMPARE(m.value(QStringLiteral("hostnames")).toArray(), (QJsonArray{QStringLiteral("sd1"), QStringLiteral("sd2")}));
        QFile script(m_profile.remoteRoot + QStringLiteral("/runs/mn-ddp-2x1-r1/job.sbatch"));
        QVERIFY(script.open(QIODevice::ReadOnly));
        const QString text = QString::fromUtf8(script.readAll());
        QVERIFY(text.contains(QStringLiteral("#SBATCH --nodes=2")));
        QVERIFY(text.contains(QStringLiteral("export MASTER_ADDR=\"${MASTER_ADDR:-$first_node}\"")));
        // The sandbox's node names resolve to nothing: a rendezvous at "sd1" fails (name or service
        // not known); the run completed because MASTER_ADDR was sd1's NodeAddr, 127.0.0.1.
        QVERIFY(text.contains(QStringLiteral("scontrol show node \"$first_node\"")));
    }

    // The user's own code (a PyTorch DDP script, gloo over env://) across both nodes: srun's
    // variables become RANK/WORLD_SIZE/LOCAL_RANK, the rendezvous is the first node's address.
    // The user's DDP script across both slurmd: one process per rank under srun, and one torchrun
    // per node (which starts its node's rank; the rendezvous filled in on each node).
    void ownCodeTrainsAcrossBothNodes_data()
    {
        QTest::addColumn<QByteArray>("launcher");
        QTest::newRow("srun per rank") << QByteArray();
        QTest::newRow("torchrun per node") << QByteArray("torchrun: [/usr/bin/python3, '{code}/torchrun_py311.py']\n");
    }
    void ownCodeTrainsAcrossBothNodes()
    {
        QFETCH(QByteArray, launcher);
        const QString sweep = launcher.isEmpty() ? QStringLiteral("own") : QStringLiteral("owntr");
        const QString file = m_tmp.filePath(sweep + QStringLiteral(".yaml"));
        QFile def(file);
        QVERIFY(def.open(QIODevice::WriteOnly));
        def.write("command: [/usr/bin/python3, '{code}/train_ddp.py', --epochs, '2', --steps, '4', --batch, '{local_batch}']\n"
                  "code: " SCALEDESK_SOURCE_DIR "/tests/commandrun\n"
                  "env: {OMP_NUM_THREADS: '1'}\n" +
                  launcher);
        def.close();
        auto command = loadCommandRun(file);
        QVERIFY2(command, command ? "" : qPrintable(command.error().text()));
        SweepSpec spec;
        spec.name = sweep;
        spec.nodes = {2};
        spec.localBatch = 2;
        spec.strategies = command->variantNames();
        spec.variants = command->variantNames();
        auto points = expandSweep(spec);
        QVERIFY(points);
        LaunchRequest req;
        req.profile = m_profile;
        req.points = *points;
        req.options.command = *command;
        const LaunchResult r = launch(req);
        QVERIFY2(r.complete(), qPrintable(r.summary()));
        const QString id = sweep + QStringLiteral("-default-2x1-r1");
        QVERIFY(waitFor({id}));
        const RunRecord rec = *m_store->load(id);
        QVERIFY2(rec.state == RunState::Completed, qPrintable(rec.message));
        const QJsonObject m = readRunManifest(m_store->workspace().runDir(id));
        QCOMPARE(m.value(QStringLiteral("status")).toString(), QStringLiteral("finished"));
        QCOMPARE(m.value(QStringLiteral("world_size")).toInt(), 2);
        QCOMPARE(m.value(QStringLiteral("nodes")).toInt(), 2);
        QCOMPARE(m.value(QStringLiteral("rank_hosts")).toArray(), (QJsonArray{QStringLiteral("sd1"), QStringLiteral("sd2")}));
        QFile metrics(m_store->workspace().runDir(id) + QStringLiteral("/metrics.jsonl"));
        QVERIFY(metrics.open(QIODevice::ReadOnly));
        QCOMPARE(metrics.readAll().count("\"kind\":\"step\""), 8);
    }

    void calibrationAtOneAndTwoNodesFeedsThePlanner()
    {
        LaunchRequest req;
        req.profile = m_profile;
        for (const auto& [nodes, rpn] : {std::pair{1, 2}, std::pair{2, 1}}) {
            RunPoint p;
            p.sweep = QStringLiteral("cal");
            p.runId = QStringLiteral("cal-%1x%2").arg(nodes).arg(rpn);
            p.strategy.clear();
            p.nodes = nodes;
            p.ranksPerNode = rpn;
            p.task = QStringLiteral("bench-comm");
            req.points << p;
        }
        req.options.trainerArgs = {QStringLiteral("--backend"), QStringLiteral("gloo"),   QStringLiteral("--sizes"),
                                   QStringLiteral("64K,1M,4M"), QStringLiteral("--reps"), QStringLiteral("3")};
        const LaunchResult r = launch(req);
        QVERIFY2(r.complete(), qPrintable(r.summary()));
        QVERIFY(waitFor({QStringLiteral("cal-1x2"), QStringLiteral("cal-2x1")}));
        QStringList sources;
        auto samples = loadCalibration(*m_store, m_profile.name, &sources);
        QVERIFY2(samples, samples ? "" : qPrintable(samples.error().text()));
        QCOMPARE(sources.size(), 2);
        int across = 0, within = 0;
        QList<std::pair<int, int>> contention;  // (ranks, nodes) of the compute kernel's timings
        for (const CommSample& s : *samples) {
            (s.nodes == 2 ? across : within) += s.op == CommSample::Op::Allreduce;
            if (s.op == CommSample::Op::Compute && s.aloneS > 0 && s.seconds > 0) contention << std::pair{s.ranks, s.nodes};
        }
        QCOMPARE(within, 3);  // 3 sizes at 2 ranks on 1 node
        QCOMPARE(across, 3);  // 3 sizes at 2 ranks on 2 nodes
        QVERIFY(contention.contains(std::pair{2, 1}));
        QVERIFY(contention.contains(std::pair{2, 2}));
        auto model = fitAllreduce(*samples);
        QVERIFY2(model, model ? "" : qPrintable(model.error().text()));
        QVERIFY(model->acrossNodesMeasured());
        QVERIFY(model->fromMeasuredCurve(2, 2, 1 << 20));
    }
};

QTEST_GUILESS_MAIN(TestMultiNode)
#include "tst_multinode.moc"
