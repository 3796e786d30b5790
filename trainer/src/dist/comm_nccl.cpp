// The nccl backend: libtorch's c10d::ProcessGroupNCCL over the job's TCPStore rendezvous (the one
// the gloo backend uses; under mpirun/srun --mpi its address comes from MPI). Chosen over the NCCL
// C API because ProcessGroupNCCL already runs each collective on its own stream ordered against the
// caller's current stream by events (no host synchronisation: wait() makes the current stream wait),
// caches the communicators, and has the watchdog that detects timeouts and aborts the communicator;
// the C API would mean writing those again.
//
// Failures: the watchdog runs in CleanUpOnly mode (TORCH_NCCL_ASYNC_ERROR_HANDLING=2 unless the user
// set a mode): on a timeout or a dead peer it aborts the communicator, so no kernel waits forever, and
// records the error on the work. wait() and the next collective then throw, and this file turns that
// into one CommError line naming the rank, the operation and the ranks that stopped answering.
#include "dist/comm.h"

#ifdef SCALEDESK_HAVE_NCCL

#include "dist/c10dwork.h"
#include "dist/commerrors.h"
#include "dist/rendezvous.h"

#include <ATen/ATen.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>

#include <cstdlib>
#include <functional>

namespace scaledesk::train {

namespace {

// Our defaults for ProcessGroupNCCL's switches, unless the user (or the job script) set them.
void defaultEnv(const char* name, const char* value, const char* olderName = nullptr)
{
    if (std::getenv(name) || (olderName && std::getenv(olderName))) return;
    ::setenv(name, value, 0);
}

c10d::ReduceOp reduceOp(ReduceOp op) { return op == ReduceOp::Avg ? c10d::ReduceOp::AVG : c10d::ReduceOp::SUM; }

class NcclCommunicator : public Communicator {
public:
    NcclCommunicator(const DistEnv& env, std::chrono::milliseconds timeout, const c10::Device& device)
        : Communicator(env.rank, env.size), m_timeout(timeout), m_device(device)
    {
        defaultEnv("TORCH_NCCL_ASYNC_ERROR_HANDLING", "2", "NCCL_ASYNC_ERROR_HANDLING");
        defaultEnv("TORCH_NCCL_ENABLE_TIMING", "1", "NCCL_ENABLE_TIMING");
        m_store = openRendezvousStore(env, timeout);
        auto options = c10d::ProcessGroupNCCL::Options::create();
        options->timeout = timeout;
        c10::cuda::CUDAGuard guard(m_device);
        m_group = c10::make_intrusive<c10d::ProcessGroupNCCL>(c10::make_intrusive<c10d::PrefixStore>("scaledesk-nccl", m_store), env.rank,
                                                              env.size, options);
        // NCCL connects at the first collective: make it now, so that two ranks on one GPU or an
        // unreachable peer is said at start-up, not at the first gradient.
        barrier();
    }

    std::string backend() const override { return "nccl"; }

    CommHandle allreduceAsync(const at::Tensor& tensor, ReduceOp op) override
    {
        Staged s = stage(tensor);
        c10d::AllreduceOptions options;
        options.reduceOp = reduceOp(op);
        return launch(
            "allreduce",
            [&] {
                std::vector<at::Tensor> tensors{s.device};
                return m_group->allreduce(tensors, options);
            },
            s.copyBack);
    }

    CommHandle allgatherAsync(const at::Tensor& full, const at::Tensor& shard) override
    {
        Staged f = stage(full);
        at::Tensor in = shard.is_cuda() ? shard : shard.to(m_device);
        return launch(
            "allgather",
            [&] {
                at::Tensor out = f.device.view(-1);
                at::Tensor input = in.view(-1);
                return m_group->_allgather_base(out, input);
            },
            f.copyBack);
    }

    CommHandle reduceScatterAsync(const at::Tensor& full, const at::Tensor& shard, ReduceOp op) override
    {
        at::Tensor in = full.is_cuda() ? full : full.to(m_device);
        Staged s = stage(shard);
        c10d::ReduceScatterOptions options;
        options.reduceOp = reduceOp(op);
        return launch(
            "reduce-scatter",
            [&] {
                at::Tensor input = in.view(-1);
                at::Tensor out = s.device.view(-1);
                return m_group->_reduce_scatter_base(out, input, options);
            },
            s.copyBack);
    }

    void broadcast(const at::Tensor& tensor, int root) override
    {
        Staged s = stage(tensor);
        c10d::BroadcastOptions options;
        options.rootRank = root;
        launch(
            "broadcast",
            [&] {
                std::vector<at::Tensor> tensors{s.device};
                return m_group->broadcast(tensors, options);
            },
            s.copyBack)
            ->wait();
    }

    // A barrier the host waits for: one-element allreduce, then the stream is synchronised.
    void barrier() override
    {
        c10::cuda::CUDAGuard guard(m_device);
        at::Tensor one = at::ones({1}, at::TensorOptions().dtype(at::kFloat).device(m_device));
        allreduceAsync(one, ReduceOp::Sum)->wait();
        c10::cuda::getCurrentCUDAStream(m_device.index()).synchronize();
    }

private:
    // A CPU tensor (the trainer's small exchanges: seeds, hashes, host names, timings) goes through
    // the GPU: NCCL takes device memory only. Gradients and parameters are on the GPU already.
    struct Staged {
        at::Tensor device;
        std::function<void()> copyBack;
    };
    Staged stage(const at::Tensor& t) const
    {
        if (t.is_cuda()) return {t, {}};
        at::Tensor d = t.to(m_device);
        return {d, [t, d] { t.copy_(d); }};
    }

    // NCCL's own time for the collective, between events on its stream (TORCH_NCCL_ENABLE_TIMING).
    class Work : public C10dWork {
    public:
        using C10dWork::C10dWork;
        std::optional<double> deviceSeconds() const override
        {
            try {
                return double(work()->getDuration()) / 1000.0;
            } catch (const std::exception&) {
                return std::nullopt;  // timing off (TORCH_NCCL_ENABLE_TIMING=0) or not finished
            }
        }
    };

    template <typename Start>
    CommHandle launch(const std::string& op, Start start, std::function<void()> after)
    {
        c10::cuda::CUDAGuard guard(m_device);
        try {
            return std::make_shared<Work>(op, start(), std::move(after),
                                          [this](const std::string& o, const std::string& what) { return describe(o, what); });
        } catch (const std::exception& e) {
            throw CommError(describe(op, e.what()));
        }
    }

    std::string describe(const std::string& op, const std::string& what)
    {
        return describeNcclFailure(rank(), op, what, secondsText(m_timeout), silentRanks(*m_store, rank(), size()));
    }

    std::chrono::milliseconds m_timeout;
    c10::Device m_device;
    c10::intrusive_ptr<c10d::TCPStore> m_store;
    c10::intrusive_ptr<c10d::ProcessGroupNCCL> m_group;
};

}  // namespace

std::unique_ptr<Communicator> makeNcclCommunicator(const DistEnv& env, std::chrono::milliseconds timeout, const c10::Device& device)
{
    return std::make_unique<NcclCommunicator>(env, timeout, device);
}

}  // namespace scaledesk::train

#endif  // SCALEDESK_HAVE_NCCL
