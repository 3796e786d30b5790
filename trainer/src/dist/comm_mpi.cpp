// The mpi backend: raw MPI calls on tensor memory. One communication thread makes every MPI call
// (Horovod's model): non-blocking MPI collectives in Open MPI only progress inside MPI calls, so a
// dedicated thread driving them is what gives real overlap with backward.
//
// MPI has no timeout of its own: a rank that is alive but stuck (stopped, or in a file-system stall)
// would hold every other rank until the job's time limit. So each collective is started
// non-blocking and tested until done; a collective that takes longer than --comm_timeout ends the
// job (MPI_Abort) with a message. To name the rank holding it up, the ranks form a ring on a
// communicator of their own: each one sends its right neighbour a heartbeat every second (from the
// same thread, idle or not), and watches its left neighbour's.
#include "dist/comm.h"
#include "dist/commwork.h"

#include <mpi.h>
#if defined(OPEN_MPI) && OPEN_MPI
#include <mpi-ext.h>
#endif

#include <ATen/ATen.h>

#include <chrono>
#include <climits>
#include <cstdio>
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
    if (!t.is_contiguous()) throw CommError(std::string("mpi backend: ") + op + " needs a contiguous tensor");
    if (t.numel() > INT_MAX) throw CommError(std::string("mpi backend: ") + op + " of more than 2^31 elements");
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

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

class MpiCommunicator : public Communicator {
public:
    MpiCommunicator(const DistEnv& env, std::chrono::milliseconds timeout) : Communicator(env.rank, env.size), m_timeout(timeout)
    {
        // Errors come back as return codes (and become CommError) instead of aborting the job.
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        MPI_Comm_dup(MPI_COMM_WORLD, &m_ring);
        m_lastSign = Clock::now();
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
        for (MPI_Request* r : {&m_beatSend, &m_beatRecv})
            if (*r != MPI_REQUEST_NULL) {
                MPI_Cancel(r);
                MPI_Request_free(r);
            }
        MPI_Comm_free(&m_ring);
    }

    std::string backend() const override { return "mpi"; }

    CommHandle allreduceAsync(const at::Tensor& tensor, ReduceOp op) override
    {
        const int n = count(tensor, "allreduce");
        return enqueue([=] {
            MPI_Request r;
            check(MPI_Iallreduce(MPI_IN_PLACE, tensor.data_ptr(), n, mpiType(tensor), MPI_SUM, MPI_COMM_WORLD, &r), "allreduce", rank());
            complete(r, "allreduce");
            if (op == ReduceOp::Avg) tensor.mul_(1.0 / size());
        });
    }

    CommHandle allgatherAsync(const at::Tensor& full, const at::Tensor& shard) override
    {
        const int n = count(shard, "allgather");
        if (full.numel() != int64_t(n) * size()) throw CommError("mpi backend: allgather of a full buffer that is not world size × shard");
        return enqueue([=] {
            at::Tensor mine = full.view(-1).narrow(0, int64_t(rank()) * n, n);
            if (mine.data_ptr() != shard.data_ptr()) mine.copy_(shard.view(-1));
            MPI_Request r;
            check(MPI_Iallgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, full.data_ptr(), n, mpiType(full), MPI_COMM_WORLD, &r), "allgather",
                  rank());
            complete(r, "allgather");
        });
    }

    CommHandle reduceScatterAsync(const at::Tensor& full, const at::Tensor& shard, ReduceOp op) override
    {
        const int n = count(shard, "reduce-scatter");
        if (full.numel() != int64_t(n) * size())
            throw CommError("mpi backend: reduce-scatter of a full buffer that is not world size × shard");
        return enqueue([=] {
            at::Tensor mine = full.view(-1).narrow(0, int64_t(rank()) * n, n);
            MPI_Request r;
            if (mine.data_ptr() == shard.data_ptr()) {
                check(MPI_Ireduce_scatter_block(MPI_IN_PLACE, full.data_ptr(), n, mpiType(full), MPI_SUM, MPI_COMM_WORLD, &r),
                      "reduce-scatter", rank());
                complete(r, "reduce-scatter");
                // In place, the result lands at the start of the buffer.
                if (rank() != 0) mine.copy_(full.view(-1).narrow(0, 0, n));
            } else {
                check(MPI_Ireduce_scatter_block(full.data_ptr(), shard.data_ptr(), n, mpiType(full), MPI_SUM, MPI_COMM_WORLD, &r),
                      "reduce-scatter", rank());
                complete(r, "reduce-scatter");
            }
            if (op == ReduceOp::Avg) shard.mul_(1.0 / size());
        });
    }

    void broadcast(const at::Tensor& tensor, int root) override
    {
        const int n = count(tensor, "broadcast");
        enqueue([=] {
            MPI_Request r;
            check(MPI_Ibcast(tensor.data_ptr(), n, mpiType(tensor), root, MPI_COMM_WORLD, &r), "broadcast", rank());
            complete(r, "broadcast");
        })->wait();
    }

    void barrier() override
    {
        enqueue([=] {
            MPI_Request r;
            check(MPI_Ibarrier(MPI_COMM_WORLD, &r), "barrier", rank());
            complete(r, "barrier");
        })->wait();
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

    // Tests `request` until it completes, keeping the heartbeats going; past the timeout the job ends.
    void complete(MPI_Request& request, const char* op)
    {
        const auto start = Clock::now();
        for (int spins = 0;; ++spins) {
            int done = 0;
            check(MPI_Test(&request, &done, MPI_STATUS_IGNORE), op, rank());
            if (done) return;
            heartbeat();
            if (Clock::now() - start > m_timeout) stuck(op, secondsSince(start));
            // Spin briefly (latency), then yield the core to the training threads.
            if (spins > 2000) std::this_thread::sleep_for(std::chrono::microseconds(50));
        }
    }

    // One heartbeat a second to the right neighbour; whatever the left one sent is taken in.
    void heartbeat()
    {
        if (size() == 1) return;
        const int right = (rank() + 1) % size(), left = (rank() + size() - 1) % size();
        if (secondsSince(m_lastBeat) >= 1.0) {
            int sent = 1;
            if (m_beatSend != MPI_REQUEST_NULL) MPI_Test(&m_beatSend, &sent, MPI_STATUS_IGNORE);
            if (sent) {
                m_beatOut = ++m_beats;
                MPI_Isend(&m_beatOut, 1, MPI_LONG_LONG, right, kBeatTag, m_ring, &m_beatSend);
                m_lastBeat = Clock::now();
            }
        }
        for (int got = 1; got;) {
            if (m_beatRecv == MPI_REQUEST_NULL) MPI_Irecv(&m_beatIn, 1, MPI_LONG_LONG, left, kBeatTag, m_ring, &m_beatRecv);
            got = 0;
            MPI_Test(&m_beatRecv, &got, MPI_STATUS_IGNORE);
            if (got) m_lastSign = Clock::now();
        }
    }

    [[noreturn]] void stuck(const char* op, double waited)
    {
        const int left = (rank() + size() - 1) % size();
        const double silent = secondsSince(m_lastSign);
        std::string message = "rank " + std::to_string(rank()) + ": MPI " + op + " did not complete within " + std::to_string(int(waited)) +
            " s (--comm_timeout)";
        if (silent > 3.0)
            message += "; rank " + std::to_string(left) + " has shown no sign of life for " + std::to_string(int(silent)) +
                " s (stopped, or stuck in a system call such as a file-system stall)";
        else
            message += "; rank " + std::to_string(left) + " is alive (the rank holding the job up shows in its neighbour's message)";
        std::fprintf(stderr, "scaledesk-train: error: %s; ending the job\n", message.c_str());
        std::fflush(stderr);
        MPI_Abort(MPI_COMM_WORLD, 1);
        std::_Exit(1);
    }

    void run()
    {
        for (;;) {
            std::pair<std::function<void()>, std::shared_ptr<ThreadWork>> job;
            {
                std::unique_lock<std::mutex> lock(m_mutex);
                // Idle, this thread still beats once a second (a rank between collectives is alive).
                while (!m_stop && m_queue.empty()) {
                    m_cv.wait_for(lock, std::chrono::milliseconds(500));
                    lock.unlock();
                    heartbeat();
                    lock.lock();
                }
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
    // The watchdog (used on the communication thread only).
    static constexpr int kBeatTag = 7331;
    std::chrono::milliseconds m_timeout;
    MPI_Comm m_ring = MPI_COMM_NULL;
    MPI_Request m_beatSend = MPI_REQUEST_NULL, m_beatRecv = MPI_REQUEST_NULL;
    long long m_beats = 0, m_beatOut = 0, m_beatIn = 0;
    Clock::time_point m_lastBeat{}, m_lastSign{};
};

}  // namespace

std::unique_ptr<Communicator> makeMpiCommunicator(const DistEnv& env, std::chrono::milliseconds timeout)
{
    return std::make_unique<MpiCommunicator>(env, timeout);
}

}  // namespace scaledesk::train
