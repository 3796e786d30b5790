// The mpi backend: raw MPI calls on tensor memory. One communication thread makes every MPI call
// (Horovod's model): non-blocking MPI collectives in Open MPI only progress inside MPI calls, so a
// dedicated thread running blocking collectives is what gives real overlap with backward.
#include "dist/comm.h"
#include "dist/commwork.h"

#include <mpi.h>
#if defined(OPEN_MPI) && OPEN_MPI
#include <mpi-ext.h>
#endif

#include <ATen/ATen.h>

#include <climits>
#include <deque>
#include <thread>

namespace scaledesk::train {

namespace {

MPI_Datatype mpiType(const at::Tensor& t)
{
    switch (t.scalar_type()) {
    case at::kFloat: return MPI_FLOAT;
    case at::kDouble: return MPI_DOUBLE;
    case at::kLong: return MPI_INT64_T;
    default: throw CommError(std::string("mpi backend: unsupported dtype ") + c10::toString(t.scalar_type()));
    }
}

int count(const at::Tensor& t, const char* op)
{
    if (!t.is_contiguous())
        throw CommError(std::string("mpi backend: ") + op + " needs a contiguous tensor");
    if (t.numel() > INT_MAX)
        throw CommError(std::string("mpi backend: ") + op + " of more than 2^31 elements");
    if (t.is_cuda()) {
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
        if (MPIX_Query_cuda_support() != 1)
#endif
            throw CommError("mpi backend: this MPI library is not CUDA-aware; use --backend nccl for GPU tensors");
    }
    return int(t.numel());
}

void check(int rc, const std::string& op, int rank)
{
    if (rc == MPI_SUCCESS) return;
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, text, &len);
    throw CommError("rank " + std::to_string(rank) + ": MPI " + op + " failed: " + std::string(text, std::size_t(len)));
}

class MpiCommunicator : public Communicator {
public:
    explicit MpiCommunicator(const DistEnv& env) : Communicator(env.rank, env.size)
    {
        // Errors come back as return codes (and become CommError) instead of aborting the job.
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        m_thread = std::thread([this] { run(); });
    }
    ~MpiCommunicator() override
    {
        {
            std::lock_guard<std::mutex> lock(m_mutex);
            m_stop = true;
        }
        m_cv.notify_all();
        m_thread.join();
    }

    std::string backend() const override { return "mpi"; }

    CommHandle allreduceAsync(const at::Tensor& tensor) override
    {
        const int n = count(tensor, "allreduce");
        return enqueue([=] {
            check(MPI_Allreduce(MPI_IN_PLACE, tensor.data_ptr(), n, mpiType(tensor), MPI_SUM, MPI_COMM_WORLD), "allreduce", rank());
        });
    }

    CommHandle allgatherAsync(const at::Tensor& full, const at::Tensor& shard) override
    {
        const int n = count(shard, "allgather");
        if (full.numel() != int64_t(n) * size())
            throw CommError("mpi backend: allgather of a full buffer that is not world size × shard");
        return enqueue([=] {
            at::Tensor mine = full.view(-1).narrow(0, int64_t(rank()) * n, n);
            if (mine.data_ptr() != shard.data_ptr()) mine.copy_(shard.view(-1));
            check(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, full.data_ptr(), n, mpiType(full), MPI_COMM_WORLD),
                  "allgather", rank());
        });
    }

    CommHandle reduceScatterAsync(const at::Tensor& full, const at::Tensor& shard) override
    {
        const int n = count(shard, "reduce-scatter");
        if (full.numel() != int64_t(n) * size())
            throw CommError("mpi backend: reduce-scatter of a full buffer that is not world size × shard");
        return enqueue([=] {
            at::Tensor mine = full.view(-1).narrow(0, int64_t(rank()) * n, n);
            if (mine.data_ptr() == shard.data_ptr()) {
                check(MPI_Reduce_scatter_block(MPI_IN_PLACE, full.data_ptr(), n, mpiType(full), MPI_SUM, MPI_COMM_WORLD),
                      "reduce-scatter", rank());
                // In place, the result lands at the start of the buffer.
                if (rank() != 0) mine.copy_(full.view(-1).narrow(0, 0, n));
            } else {
                check(MPI_Reduce_scatter_block(full.data_ptr(), shard.data_ptr(), n, mpiType(full), MPI_SUM, MPI_COMM_WORLD),
                      "reduce-scatter", rank());
            }
        });
    }

    void broadcast(const at::Tensor& tensor, int root) override
    {
        const int n = count(tensor, "broadcast");
        enqueue([=] { check(MPI_Bcast(tensor.data_ptr(), n, mpiType(tensor), root, MPI_COMM_WORLD), "broadcast", rank()); })->wait();
    }

    void barrier() override
    {
        enqueue([=] { check(MPI_Barrier(MPI_COMM_WORLD), "barrier", rank()); })->wait();
    }

private:
    CommHandle enqueue(std::function<void()> op)
    {
        auto work = std::make_shared<ThreadWork>();
        {
            std::lock_guard<std::mutex> lock(m_mutex);
            m_queue.emplace_back(std::move(op), work);
        }
        m_cv.notify_one();
        return work;
    }

    void run()
    {
        for (;;) {
            std::pair<std::function<void()>, std::shared_ptr<ThreadWork>> job;
            {
                std::unique_lock<std::mutex> lock(m_mutex);
                m_cv.wait(lock, [this] { return m_stop || !m_queue.empty(); });
                if (m_queue.empty()) return;
                job = std::move(m_queue.front());
                m_queue.pop_front();
            }
            try {
                job.first();
                job.second->complete();
            } catch (...) {
                job.second->fail(std::current_exception());
            }
        }
    }

    std::thread m_thread;
    std::mutex m_mutex;
    std::condition_variable m_cv;
    std::deque<std::pair<std::function<void()>, std::shared_ptr<ThreadWork>>> m_queue;
    bool m_stop = false;
};

}  // namespace

std::unique_ptr<Communicator> makeMpiCommunicator(const DistEnv& env)
{
    return std::make_unique<MpiCommunicator>(env);
}

}  // namespace scaledesk::train
