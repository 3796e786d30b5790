#pragma once

#include <nlohmann/json_fwd.hpp>

#include <cstdio>
#include <fstream>
#include <mutex>
#include <string>
#include <vector>

namespace scaledesk::train {

/// Seconds since the Unix epoch, with sub-second resolution.
double unixNow();
/// ISO 8601 UTC text of a Unix time, e.g. 2026-11-30T02:03:17.123Z.
std::string isoUtc(double unixSeconds);

/// The original's Python logging format: "2021-11-12 00:46:23,492 - root - INFO - message".
/// Rank 0 writes to stdout and, once the run folder exists, appends to out.log; other ranks write
/// to their rank-<N>.log once it is open (stdout before).
class RunLog {
public:
    explicit RunLog(int rank) : m_rank(rank) {}
    void openFile(const std::string& path);
    void info(const std::string& message);
    void warning(const std::string& message);
    void error(const std::string& message);
    int rank() const { return m_rank; }

private:
    void write(const char* level, const std::string& message);
    int m_rank;
    std::mutex m_mutex;
    std::FILE* m_file = nullptr;
};

/// Append-only line writer that flushes every line (metrics.jsonl, epochs.csv).
class LineFile {
public:
    LineFile() = default;
    ~LineFile();
    LineFile(const LineFile&) = delete;
    LineFile& operator=(const LineFile&) = delete;
    /// Opens for appending; throws std::runtime_error naming the path when it cannot.
    void open(const std::string& path);
    bool isOpen() const { return m_file != nullptr; }
    void writeLine(const std::string& line);
    const std::string& path() const { return m_path; }

private:
    std::FILE* m_file = nullptr;
    std::string m_path;
};

/// Writes text to `path` atomically (temporary file, fsync, rename).
void writeFileAtomically(const std::string& path, const std::string& text);

/// The `epochs.csv` header (itwinai-scaling §7.3 columns plus losses and LR).
const std::vector<std::string>& epochsCsvColumns();

}  // namespace scaledesk::train
