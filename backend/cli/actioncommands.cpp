// scaledesk cancel RUN… [--signal USR1] and scaledesk requeue RUN… [--force]: the lifecycle layer's
// actions, one run at a time, each refused or done with its reason printed.
#include "cli/commands.h"
#include "cli/context.h"
#include "cli/terminal.h"
#include "runs/runactions.h"

#include <CLI/CLI.hpp>

namespace scaledesk::cli {

namespace {
// Runs `act` on each run with the connection of its profile; the exit code counts the failures.
int eachRun(Context& ctx, const std::vector<std::string>& runs, RunAction action,
            const std::function<Expected<RunRecord>(RunActions&, const QString&)>& act)
{
    int failures = 0;
    for (const auto& s : runs) {
        const QString id = q(s);
        auto rec = ctx.store.load(id);
        if (!rec) {
            fail(rec.error());
            ++failures;
            continue;
        }
        // A run without a cluster (an imported one) is refused by the lifecycle rule before any connection.
        if (const ActionCheck check = checkAction(action, *rec); !check.allowed && rec->profile.isEmpty()) {
            fail(Error{ErrorCode::ActionRefused, check.reason, id});
            ++failures;
            continue;
        }
        auto c = ctx.connection(rec->profile);
        if (!c) {
            fail(c.error());
            ++failures;
            continue;
        }
        RunActions actions(ctx.store, *(*c)->transport, *(*c)->scheduler);
        auto done = act(actions, id);
        if (!done) {
            fail(done.error());
            ++failures;
            continue;
        }
        (*c)->rememberSecrets();
        out(QStringLiteral("%1: %2 (%3)").arg(id, runStateName(done->state), done->message));
    }
    return failures == 0 ? 0 : 1;
}

class CancelCommand final : public Command {
public:
    void add(CLI::App& app, SharedOptions& shared) override
    {
        m_app = app.add_subcommand("cancel", "cancel runs, or only checkpoint and stop them (--signal USR1)");
        m_app->add_option("runs", m_runs, "run ids")->required();
        m_app->add_option("--signal", m_signal, "USR1: the trainer checkpoints and exits 75; requeue resumes it")
            ->check(CLI::IsMember({"USR1"}));
        addHostKeyFlag(*m_app, shared);
    }
    bool chosen() const override { return m_app->parsed(); }
    int run(Context& ctx) override
    {
        const bool stop = !m_signal.empty();
        return eachRun(ctx, m_runs, stop ? RunAction::CheckpointStop : RunAction::Cancel,
                       [stop](RunActions& a, const QString& id) { return stop ? a.checkpointStop(id) : a.cancel(id); });
    }

private:
    CLI::App* m_app = nullptr;
    std::vector<std::string> m_runs;
    std::string m_signal;
};

class RequeueCommand final : public Command {
public:
    void add(CLI::App& app, SharedOptions& shared) override
    {
        m_app = app.add_subcommand("requeue", "run stopped runs again; they resume from their last checkpoint");
        m_app->add_option("runs", m_runs, "run ids")->required();
        m_app->add_flag("--force", m_force, "also run a completed run again");
        addHostKeyFlag(*m_app, shared);
    }
    bool chosen() const override { return m_app->parsed(); }
    int run(Context& ctx) override
    {
        const bool force = m_force;
        return eachRun(ctx, m_runs, RunAction::Requeue, [force](RunActions& a, const QString& id) { return a.requeue(id, force); });
    }

private:
    CLI::App* m_app = nullptr;
    std::vector<std::string> m_runs;
    bool m_force = false;
};
}  // namespace

std::unique_ptr<Command> cancelCommand() { return std::make_unique<CancelCommand>(); }
std::unique_ptr<Command> requeueCommand() { return std::make_unique<RequeueCommand>(); }

}  // namespace scaledesk::cli
