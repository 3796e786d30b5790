// The `scaledesk` command line: the commands, their dispatch, and what happens to arguments that
// name no command (an error with the usage and the nearest command, never a window).
#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/context.h"
#include "cli/terminal.h"

#include <CLI/CLI.hpp>

#include <QCoreApplication>

#include <algorithm>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

namespace scaledesk {

namespace {
std::vector<std::unique_ptr<cli::Command>> allCommands()
{
    std::vector<std::unique_ptr<cli::Command>> c;
    c.push_back(cli::profilesCommand());
    c.push_back(cli::deployCommand());
    c.push_back(cli::submitCommand());
    c.push_back(cli::statusCommand());
    c.push_back(cli::cancelCommand());
    c.push_back(cli::requeueCommand());
    c.push_back(cli::runsCommand());
    c.push_back(cli::reportCommand());
    c.push_back(cli::compareCommand());
    c.push_back(cli::tailCommand());
    c.push_back(cli::importCommand());
    c.push_back(cli::planCommand());
    c.push_back(cli::planCheckCommand());
    c.push_back(cli::calibrateCommand());
    c.push_back(cli::demoCommand());
    return c;
}

std::size_t editDistance(const std::string& a, const std::string& b)
{
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        std::size_t diagonal = row[0];
        row[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t above = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
            diagonal = above;
        }
    }
    return row[b.size()];
}

// The nearest name, or empty when none is near (more than a third of the word's letters differ:
// "improt" is 4 edits from both "deploy" and "report", a guess, not a suggestion).
std::string nearest(const std::string& word, const std::vector<std::string>& names)
{
    std::string best;
    std::size_t bestDistance = std::string::npos;
    for (const auto& n : names) {
        const std::size_t d = editDistance(word, n);
        if (d < bestDistance) {
            bestDistance = d;
            best = n;
        }
    }
    return bestDistance <= std::max<std::size_t>(1, word.size() / 3) ? best : std::string();
}

// The first argument that names a command (the value of --workspace skipped), or empty.
std::string firstWord(int argc, char** argv)
{
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--workspace") == 0) {
            ++i;
            continue;
        }
        if (argv[i][0] != '-') return argv[i];
    }
    return {};
}

// A command's option that is not one of its own: the unknown option named, with the nearest of the
// command's options, and the command's usage (CLI11 alone says only "were not expected"). Nested
// commands (`profiles add`) are followed to the one the option was given to. -1 when every option
// is known (the error is about something else).
int unknownCommandOption(CLI::App& app, int argc, char** argv, const std::string& word)
{
    CLI::App* command = app.get_subcommand(word);
    std::string path = word;
    bool afterCommand = false;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (!afterCommand) {
            afterCommand = a == word;
            continue;
        }
        if (a == "--") break;  // the rest is passed through (trainer arguments)
        if (a.rfind('-', 0) != 0) {
            for (CLI::App* sub : command->get_subcommands([](CLI::App*) { return true; }))
                if (sub->get_name() == a) {
                    command = sub;
                    path += " " + a;
                }
            continue;
        }
        if (a.size() < 2 || a[1] != '-') continue;  // short options and negative numbers: CLI11's message
        const std::string name = a.substr(0, a.find('='));
        std::vector<std::string> known{"--help"};
        for (const CLI::Option* o : command->get_options())
            for (const std::string& n : o->get_lnames()) known.push_back("--" + n);
        if (std::find(known.begin(), known.end(), name) != known.end()) continue;
        std::string line = "scaledesk: unknown option '" + name + "' for '" + path + "'";
        if (const std::string near = nearest(name, known); !near.empty()) line += "; did you mean '" + near + "'?";
        std::cerr << line << "\n\n" << command->help() << std::flush;
        return 2;
    }
    return -1;
}

// A command that has commands of its own (`runs`, `profiles`) given none: which ones there are,
// and its usage (CLI11 alone says "A subcommand is required"). -1 when that is not the error.
int missingSubcommand(CLI::App& app, const std::string& word)
{
    CLI::App* command = app.get_subcommand(word);
    const auto subs = command->get_subcommands([](CLI::App*) { return true; });
    if (subs.empty() || std::any_of(subs.begin(), subs.end(), [](const CLI::App* s) { return s->parsed(); })) return -1;
    std::string names;
    for (const CLI::App* sub : subs) names += (names.empty() ? "" : ", ") + sub->get_name();
    std::cerr << "scaledesk: '" << word << "' needs one of its commands: " << names << "\n\n" << command->help() << std::flush;
    return 2;
}

int usageError(const CLI::App& app, const std::string& what, const std::vector<std::string>& commands, const std::string& word)
{
    std::string line = "scaledesk: " + what;
    if (const std::string near = word.empty() ? std::string() : nearest(word, commands); !near.empty())
        line += "; did you mean '" + near + "'?";
    else if (!word.empty())
        line += " (the commands are listed below)";
    std::cerr << line << "\n\n" << app.help() << std::flush;
    return 2;
}
}  // namespace

bool opensWindow(int argc, char** argv)
{
    if (argc == 1) return true;
    if (argc == 2 && std::strncmp(argv[1], "--workspace=", 12) == 0) return true;
    return argc == 3 && std::strcmp(argv[1], "--workspace") == 0;
}

int runCommandLine(int argc, char** argv, const CliHooks& hooks)
{
    CLI::App app{"scaledesk: experiment manager for distributed training on SLURM clusters.\n"
                 "With a command it runs headless; with no arguments (or only --workspace DIR) it opens the window.",
                 "scaledesk"};
    app.set_version_flag("--version", std::string("scaledesk ") + SCALEDESK_VERSION);
    app.require_subcommand(1);
    std::string workspaceOpt;
    app.add_option("--workspace", workspaceOpt, "workspace folder (default: $SCALEDESK_HOME, else ~/.local/share/scaledesk)");
    cli::SharedOptions shared;
    auto commands = allCommands();
    for (auto& c : commands) c->add(app, shared);

    std::vector<std::string> names;
    for (const CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) names.push_back(sub->get_name());
    const std::string word = firstWord(argc, argv);
    if (!word.empty() && std::find(names.begin(), names.end(), word) == names.end())
        return usageError(app, "unknown command '" + word + "'", names, word);
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        if (word.empty()) {
            // No command: name the option that was not understood, if there is one.
            for (int i = 1; i < argc; ++i) {
                const std::string a = argv[i];
                if (a == "--workspace") {
                    ++i;
                    continue;
                }
                if (a.rfind("--workspace=", 0) != 0 && a.rfind('-', 0) == 0)
                    return usageError(app, "unknown option '" + a + "'", names, std::string());
            }
            return usageError(app, e.what(), names, std::string());
        }
        if (const int code = unknownCommandOption(app, argc, argv, word); code >= 0) return code;
        if (const int code = missingSubcommand(app, word); code >= 0) return code;
        return app.exit(e) == 0 ? 0 : 2;  // a command's own usage error: CLI11 names the option
    }

    const Workspace ws(workspaceOpt.empty() ? Workspace::defaultRoot() : QString::fromStdString(workspaceOpt));
    auto opened = RunStore::open(ws);
    if (!opened) return cli::fail(opened.error());
    RunStore& store = **opened;
    if (store.wasRebuilt() && !store.list().isEmpty())
        cli::err(QStringLiteral("scaledesk: rebuilt the run index (%1)").arg(store.rebuildReason()));
    for (const QString& w : store.warnings()) cli::err(QStringLiteral("scaledesk: skipped a run: ") + w);

    cli::Context ctx(ws, store, hooks);
    ctx.acceptNewHostKey = shared.acceptNewHostKey;
    for (auto& c : commands)
        if (c->chosen()) return c->run(ctx);
    return usageError(app, "no command given", names, std::string());
}

}  // namespace scaledesk
