// The gloo backend: libtorch's c10d::ProcessGroupGloo over a TCPStore rendezvous (env://).
#include "dist/comm.h"
#include "dist/commwork.h"

#ifdef USE_C10D_GLOO

#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include <ATen/ATen.h>

#include <cstdlib>
#include <cstring>
#include <thread>

namespace scaledesk::train {

namespace {

std::string seconds(std::chrono::milliseconds ms) { return std::to_string(ms.count() / 1000.0).substr(0, 5) + " s"; }

class GlooCommunicator : public Communicator {
public:
    GlooCommunicator(const DistEnv& env, std::chrono::milliseconds timeout) : Communicator(env.rank, env.size), m_timeout(timeout)
    {
        const std::string where = env.masterAddr + ":" + std::to_string(env.masterPort);
        c10d::TCPStoreOptions options;
        options.port = uint16_t(env.masterPort);
        options.isServer = env.rank == 0;
        options.numWorkers = size_t(env.size);
        options.waitWorkers = true;
        options.timeout = timeout;
        try {
            m_store = c10::make_intrusive<c10d::TCPStore>(env.masterAddr, options);
        } catch (const std::exception& e) {
            throw CommError("rank " + std::to_string(env.rank) + ": rendezvous at " + where + " (MASTER_ADDR:MASTER_PORT) " +
                            "did not complete within " + seconds(timeout) + " while waiting for " +
                            (env.rank == 0 ? "all " + std::to_string(env.size) + " ranks to connect" : "rank 0's store") + ": " +
                            firstLine(e.what()));
        }
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
                            " ranks (rendezvous at " + where + ") within " + seconds(timeout) +
                            "; a rank that never started or cannot reach this host: " + firstLine(e.what()));
        }
    }

    std::string backend() const override { return "gloo"; }

    CommHandle allreduceAsync(const at::Tensor& tensor) override
    {
        std::vector<at::Tensor> tensors{tensor};
        return wrap("allreduce", m_group->allreduce(tensors), {});
    }

    CommHandle allgatherAsync(const at::Tensor& full, const at::Tensor& shard) override
    {
        std::vector<std::vector<at::Tensor>> outputs(1);
        outputs[0] = full.view(-1).chunk(size());
        // Gloo copies the input into the outputs: never let it copy a buffer onto itself.
        std::vector<at::Tensor> inputs{shard.data_ptr() == outputs[0][std::size_t(rank())].data_ptr() ? shard.clone() : shard};
        return wrap("allgather", m_group->allgather(outputs, inputs), {});
    }

    CommHandle reduceScatterAsync(const at::Tensor& full, const at::Tensor& shard) override
    {
        // ProcessGroupGloo has no reduce_scatter in 1.13: all-reduce, then keep this rank's slice.
        std::vector<at::Tensor> tensors{full};
        at::Tensor slice = full.view(-1).chunk(size())[std::size_t(rank())];
        return wrap("reduce-scatter", m_group->allreduce(tensors), [slice, shard] {
            if (slice.data_ptr() != shard.data_ptr()) shard.view(-1).copy_(slice);
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
    class Work : public CommWork {
    public:
        Work(GlooCommunicator* owner, std::string op, c10::intrusive_ptr<c10d::Work> work, std::function<void()> after)
            : m_owner(owner), m_op(std::move(op)), m_work(std::move(work)), m_after(std::move(after))
        {}
        void wait() override
        {
            try {
                m_work->wait();
            } catch (const std::exception& e) {
                throw CommError(m_owner->describeFailure(m_op, e.what()));
            }
            if (m_after) m_after();
            m_completedAt = std::chrono::steady_clock::now();  // c10d does not report the finish time
        }

    private:
        GlooCommunicator* m_owner;
        std::string m_op;
        c10::intrusive_ptr<c10d::Work> m_work;
        std::function<void()> m_after;
    };

    CommHandle wrap(const std::string& op, c10::intrusive_ptr<c10d::Work> work, std::function<void()> after)
    {
        return std::make_shared<Work>(this, op, std::move(work), std::move(after));
    }

    static std::string firstLine(const std::string& text)
    {
        std::string s = text.substr(0, text.find('\n'));
        return s.size() > 300 ? s.substr(0, 300) + "…" : s;
    }

    // Which ranks stopped answering: every rank that sees a collective fail records it in the
    // store and waits a moment for the others to do the same; the ranks that never do are named.
    // If the store itself is gone, rank 0 (its host) is the one that stopped.
    std::string describeFailure(const std::string& op, const std::string& cause)
    {
        std::string msg =
            "rank " + std::to_string(rank()) + ": " + op + " failed or timed out (limit " + seconds(m_timeout) + "): " + firstLine(cause);
        try {
            m_store->setTimeout(std::chrono::milliseconds(2000));
            m_store->set("failed/" + std::to_string(rank()), std::vector<uint8_t>{1});
            std::string silent;
            const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
            for (;;) {
                silent.clear();
                for (int r = 0; r < size(); ++r)
                    if (!m_store->check({"failed/" + std::to_string(r)})) silent += (silent.empty() ? "" : ", ") + std::to_string(r);
                if (silent.empty() || std::chrono::steady_clock::now() > deadline) break;
                std::this_thread::sleep_for(std::chrono::milliseconds(100));
            }
            if (!silent.empty()) msg += "; rank(s) not responding: " + silent;
        } catch (const std::exception&) {
            msg += "; the rendezvous store on rank 0 is unreachable: rank 0 is not responding";
        }
        return msg;
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
