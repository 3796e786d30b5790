#include "testutil.h"

#include <arpa/inet.h>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <netinet/in.h>
#include <spawn.h>
#include <sstream>
#include <stdexcept>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace scaledesk::test {

TempDir::TempDir()
{
    std::string pattern = (std::filesystem::temp_directory_path() / "scaledesk-test-XXXXXX").string();
    if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
    m_path = pattern;
}

TempDir::~TempDir()
{
    std::error_code ec;
    std::filesystem::remove_all(m_path, ec);
}

ProcessResult runCommand(const std::string& commandLine)
{
    ProcessResult result;
    FILE* pipe = popen((commandLine + " 2>&1").c_str(), "r");
    if (!pipe) throw std::runtime_error("popen failed: " + commandLine);
    char buf[4096];
    std::size_t n;
    while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) result.output.append(buf, n);
    const int status = pclose(pipe);
    result.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return result;
}

int spawnProcess(const std::vector<std::string>& argv, const std::string& cwd, const std::string& logFile,
                 const std::vector<std::string>& extraEnv)
{
    std::vector<std::string> args = argv;
    std::vector<char*> cargv;
    for (auto& a : args) cargv.push_back(a.data());
    cargv.push_back(nullptr);
    std::vector<std::string> envStrings;
    for (char** e = environ; *e; ++e) envStrings.emplace_back(*e);
    for (const auto& e : extraEnv) envStrings.push_back(e);
    std::vector<char*> cenv;
    for (auto& e : envStrings) cenv.push_back(e.data());
    cenv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, logFile.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    const std::string oldCwd = std::filesystem::current_path();
    std::filesystem::current_path(cwd);
    pid_t pid = -1;
    const int rc = posix_spawn(&pid, args[0].c_str(), &actions, nullptr, cargv.data(), cenv.data());
    std::filesystem::current_path(oldCwd);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) throw std::runtime_error("posix_spawn failed for " + args[0]);
    return pid;
}

int waitExit(int pid)
{
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

bool ignoresSignal(int pid, int signal)
{
    std::ifstream status("/proc/" + std::to_string(pid) + "/status");
    std::string line;
    while (std::getline(status, line))
        if (line.rfind("SigIgn:", 0) == 0) return (std::stoull(line.substr(7), nullptr, 16) >> (signal - 1)) & 1U;
    return false;
}

std::string shellQuote(const std::string& value)
{
    std::string out = "'";
    for (char c : value) {
        if (c == '\'')
            out += "'\\''";
        else
            out += c;
    }
    return out + "'";
}

std::vector<nlohmann::json> metricsRecords(const std::string& runDir, const std::string& kind)
{
    std::vector<nlohmann::json> out;
    for (const auto& line : readLines(runDir + "/metrics.jsonl")) {
        nlohmann::json j = nlohmann::json::parse(line);
        if (j.value("kind", "") == kind) out.push_back(j);
    }
    return out;
}

ProcessResult makeTestData(const std::string& trainBin, const std::string& dir)
{
    return runCommand("cd " + shellQuote(dir) + " && " + shellQuote(trainBin) + " make-data --out data --box 128 --val-box 96 --seed 2");
}

TempDir* GeneratedDataSuite::s_dir = nullptr;

void GeneratedDataSuite::setUpData(const std::string& trainBin)
{
    s_dir = new TempDir();
    const auto r = makeTestData(trainBin, s_dir->path());
    ASSERT_EQ(r.exitCode, 0) << r.output;
}

void GeneratedDataSuite::tearDownData()
{
    delete s_dir;
    s_dir = nullptr;
}

std::string readFile(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

void writeFile(const std::string& path, const std::string& text)
{
    std::ofstream out(path, std::ios::binary);
    out << text;
}

std::vector<std::string> readLines(const std::string& path)
{
    std::vector<std::string> lines;
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line)) lines.push_back(line);
    return lines;
}

int nextPort()
{
    static std::atomic<int> counter{0};
    const int fallback = 20000 + int(getpid() % 12000) + 7 * counter++;
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return fallback;
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_ANY);
    address.sin_port = 0;
    socklen_t length = sizeof address;
    int port = fallback;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0)
        port = ntohs(address.sin_port);
    ::close(fd);
    return port;
}

}  // namespace scaledesk::test
