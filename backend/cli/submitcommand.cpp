// scaledesk submit: one run, or every point of a scaling sweep, through the lifecycle layer.
#include "cli/commands.h"
#include "cli/context.h"
#include "cli/terminal.h"
#include "remote/localtransport.h"
#include "runs/runactions.h"
#include "runs/workspaceconfigs.h"
#include "scheduler/jobscript.h"
#include "scheduler/shellquote.h"

#include <CLI/CLI.hpp>

#include <QDateTime>
#include <QFileInfo>

#include <numeric>

namespace scaledesk::cli {

namespace {
// A comma-separated list of whole numbers; an empty item ("1,,2") or a word is refused, naming the option.
Expected<QList<int>> intList(const std::string& s, const char* option)
{
    QList<int> v;
    const QString text = q(s);
    for (const QString& part : text.split(QLatin1Char(','))) {
        bool ok = false;
        v << part.trimmed().toInt(&ok);
        if (!ok)
            return Error{ErrorCode::Usage,
                         part.trimmed().isEmpty()
                             ? QStringLiteral("%1 '%2': an empty item; give comma-separated whole numbers").arg(QLatin1String(option), text)
                             : QStringLiteral("%1 takes comma-separated whole numbers, not '%2'").arg(QLatin1String(option), part),
                         QString()};
    }
    return v;
}

class SubmitCommand final : public Command {
public:
    void add(CLI::App& app, SharedOptions& shared) override
    {
        m_app = app.add_subcommand("submit", "submit one run or a scaling sweep");
        auto* s = m_app;
        s->add_option("--profile", m_profile, "profile name")->capture_default_str();
        s->add_option("--config-file", m_configFile,
                      "YAML of named configs (default: the workspace's configs/unet.yaml, which the window's config editor edits; "
                      "the first use copies the shipped one there)");
        auto* config = s->add_option("--config", m_config, "named config, e.g. cpu-tiny");
        auto* run = s->add_option("--run", m_run,
                                  "a run definition (YAML with `command`): run your own training code instead of scaledesk-train; "
                                  "--strategies then picks among its variants (docs/own-code.md)");
        config->excludes(run);
        run->excludes(config);
        s->add_option("--name", m_name, "run id of a single run (default: <config>-<UTC time>)");
        s->add_option("--sweep", m_sweep, "sweep name: run every point of nodes x ranks x strategies x repetitions");
        s->add_option("--nodes", m_nodes, "node counts, comma-separated")->capture_default_str();
        s->add_option("--ranks-per-node", m_ranks,
                      "ranks per node, comma-separated (default: one per GPU on a profile with slurm.gpus_per_node, else 1; "
                      "a GPU profile takes at most its GPUs per node)");
        s->add_option("--strategies", m_strategies,
                      "ddp, fused, zero1; comma-separated (default ddp; with --run: the definition's variants, default all)");
        s->add_option("--repetitions", m_reps, "repetitions of each point")->capture_default_str();
        s->add_option("--scaling", m_scaling, "weak (global batch = ranks x local) or strong (fixed --global-batch)")
            ->check(CLI::IsMember({"weak", "strong"}))
            ->capture_default_str();
        s->add_option("--global-batch", m_globalBatch, "strong scaling: the fixed global batch");
        s->add_option("--local-batch", m_localBatch,
                      "weak scaling: per-rank batch (default: the config's global_batch_size over the smallest point's ranks, so the "
                      "global batch grows with the ranks)");
        s->add_option("--time", m_time, "time limit HH:MM:SS or D-HH:MM:SS (default: the profile's)")
            ->check(CLI::Validator(
                [](std::string& v) {
                    return isSlurmTimeLimit(QString::fromStdString(v)) ? std::string() : std::string("not a SLURM time limit: ") + v;
                },
                "TIME"));
        s->add_option("--data", m_data, "folder on the cluster that the run's `data` links to");
        s->add_flag("--make-data", m_makeData, "generate the cpu configs' data once under <remote root>/data/generated and link it");
        s->add_option(
             "--on-failure", m_onFailure,
             "a sweep point that fails to submit: continue (try every point; each failure is recorded) or stop (leave the rest out)")
            ->check(CLI::IsMember({"continue", "stop"}))
            ->capture_default_str();
        s->add_flag("--dry-run", m_dryRun, "print the job scripts and the submit commands; record and send nothing");
        s->add_flag("--wait", m_wait, "poll until every submitted run has ended; exit 1 unless all completed");
        s->add_option("--timeout", m_timeout, "with --wait: give up after this many seconds");
        s->add_option("trainer_args", m_trainerArgs, "extra scaledesk-train flags (after --)");
        addHostKeyFlag(*s, shared);
    }
    bool chosen() const override { return m_app->parsed(); }

    int run(Context& ctx) override
    {
        auto req = request(ctx);
        if (!req) {
            const ErrorCode c = req.error().code;
            return c == ErrorCode::Usage || c == ErrorCode::SweepInvalid ? usageFail(req.error()) : fail(req.error());
        }
        // A dry run is refused exactly where the submit would be, before any connection (a submit
        // gets the same checks from launchRuns and RunActions::launch).
        if (m_dryRun) {
            if (auto ok = RunActions::checkLaunch(ctx.ws, *req); !ok) return fail(ok.error());
            QString note;
            if (auto ok = RunActions::checkConfigRules(*req, &note); !ok) return fail(ok.error());
            if (!note.isEmpty()) err(QStringLiteral("scaledesk: warning: ") + note);
            return dryRun(*req);
        }
        return ctx.launchRuns(*req, m_wait, m_timeout);
    }

private:
    Expected<LaunchRequest> request(const Context& ctx) const
    {
        auto p = findProfile(ctx.ws, q(m_profile));
        if (!p) return p.error();
        CommandRun command;
        if (!m_run.empty()) {
            auto loaded = loadCommandRun(q(m_run));
            if (!loaded) return loaded.error();
            command = *loaded;
        } else if (m_config.empty()) {
            return Error{ErrorCode::Usage,
                         QStringLiteral("give --config NAME (a named config of scaledesk-train) or --run FILE (a run definition of "
                                        "your own code)"),
                         QString()};
        }
        auto configs = command.isSet() ? Expected<QString>(QString())
            : m_configFile.empty()     ? workspaceConfigFile(ctx.ws)
                                       : Expected<QString>(q(m_configFile));
        if (!configs) return configs.error();
        const QString configFile = *configs;
        LaunchRequest req;
        req.profile = *p;
        if (!m_time.empty()) req.profile.slurm.timeLimit = q(m_time);
        SweepSpec spec;
        auto nodes = intList(m_nodes, "--nodes");
        if (!nodes) return nodes.error();
        auto ranks = m_ranks.empty() ? Expected<QList<int>>(QList<int>{defaultRanksPerNode(*p)}) : intList(m_ranks, "--ranks-per-node");
        if (!ranks) return ranks.error();
        spec.nodes = *nodes;
        spec.ranksPerNode = *ranks;
        spec.strategies = q(m_strategies).split(QLatin1Char(','), Qt::SkipEmptyParts);
        if (m_strategies.empty()) spec.strategies = command.isSet() ? command.variantNames() : QStringList{QStringLiteral("ddp")};
        spec.variants = command.variantNames();
        spec.repetitions = m_reps;
        spec.scaling = m_scaling == "strong" ? SweepSpec::Scaling::Strong : SweepSpec::Scaling::Weak;
        spec.globalBatch = m_globalBatch;
        spec.localBatch = m_localBatch;
        const int sweepBatch = command.isSet() ? 0 : weakSweepLocalBatch(ctx.store, q(m_sweep));
        if (command.isSet()) {
            if (auto ok = checkCommandBatch(command, spec); !ok) return ok.error();
        } else if (auto ok = fillWeakLocalBatch(spec, configFile, q(m_config), sweepBatch); !ok) {
            return ok.error();
        }
        if (sweepBatch > 0 && spec.scaling == SweepSpec::Scaling::Weak)
            err(spec.localBatch == sweepBatch
                    ? QStringLiteral("scaledesk: sweep %1 goes on at local batch %2, as its runs so far (weak scaling)")
                          .arg(q(m_sweep))
                          .arg(sweepBatch)
                    : QStringLiteral("scaledesk: warning: sweep %1's runs so far train at local batch %2, these at %3: their "
                                     "epochs do not compare as weak scaling")
                          .arg(q(m_sweep))
                          .arg(sweepBatch)
                          .arg(spec.localBatch));
        if (!m_sweep.empty()) {
            spec.name = q(m_sweep);
            auto expanded = expandSweep(spec);
            if (!expanded) return expanded.error();
            req.points = *expanded;
        } else {
            // Without --sweep there is one run: a list or a repetition count that asks for more is refused.
            if (spec.nodes.size() > 1 || spec.ranksPerNode.size() > 1 || spec.strategies.size() > 1 || m_reps != 1)
                return Error{ErrorCode::Usage,
                             QStringLiteral("--nodes, --ranks-per-node, --strategies and --repetitions give %1 x %2 x %3 x %4 runs; "
                                            "without --sweep NAME a submit is one run")
                                 .arg(spec.nodes.size())
                                 .arg(spec.ranksPerNode.size())
                                 .arg(spec.strategies.size())
                                 .arg(m_reps),
                             QString()};
            spec.name = QStringLiteral("single");
            spec.repetitions = 1;
            auto expanded = expandSweep(spec);  // validates the counts and the strategy
            if (!expanded) return expanded.error();
            RunPoint pt = expanded->first();
            pt.sweep.clear();
            pt.scaling.clear();
            const QString base = command.isSet() ? QFileInfo(command.file).completeBaseName() : q(m_config);
            pt.runId = m_name.empty()
                ? QStringLiteral("%1-%2").arg(base, QDateTime::currentDateTimeUtc().toString(QStringLiteral("yyyyMMdd-HHmmss")))
                : q(m_name);
            req.points = {pt};
        }
        req.options.configFile = configFile;
        req.options.configName = q(m_config);
        req.options.command = command;
        for (const auto& a : m_trainerArgs) req.options.trainerArgs << q(a);
        req.options.dataDir = q(m_data);
        req.makeData = m_makeData;
        req.onFailure = m_onFailure == "stop" ? OnSubmitFailure::Stop : OnSubmitFailure::Continue;
        if (command.isSet()) {
            if (!m_trainerArgs.empty() || !m_data.empty() || m_makeData)
                return Error{ErrorCode::Usage,
                             QStringLiteral("--run: trainer flags, --data and --make-data are for scaledesk-train; give your code's "
                                            "arguments in the run definition"),
                             command.file};
        } else if (auto ok = RunSubmitter::checkConfig(req.options.configFile, req.options.configName); !ok) {
            return ok.error();
        }
        return req;
    }

    // Never connects: paths on the cluster are shown as the profile gives them.
    static int dryRun(const LaunchRequest& req)
    {
        const ClusterProfile& profile = req.profile;
        LocalTransport unused;
        const QString scriptName = makeScheduler(profile, unused)->scriptName();
        for (const auto& pt : req.points) {
            const QString dir = profile.remoteRoot + QStringLiteral("/runs/") + pt.runId;
            out(QStringLiteral("# ---- run %1: %2 ----").arg(pt.runId, scriptName));
            out(previewScript(req, pt).trimmed());
            if (profile.isLocal())
                out(QStringLiteral("# start: cd %1 && setsid nohup /bin/bash job.sh").arg(shellQuote(dir)));
            else
                out(QStringLiteral("# submit: sbatch %1").arg(shellJoin(sbatchArguments(dir))));
        }
        out(QStringLiteral("# %1 job(s), %2 node(s) in all; nothing was recorded or sent (--dry-run)")
                .arg(req.points.size())
                .arg(std::accumulate(req.points.begin(), req.points.end(), 0, [](int a, const RunPoint& b) { return a + b.nodes; })));
        return 0;
    }

    CLI::App* m_app = nullptr;
    std::string m_profile = "local", m_configFile, m_config, m_run, m_name, m_sweep;
    std::string m_nodes = "1", m_ranks, m_strategies, m_scaling = "weak", m_data, m_time, m_onFailure = "continue";
    int m_reps = 1, m_globalBatch = 0, m_localBatch = 0, m_timeout = 0;
    bool m_dryRun = false, m_makeData = false, m_wait = false;
    std::vector<std::string> m_trainerArgs;
};
}  // namespace

std::unique_ptr<Command> submitCommand() { return std::make_unique<SubmitCommand>(); }

}  // namespace scaledesk::cli
