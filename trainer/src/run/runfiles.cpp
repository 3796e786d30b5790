#include "run/runfiles.h"
#include "gitrevision.h"

#include <nlohmann/json.hpp>
#include <torch/version.h>

#ifdef SCALEDESK_HAVE_HDF5
#include <H5public.h>
#endif

#include <chrono>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <filesystem>
#include <iostream>
#include <stdexcept>
#include <unistd.h>

#ifndef SCALEDESK_VERSION
#define SCALEDESK_VERSION "dev"
#endif
#ifndef SCALEDESK_YAML_CPP_VERSION
#define SCALEDESK_YAML_CPP_VERSION "unknown"
#endif

namespace scaledesk::train {

using json = nlohmann::json;
namespace fs = std::filesystem;

double unixNow()
{
    using namespace std::chrono;
    return duration<double>(system_clock::now().time_since_epoch()).count();
}

std::string isoUtc(double unixSeconds)
{
    const std::time_t secs = std::time_t(unixSeconds);
    const int millis = int((unixSeconds - double(secs)) * 1000.0);
    std::tm tm{};
    gmtime_r(&secs, &tm);
    char buf[64];
    std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
                  tm.tm_min, tm.tm_sec, millis);
    return buf;
}

void RunLog::openFile(const std::string& path)
{
    std::lock_guard<std::mutex> lock(m_mutex);
    m_file = std::fopen(path.c_str(), "a");
    if (!m_file) throw std::runtime_error(path + ": cannot open the log for writing: " + std::strerror(errno));
}

void RunLog::write(const char* level, const std::string& message)
{
    const double now = unixNow();
    const std::time_t secs = std::time_t(now);
    std::tm tm{};
    localtime_r(&secs, &tm);
    char stamp[64];
    std::snprintf(stamp, sizeof stamp, "%04d-%02d-%02d %02d:%02d:%02d,%03d", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
                  tm.tm_min, tm.tm_sec, int((now - double(secs)) * 1000.0));
    const std::string line = std::string(stamp) + " - root - " + level + " - " + message + "\n";
    std::lock_guard<std::mutex> lock(m_mutex);
    if (m_rank == 0 || !m_file) {  // ranks > 0 write their rank-<N>.log only
        std::fputs(line.c_str(), stdout);
        std::fflush(stdout);
    }
    if (m_file) {
        std::fputs(line.c_str(), m_file);
        std::fflush(m_file);
    }
}

void RunLog::info(const std::string& message) { write("INFO", message); }
void RunLog::warning(const std::string& message) { write("WARNING", message); }
void RunLog::error(const std::string& message) { write("ERROR", message); }

LineFile::~LineFile()
{
    if (m_file) std::fclose(m_file);
}

void LineFile::open(const std::string& path)
{
    m_path = path;
    m_file = std::fopen(path.c_str(), "a");
    if (!m_file) throw std::runtime_error(path + ": cannot open for appending: " + std::strerror(errno));
}

void LineFile::writeLine(const std::string& line)
{
    if (!m_file) return;
    std::fputs(line.c_str(), m_file);
    std::fputc('\n', m_file);
    if (std::fflush(m_file) != 0) throw std::runtime_error(m_path + ": write failed: " + std::strerror(errno));
}

void writeFileAtomically(const std::string& path, const std::string& text)
{
    const std::string tmp = path + ".tmp-" + std::to_string(::getpid());
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) throw std::runtime_error(path + ": cannot write: " + std::strerror(errno));
    const char* p = text.data();
    std::size_t left = text.size();
    while (left > 0) {
        const ssize_t n = ::write(fd, p, left);
        if (n < 0) {
            const std::string why = std::strerror(errno);
            ::close(fd);
            ::unlink(tmp.c_str());
            throw std::runtime_error(path + ": write failed: " + why);
        }
        p += n;
        left -= std::size_t(n);
    }
    ::fsync(fd);
    ::close(fd);
    if (::rename(tmp.c_str(), path.c_str()) != 0) {
        const std::string why = std::strerror(errno);
        ::unlink(tmp.c_str());
        throw std::runtime_error(path + ": cannot move into place: " + why);
    }
}

const std::vector<std::string>& epochsCsvColumns()
{
    static const std::vector<std::string> columns = {"epoch",
                                                     "step",
                                                     "wall_s",
                                                     "train_s",
                                                     "val_s",
                                                     "samples_processed_global",
                                                     "steps",
                                                     "throughput_samples_s",
                                                     "data_wait_s",
                                                     "compute_s",
                                                     "allreduce_wait_s",
                                                     "max_rank_wall_s",
                                                     "min_rank_wall_s",
                                                     "train_loss",
                                                     "val_loss",
                                                     "lr",
                                                     "t_end",
                                                     "gpu_energy_wh",
                                                     "gpu_util_pct",
                                                     "gns_b_simple"};
    return columns;
}

std::string writeStartManifest(const std::string& runDir, const RunManifest& m, bool resumed)
{
    json manifest = {
        {"run_id", m.runId},
        {"config", m.config},
        {"yaml_config", m.yamlConfig},
        {"strategy", m.strategy},
        {"backend", m.backend},
        {"launcher", m.launcher},
        {"world_size", m.worldSize},
        {"nodes", m.nodes},
        {"ranks_per_node", m.ranksPerNode},
        {"hostnames", m.hostnames},
        {"device", m.device},
        {"device_name", m.deviceName},
        {"gpu_name", m.gpuName.empty() ? json(nullptr) : json(m.gpuName)},
        {"tf32", m.tf32},
        {"cudnn_benchmark", m.cudnnBenchmark},
        {"threads_per_rank", m.threadsPerRank},
        {"host_cpus", m.hostCpus},
        {"local_batch_size", m.localBatch},
        {"global_batch_size", m.globalBatch},
        {"bucket_cap_mb", m.bucketCapMb},
        {"fusion_mb", m.fusionMb},
        {"zero_bucket_mb", m.zeroBucketMb},
        {"data_streams", m.dataStreams},
        {"steps_per_epoch", m.stepsPerEpoch},
        {"tot_steps", m.totSteps},
        {"num_epochs", m.numEpochs},
        {"Nsamples", m.nSamples},
        {"Nsamples_val", m.nSamplesVal},
        {"data_loader_config", m.dataLoader},
        {"data_size", m.dataSize},
        {"base_channels", m.baseChannels},
        {"full_scale", m.fullScale},
        {"parameters", m.parameters},
        {"comm_message_bytes", m.messageBytes},
        {"num_data_workers", m.dataWorkers},
        {"enable_amp", m.enableAmp},
        {"amp_mode", m.ampMode},
        {"noddp", m.noddp},
        {"broadcast_buffers", m.broadcastBuffers},
        {"gpu_telemetry",
         {{"status", m.gpuTelemetry}, {"interval_s", m.gpuSampleSeconds}, {"gpu", m.gpuIndex >= 0 ? json(m.gpuIndex) : json(nullptr)}}},
        {"seed", std::to_string(m.seed)},
        {"versions",
         {{"scaledesk", SCALEDESK_VERSION},
          {"libtorch", TORCH_VERSION},
#ifdef SCALEDESK_HAVE_HDF5
          {"hdf5", std::to_string(H5_VERS_MAJOR) + "." + std::to_string(H5_VERS_MINOR) + "." + std::to_string(H5_VERS_RELEASE)},
#else
          {"hdf5", nullptr},
#endif
          {"yaml-cpp", SCALEDESK_YAML_CPP_VERSION},
          {"mpi", m.mpiVersion.empty() ? json(nullptr) : json(m.mpiVersion)},
          {"cuda", m.cudaVersion.empty() ? json(nullptr) : json(m.cudaVersion)},
          {"cudnn", m.cudnnVersion.empty() ? json(nullptr) : json(m.cudnnVersion)},
          {"nccl", m.ncclVersion.empty() ? json(nullptr) : json(m.ncclVersion)}}},
        {"git_revision", SCALEDESK_GIT_REVISION},
        {"slurm_job_id", std::getenv("SLURM_JOB_ID") ? std::getenv("SLURM_JOB_ID") : ""},
        {"start_utc", isoUtc(m.startUnix)},
        {"end_utc", nullptr},
        {"status", "running"},
    };
    const fs::path path = fs::path(runDir) / "manifest.json";
    std::string warning;
    if (resumed && fs::exists(path)) {
        try {
            std::ifstream in(path);
            const json previous = json::parse(in);
            manifest["first_start_utc"] = previous.value("first_start_utc", previous.value("start_utc", ""));
        } catch (const json::exception&) {
            warning = path.string() + " was unreadable; rewriting it";
        }
    }
    writeFileAtomically(path.string(), manifest.dump(2) + "\n");
    return warning;
}

void closeManifest(const std::string& runDir, const std::string& status, const std::string& error)
{
    const fs::path path = fs::path(runDir) / "manifest.json";
    std::ifstream in(path);
    json manifest = json::parse(in);
    manifest["end_utc"] = isoUtc(unixNow());
    manifest["status"] = status;
    if (!error.empty()) manifest["error"] = error;
    writeFileAtomically(path.string(), manifest.dump(2) + "\n");
}

}  // namespace scaledesk::train
