// Allreduce bus bandwidth of the trainer's communicator against plain MPI_Allreduce on the same
// buffers, in the same run. Run under mpirun (2 ranks); rank 0 prints the table.
//   mpirun -np 2 build/tests/bench/bench_comm [--reps N]
#include "dist/comm.h"

#include <mpi.h>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>

using namespace scaledesk::train;
using Clock = std::chrono::steady_clock;

namespace {
double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}
}  // namespace

int main(int argc, char** argv)
{
    int reps = 15;
    for (int i = 1; i + 1 < argc; ++i)
        if (std::strcmp(argv[i], "--reps") == 0) reps = std::atoi(argv[i + 1]);
    const DistEnv env = discoverDistEnv();
    if (!env.mpiLaunched || env.size < 2) {
        std::fprintf(stderr, "bench_comm: run under mpirun with at least 2 ranks\n");
        return 2;
    }
    std::vector<std::pair<std::string, std::unique_ptr<Communicator>>> comms;
    comms.emplace_back("mpi", makeCommunicator("mpi", env, std::chrono::seconds(120), c10::Device(c10::DeviceType::CPU)));
    const int n = env.size;
    if (env.rank == 0) {
        std::printf("allreduce, %d ranks, float32, median of %d; busbw = 2(n-1)/n x bytes / time\n", n, reps);
        std::printf("| size | MPI_Allreduce GB/s | communicator (mpi) GB/s | ratio |\n|---|---|---|---|\n");
    }
    for (int64_t mb : {1, 4, 16, 64, 128}) {
        const int64_t count = mb * 1024 * 1024 / 4;
        torch::Tensor buffer = torch::ones({count});
        std::vector<double> plain, ours;
        for (int r = 0; r < reps + 2; ++r) {
            // Alternate the two so both see the same machine state.
            MPI_Barrier(MPI_COMM_WORLD);
            auto t0 = Clock::now();
            MPI_Allreduce(MPI_IN_PLACE, buffer.data_ptr<float>(), int(count), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
            const double a = std::chrono::duration<double>(Clock::now() - t0).count();
            comms[0].second->barrier();
            t0 = Clock::now();
            comms[0].second->allreduceAsync(buffer, ReduceOp::Sum)->wait();
            const double b = std::chrono::duration<double>(Clock::now() - t0).count();
            if (r >= 2) {  // warm-up
                plain.push_back(a);
                ours.push_back(b);
            }
        }
        const double bytes = double(count) * 4.0 * 2.0 * (n - 1) / n;
        const double plainBw = bytes / median(plain) / 1e9, oursBw = bytes / median(ours) / 1e9;
        if (env.rank == 0) std::printf("| %lld MB | %.2f | %.2f | %.2fx |\n", (long long)mb, plainBw, oursBw, oursBw / plainBw);
    }
    comms.clear();
    shutdownMpi();
    return 0;
}
