#pragma once

#include <QString>

#include <memory>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace scaledesk::cli {

class Context;

/// Options every command that connects shares.
struct SharedOptions {
    bool acceptNewHostKey = false;
};
/// Adds --accept-new-host-key to a command that connects.
void addHostKeyFlag(CLI::App& command, SharedOptions& shared);

/// CLI11's strings as Qt's.
inline QString q(const std::string& s) { return QString::fromStdString(s); }

/// One command of the command line: its options, and what it does. Commands hold no rules of the
/// product; they parse, call the backend (the lifecycle layer for launch, cancel and requeue) and
/// print.
class Command {
public:
    virtual ~Command() = default;
    /// Adds the command (and its options) to `app`.
    virtual void add(CLI::App& app, SharedOptions& shared) = 0;
    /// True when the parsed arguments chose this command.
    virtual bool chosen() const = 0;
    /// Runs it; the process exit code (0 ok, 1 a reported failure, 2 a usage error).
    virtual int run(Context& ctx) = 0;
};

std::unique_ptr<Command> profilesCommand();
std::unique_ptr<Command> deployCommand();
std::unique_ptr<Command> submitCommand();
std::unique_ptr<Command> statusCommand();
std::unique_ptr<Command> cancelCommand();
std::unique_ptr<Command> requeueCommand();
std::unique_ptr<Command> runsCommand();
std::unique_ptr<Command> reportCommand();
std::unique_ptr<Command> compareCommand();
std::unique_ptr<Command> demoCommand();
std::unique_ptr<Command> tailCommand();
std::unique_ptr<Command> importCommand();
std::unique_ptr<Command> planCommand();
std::unique_ptr<Command> planCheckCommand();
std::unique_ptr<Command> calibrateCommand();

}  // namespace scaledesk::cli
