#include "dist/comm.h"

#include "dist/commwork.h"

#ifdef SCALEDESK_HAVE_MPI
#include <mpi.h>
#endif

#include <ATen/ATen.h>

#include <cstdlib>
#include <unistd.h>

namespace scaledesk::train {

std::unique_ptr<Communicator> makeGlooCommunicator(const DistEnv& env, std::chrono::milliseconds timeout);
std::unique_ptr<Communicator> makeMpiCommunicator(const DistEnv& env, std::chrono::milliseconds timeout);
std::unique_ptr<Communicator> makeNcclCommunicator(const DistEnv& env, std::chrono::milliseconds timeout, const c10::Device& device);

namespace {

const char* env(const char* name)
{
    const char* v = std::getenv(name);
    return (v && *v) ? v : nullptr;
}

int envInt(const char* name, const char* context)
{
    const char* v = env(name);
    if (!v) throw CommError(std::string(context) + ": " + name + " is not set");
    char* end = nullptr;
    const long n = std::strtol(v, &end, 10);
    if (*end != '\0' || n < 0)
        throw CommError(std::string(context) + ": " + name + "='" + (v ? v : "") + "' is not a non-negative integer");
    return int(n);
}

bool g_mpiInitialisedHere = false;

// World size 1: nothing to talk to.
class SingleCommunicator : public Communicator {
public:
    SingleCommunicator() : Communicator(0, 1) {}
    std::string backend() const override { return "none"; }
    CommHandle allreduceAsync(const at::Tensor&, ReduceOp) override { return doneWork(); }
    CommHandle allgatherAsync(const at::Tensor& full, const at::Tensor& shard) override
    {
        if (full.data_ptr() != shard.data_ptr()) full.copy_(shard.view_as(full));
        return doneWork();
    }
    CommHandle reduceScatterAsync(const at::Tensor& full, const at::Tensor& shard, ReduceOp) override
    {
        if (full.data_ptr() != shard.data_ptr()) shard.copy_(full.view_as(shard));
        return doneWork();
    }
    void broadcast(const at::Tensor&, int) override {}
    void barrier() override {}
};

}  // namespace

std::string nodeName()
{
    if (const char* slurm = std::getenv("SLURMD_NODENAME"); slurm && *slurm) return slurm;
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    return host;
}

std::string firstHostOfNodeList(const std::string& nodeList)
{
    // Up to the first comma outside brackets; then expand the first range inside brackets.
    std::string first;
    int depth = 0;
    for (char c : nodeList) {
        if (c == '[') ++depth;
        if (c == ']') --depth;
        if (c == ',' && depth == 0) break;
        first += c;
    }
    const auto open = first.find('[');
    if (open == std::string::npos) return first;
    const auto close = first.find(']', open);
    std::string inside = first.substr(open + 1, close - open - 1);
    inside = inside.substr(0, inside.find(','));
    inside = inside.substr(0, inside.find('-'));
    return first.substr(0, open) + inside + (close == std::string::npos ? "" : first.substr(close + 1));
}

DistEnv discoverDistEnv()
{
    DistEnv d;
    const bool mpiLaunch = env("OMPI_COMM_WORLD_SIZE") || env("PMIX_RANK") || env("PMI_RANK");
#ifdef SCALEDESK_HAVE_MPI
    if (mpiLaunch) {
        int initialised = 0;
        MPI_Initialized(&initialised);
        if (!initialised) {
            int provided = 0;
            // A dedicated communication thread makes the MPI calls: SERIALIZED is the least it needs.
            MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided);
            g_mpiInitialisedHere = true;
            if (provided < MPI_THREAD_SERIALIZED)
                throw CommError("MPI provides thread level " + std::to_string(provided) +
                                ", but the mpi backend needs MPI_THREAD_SERIALIZED (" + std::to_string(MPI_THREAD_SERIALIZED) +
                                "); rebuild Open MPI with thread support or use --backend gloo");
        }
        MPI_Comm_rank(MPI_COMM_WORLD, &d.rank);
        MPI_Comm_size(MPI_COMM_WORLD, &d.size);
        MPI_Comm local;
        MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, d.rank, MPI_INFO_NULL, &local);
        MPI_Comm_rank(local, &d.localRank);
        MPI_Comm_size(local, &d.localSize);
        MPI_Comm_free(&local);
        // The rendezvous address for gloo: MASTER_ADDR if given, else rank 0's host name.
        char host[256] = {};
        if (d.rank == 0) gethostname(host, sizeof host - 1);
        MPI_Bcast(host, sizeof host, MPI_CHAR, 0, MPI_COMM_WORLD);
        d.masterAddr = env("MASTER_ADDR") ? env("MASTER_ADDR") : host;
        d.masterPort = env("MASTER_PORT") ? envInt("MASTER_PORT", "MPI launch") : 29500;
        d.source = "mpi";
        d.mpiLaunched = true;
        return d;
    }
#endif
    if (mpiLaunch && env("OMPI_COMM_WORLD_SIZE")) {
        // Launched by mpirun but built without MPI: Open MPI's variables still say who we are.
        d.rank = envInt("OMPI_COMM_WORLD_RANK", "mpirun");
        d.size = envInt("OMPI_COMM_WORLD_SIZE", "mpirun");
        d.localRank = env("OMPI_COMM_WORLD_LOCAL_RANK") ? envInt("OMPI_COMM_WORLD_LOCAL_RANK", "mpirun") : 0;
        d.localSize = env("OMPI_COMM_WORLD_LOCAL_SIZE") ? envInt("OMPI_COMM_WORLD_LOCAL_SIZE", "mpirun") : 1;
        d.masterAddr = env("MASTER_ADDR") ? env("MASTER_ADDR") : "127.0.0.1";
        d.masterPort = env("MASTER_PORT") ? envInt("MASTER_PORT", "mpirun") : 29500;
        d.source = "mpirun";
        return d;
    }
    if (env("SLURM_PROCID") && (env("SLURM_STEP_ID") || env("SLURM_STEPID"))) {
        const char* ctx = "SLURM task";
        d.rank = envInt("SLURM_PROCID", ctx);
        if (!env("SLURM_NTASKS") && !env("SLURM_NPROCS"))
            throw CommError("SLURM task: SLURM_PROCID is set but neither SLURM_NTASKS nor SLURM_NPROCS");
        d.size = envInt(env("SLURM_NTASKS") ? "SLURM_NTASKS" : "SLURM_NPROCS", ctx);
        d.localRank = env("SLURM_LOCALID") ? envInt("SLURM_LOCALID", ctx) : 0;
        d.localSize = 1;
        if (const char* tpn = env("SLURM_TASKS_PER_NODE")) d.localSize = std::max(1, std::atoi(tpn));  // "2(x3)" → 2
        if (env("MASTER_ADDR")) {
            d.masterAddr = env("MASTER_ADDR");
        } else {
            const char* nodes = env("SLURM_STEP_NODELIST") ? env("SLURM_STEP_NODELIST") : env("SLURM_JOB_NODELIST");
            if (!nodes && d.size > 1)
                throw CommError("SLURM task: neither MASTER_ADDR nor SLURM_JOB_NODELIST is set, so rank 0's host is unknown");
            if (nodes) d.masterAddr = firstHostOfNodeList(nodes);
        }
        d.masterPort = env("MASTER_PORT") ? envInt("MASTER_PORT", ctx) : 29500;
        d.source = "slurm";
    } else if (env("RANK") || env("WORLD_SIZE")) {
        const char* ctx = "env:// rendezvous";
        if (!env("RANK") || !env("WORLD_SIZE"))
            throw CommError(std::string(ctx) + ": " +
                            (env("RANK") ? "RANK is set but WORLD_SIZE is not" : "WORLD_SIZE is set but RANK is not"));
        d.rank = envInt("RANK", ctx);
        d.size = envInt("WORLD_SIZE", ctx);
        d.localRank = env("LOCAL_RANK") ? envInt("LOCAL_RANK", ctx) : d.rank;
        d.localSize = env("LOCAL_WORLD_SIZE") ? envInt("LOCAL_WORLD_SIZE", ctx) : d.size;
        if (d.size > 1 && !env("MASTER_ADDR"))
            throw CommError(std::string(ctx) + ": WORLD_SIZE=" + std::to_string(d.size) + " but MASTER_ADDR is not set");
        if (env("MASTER_ADDR")) d.masterAddr = env("MASTER_ADDR");
        d.masterPort = env("MASTER_PORT") ? envInt("MASTER_PORT", ctx) : 29500;
        d.source = "env";
    }
    if (d.size < 1) throw CommError(d.source + ": the world size must be at least 1");
    if (d.rank >= d.size)
        throw CommError(d.source + ": rank " + std::to_string(d.rank) + " is not below the world size " + std::to_string(d.size));
    if (d.masterPort < 1 || d.masterPort > 65535)
        throw CommError(d.source + ": MASTER_PORT " + std::to_string(d.masterPort) + " is not a TCP port");
    return d;
}

std::string mpiLibraryVersion()
{
#ifdef SCALEDESK_HAVE_MPI
    int initialised = 0;
    MPI_Initialized(&initialised);
    if (!initialised) return {};
    char text[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(text, &len);
    std::string v(text, std::size_t(len));
    return v.substr(0, v.find_first_of(",\n"));
#else
    return {};
#endif
}

std::vector<std::string> availableBackends()
{
    std::vector<std::string> out;
#ifdef USE_C10D_GLOO
    out.push_back("gloo");
#endif
#ifdef SCALEDESK_HAVE_MPI
    out.push_back("mpi");
#endif
#ifdef SCALEDESK_HAVE_NCCL
    out.push_back("nccl");
#endif
    return out;
}

std::unique_ptr<Communicator> makeCommunicator(const std::string& requested, const DistEnv& env, std::chrono::milliseconds timeout,
                                               const c10::Device& device, bool evenAlone)
{
    const auto available = availableBackends();
    auto have = [&](const std::string& b) { return std::find(available.begin(), available.end(), b) != available.end(); };
    std::string backend = requested;
    if (backend == "auto") backend = (device.is_cuda() && have("nccl")) ? "nccl" : (env.mpiLaunched && have("mpi") ? "mpi" : "gloo");
    if (backend != "gloo" && backend != "mpi" && backend != "nccl")
        throw CommError("unknown backend '" + backend + "' (choose auto, mpi, gloo or nccl)");
    if (!have(backend)) {
        std::string list;
        for (const auto& b : available) list += (list.empty() ? "" : ", ") + b;
        if (backend == "nccl")
            throw CommError("--backend nccl: this scaledesk-train was built without NCCL (it needs a CUDA libtorch with NCCL; "
                            "docs/trainer.md, \"GPU builds\"); available: " +
                            list);
        throw CommError("--backend " + backend + ": not built into this scaledesk-train (available: " + list + ")");
    }
    if (backend == "nccl" && !device.is_cuda())
        throw CommError("--backend nccl needs a GPU device, and this rank trains on the CPU (--device cpu)");
    if (backend == "mpi" && !env.mpiLaunched && env.size > 1)
        throw CommError("--backend mpi needs the ranks to be started by mpirun or srun --mpi=pmix");
    if (env.size == 1 && (!evenAlone || (backend == "mpi" && !env.mpiLaunched))) return std::make_unique<SingleCommunicator>();
    if (backend == "mpi") return makeMpiCommunicator(env, timeout);
    if (backend == "nccl") return makeNcclCommunicator(env, timeout, device);
    return makeGlooCommunicator(env, timeout);
}

void shutdownMpi()
{
#ifdef SCALEDESK_HAVE_MPI
    int finalised = 0;
    MPI_Finalized(&finalised);
    if (g_mpiInitialisedHere && !finalised) MPI_Finalize();
#endif
}

void abortMpiJob(int exitCode)
{
#ifdef SCALEDESK_HAVE_MPI
    int initialised = 0, finalised = 0;
    MPI_Initialized(&initialised);
    MPI_Finalized(&finalised);
    if (initialised && !finalised) {
        int size = 1;
        MPI_Comm_size(MPI_COMM_WORLD, &size);
        if (size > 1) MPI_Abort(MPI_COMM_WORLD, exitCode);
    }
#else
    (void)exitCode;
#endif
}

#ifndef SCALEDESK_HAVE_MPI
std::unique_ptr<Communicator> makeMpiCommunicator(const DistEnv&, std::chrono::milliseconds)
{
    throw CommError("this scaledesk-train was built without MPI");
}
#endif
#ifndef SCALEDESK_HAVE_NCCL
std::unique_ptr<Communicator> makeNcclCommunicator(const DistEnv&, std::chrono::milliseconds, const c10::Device&)
{
    throw CommError("this scaledesk-train was built without NCCL");
}
#endif
#ifndef USE_C10D_GLOO
std::unique_ptr<Communicator> makeGlooCommunicator(const DistEnv&, std::chrono::milliseconds)
{
    throw CommError("this scaledesk-train was built without Gloo");
}
#endif

}  // namespace scaledesk::train
