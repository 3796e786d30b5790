// scaledesk deploy --profile P [--prebuilt FILE | --sources DIR]
#include "cli/commands.h"
#include "cli/context.h"
#include "cli/terminal.h"
#include "runs/deploy.h"

#include <CLI/CLI.hpp>

namespace scaledesk::cli {

namespace {
class DeployCommand final : public Command {
public:
    void add(CLI::App& app, SharedOptions& shared) override
    {
        m_app = app.add_subcommand("deploy", "put the trainer on the cluster: build the bundled sources there, or upload a binary");
        m_app->add_option("--profile", m_profile, "profile name")->required();
        m_app->add_option("--prebuilt", m_prebuilt, "upload this scaledesk-train instead of building (the cluster must match)");
        m_app->add_option(
            "--sources", m_sources,
            "build these trainer sources there (default: the ones the app carries; given, it wins over the profile's prebuilt)");
        addHostKeyFlag(*m_app, shared);
    }
    bool chosen() const override { return m_app->parsed(); }
    int run(Context& ctx) override
    {
        auto p = findProfile(ctx.ws, q(m_profile));
        if (!p) return fail(p.error());
        Connection c = ctx.connect(*p);
        DeployOptions o = deployOptionsFor(*p);
        if (!m_sources.empty()) {  // given, the sources win over the profile's prebuilt
            o.sourceDir = q(m_sources);
            o.prebuiltBinary.clear();
        }
        if (!m_prebuilt.empty()) o.prebuiltBinary = q(m_prebuilt);
        o.progress = [](const ProgressStep& s) { progress(QStringLiteral("deploy: "), s); };
        // Ctrl-C stops the deploy and kills its build on the far side (which runs detached there, so
        // that a dropped connection does not stop it), rather than leaving it to run for minutes.
        InterruptGuard guard;
        o.stopRequested = [] { return interrupted(); };
        auto r = deployTrainer(*c.transport, *p, o);
        progressDone();
        if (!r && interrupted()) {
            err(QStringLiteral("scaledesk: deploy stopped (Ctrl-C): %1").arg(r.error().text()));
            return 130;
        }
        if (!r) return fail(r.error());
        c.rememberSecrets();
        out(r->summary());
        return 0;
    }

private:
    CLI::App* m_app = nullptr;
    std::string m_profile, m_prebuilt, m_sources;
};
}  // namespace

std::unique_ptr<Command> deployCommand() { return std::make_unique<DeployCommand>(); }

}  // namespace scaledesk::cli
