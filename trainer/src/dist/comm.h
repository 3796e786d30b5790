#pragma once

#include <ATen/Tensor.h>
#include <c10/core/Device.h>

#include <chrono>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace scaledesk::train {

/// A failed or timed-out collective, or a rendezvous that could not complete; the message says
/// which operation, which rank and, where it can be known, which peer stopped answering.
class CommError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// A collective in flight. wait() returns when it completed, or throws CommError.
class CommWork {
public:
    virtual ~CommWork() = default;
    virtual void wait() = 0;
    /// When the collective finished (steady clock), if the backend knows it; otherwise the
    /// moment wait() returned. Valid after wait().
    std::chrono::steady_clock::time_point completedAt() const { return m_completedAt; }
    /// How long the collective ran on the device, where the backend times it there (nccl: between
    /// events on its stream). Valid once the device has finished it (after the step's sync).
    virtual std::optional<double> deviceSeconds() const { return std::nullopt; }

protected:
    std::chrono::steady_clock::time_point m_completedAt{};
};
using CommHandle = std::shared_ptr<CommWork>;

/// Who this process is among the job's ranks, and where the rendezvous is.
struct DistEnv {
    int rank = 0;
    int size = 1;
    int localRank = 0;
    int localSize = 1;
    std::string masterAddr = "127.0.0.1";
    int masterPort = 29500;
    std::string source = "single";  ///< mpi, slurm, env or single
    bool mpiLaunched = false;       ///< started by mpirun or srun --mpi (MPI must be initialised)
};

/// How a reduction combines the ranks' tensors: their sum, or their mean (the sum over n; NCCL
/// computes it in the collective, the CPU backends scale the sum before the work completes).
enum class ReduceOp { Sum, Avg };

/// The job's communicator: reductions and gathers on contiguous tensors of float32, float64 or
/// int64 (CPU tensors; for nccl CUDA ones, and small CPU ones copied through the GPU). Every rank
/// must issue the same collectives in the same order.
class Communicator {
public:
    virtual ~Communicator() = default;
    virtual std::string backend() const = 0;
    int rank() const { return m_rank; }
    int size() const { return m_size; }

    /// In place over ranks.
    virtual CommHandle allreduceAsync(const at::Tensor& tensor, ReduceOp op) = 0;
    /// `full` holds size() equal slices; slice r ends as rank r's `shard`. `shard` may be that slice.
    virtual CommHandle allgatherAsync(const at::Tensor& full, const at::Tensor& shard) = 0;
    /// Sum (or mean) of `full` over ranks; this rank's slice of it lands in `shard`.
    virtual CommHandle reduceScatterAsync(const at::Tensor& full, const at::Tensor& shard, ReduceOp op) = 0;
    virtual void broadcast(const at::Tensor& tensor, int root) = 0;
    virtual void barrier() = 0;

    void allreduce(const at::Tensor& tensor, ReduceOp op = ReduceOp::Sum) { allreduceAsync(tensor, op)->wait(); }
    void allgather(const at::Tensor& full, const at::Tensor& shard) { allgatherAsync(full, shard)->wait(); }
    void reduceScatter(const at::Tensor& full, const at::Tensor& shard, ReduceOp op = ReduceOp::Sum)
    {
        reduceScatterAsync(full, shard, op)->wait();
    }

protected:
    Communicator(int rank, int size) : m_rank(rank), m_size(size) {}

private:
    int m_rank;
    int m_size;
};

/// Finds rank and world size: MPI when launched by mpirun/srun --mpi (initialises MPI), else
/// SLURM_PROCID / SLURM_NTASKS / SLURM_LOCALID with the first host of SLURM_JOB_NODELIST, else
/// RANK / WORLD_SIZE / LOCAL_RANK / MASTER_ADDR / MASTER_PORT, else a single process.
/// Partial or inconsistent variables throw CommError naming them.
DistEnv discoverDistEnv();

/// The first host of a SLURM node list ("nid[001-004,007],login1" → "nid001").
std::string firstHostOfNodeList(const std::string& nodeList);

/// The node this process runs on: SLURM's node name (SLURMD_NODENAME) under SLURM, else the host
/// name. Ranks count as on one node when these are equal: several slurmd on one host (the test
/// sandbox's nodes) are several nodes.
std::string nodeName();

/// The MPI library's version text when MPI is running in this process, else empty.
std::string mpiLibraryVersion();

/// Names of the backends compiled into this build ("gloo", "mpi", "nccl").
std::vector<std::string> availableBackends();

/// `auto` resolves to nccl when this rank trains on a GPU and the build has NCCL, else mpi under an
/// MPI launch, else gloo. Throws CommError for a backend this build lacks, or nccl on a CPU device.
/// World size 1 gets the no-op communicator, unless `evenAlone` asks for the backend itself (its
/// collectives over one rank: what check-comm checks on one GPU).
std::unique_ptr<Communicator> makeCommunicator(const std::string& backend, const DistEnv& env, std::chrono::milliseconds timeout,
                                               const c10::Device& device, bool evenAlone = false);

/// Finalises MPI if this process initialised it (after every communicator is gone).
void shutdownMpi();

/// Ends every rank of an MPI job at once (after a rank's fatal error), if MPI is running.
void abortMpiJob(int exitCode);

}  // namespace scaledesk::train
