// Run definitions of the user's own code: what is refused (naming file:line:column), how the
// templates are filled, and that every value reaches the rank's argv as literal text through both
// job scripts.
#include "config/commandrun.h"
#include "remote/localtransport.h"
#include "scheduler/jobscript.h"
#include "scheduler/localscheduler.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QProcess>
#include <QSet>
#include <QTemporaryDir>
#include <QTest>

using namespace scaledesk;

namespace {
// Shell metacharacters that would run something, split a word or end a command if unquoted.
const QString kHostile = QStringLiteral("$(touch pwned) `touch pwned2`; echo 'q' \"dq\" * & | > x");
}  // namespace

class TestCommandRun : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_tmp;

    QString write(const QString& name, const QByteArray& text)
    {
        const QString path = m_tmp.filePath(name);
        QFile f(path);
        if (f.open(QIODevice::WriteOnly)) f.write(text);
        return path;
    }

    // A definition whose command prints its argv as JSON (one write per rank, so that the two ranks'
    // lines never interleave in the shared pipe), with a hostile variant.
    CommandRun hostileRun()
    {
        const QString file =
            write(QStringLiteral("argv.yaml"),
                  "command: [/usr/bin/python3, -c, 'import json,sys,os; os.write(1, (\"ARGV \" + json.dumps(sys.argv[1:] + "
                  "[os.environ[\"RANK\"], os.environ[\"WORLD_SIZE\"], os.environ[\"MARK\"]]) + \"\\n\").encode())', '{run_id}', "
                  "'{{literal}}']\n"
                  "env: {MARK: 'm {variant}'}\n"
                  "variants:\n  evil: [\"" +
                      QString(kHostile).replace(QLatin1Char('"'), QLatin1String("\\\"")).toUtf8() + "\", '{world_size}']\n");
        auto run = loadCommandRun(file);
        if (!run) qFatal("%s", qPrintable(run.error().text()));
        return *run;
    }

    JobRequest job(const CommandRun& run, ProfileKind kind, int ranks)
    {
        JobRequest r;
        r.profile.kind = kind;
        r.profile.slurm.cpusPerTask = 1;
        r.profile.localSlots = 4;
        r.point.runId = QStringLiteral("s-evil-1x%1-r1").arg(ranks);
        r.point.sweep = QStringLiteral("s");
        r.point.strategy = QStringLiteral("evil");
        r.point.task = QStringLiteral("command");
        r.point.ranksPerNode = ranks;
        r.command = run;
        r.runDir = m_tmp.path();
        return r;
    }

    // The ARGV lines the ranks printed, each parsed.
    static QList<QStringList> argvLines(const QByteArray& out)
    {
        QList<QStringList> lines;
        for (const QByteArray& line : out.split('\n')) {
            if (!line.startsWith("ARGV ")) continue;
            QStringList argv;
            for (const auto& v : QJsonDocument::fromJson(line.mid(5)).array()) argv << v.toString();
            lines << argv;
        }
        return lines;
    }

    void expectRefused(const QByteArray& yaml, const QString& location, const QString& words)
    {
        const QString file = write(QStringLiteral("bad.yaml"), yaml);
        const auto run = loadCommandRun(file);
        QVERIFY2(!run, yaml.constData());
        QCOMPARE(run.error().location, file + location);
        QVERIFY2(run.error().message.contains(words), qPrintable(run.error().text()));
    }

private slots:
    void readsADefinition()
    {
        const QString file = write(QStringLiteral("own.yaml"),
                                   "command: [python3, '{code}/train.py', --batch, '{local_batch}', --out, '{run_dir}/x']\n"
                                   "code_on_cluster: /home/me/model\n"
                                   "setup: |\n  module load pytorch\n"
                                   "env: {NCCL_DEBUG: WARN, TAG: '{sweep}-{repetition}'}\n"
                                   "variants:\n  ddp: [--strategy, ddp]\n  horovod: [--strategy, horovod, --ranks, '{world_size}']\n");
        const auto run = loadCommandRun(file);
        QVERIFY2(run, run ? "" : qPrintable(run.error().text()));
        QCOMPARE(run->variantNames(), (QStringList{QStringLiteral("ddp"), QStringLiteral("horovod")}));
        QVERIFY(usesPlaceholder(*run, QStringLiteral("local_batch")));
        QVERIFY(!usesPlaceholder(*run, QStringLiteral("nodes")));
        RunPoint p;
        p.runId = QStringLiteral("sw-horovod-2x4-r3");
        p.sweep = QStringLiteral("sw");
        p.strategy = QStringLiteral("horovod");
        p.nodes = 2;
        p.ranksPerNode = 4;
        p.repetition = 3;
        p.localBatch = 16;
        const CommandValues values{&p, QStringLiteral("/scratch/runs/sw-horovod-2x4-r3")};
        QCOMPARE(commandArguments(*run, values),
                 (QStringList{QStringLiteral("python3"), QStringLiteral("/home/me/model/train.py"), QStringLiteral("--batch"),
                              QStringLiteral("16"), QStringLiteral("--out"), QStringLiteral("/scratch/runs/sw-horovod-2x4-r3/x"),
                              QStringLiteral("--strategy"), QStringLiteral("horovod"), QStringLiteral("--ranks"), QStringLiteral("8")}));
        const auto env = commandEnvironment(*run, values);
        QCOMPARE(env.size(), 2);
        QCOMPARE(env[1].second, QStringLiteral("sw-3"));
        QCOMPARE(run->setup.trimmed(), QStringLiteral("module load pytorch"));
    }

    void aStopSendsTheDefinitionsSignalToTheRanks()
    {
        const auto run = loadCommandRun(write(QStringLiteral("stop.yaml"), "command: [python3, train.py]\nstop_signal: SIGTERM\n"));
        QVERIFY(run);
        QCOMPARE(run->stopSignal, QStringLiteral("TERM"));
        QCOMPARE(loadCommandRun(write(QStringLiteral("plain.yaml"), "command: [x]\n"))->stopSignal, QStringLiteral("USR1"));
        JobRequest r = job(*run, ProfileKind::SshSlurm, 2);
        r.point.strategy = QStringLiteral("default");
        const QString slurm = renderJobScript(r);
        QVERIFY(slurm.contains(QStringLiteral("trap 'stop_signal=USR1; kill -TERM \"$srun_pid\" 2>/dev/null' USR1")));
        QVERIFY(slurm.contains(QStringLiteral("export SCALEDESK_STOP_SIGNAL='TERM'")));
        LocalTransport transport;
        const QString local = LocalScheduler(transport).renderScript(job(*run, ProfileKind::Local, 2));
        QVERIFY(local.contains(QStringLiteral("kill -TERM $pids")));
    }

    // torchrun: one per node, with the rendezvous filled in on each node; a stop sends TERM.
    void torchrunStartsOnePerNode()
    {
        const auto run = loadCommandRun(
            write(QStringLiteral("tr.yaml"), "command: [python3, train.py]\ntorchrun: [python3, -m, torch.distributed.run]\n"));
        QVERIFY2(run, run ? "" : qPrintable(run.error().text()));
        QCOMPARE(run->stopSignal, QStringLiteral("TERM"));
        JobRequest r = job(*run, ProfileKind::SshSlurm, 4);
        r.point.nodes = 2;
        r.point.strategy = QStringLiteral("default");
        const QString slurm = renderJobScript(r);
        QVERIFY2(slurm.contains(QStringLiteral("srun --kill-on-bad-exit=1 --export=ALL --ntasks-per-node=1 --ntasks=2 --cpus-per-task=4 ")),
                 qPrintable(slurm));
        QVERIFY2(slurm.contains(QStringLiteral("--node_rank=\"$SLURM_NODEID\" --master_addr=\"$MASTER_ADDR\"")), qPrintable(slurm));
        QVERIFY2(slurm.contains(QStringLiteral(
                     "'python3' '-m' 'torch.distributed.run' '--nnodes=2' '--nproc_per_node=4' '--no_python' 'python3' 'train.py'")),
                 qPrintable(slurm));
        QVERIFY(slurm.contains(QStringLiteral("trap 'stop_signal=USR1; kill -TERM \"$srun_pid\" 2>/dev/null' USR1")));
        QVERIFY(!slurm.contains(QStringLiteral("RANK=$SLURM_PROCID")));  // torchrun sets the ranks' variables
    }

    void aDefinitionWithoutVariantsHasOneCalledDefault()
    {
        QDir(m_tmp.path()).mkpath(QStringLiteral("model"));
        const auto run = loadCommandRun(write(QStringLiteral("plain.yaml"), "command: [python3, train.py]\ncode: ./sub/../model\n"));
        QVERIFY(run);
        QVERIFY(run->sendCode);
        QCOMPARE(run->variantNames(), QStringList{QStringLiteral("default")});
        QCOMPARE(run->code, m_tmp.filePath(QStringLiteral("model")));  // relative to the definition's folder
        QVERIFY(!usesPlaceholder(*loadCommandRun(write(QStringLiteral("literal.yaml"), "command: [x, '{{local_batch}}']\n")),
                                 QStringLiteral("local_batch")));  // braces written twice are text
    }

    void badDefinitionsAreRefusedNamingTheLine()
    {
        expectRefused("command: [python3]\nworkers: 4\n", QStringLiteral(":2:1"), QStringLiteral("unknown key 'workers'"));
        expectRefused("command: [python3, '{rank}']\n", QStringLiteral(":1:20"), QStringLiteral("no placeholder {rank}"));
        expectRefused("command: [python3, '{run_id']\n", QStringLiteral(":1:20"), QStringLiteral("without its '}'"));
        expectRefused("command: [python3, 'a}b']\n", QStringLiteral(":1:20"), QStringLiteral("without its '{'"));
        expectRefused("command: python3 train.py\n", QStringLiteral(":1:10"), QStringLiteral("expected a list"));
        expectRefused("command: []\n", QStringLiteral(":1:10"), QStringLiteral("at least the program"));
        expectRefused("code: /x\n", QStringLiteral(":1:1"), QStringLiteral("no `command`"));
        expectRefused("command: [x]\nenv: {'A-B': 1}\n", QStringLiteral(":2:7"), QStringLiteral("'A-B' is not a variable name"));
        expectRefused("command: [x]\nvariants:\n  'a b': []\n", QStringLiteral(":3:3"), QStringLiteral("'a b' must be"));
        expectRefused("command: [x]\nvariants:\n  ok: [--a, '{nope}']\n", QStringLiteral(":3:13"), QStringLiteral("{nope}"));
        expectRefused("command: [x]\ncode_on_cluster: '{code}/a'\n", QStringLiteral(":2:18"), QStringLiteral("cannot name itself"));
        expectRefused("command: [x]\ncode: '{sweep}/a'\n", QStringLiteral(":2:7"), QStringLiteral("takes no placeholders"));
        expectRefused("command: [x]\ncode: no-such-folder\n", QStringLiteral(":2:7"), QStringLiteral("no folder"));
        expectRefused("command: [x]\ncode_on_cluster: relative/x\n", QStringLiteral(":2:18"), QStringLiteral("absolute path"));
        expectRefused("command: [x]\ncode: .\ncode_on_cluster: /x\n", QStringLiteral(":3:18"), QStringLiteral("either `code`"));
        expectRefused("command: [x]\ncode: .\nsync: {max_file_mb: -1}\n", QStringLiteral(":3:21"), QStringLiteral("above 0"));
        expectRefused("command: [x]\ncode: .\nsync: {max_files: 3}\n", QStringLiteral(":3:8"), QStringLiteral("unknown key 'max_files'"));
        expectRefused("command: [x]\nsync: {max_file_mb: 3}\n", QStringLiteral(":2:7"), QStringLiteral("only for `code`"));
        expectRefused("command: [x\n", QStringLiteral(":2:1"), QStringLiteral("malformed YAML"));
        expectRefused("command: [x]\nstop_signal: USR1\ntorchrun: torchrun\n", QStringLiteral(":2:14"),
                      QStringLiteral("only TERM and HUP"));
        expectRefused("command: [x]\ntorchrun: []\n", QStringLiteral(":2:11"), QStringLiteral("the command that starts torchrun"));
        expectRefused("command: [x]\nstop_signal: KILL\n", QStringLiteral(":2:14"), QStringLiteral("one of USR1, USR2, TERM, HUP"));
        const auto missing = loadCommandRun(m_tmp.filePath(QStringLiteral("none.yaml")));
        QVERIFY(!missing);
        QCOMPARE(missing.error().location, m_tmp.filePath(QStringLiteral("none.yaml")));
    }

    void hostileValuesReachTheLocalRanksAsLiteralText()
    {
        const CommandRun run = hostileRun();
        LocalTransport transport;
        LocalScheduler scheduler(transport);
        const QString script = scheduler.renderScript(job(run, ProfileKind::Local, 2));
        QVERIFY(script.contains(QStringLiteral("RANK=$rank")));
        QVERIFY(!script.contains(QStringLiteral("mpirun $as_root")));  // a command's ranks are processes with env://
        QFile f(m_tmp.filePath(QStringLiteral("job.sh")));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(script.toUtf8());
        f.close();
        QProcess bash;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("SCALEDESK_SLOTS_DIR"), m_tmp.filePath(QStringLiteral("slots")));
        bash.setProcessEnvironment(env);
        bash.setWorkingDirectory(m_tmp.path());
        bash.start(QStringLiteral("/bin/bash"), {QStringLiteral("job.sh")});
        QVERIFY(bash.waitForFinished(60000));
        const QByteArray out = bash.readAllStandardOutput();
        const QByteArray err = bash.readAllStandardError();
        QVERIFY2(bash.exitCode() == 0, (out + err).constData());
        const QList<QStringList> lines = argvLines(out);
        QVERIFY2(lines.size() == 2, (out + err).constData());
        for (const QStringList& argv : lines) {
            QCOMPARE(argv.mid(0, 4),
                     (QStringList{QStringLiteral("s-evil-1x2-r1"), QStringLiteral("{literal}"), kHostile, QStringLiteral("2")}));
            QCOMPARE(argv[5], QStringLiteral("2"));  // WORLD_SIZE
            QCOMPARE(argv[6], QStringLiteral("m evil"));
        }
        QCOMPARE(QSet<QString>({lines[0][4], lines[1][4]}), (QSet<QString>{QStringLiteral("0"), QStringLiteral("1")}));  // RANK
        QVERIFY(!QFile::exists(m_tmp.filePath(QStringLiteral("pwned"))));
        QVERIFY(!QFile::exists(m_tmp.filePath(QStringLiteral("pwned2"))));
    }

    void hostileValuesReachTheSlurmRanksAsLiteralText()
    {
        // The SLURM script's srun line, run by a stand-in srun that starts the ranks with SLURM's
        // variables (the real srun is in the sandbox tests): the env:// wrapper and the quoting.
        const QString script = renderJobScript(job(hostileRun(), ProfileKind::SshSlurm, 2));
        QVERIFY(script.contains(QStringLiteral("export RANK=$SLURM_PROCID")));
        const QString bin = m_tmp.filePath(QStringLiteral("bin"));
        QDir().mkpath(bin);
        QFile srun(bin + QStringLiteral("/srun"));
        QVERIFY(srun.open(QIODevice::WriteOnly));
        srun.write(
            "#!/bin/bash\nwhile [ \"${1#--}\" != \"$1\" ]; do shift; done\n"
            "for i in 0 1; do SLURM_PROCID=$i SLURM_LOCALID=$i SLURM_NTASKS=2 SLURM_NTASKS_PER_NODE=2 SLURM_NODEID=0 \"$@\"; done\n");
        srun.close();
        srun.setPermissions(srun.permissions() | QFileDevice::ExeOwner);
        QFile scontrol(bin + QStringLiteral("/scontrol"));
        QVERIFY(scontrol.open(QIODevice::WriteOnly));
        scontrol.write("#!/bin/bash\necho localhost\n");
        scontrol.close();
        scontrol.setPermissions(scontrol.permissions() | QFileDevice::ExeOwner);
        QFile f(m_tmp.filePath(QStringLiteral("job.sbatch")));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(script.toUtf8());
        f.close();
        QProcess bash;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("PATH"), bin + QLatin1Char(':') + env.value(QStringLiteral("PATH")));
        env.insert(QStringLiteral("SLURM_JOB_ID"), QStringLiteral("7"));
        env.insert(QStringLiteral("SLURM_JOB_NODELIST"), QStringLiteral("localhost"));
        bash.setProcessEnvironment(env);
        bash.setWorkingDirectory(m_tmp.path());
        bash.start(QStringLiteral("/bin/bash"), {QStringLiteral("job.sbatch")});
        QVERIFY(bash.waitForFinished(60000));
        const QByteArray out = bash.readAllStandardOutput();
        QVERIFY2(bash.exitCode() == 0, (out + bash.readAllStandardError()).constData());
        const QList<QStringList> lines = argvLines(out);
        QCOMPARE(lines.size(), 2);
        QCOMPARE(lines[0].mid(0, 4),
                 (QStringList{QStringLiteral("s-evil-1x2-r1"), QStringLiteral("{literal}"), kHostile, QStringLiteral("2")}));
        QCOMPARE(lines[0][4], QStringLiteral("0"));
        QCOMPARE(lines[1][4], QStringLiteral("1"));
        QVERIFY(!QFile::exists(m_tmp.filePath(QStringLiteral("pwned"))));
    }
};

QTEST_GUILESS_MAIN(TestCommandRun)
#include "tst_commandrun.moc"
