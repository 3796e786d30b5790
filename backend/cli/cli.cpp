#include "cli/cli.h"

#include "analysis/analysisinputs.h"
#include "analysis/comparison.h"
#include "config/configresolve.h"
#include "runs/deploy.h"
#include "runs/mirrorreader.h"
#include "analysis/scalingreport.h"
#include "scheduler/localscheduler.h"
#include "remote/localtransport.h"
#include "config/profiles.h"
#include "runs/runpoller.h"
#include "runs/runsubmitter.h"
#include "remote/secretstore.h"
#include "scheduler/shellquote.h"
#include "scheduler/slurmscheduler.h"
#include "remote/sshtransport.h"
#include "runs/sweep.h"

#include <CLI/CLI.hpp>

#include <QDateTime>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QSaveFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QProcess>
#include <QThread>

#include <cstdio>
#include <cmath>
#include <limits>
#include <numeric>
#include <iostream>
#include <memory>
#include <termios.h>
#include <unistd.h>

namespace scaledesk {

namespace {

void out(const QString& s) { std::fputs((s + QLatin1Char('\n')).toLocal8Bit().constData(), stdout); std::fflush(stdout); }
void err(const QString& s) { std::fputs((s + QLatin1Char('\n')).toLocal8Bit().constData(), stderr); }
QString q(const std::string& s) { return QString::fromStdString(s); }

int fail(const Error& e)
{
    err(QStringLiteral("scaledesk: ") + e.text());
    return 1;
}

// ---- prompts: SCALEDESK_ASKPASS (like SSH_ASKPASS), else the terminal, else refuse ----
std::optional<QString> ask(const QString& prompt, bool echo)
{
    const QString askpass = qEnvironmentVariable("SCALEDESK_ASKPASS");
    if (!askpass.isEmpty()) {
        QProcess p;
        p.start(askpass, {prompt});
        if (!p.waitForFinished(120000) || p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0) return std::nullopt;
        QString answer = QString::fromUtf8(p.readAllStandardOutput());
        while (answer.endsWith(QLatin1Char('\n'))) answer.chop(1);
        return answer;
    }
    if (!::isatty(STDIN_FILENO)) return std::nullopt;
    std::fputs(prompt.toLocal8Bit().constData(), stderr);
    std::fflush(stderr);
    termios old{};
    const bool hide = !echo && ::tcgetattr(STDIN_FILENO, &old) == 0;
    if (hide) {
        termios quiet = old;
        quiet.c_lflag &= ~tcflag_t(ECHO);
        ::tcsetattr(STDIN_FILENO, TCSAFLUSH, &quiet);
    }
    std::string line;
    const bool ok = bool(std::getline(std::cin, line));
    if (hide) {
        ::tcsetattr(STDIN_FILENO, TCSAFLUSH, &old);
        std::fputs("\n", stderr);
    }
    if (!ok) return std::nullopt;
    return q(line);
}

struct ConnectFlags {
    bool acceptNewHostKey = false;
};

struct Connection {
    std::unique_ptr<Transport> transport;
    std::unique_ptr<Scheduler> scheduler;
    // Passphrases entered this time, for profiles with remember_secrets: kept in the keyring once
    // the connection has worked (so a mistyped one is never remembered).
    std::shared_ptr<QMap<QString, QString>> entered = std::make_shared<QMap<QString, QString>>();
    void rememberSecrets()
    {
        for (auto it = entered->begin(); it != entered->end(); ++it)
            if (auto ok = SecretStore().write(it.key(), it.value()); !ok) err(QStringLiteral("scaledesk: ") + ok.error().text());
        entered->clear();
    }
};

Connection connectTo(const ClusterProfile& p, const ConnectFlags& flags)
{
    Connection c;
    // The questions an SSH login may ask (a local profile never asks them).
    SshCallbacks cb;
    const bool accept = flags.acceptNewHostKey;
    cb.acceptNewHostKey = [accept](const QString& host, const QString& type, const QString& fp) {
        err(QStringLiteral("The host %1 is not known. Its %2 key fingerprint is %3.").arg(host, type, fp));
        if (accept) {
            err(QStringLiteral("Accepted (--accept-new-host-key) and recorded in known_hosts."));
            return true;
        }
        if (!::isatty(STDIN_FILENO)) return false;
        auto answer = ask(QStringLiteral("Trust it and connect? [y/N] "), true);
        return answer && (answer->trimmed().toLower() == QLatin1String("y") || answer->trimmed().toLower() == QLatin1String("yes"));
    };
    const bool remember = p.rememberSecrets;
    auto entered = c.entered;
    auto triedKeyring = std::make_shared<bool>(false);
    cb.passphrase = [remember, entered, triedKeyring](const QString& keyFile) -> std::optional<QString> {
        const QString key = QStringLiteral("passphrase:") + QFileInfo(keyFile).absoluteFilePath();
        if (remember && !*triedKeyring) {
            *triedKeyring = true;  // once: if the stored one fails, ask
            auto stored = SecretStore().read(key);
            if (!stored) err(QStringLiteral("scaledesk: ") + stored.error().text());
            else if (stored->has_value()) return **stored;
        }
        auto answer = ask(QStringLiteral("Passphrase for %1: ").arg(keyFile), false);
        if (answer && remember) entered->insert(key, *answer);
        return answer;
    };
    cb.keyboardInteractive = [](const QString& name, const QString& instruction, const QList<SshCallbacks::Prompt>& prompts)
        -> std::optional<QStringList> {
        if (!name.isEmpty()) err(name);
        if (!instruction.isEmpty()) err(instruction);
        QStringList answers;
        for (const auto& pr : prompts) {
            auto a = ask(pr.text, pr.echo);
            if (!a) return std::nullopt;
            answers << *a;
        }
        return answers;
    };
    ProfileConnection pc = connectProfile(p, cb);
    c.transport = std::move(pc.transport);
    c.scheduler = std::move(pc.scheduler);
    return c;
}

QList<int> intList(const std::string& s, bool* ok)
{
    QList<int> v;
    *ok = true;
    for (const QString& part : q(s).split(QLatin1Char(','), Qt::SkipEmptyParts)) {
        bool k = false;
        v << part.trimmed().toInt(&k);
        *ok = *ok && k;
    }
    return v;
}

QString ago(const QDateTime& t)
{
    if (!t.isValid()) return QString();
    return t.toLocalTime().toString(QStringLiteral("yyyy-MM-dd HH:mm:ss"));
}

void printRuns(const QList<RunRecord>& runs, bool history)
{
    out(QStringLiteral("%1  %2  %3  %4  %5").arg(QStringLiteral("RUN"), -36).arg(QStringLiteral("STATE"), -13)
            .arg(QStringLiteral("JOB"), -8).arg(QStringLiteral("PROFILE"), -10).arg(QStringLiteral("MESSAGE")));
    for (const auto& r : runs) {
        out(QStringLiteral("%1  %2  %3  %4  %5").arg(r.id, -36).arg(runStateName(r.state), -13).arg(r.jobId, -8)
                .arg(r.profile, -10).arg(r.message));
        if (history)
            for (const auto& t : r.history)
                out(QStringLiteral("    %1  %2  %3").arg(ago(t.when)).arg(runStateName(t.state), -13).arg(t.note));
    }
}

// Polls every active run among `ids` (all active runs when empty), one connection per profile.
// Connection problems are reported per profile and leave the records as they were.
bool pollRuns(RunStore& store, const QStringList& ids, const ConnectFlags& flags, std::map<QString, Connection>& connections,
              bool verbose)
{
    QMap<QString, QStringList> byProfile;
    for (const QString& id : ids.isEmpty() ? store.activeRunIds() : ids) {
        auto r = store.load(id);
        if (r && isActive(r->state)) byProfile[r->profile] << id;
    }
    bool ok = true;
    for (auto it = byProfile.begin(); it != byProfile.end(); ++it) {
        auto profile = findProfile(store.workspace(), it.key());
        if (!profile) {
            err(QStringLiteral("scaledesk: cannot poll %1 runs: %2").arg(it.value().size()).arg(profile.error().text()));
            ok = false;
            continue;
        }
        auto c = connections.find(it.key());
        if (c == connections.end()) c = connections.emplace(it.key(), connectTo(*profile, flags)).first;
        RunPoller poller(store, *c->second.transport, *c->second.scheduler);
        auto report = poller.poll(it.value());
        if (!report) {
            err(QStringLiteral("scaledesk: profile %1: %2").arg(it.key(), report.error().text()));
            ok = false;
            continue;
        }
        c->second.rememberSecrets();
        for (const QString& p : report->problems) err(QStringLiteral("scaledesk: ") + p);
        if (verbose)
            for (const QString& id : report->changed)
                if (auto r = store.load(id)) out(QStringLiteral("%1: %2  %3").arg(id, runStateName(r->state), r->message));
    }
    return ok;
}

bool waitForRuns(RunStore& store, const QStringList& ids, const ConnectFlags& flags, int timeoutS, double intervalS)
{
    std::map<QString, Connection> connections;
    QElapsedTimer t;
    t.start();
    while (true) {
        pollRuns(store, ids, flags, connections, true);
        bool active = false;
        for (const QString& id : ids.isEmpty() ? store.activeRunIds() : ids)
            if (auto r = store.load(id); r && isActive(r->state)) active = true;
        if (!active) return true;
        if (timeoutS > 0 && t.elapsed() > qint64(timeoutS) * 1000) return false;
        QThread::msleep(static_cast<unsigned long>(intervalS * 1000));
    }
}

Status writeText(const QString& path, const QString& text)
{
    QSaveFile f(path);
    if (!f.open(QIODevice::WriteOnly)) return Error{QStringLiteral("export.io"), f.errorString(), path};
    f.write(text.toUtf8());
    if (!f.commit()) return Error{QStringLiteral("export.io"), QStringLiteral("cannot write: ") + f.errorString(), path};
    return Done{};
}

// The logs a run's tail follows: its scheduler's output file, then the trainer's own logs.
QStringList logFiles(const RunRecord& r, int rank)
{
    if (rank > 0) return {QStringLiteral("rank-%1.log").arg(rank)};
    QStringList logs{QStringLiteral("job.out")};
    if (!r.jobId.isEmpty()) logs.prepend(QStringLiteral("slurm-%1.out").arg(r.jobId));
    return logs;
}

// The report in every asked format; the paths are printed as they are written.
Status writeReport(const ScalingReport& rep, const QString& dir, const QStringList& formats, const CliHooks& hooks)
{
    static const QStringList known{QStringLiteral("csv"), QStringLiteral("md"), QStringLiteral("png"), QStringLiteral("svg"), QStringLiteral("pdf")};
    QStringList images;
    for (const QString& f : formats) {
        if (!known.contains(f))
            return Error{QStringLiteral("usage"), QStringLiteral("unknown report format '%1' (csv, md, png, svg, pdf)").arg(f), QString()};
        if (f == QLatin1String("png") || f == QLatin1String("svg") || f == QLatin1String("pdf")) images << f;
    }
    if (!images.isEmpty() && !hooks.renderReport)
        return Error{QStringLiteral("usage"), QStringLiteral("this scaledesk was built without charts (SCALEDESK_BUILD_GUI=OFF): use csv or md"), QString()};
    if (!QDir().mkpath(dir)) return Error{QStringLiteral("export.io"), QStringLiteral("cannot create the folder"), dir};
    QList<std::pair<QString, QString>> texts;
    if (formats.contains(QStringLiteral("csv")))
        texts << std::pair{QStringLiteral("groups.csv"), rep.groupsCsv()} << std::pair{QStringLiteral("runs.csv"), rep.runsCsv()};
    if (formats.contains(QStringLiteral("md"))) texts << std::pair{QStringLiteral("report.md"), rep.markdown()};
    for (const auto& [name, text] : texts) {
        if (auto ok = writeText(dir + QLatin1Char('/') + name, text); !ok) return ok.error();
        out(QDir(dir).absoluteFilePath(name));
    }
    if (!images.isEmpty()) {
        QStringList written;
        if (auto ok = hooks.renderReport(rep, dir, images, &written); !ok) return ok.error();
        for (const QString& w : written) out(w);
    }
    return Done{};
}

}  // namespace

bool isHeadlessCommand(int argc, char** argv)
{
    static const QStringList commands = {QStringLiteral("profiles"), QStringLiteral("deploy"), QStringLiteral("submit"),
                                         QStringLiteral("status"),   QStringLiteral("cancel"), QStringLiteral("requeue"),
                                         QStringLiteral("runs"),     QStringLiteral("report"), QStringLiteral("compare"),
                                         QStringLiteral("tail"),     QStringLiteral("demo"),   QStringLiteral("--help"),
                                         QStringLiteral("-h"),
                                         QStringLiteral("--version")};
    for (int i = 1; i < argc; ++i) {
        const QString a = QString::fromLocal8Bit(argv[i]);
        if (a == QLatin1String("--workspace")) {
            ++i;
            continue;
        }
        return commands.contains(a);
    }
    return false;
}

int runCommandLine(int argc, char** argv, const CliHooks& hooks)
{
    CLI::App app{"scaledesk: experiment manager for distributed training on SLURM clusters.\n"
                 "Headless commands; without one, `scaledesk` opens the window (once the GUI is built).",
                 "scaledesk"};
    app.set_version_flag("--version", std::string("scaledesk ") + SCALEDESK_VERSION);
    app.require_subcommand(1);
    std::string workspaceOpt;
    app.add_option("--workspace", workspaceOpt, "workspace folder (default: $SCALEDESK_HOME, else ~/.local/share/scaledesk)");
    ConnectFlags flags;
    auto addHostKeyFlag = [&](CLI::App* sub) {
        sub->add_flag("--accept-new-host-key", flags.acceptNewHostKey,
                      "trust a host key seen for the first time (a changed key is always refused)");
    };

    // profiles
    auto* profiles = app.add_subcommand("profiles", "list, add and test cluster profiles");
    profiles->require_subcommand(1);
    auto* profilesList = profiles->add_subcommand("list", "the workspace's profiles and whether they load");
    bool listJson = false;
    profilesList->add_flag("--json", listJson, "JSON output");
    auto* profilesAdd = profiles->add_subcommand("add", "validate a profile YAML and copy it into the workspace");
    std::string addFile, addName;
    profilesAdd->add_option("file", addFile, "profile YAML (keys: docs/profiles.md)")->required();
    profilesAdd->add_option("--name", addName, "profile name (default: the file's base name)");
    auto* profilesTest = profiles->add_subcommand("test", "connect and check the scheduler, the remote root and the trainer");
    std::string testName;
    bool connectOnly = false;
    profilesTest->add_option("name", testName, "profile name")->required();
    profilesTest->add_flag("--connect-only", connectOnly, "only connect and log in (host key, keys, 2FA)");
    addHostKeyFlag(profilesTest);

    // deploy
    auto* deploy = app.add_subcommand("deploy", "put the trainer on the cluster: build the bundled sources there, or upload a binary");
    std::string deployProfile, deployPrebuilt, deploySources;
    deploy->add_option("--profile", deployProfile, "profile name")->required();
    deploy->add_option("--prebuilt", deployPrebuilt, "upload this scaledesk-train instead of building (the cluster must match)");
    deploy->add_option("--sources", deploySources, "build these trainer sources there (default: the ones the app carries; "
                       "given, it wins over the profile's prebuilt)");
    addHostKeyFlag(deploy);

    // submit
    auto* submit = app.add_subcommand("submit", "submit one run or a scaling sweep");
    std::string subProfile = "local", subConfigFile = (bundledTrainerSources() + QStringLiteral("/configs/unet.yaml")).toStdString(), subConfig,
                subName, subSweep;
    std::string subNodes = "1", subRanks = "1", subStrategies = "ddp", subScaling = "weak", subData, subTime;
    int subReps = 1, subGlobalBatch = 0, subLocalBatch = 0, waitTimeout = 0;
    bool dryRun = false, makeData = false, subWait = false;
    std::vector<std::string> trainerArgs;
    submit->add_option("--profile", subProfile, "profile name")->capture_default_str();
    submit->add_option("--config-file", subConfigFile, "YAML of named configs")->capture_default_str();
    submit->add_option("--config", subConfig, "named config, e.g. cpu-tiny")->required();
    submit->add_option("--name", subName, "run id of a single run (default: <config>-<UTC time>)");
    submit->add_option("--sweep", subSweep, "sweep name: run every point of nodes x ranks x strategies x repetitions");
    submit->add_option("--nodes", subNodes, "node counts, comma-separated")->capture_default_str();
    submit->add_option("--ranks-per-node", subRanks, "ranks (GPUs or CPU ranks) per node, comma-separated")->capture_default_str();
    submit->add_option("--strategies", subStrategies, "ddp, fused, zero1; comma-separated")->capture_default_str();
    submit->add_option("--repetitions", subReps, "repetitions of each point")->capture_default_str();
    submit->add_option("--scaling", subScaling, "weak (global batch = ranks x local) or strong (fixed --global-batch)")
        ->check(CLI::IsMember({"weak", "strong"}))
        ->capture_default_str();
    submit->add_option("--global-batch", subGlobalBatch, "strong scaling: the fixed global batch");
    submit->add_option("--local-batch", subLocalBatch, "weak scaling: per-rank batch (default: the config's)");
    submit->add_option("--time", subTime, "time limit HH:MM:SS or D-HH:MM:SS (default: the profile's)")
        ->check(CLI::Validator(
            [](std::string& v) {
                return isSlurmTimeLimit(QString::fromStdString(v)) ? std::string() : std::string("not a SLURM time limit: ") + v;
            },
            "TIME"));
    submit->add_option("--data", subData, "folder on the cluster that the run's `data` links to");
    submit->add_flag("--make-data", makeData,
                     "generate the cpu configs' data once under <remote root>/data/generated and link it");
    submit->add_flag("--dry-run", dryRun, "print the job scripts and the submit commands; record and send nothing");
    submit->add_flag("--wait", subWait, "poll until every submitted run has ended; exit 1 unless all completed");
    submit->add_option("--timeout", waitTimeout, "with --wait: give up after this many seconds");
    submit->add_option("trainer_args", trainerArgs, "extra scaledesk-train flags (after --)");
    addHostKeyFlag(submit);

    // status
    auto* status = app.add_subcommand("status", "poll active runs, mirror their files and print their states");
    std::vector<std::string> statusRuns;
    bool statusWait = false, statusJson = false, statusHistory = false;
    double interval = 2.0;
    status->add_option("runs", statusRuns, "run ids (default: every run)");
    status->add_flag("--wait", statusWait, "keep polling until the runs have ended");
    status->add_option("--timeout", waitTimeout, "with --wait: give up after this many seconds");
    status->add_option("--interval", interval, "seconds between polls with --wait")->capture_default_str();
    status->add_flag("--history", statusHistory, "print every state a run went through (default when runs are named)");
    status->add_flag("--json", statusJson, "print the run records as JSON");
    addHostKeyFlag(status);

    // cancel / requeue
    auto* cancel = app.add_subcommand("cancel", "cancel runs, or only signal them (--signal USR1: checkpoint and stop)");
    std::vector<std::string> cancelRuns;
    std::string cancelSignal;
    cancel->add_option("runs", cancelRuns, "run ids")->required();
    cancel->add_option("--signal", cancelSignal, "send this signal instead (USR1: the trainer checkpoints and exits 75)");
    addHostKeyFlag(cancel);
    auto* requeue = app.add_subcommand("requeue", "run stopped runs again; they resume from their last checkpoint");
    std::vector<std::string> requeueRuns;
    requeue->add_option("runs", requeueRuns, "run ids")->required();
    addHostKeyFlag(requeue);

    // runs
    auto* runs = app.add_subcommand("runs", "the run index");
    runs->require_subcommand(1);
    auto* runsList = runs->add_subcommand("list", "every run of the workspace");
    bool runsJson = false;
    std::string runsSweep;
    runsList->add_flag("--json", runsJson, "JSON output");
    runsList->add_option("--sweep", runsSweep, "only this sweep");

    // report / compare / tail
    auto* report = app.add_subcommand("report", "the scaling report of a sweep: CSV tables and a Markdown summary");
    std::string reportSweep, reportOut;
    int reportWarmup = 1;
    double reportTarget = std::numeric_limits<double>::quiet_NaN();
    report->add_option("--sweep", reportSweep, "sweep name")->required();
    report->add_option("--out", reportOut, "folder for groups.csv, runs.csv and report.md")->required();
    report->add_option("--warmup", reportWarmup, "epochs at the start of each run left out of the averages")->capture_default_str();
    report->add_option("--target", reportTarget, "validation loss for time-to-target (default: the best every smallest run reached)");
    std::string reportFormats = "csv,md";
    report->add_option("--format", reportFormats, "comma-separated: csv (groups.csv, runs.csv), md (report.md), png, svg, pdf (the plots)")
        ->capture_default_str();
    addHostKeyFlag(report);
    auto* compare = app.add_subcommand("compare", "runs side by side: final and best losses and the config keys that differ");
    std::vector<std::string> compareRuns;
    std::string compareOut, compareSeries, compareX = "step";
    double compareSmoothing = 0, compareFrom = -std::numeric_limits<double>::infinity(), compareTo = std::numeric_limits<double>::infinity();
    compare->add_option("runs", compareRuns, "run ids")->required();
    compare->add_option("--out", compareOut, "file to write: .csv (the table, or --series points), or .png/.svg/.pdf (a chart of --series, default Loss/valid)")->required();
    compare->add_option("--series", compareSeries, "write this tag's points instead (e.g. 'Loss/valid', 'step/loss')");
    compare->add_option("--x", compareX, "x of --series: step, relative (seconds since each run started) or wall (Unix time)")
        ->check(CLI::IsMember({"step", "relative", "wall"}))
        ->capture_default_str();
    compare->add_option("--smoothing", compareSmoothing, "TensorBoard smoothing weight for --series, 0 to 0.999 (0 = raw)")
        ->check(CLI::Range(0.0, 0.999));
    compare->add_option("--from", compareFrom, "--series: only x at or after this");
    compare->add_option("--to", compareTo, "--series: only x at or before this");
    auto* demo = app.add_subcommand("demo", "a small scaling sweep on this machine (cpu-demo: 1 and 2 ranks × ddp and fused, "
                                            "one run at a time), then its report as CSV, Markdown, PNG, SVG and PDF");
    std::string demoOut;
    demo->add_option("--out", demoOut, "report folder (default: <workspace>/reports/demo)");
    auto* tail = app.add_subcommand("tail", "a run's log and metric lines as they arrive");
    std::string tailRun;
    bool tailFollow = false;
    int tailRank = 0;
    tail->add_option("run", tailRun, "run id")->required();
    tail->add_flag("-f,--follow", tailFollow, "keep polling until the run ends");
    tail->add_option("--rank", tailRank, "follow rank N's log instead of the job output");
    addHostKeyFlag(tail);

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        return app.exit(e) == 0 ? 0 : 2;  // --help and --version exit 0; every usage error 2
    }

    const Workspace ws(workspaceOpt.empty() ? Workspace::defaultRoot() : q(workspaceOpt));
    auto opened = RunStore::open(ws);
    if (!opened) return fail(opened.error());
    RunStore& store = **opened;
    if (store.wasRebuilt() && !store.list().isEmpty())
        err(QStringLiteral("scaledesk: rebuilt the run index (%1)").arg(store.rebuildReason()));
    for (const QString& w : store.warnings()) err(QStringLiteral("scaledesk: skipped a run: ") + w);

    // ---------------- profiles ----------------
    if (profilesList->parsed()) {
        QJsonArray arr;
        for (const auto& e : listProfiles(ws)) {
            const QString target = e.profile ? (e.profile->kind == QLatin1String("local")
                                                    ? QStringLiteral("this machine")
                                                    : QStringLiteral("%1%2:%3").arg(e.profile->user.isEmpty() ? QString() : e.profile->user + QLatin1Char('@'),
                                                                                    e.profile->host).arg(e.profile->port))
                                             : QString();
            if (listJson)
                arr.append(QJsonObject{{QStringLiteral("name"), e.name}, {QStringLiteral("file"), e.file},
                                       {QStringLiteral("kind"), e.profile ? e.profile->kind : QString()},
                                       {QStringLiteral("target"), target},
                                       {QStringLiteral("error"), e.profile ? QString() : e.error.text()}});
            else
                out(QStringLiteral("%1  %2  %3  %4").arg(e.name, -16).arg(e.profile ? e.profile->kind : QStringLiteral("?"), -9)
                        .arg(target, -28).arg(e.profile ? QStringLiteral("ok") : QStringLiteral("error: ") + e.error.text()));
        }
        if (listJson) out(QString::fromUtf8(QJsonDocument(arr).toJson(QJsonDocument::Indented)).trimmed());
        return 0;
    }
    if (profilesAdd->parsed()) {
        auto p = addProfile(ws, q(addFile), q(addName));
        if (!p) return fail(p.error());
        out(QStringLiteral("added profile %1 (%2)").arg(p->name, p->kind));
        return 0;
    }
    if (profilesTest->parsed()) {
        auto p = findProfile(ws, q(testName));
        if (!p) return fail(p.error());
        Connection c = connectTo(*p, flags);
        bool allOk = true;
        auto check = [&](bool ok, const QString& what, const QString& detail) {
            out(QStringLiteral("%1 %2%3").arg(ok ? QStringLiteral("ok  ") : QStringLiteral("FAIL"), what,
                                              detail.isEmpty() ? QString() : QStringLiteral(": ") + detail));
            allOk = allOk && ok;
            return ok;
        };
        auto hello = c.transport->exec(QStringLiteral("echo scaledesk-ok; uname -n"), 30000);
        if (!check(hello && hello->out.startsWith("scaledesk-ok"), QStringLiteral("connect to ") + c.transport->describe(),
                   hello ? QString::fromUtf8(hello->out).section(QLatin1Char('\n'), 1, 1) : hello.error().text()))
            return 1;
        c.rememberSecrets();
        if (connectOnly) return 0;
        if (p->kind == QLatin1String("ssh+slurm")) {
            // Bounded: a login node whose controller does not answer makes SLURM's commands wait.
            auto v = c.transport->exec(QStringLiteral("timeout 20 sbatch --version && { timeout 20 squeue --me -h -o %i >/dev/null 2>&1 "
                                                      "&& echo me-ok || echo me-missing; }"),
                                       60000);
            const QString text = v ? QString::fromUtf8(v->out).trimmed() : v.error().text();
            check(v && v->exitCode == 0 && text.startsWith(QLatin1String("slurm")), QStringLiteral("SLURM"),
                  text.section(QLatin1Char('\n'), 0, 0) +
                      (text.endsWith(QLatin1String("me-missing")) ? QStringLiteral(" (no squeue --me: polls use -u)") : QString()));
        }
        auto root = c.transport->absolutePath(p->remoteRoot);
        bool rootOk = bool(root);
        QString rootDetail = root ? *root : root.error().text();
        if (rootOk) {
            auto ok = c.transport->makeDirs(*root + QStringLiteral("/runs"));
            if (ok) ok = c.transport->writeFile(*root + QStringLiteral("/.scaledesk-write-test"), "ok\n");
            if (!ok) {
                rootOk = false;
                rootDetail = ok.error().text();
            }
        }
        check(rootOk, QStringLiteral("remote root writable"), rootDetail);
        auto trainerFound = profileTrainer(*c.transport, *p);
        const QString trainer = trainerFound ? *trainerFound : QString();
        if (!trainerFound) {
            check(false, QStringLiteral("trainer"), trainerFound.error().text());
        } else {
            auto v = c.transport->exec(shellJoin({trainer, QStringLiteral("--version")}), 60000);
            check(v && v->exitCode == 0, QStringLiteral("trainer"),
                  v ? trainer + QStringLiteral(" → ") + QString::fromUtf8(v->out + v->err).trimmed().left(200) : v.error().text());
        }
        return allOk ? 0 : 1;
    }

    // ---------------- deploy ----------------
    if (deploy->parsed()) {
        auto p = findProfile(ws, q(deployProfile));
        if (!p) return fail(p.error());
        Connection c = connectTo(*p, flags);
        DeployOptions o;
        o.sourceDir = deploySources.empty() ? bundledTrainerSources() : q(deploySources);
        o.prebuiltBinary = q(deployPrebuilt);
        if (o.prebuiltBinary.isEmpty() && p->trainerPrebuilt && deploySources.empty()) o.prebuiltBinary = findLocalTrainer();
        o.progress = [](const QString& s) { out(QStringLiteral("deploy: ") + s); };
        auto r = deployTrainer(*c.transport, *p, o);
        if (!r) return fail(r.error());
        c.rememberSecrets();
        out(QStringLiteral("trainer %1 %2: %3").arg(r->hash, r->reused ? QStringLiteral("reused") : QStringLiteral("deployed"), r->trainerPath));
        return 0;
    }

    // ---------------- submit ----------------
    if (submit->parsed()) {
        auto p = findProfile(ws, q(subProfile));
        if (!p) return fail(p.error());
        ClusterProfile profile = *p;
        if (!subTime.empty()) profile.slurm.timeLimit = q(subTime);
        if (auto ok = RunSubmitter::checkConfig(q(subConfigFile), q(subConfig)); !ok) return fail(ok.error());
        bool okN = false, okR = false;
        SweepSpec spec;
        spec.nodes = intList(subNodes, &okN);
        spec.ranksPerNode = intList(subRanks, &okR);
        if (!okN || !okR) return fail(Error{QStringLiteral("usage"), QStringLiteral("--nodes and --ranks-per-node take comma-separated integers"), QString()});
        spec.strategies = q(subStrategies).split(QLatin1Char(','), Qt::SkipEmptyParts);
        spec.repetitions = subReps;
        spec.scaling = subScaling == "strong" ? SweepSpec::Scaling::Strong : SweepSpec::Scaling::Weak;
        spec.globalBatch = subGlobalBatch;
        spec.localBatch = subLocalBatch;
        QList<RunPoint> points;
        if (!subSweep.empty()) {
            spec.name = q(subSweep);
            auto expanded = expandSweep(spec);
            if (!expanded) return fail(expanded.error());
            points = *expanded;
        } else {
            spec.name = QStringLiteral("single");
            spec.repetitions = 1;
            auto expanded = expandSweep(spec);  // validates the counts and the strategy
            if (!expanded) return fail(expanded.error());
            RunPoint pt = expanded->first();
            pt.sweep.clear();
            pt.scaling.clear();
            pt.runId = subName.empty() ? QStringLiteral("%1-%2").arg(q(subConfig), QDateTime::currentDateTimeUtc().toString(QStringLiteral("yyyyMMdd-HHmmss")))
                                       : q(subName);
            points = {pt};
        }
        SubmitOptions so;
        so.configFile = q(subConfigFile);
        so.configName = q(subConfig);
        for (const auto& a : trainerArgs) so.trainerArgs << q(a);
        so.dataDir = q(subData);

        if (dryRun) {
            // Never connects: paths on the cluster are shown as the profile gives them.
            so.trainerPath = profile.trainerDeploy ? QStringLiteral("<deployed trainer>") : profile.trainerPath;
            if (makeData) so.dataDir = profile.remoteRoot + QStringLiteral("/data/generated");
            LocalTransport none;
            std::unique_ptr<Scheduler> sched;
            if (profile.kind == QLatin1String("local")) sched = std::make_unique<LocalScheduler>(none);
            else sched = std::make_unique<SlurmScheduler>(none);
            for (const auto& pt : points) {
                JobRequest jr{profile, pt, so.configName, so.trainerPath, so.trainerArgs, so.dataDir};
                const QString dir = profile.remoteRoot + QStringLiteral("/runs/") + pt.runId;
                out(QStringLiteral("# ---- run %1: %2 ----").arg(pt.runId, sched->scriptName()));
                out(sched->renderScript(jr).trimmed());
                if (profile.kind == QLatin1String("local"))
                    out(QStringLiteral("# start: cd %1 && setsid nohup /bin/bash job.sh").arg(shellQuote(dir)));
                else
                    out(QStringLiteral("# submit: sbatch %1").arg(shellJoin(sbatchArguments(dir))));
            }
            out(QStringLiteral("# %1 job(s), %2 node(s) in all; nothing was recorded or sent (--dry-run)")
                    .arg(points.size())
                    .arg(std::accumulate(points.begin(), points.end(), 0, [](int a, const RunPoint& b) { return a + b.nodes; })));
            return 0;
        }

        Connection c = connectTo(profile, flags);
        auto trainerFound = profileTrainer(*c.transport, profile);
        if (!trainerFound) return fail(trainerFound.error());
        so.trainerPath = *trainerFound;
        if (makeData) {
            out(QStringLiteral("making sure the cpu configs' data exists under %1/data/generated").arg(profile.remoteRoot));
            auto data = ensureGeneratedData(*c.transport, profile, so.trainerPath);
            if (!data) return fail(data.error());
            so.dataDir = *data;
        }
        RunSubmitter submitter(store, *c.transport, *c.scheduler, profile);
        QStringList submitted;
        int failures = 0;
        for (const auto& pt : points) {
            auto r = submitter.submit(pt, so);
            if (!r) {
                err(QStringLiteral("scaledesk: %1: %2").arg(pt.runId, r.error().text()));
                ++failures;
                continue;
            }
            out(QStringLiteral("%1: %2 (%3)").arg(r->id, runStateName(r->state), r->message));
            submitted << r->id;
            c.rememberSecrets();
        }
        if (subWait && !submitted.isEmpty()) {
            if (!waitForRuns(store, submitted, flags, waitTimeout, 2.0)) {
                err(QStringLiteral("scaledesk: --timeout reached with runs still active"));
                return 1;
            }
            for (const QString& id : submitted)
                if (auto r = store.load(id); !r || r->state != RunState::Completed) ++failures;
        }
        return failures == 0 ? 0 : 1;
    }

    // ---------------- status ----------------
    if (status->parsed()) {
        QStringList ids;
        for (const auto& s : statusRuns) ids << q(s);
        for (const QString& id : ids)
            if (!store.exists(id)) return fail(Error{QStringLiteral("run.unknown"), QStringLiteral("no such run"), id});
        bool ok = true;
        if (statusWait) {
            ok = waitForRuns(store, ids, flags, waitTimeout, interval);
            if (!ok) err(QStringLiteral("scaledesk: --timeout reached with runs still active"));
        } else {
            std::map<QString, Connection> connections;
            ok = pollRuns(store, ids, flags, connections, false);
        }
        QList<RunRecord> records;
        if (ids.isEmpty())
            for (const auto& s : store.list()) ids << s.id;
        for (const QString& id : ids) {
            auto r = store.load(id);
            if (r) records << *r;
            else err(QStringLiteral("scaledesk: ") + r.error().text());
        }
        if (statusJson) {
            QJsonArray arr;
            for (const auto& r : records) arr.append(r.toJson());
            out(QString::fromUtf8(QJsonDocument(arr).toJson(QJsonDocument::Indented)).trimmed());
        } else {
            printRuns(records, statusHistory || !statusRuns.empty());
        }
        return ok ? 0 : 1;
    }

    // ---------------- cancel / requeue ----------------
    if (cancel->parsed() || requeue->parsed()) {
        const bool isCancel = cancel->parsed();
        int failures = 0;
        std::map<QString, Connection> connections;
        for (const auto& s : isCancel ? cancelRuns : requeueRuns) {
            auto r = store.load(q(s));
            if (!r) {
                fail(r.error());
                ++failures;
                continue;
            }
            RunRecord rec = *r;
            if (rec.jobId.isEmpty()) {
                fail(Error{QStringLiteral("run.nojob"), QStringLiteral("the run has no job (state %1)").arg(runStateName(rec.state)), rec.id});
                ++failures;
                continue;
            }
            auto p = findProfile(ws, rec.profile);
            if (!p) {
                fail(p.error());
                ++failures;
                continue;
            }
            auto c = connections.find(rec.profile);
            if (c == connections.end()) c = connections.emplace(rec.profile, connectTo(*p, flags)).first;
            Scheduler& sched = *c->second.scheduler;
            const JobRef ref{rec.jobId, rec.remoteDir, slurmJobName(rec.id)};
            if (isCancel) {
                if (!isActive(rec.state)) {
                    fail(Error{QStringLiteral("run.ended"), QStringLiteral("the run has ended (%1)").arg(runStateName(rec.state)), rec.id});
                    ++failures;
                    continue;
                }
                auto ok = sched.cancel(ref, q(cancelSignal));
                if (!ok) {
                    fail(ok.error());
                    ++failures;
                    continue;
                }
                rec.message = cancelSignal.empty() ? QStringLiteral("cancel requested")
                                                   : QStringLiteral("sent SIG%1").arg(q(cancelSignal));
                store.save(rec);
                out(QStringLiteral("%1: %2").arg(rec.id, rec.message));
            } else {
                if (isActive(rec.state) && rec.state != RunState::Requeued) {
                    fail(Error{QStringLiteral("run.active"), QStringLiteral("the run is still %1").arg(runStateName(rec.state)), rec.id});
                    ++failures;
                    continue;
                }
                auto id = sched.requeue(ref);
                QString note = QStringLiteral("requeued by the user");
                if (!id && sched.kind() == QLatin1String("slurm")) {
                    // SLURM forgot the job (MinJobAge): submit the run folder again; it resumes too.
                    id = sched.submit(rec.remoteDir);
                    note = QStringLiteral("resubmitted by the user (SLURM no longer knew job %1)").arg(rec.jobId);
                }
                if (!id) {
                    fail(id.error());
                    ++failures;
                    continue;
                }
                rec.jobId = *id;
                rec.transition(RunState::Queued, note + QStringLiteral(": job ") + rec.jobId);
                store.save(rec);
                out(QStringLiteral("%1: queued as job %2").arg(rec.id, rec.jobId));
            }
        }
        return failures == 0 ? 0 : 1;
    }

    // ---------------- report ----------------
    if (report->parsed()) {
        const QString sweep = q(reportSweep);
        QStringList ids;
        for (const auto& row : store.list(sweep)) ids << row.id;
        std::map<QString, Connection> connections;
        if (!ids.isEmpty()) pollRuns(store, ids, flags, connections, false);  // finished epochs first
        ReportOptions o;
        o.warmupEpochs = reportWarmup;
        if (!std::isnan(reportTarget)) o.targetLoss = reportTarget;
        const ScalingReport rep = loadSweepReport(store, sweep, o);
        const QString dir = q(reportOut);
        QStringList formats = q(reportFormats).split(QLatin1Char(','), Qt::SkipEmptyParts);
        if (auto ok = writeReport(rep, dir, formats, hooks); !ok) return fail(ok.error());
        for (const QString& w : rep.warnings) err(QStringLiteral("warning: ") + w);
        return 0;
    }

    // ---------------- compare ----------------
    if (compare->parsed()) {
        QStringList warnings;
        QStringList ids;
        for (const auto& id : compareRuns) ids << q(id);
        auto loaded = loadCompareRuns(store, ids, &warnings);
        if (!loaded) return fail(loaded.error());
        const std::vector<CompareRun>& runsIn = *loaded;
        const QString outPath = q(compareOut);
        const QString suffix = QFileInfo(outPath).suffix().toLower();
        if (suffix == QLatin1String("png") || suffix == QLatin1String("svg") || suffix == QLatin1String("pdf")) {
            if (!hooks.renderSeries)
                return fail(Error{QStringLiteral("usage"), QStringLiteral("this scaledesk was built without charts (SCALEDESK_BUILD_GUI=OFF): use .csv"), outPath});
            const XAxis axis = compareX == "relative" ? XAxis::RelativeTime : compareX == "wall" ? XAxis::WallTime : XAxis::Step;
            const QString tag = compareSeries.empty() ? QStringLiteral("Loss/valid") : q(compareSeries);
            if (auto ok = hooks.renderSeries(runsIn, tag, axis, compareSmoothing, outPath); !ok) return fail(ok.error());
            out(QFileInfo(outPath).absoluteFilePath());
            for (const QString& w : warnings) err(QStringLiteral("warning: ") + w);
            return 0;
        }
        QString text;
        if (!compareSeries.empty()) {
            QList<const CompareRun*> ptrs;
            for (const auto& c : runsIn) ptrs << &c;
            const XAxis axis = compareX == "relative" ? XAxis::RelativeTime : compareX == "wall" ? XAxis::WallTime : XAxis::Step;
            text = seriesCsv(ptrs, q(compareSeries), axis, compareSmoothing, compareFrom, compareTo);
            for (const auto& c : runsIn)
                if (!c.metrics.series(q(compareSeries))) warnings << QStringLiteral("%1: no '%2' values").arg(c.record.id, q(compareSeries));
        } else {
            const Comparison cmp = scaledesk::compareRuns(runsIn);
            text = cmp.csv();
            warnings << cmp.warnings;
            for (int i = 0; i < cmp.runIds.size(); ++i) {
                const TagSummary v = cmp.summaries[i].value(QStringLiteral("Loss/valid"));
                out(QStringLiteral("%1  final val %2  best val %3 (step %4)")
                        .arg(cmp.runIds[i], -36)
                        .arg(csvNumber(v.finalValue), -10)
                        .arg(csvNumber(v.bestValue), -10)
                        .arg(csvNumber(v.bestStep)));
            }
            if (!cmp.differingKeys.isEmpty()) out(QStringLiteral("config keys that differ: ") + cmp.differingKeys.join(QStringLiteral(", ")));
        }
        if (auto ok = writeText(q(compareOut), text); !ok) return fail(ok.error());
        out(QFileInfo(q(compareOut)).absoluteFilePath());
        for (const QString& w : warnings) err(QStringLiteral("warning: ") + w);
        return 0;
    }

    // ---------------- demo ----------------
    if (demo->parsed()) {
        const ClusterProfile profile = builtinLocalProfile(ws);
        if (profile.trainerPath.isEmpty())
            return fail(Error{QStringLiteral("trainer.missing"), QStringLiteral("no scaledesk-train found next to scaledesk or on PATH; set SCALEDESK_TRAIN"), QString()});
        SweepSpec spec;
        spec.name = QStringLiteral("demo");
        spec.ranksPerNode = {1, 2};
        spec.strategies = {QStringLiteral("ddp"), QStringLiteral("fused")};
        auto points = expandSweep(spec);
        if (!points) return fail(points.error());
        Connection c = connectTo(profile, flags);
        SubmitOptions so;
        so.configFile = bundledTrainerSources() + QStringLiteral("/configs/unet.yaml");
        so.configName = QStringLiteral("cpu-demo");
        so.trainerPath = profile.trainerPath;
        auto data = ensureGeneratedData(*c.transport, profile, so.trainerPath);
        if (!data) return fail(data.error());
        so.dataDir = *data;
        RunSubmitter submitter(store, *c.transport, *c.scheduler, profile);
        // One run at a time: runs sharing two cores would measure each other, not the scaling.
        int n = 0;
        for (const RunPoint& pt : *points) {
            ++n;
            if (store.exists(pt.runId)) {
                auto existing = store.load(pt.runId);
                if (existing && existing->state == RunState::Completed) {
                    out(QStringLiteral("demo: %1 already completed; kept").arg(pt.runId));
                    continue;
                }
                out(QStringLiteral("demo: %1 exists (%2); kept as it is").arg(pt.runId, existing ? runStateName(existing->state) : QStringLiteral("?")));
                continue;
            }
            out(QStringLiteral("demo: run %1 of %2: %3").arg(n).arg(points->size()).arg(pt.runId));
            auto r = submitter.submit(pt, so);
            if (!r) return fail(r.error());
            if (!waitForRuns(store, {pt.runId}, flags, 900, 1.0)) return fail(Error{QStringLiteral("demo.timeout"), QStringLiteral("the run did not end in 15 minutes"), pt.runId});
        }
        const ScalingReport rep = loadSweepReport(store, QStringLiteral("demo"));
        const QString dir = demoOut.empty() ? ws.root() + QStringLiteral("/reports/demo") : q(demoOut);
        QStringList formats{QStringLiteral("csv"), QStringLiteral("md")};
        if (hooks.renderReport) formats << QStringLiteral("png") << QStringLiteral("svg") << QStringLiteral("pdf");
        out(QStringLiteral("demo: the report (%1 runs):").arg(rep.runs.size()));
        if (auto ok = writeReport(rep, dir, formats, hooks); !ok) return fail(ok.error());
        for (const QString& w : rep.warnings) err(QStringLiteral("warning: ") + w);
        return 0;
    }

    // ---------------- tail ----------------
    if (tail->parsed()) {
        const QString id = q(tailRun);
        if (!store.exists(id)) return fail(Error{QStringLiteral("run.unknown"), QStringLiteral("no such run"), id});
        MirrorReader reader(ws.runDir(id));
        PollSchedule schedule;
        std::map<QString, Connection> connections;
        std::size_t shownStep = 0;
        while (true) {
            auto before = store.load(id);
            if (before && isActive(before->state)) pollRuns(store, {id}, flags, connections, false);
            auto r = store.load(id);
            if (!r) return fail(r.error());
            const auto news = reader.read(logFiles(*r, tailRank));
            for (const auto& [file, line] : news.logLines) out(QString::fromUtf8(line));
            // New training steps as one line each: step, epoch, loss, learning rate, step time.
            const Series* loss = reader.metrics().series(QStringLiteral("step/loss"));
            const Series* lr = reader.metrics().series(QStringLiteral("step/lr"));
            const Series* st = reader.metrics().series(QStringLiteral("step/step_s"));
            if (loss && shownStep > loss->size()) shownStep = 0;
            for (; loss && shownStep < loss->size(); ++shownStep) {
                const std::size_t i = shownStep;
                out(QStringLiteral("[metrics] step %1  loss %2  lr %3  step_s %4")
                        .arg(loss->steps()[i])
                        .arg(csvNumber(loss->values()[i]).isEmpty() ? QStringLiteral("nan") : csvNumber(loss->values()[i]))
                        .arg(lr && i < lr->size() ? csvNumber(lr->values()[i]) : QString())
                        .arg(st && i < st->size() ? csvNumber(st->values()[i]) : QString()));
            }
            if (!tailFollow) break;
            if (!isActive(r->state)) {
                out(QStringLiteral("[%1: %2]").arg(runStateName(r->state), r->message));
                break;
            }
            QThread::msleep(static_cast<unsigned long>(schedule.next(news.newPoints > 0 || !news.logLines.isEmpty())));
        }
        return 0;
    }

    // ---------------- runs ----------------
    if (runsList->parsed()) {
        const QList<RunSummary> rows = store.list(q(runsSweep));
        if (runsJson) {
            QJsonArray arr;
            for (const auto& s : rows)
                arr.append(QJsonObject{{QStringLiteral("id"), s.id},         {QStringLiteral("sweep"), s.sweep},
                                       {QStringLiteral("profile"), s.profile}, {QStringLiteral("strategy"), s.strategy},
                                       {QStringLiteral("nodes"), s.nodes},   {QStringLiteral("ranks_per_node"), s.ranksPerNode},
                                       {QStringLiteral("state"), runStateName(s.state)}, {QStringLiteral("job_id"), s.jobId},
                                       {QStringLiteral("created"), s.created}, {QStringLiteral("updated"), s.updated}});
            out(QString::fromUtf8(QJsonDocument(arr).toJson(QJsonDocument::Indented)).trimmed());
        } else {
            out(QStringLiteral("%1  %2  %3  %4  %5").arg(QStringLiteral("RUN"), -36).arg(QStringLiteral("STATE"), -13)
                    .arg(QStringLiteral("STRATEGY"), -8).arg(QStringLiteral("RANKS"), -7).arg(QStringLiteral("CREATED")));
            for (const auto& s : rows)
                out(QStringLiteral("%1  %2  %3  %4  %5").arg(s.id, -36).arg(runStateName(s.state), -13).arg(s.strategy, -8)
                        .arg(QStringLiteral("%1x%2").arg(s.nodes).arg(s.ranksPerNode), -7).arg(s.created));
        }
        return 0;
    }
    return 2;
}

}  // namespace scaledesk
