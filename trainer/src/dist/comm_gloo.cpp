// The gloo backend: libtorch's c10d::ProcessGroupGloo over a TCPStore rendezvous (env://).
#include "dist/comm.h"
#include "dist/commwork.h"

#ifdef USE_C10D_GLOO

#include "dist/c10dwork.h"
#include "dist/rendezvous.h"

#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>

#include <ATen/ATen.h>

#include <cstdlib>
#include <cstring>

namespace scaledesk::train {

namespace {

class GlooCommunicator : public Communicator {
public:
    GlooCommunicator(const DistEnv& env, std::chrono::milliseconds timeout) : Communicator(env.rank, env.size), m_timeout(timeout)
    {
        const std::string where = env.masterAddr + ":" + std::to_string(env.masterPort);
        m_store = openRendezvousStore(env, timeout);
        auto groupOptions = c10d::ProcessGroupGloo::Options::create(timeout);
        if (const char* ifname = std::getenv("GLOO_SOCKET_IFNAME"))
            groupOptions->devices.push_back(c10d::ProcessGroupGloo::createDeviceForInterface(ifname));
        else
            groupOptions->devices.push_back(c10d::ProcessGroupGloo::createDefaultDevice());
        groupOptions->threads = 2;
        try {
            m_group = c10::make_intrusive<c10d::ProcessGroupGloo>(c10::make_intrusive<c10d::PrefixStore>("scaledesk", m_store), env.rank,
                                                                  env.size, groupOptions);
        } catch (const std::exception& e) {
            throw CommError("rank " + std::to_string(env.rank) + ": gloo could not connect all " + std::to_string(env.size) +
                            " ranks (rendezvous at " + where + ") within " + secondsText(timeout) +
                            "; a rank that never started or cannot reach this host: " + firstLine(e.what()));
        }
    }

    std::string backend() const override { return "gloo"; }

    CommHandle allreduceAsync(const at::Tensor& tensor, ReduceOp op) override
    {
        std::vector<at::Tensor> tensors{tensor};
        const double scale = 1.0 / size();
        return wrap("allreduce", m_group->allreduce(tensors), [tensor, op, scale] {
            if (op == ReduceOp::Avg) tensor.mul_(scale);
        });
    }

    CommHandle allgatherAsync(const at::Tensor& full, const at::Tensor& shard) override
    {
        std::vector<std::vector<at::Tensor>> outputs(1);
        outputs[0] = full.view(-1).chunk(size());
        // Gloo copies the input into the outputs: never let it copy a buffer onto itself.
        std::vector<at::Tensor> inputs{shard.data_ptr() == outputs[0][std::size_t(rank())].data_ptr() ? shard.clone() : shard};
        return wrap("allgather", m_group->allgather(outputs, inputs), {});
    }

    CommHandle reduceScatterAsync(const at::Tensor& full, const at::Tensor& shard, ReduceOp op) override
    {
        // ProcessGroupGloo has no reduce_scatter in 1.13: all-reduce, then keep this rank's slice.
        std::vector<at::Tensor> tensors{full};
        at::Tensor slice = full.view(-1).chunk(size())[std::size_t(rank())];
        const double scale = 1.0 / size();
        return wrap("reduce-scatter", m_group->allreduce(tensors), [slice, shard, op, scale] {
            if (slice.data_ptr() != shard.data_ptr()) shard.view(-1).copy_(slice);
            if (op == ReduceOp::Avg) shard.mul_(scale);
        });
    }

    void broadcast(const at::Tensor& tensor, int root) override
    {
        std::vector<at::Tensor> tensors{tensor};
        c10d::BroadcastOptions options;
        options.rootRank = root;
        wrap("broadcast", m_group->broadcast(tensors, options), {})->wait();
    }

    void barrier() override { wrap("barrier", m_group->barrier(), {})->wait(); }

private:
    CommHandle wrap(const std::string& op, c10::intrusive_ptr<c10d::Work> work, std::function<void()> after)
    {
        return std::make_shared<C10dWork>(op, std::move(work), std::move(after),
                                          [this](const std::string& o, const std::string& what) { return describeFailure(o, what); });
    }

    std::string describeFailure(const std::string& op, const std::string& cause)
    {
        return "rank " + std::to_string(rank()) + ": " + op + " failed or timed out (limit " + secondsText(m_timeout) +
            "): " + firstLine(cause) + silentRanks(*m_store, rank(), size());
    }

    std::chrono::milliseconds m_timeout;
    c10::intrusive_ptr<c10d::TCPStore> m_store;
    c10::intrusive_ptr<c10d::ProcessGroupGloo> m_group;
};

}  // namespace

std::unique_ptr<Communicator> makeGlooCommunicator(const DistEnv& env, std::chrono::milliseconds timeout)
{
    return std::make_unique<GlooCommunicator>(env, timeout);
}

}  // namespace scaledesk::train

#endif  // USE_C10D_GLOO
