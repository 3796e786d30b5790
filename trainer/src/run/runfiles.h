#pragma once

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <map>
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

/// What manifest.json says about a run when it starts (docs/trainer.md lists every field); the
/// library versions and the git revision are added by writeStartManifest().
struct RunManifest {
    std::string runId, config, yamlConfig, strategy, backend, launcher, device, dataStreams, dataLoader, mpiVersion;
    std::string deviceName;                                       ///< cpu, cuda:0
    std::string gpuName, cudaVersion, cudnnVersion, ncclVersion;  ///< empty where they do not apply
    std::string ampMode = "none";                                 ///< none, fp16 or bf16
    bool tf32 = false, cudnnBenchmark = false;
    int worldSize = 1, nodes = 1, ranksPerNode = 1, threadsPerRank = 1;
    /// rank 0's host's logical CPUs (online): with ranks per node × threads per rank above it,
    /// ranks take turns on the cores (the planner flags such points as outside its model)
    int hostCpus = 0;
    std::vector<std::string> hostnames;
    int64_t localBatch = 0, globalBatch = 0, stepsPerEpoch = 0, totSteps = 0, numEpochs = 0, nSamples = 0, nSamplesVal = 0;
    int64_t dataSize = 0, baseChannels = 0, parameters = 0;
    double bucketCapMb = 0, fusionMb = 0, zeroBucketMb = 0, startUnix = 0;
    bool fullScale = false, enableAmp = false, noddp = false, broadcastBuffers = true;
    double gpuSampleSeconds = 0;
    std::string gpuTelemetry;  ///< sampling, off or unavailable (rank 0's)
    int gpuIndex = -1;         ///< NVML index rank 0 samples; -1: none
    uint64_t seed = 0;
    /// The bytes of each collective a step sends, by strategy (dist/buckets.h): `comm_message_bytes`.
    std::map<std::string, std::vector<int64_t>> messageBytes;
    int64_t dataWorkers = 0;  ///< the loader's worker threads per rank (`num_data_workers`; 0: on the step's thread)
};

/// Writes <runDir>/manifest.json with status "running"; a resumed run keeps its first start time.
/// Returns a warning for the log (an unreadable previous manifest), or empty.
std::string writeStartManifest(const std::string& runDir, const RunManifest& manifest, bool resumed);
/// Marks <runDir>/manifest.json as ended: status, end time and, for a failure, the error.
void closeManifest(const std::string& runDir, const std::string& status, const std::string& error = {});

}  // namespace scaledesk::train
