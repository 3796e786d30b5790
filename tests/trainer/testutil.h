#pragma once

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace scaledesk::test {

/// A fresh folder under the system temp dir, removed with the object.
class TempDir {
public:
    TempDir();
    ~TempDir();
    const std::string& path() const { return m_path; }
    std::string file(const std::string& name) const { return m_path + "/" + name; }

private:
    std::string m_path;
};

struct ProcessResult {
    int exitCode = -1;
    std::string output;  ///< stdout and stderr together
};

/// Runs a shell command line (arguments already quoted) and captures its output.
ProcessResult runCommand(const std::string& commandLine);

/// Single-quotes a value for the shell.
std::string shellQuote(const std::string& value);

/// Starts `argv` in `cwd` with extra environment variables; stdout and stderr go to `logFile`.
int spawnProcess(const std::vector<std::string>& argv, const std::string& cwd, const std::string& logFile,
                 const std::vector<std::string>& extraEnv = {});
/// Waits for a spawned process: its exit code, or 128 + signal.
int waitExit(int pid);
/// Whether a running process ignores `signal` (the SigIgn mask of /proc/PID/status); false when it cannot be read.
bool ignoresSignal(int pid, int signal);

/// A TCP port free on every address right now, as the kernel hands one out (a port computed from
/// the pid once collided with a connection's ephemeral port: "Address already in use" at the
/// rendezvous). Falls back to a pid-based port below the ephemeral range.
int nextPort();

/// The records of metrics.jsonl in `runDir` whose "kind" is `kind`, in file order.
std::vector<nlohmann::json> metricsRecords(const std::string& runDir, const std::string& kind);

/// Runs `scaledesk-train make-data` into `<dir>/data` at the CPU configs' box sizes (128 / 96).
/// Returns the command's result.
ProcessResult makeTestData(const std::string& trainBin, const std::string& dir);

/// A test suite whose tests share one folder with generated data (data/train.h5, data/valid.h5),
/// made once per suite with the given trainer binary.
class GeneratedDataSuite : public ::testing::Test {
protected:
    static void setUpData(const std::string& trainBin);
    static void tearDownData();
    static std::string path(const std::string& rel) { return s_dir->file(rel); }
    static std::vector<nlohmann::json> records(const std::string& runDir, const std::string& kind) { return metricsRecords(runDir, kind); }
    static TempDir* s_dir;
};

std::string readFile(const std::string& path);
void writeFile(const std::string& path, const std::string& text);
std::vector<std::string> readLines(const std::string& path);

}  // namespace scaledesk::test
