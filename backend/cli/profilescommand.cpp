// scaledesk profiles list | add | test
#include "cli/commands.h"
#include "cli/context.h"
#include "cli/terminal.h"
#include "runs/clusterprobe.h"
#include "runs/runsubmitter.h"
#include "scheduler/shellquote.h"

#include <CLI/CLI.hpp>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

namespace scaledesk::cli {

namespace {
class ProfilesCommand final : public Command {
public:
    void add(CLI::App& app, SharedOptions& shared) override
    {
        m_app = app.add_subcommand("profiles", "list, add and test cluster profiles");
        m_app->require_subcommand(1);
        m_list = m_app->add_subcommand("list", "the workspace's profiles and whether they load");
        m_list->add_flag("--json", m_json, "JSON output");
        m_add = m_app->add_subcommand("add", "validate a profile YAML and copy it into the workspace");
        m_add->add_option("file", m_file, "profile YAML (keys: docs/profiles.md)")->required();
        m_add->add_option("--name", m_name, "profile name (default: the file's base name)");
        m_test = m_app->add_subcommand("test", "connect and check the scheduler, the remote root and the trainer");
        m_test->add_option("name", m_testName, "profile name")->required();
        m_test->add_flag("--connect-only", m_connectOnly, "only connect and log in (host key, keys, 2FA)");
        m_test->add_option("--run", m_run,
                           "also check the Python of a run definition (your own code): its interpreter imports torch there, "
                           "after the profile's and the definition's setup");
        addHostKeyFlag(*m_test, shared);
    }
    bool chosen() const override { return m_app->parsed(); }
    int run(Context& ctx) override
    {
        if (m_list->parsed()) return list(ctx);
        if (m_add->parsed()) {
            auto p = addProfile(ctx.ws, q(m_file), q(m_name));
            if (!p) return fail(p.error());
            out(QStringLiteral("added profile %1 (%2)").arg(p->name, profileKindName(p->kind)));
            return 0;
        }
        return test(ctx);
    }

private:
    int list(Context& ctx)
    {
        QJsonArray arr;
        for (const auto& e : listProfiles(ctx.ws)) {
            const QString target = e.profile ? e.profile->target() : QString();
            const QString kind = e.profile ? profileKindName(e.profile->kind) : QString();
            if (m_json)
                arr.append(QJsonObject{{QStringLiteral("name"), e.name},
                                       {QStringLiteral("file"), e.file},
                                       {QStringLiteral("kind"), kind},
                                       {QStringLiteral("target"), target},
                                       {QStringLiteral("error"), e.profile ? QString() : e.error.text()}});
            else
                out(QStringLiteral("%1  %2  %3  %4")
                        .arg(e.name, -16)
                        .arg(e.profile ? kind : QStringLiteral("?"), -9)
                        .arg(target, -28)
                        .arg(e.profile ? QStringLiteral("ok") : QStringLiteral("error: ") + e.error.text()));
        }
        if (m_json) out(QString::fromUtf8(QJsonDocument(arr).toJson(QJsonDocument::Indented)).trimmed());
        return 0;
    }

    int test(Context& ctx)
    {
        auto p = findProfile(ctx.ws, q(m_testName));
        if (!p) return fail(p.error());
        CommandRun run;
        if (!m_run.empty()) {  // a bad definition is refused before connecting
            auto loaded = loadCommandRun(q(m_run));
            if (!loaded) return fail(loaded.error());
            run = *loaded;
        }
        Connection c = ctx.connect(*p);
        auto say = [](const ProfileCheck& k) {
            out(QStringLiteral("%1 %2%3").arg(k.ok ? QStringLiteral("ok  ") : QStringLiteral("FAIL"), k.what,
                                              k.detail.isEmpty() ? QString() : QStringLiteral(": ") + k.detail));
        };
        QList<ProfileCheck> checks = testProfile(*c.transport, *p, m_connectOnly, say);
        if (run.isSet() && !m_connectOnly && !checks.isEmpty() && checks.first().ok) {
            checks << pythonCheck(*c.transport, *p, run);
            say(checks.last());
        }
        if (!checks.isEmpty() && checks.first().ok) c.rememberSecrets();
        return std::all_of(checks.begin(), checks.end(), [](const ProfileCheck& k) { return k.ok; }) ? 0 : 1;
    }

    CLI::App* m_app = nullptr;
    CLI::App* m_list = nullptr;
    CLI::App* m_add = nullptr;
    CLI::App* m_test = nullptr;
    bool m_json = false;
    std::string m_run;
    std::string m_file, m_name, m_testName;
    bool m_connectOnly = false;
};
}  // namespace

std::unique_ptr<Command> profilesCommand() { return std::make_unique<ProfilesCommand>(); }

}  // namespace scaledesk::cli
