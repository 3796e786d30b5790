#include "dist/benchcomm.h"

#include "data/dataset.h"
#include "data/hdf5volume.h"
#include "dist/buckets.h"
#include "dist/comm.h"
#include "model/fusedadam.h"
#include "model/unet.h"

#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <unistd.h>

namespace scaledesk::train {

std::vector<long long> parseByteSizes(const std::string& list)
{
    std::vector<long long> sizes;
    std::stringstream in(list);
    for (std::string item; std::getline(in, item, ',');) {
        if (item.empty()) continue;
        long long scale = 1;
        std::string digits = item;
        switch (digits.back()) {
        case 'K':
        case 'k':
            scale = 1LL << 10;
            digits.pop_back();
            break;
        case 'M':
        case 'm':
            scale = 1LL << 20;
            digits.pop_back();
            break;
        case 'G':
        case 'g':
            scale = 1LL << 30;
            digits.pop_back();
            break;
        default: break;
        }
        std::size_t used = 0;
        long long n = -1;
        try {
            n = std::stoll(digits, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        if (used != digits.size() || n <= 0 || (n * scale) % 4 != 0)
            throw std::invalid_argument("--sizes: '" + item + "' is not a size in bytes (a positive multiple of 4; K, M, G allowed)");
        sizes.push_back(n * scale);
    }
    if (sizes.empty()) throw std::invalid_argument("--sizes: no sizes given");
    return sizes;
}

namespace {
double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

// Distinct nodes over the ranks (nodeName()): each rank's name's hash, gathered.
int countNodes(Communicator& comm, std::vector<std::string>* mine)
{
    const std::string host = nodeName();
    mine->assign(1, host);
    const auto hash = static_cast<int64_t>(std::hash<std::string>{}(host)&0x7fffffffffffffffULL);
    torch::Tensor all = torch::zeros({comm.size()}, torch::kInt64);
    torch::Tensor shard = all.narrow(0, comm.rank(), 1);
    shard.fill_(hash);
    comm.allgather(all, shard);
    std::set<int64_t> distinct;
    for (int r = 0; r < comm.size(); ++r) distinct.insert(all[r].item<int64_t>());
    return int(distinct.size());
}
// Each rank's `values` (as many on every rank), gathered on every rank: a [ranks, values] tensor.
torch::Tensor everyRank(Communicator& comm, const std::vector<double>& values)
{
    const auto per = static_cast<int64_t>(values.size());
    torch::Tensor all = torch::zeros({comm.size() * per}, torch::kFloat64);
    torch::Tensor mine = all.narrow(0, comm.rank() * per, per);
    mine.copy_(torch::tensor(values, torch::kFloat64));
    comm.allgather(all, mine);
    return all.view({comm.size(), per});
}
// Each rank's `value`, gathered on every rank (float64, by rank).
torch::Tensor everyRank(Communicator& comm, double value) { return everyRank(comm, std::vector<double>{value}).flatten(); }

// The compute the benchmark runs, one call a step: what it is, for the JSON lines, and the call,
// which returns the seconds it computed (a batch's wait for its loader left out, as the trainer's
// step/compute_s leaves it out).
struct ComputeKernel {
    nlohmann::json describe;
    std::function<double()> run;
    double operator()() const { return run(); }
};

// The config's training batches as its trainer draws them: its train_path read by its loader with
// num_data_workers threads beside the compute (a new pass when one ends). Where the data cannot be
// opened here, a random batch, and `why` says so.
class ConfigBatches {
public:
    ConfigBatches(const TrainConfig& c, int64_t localBatch, int rank) : m_c(c), m_batch(localBatch), m_rank(rank)
    {
        try {
            m_source = openVolumeSource(c.dataLoader, c.trainPath, c.trainBox, c.outChannels, seed());
        } catch (const DataError& e) {
            m_why = e.what();
            m_input = torch::randn({localBatch, 4, c.dataSize, c.dataSize, c.dataSize}) * 0.1;
            m_target = torch::tanh(torch::randn({localBatch, c.outChannels, c.dataSize, c.dataSize, c.dataSize}));
        }
    }
    /// Empty when the batches come from the config's data; else why they are random.
    const std::string& why() const { return m_why; }
    std::pair<torch::Tensor, torch::Tensor> next()
    {
        if (!m_source) return {m_input, m_target};
        for (;;) {
            if (!m_loader) m_loader = std::make_unique<BatchLoader>(m_source, plan(m_epoch++));
            if (auto batch = m_loader->next()) return {batch->input, batch->target};
            m_loader.reset();
        }
    }

private:
    uint64_t seed() const { return m_c.seed.value_or(0); }
    LoaderPlan plan(int64_t epoch) const
    {
        LoaderPlan p;
        p.seed = seed();
        p.epoch = epoch;
        p.crop = m_c.dataSize;
        p.batchSize = m_batch;
        p.numSamples = std::max<int64_t>(m_batch, m_c.nSamples) / m_batch * m_batch;
        p.streamRank = m_rank;
        p.workers = m_c.numDataWorkers;
        return p;
    }
    const TrainConfig& m_c;
    int64_t m_batch;
    int m_rank;
    std::shared_ptr<VolumeSource> m_source;
    std::unique_ptr<BatchLoader> m_loader;
    int64_t m_epoch = 0;
    torch::Tensor m_input, m_target;
    std::string m_why;
};

// Without a config: one forward and backward of two strided 3-D convolutions with a leaky ReLU
// between, on a 32³ crop of 4 channels: the kind of work a U-Net step is made of, about 10 ms on
// one core. With one: the config's own training step (forward, loss, backward, Adam) on its own
// batches from its loader (ConfigBatches), as the trainer computes it, its loader threads sharing
// the cores as in training.
ComputeKernel makeKernel(const BenchCommOptions& options, int rank)
{
    using Clock = std::chrono::steady_clock;
    if (!options.model) {
        auto down1 = std::make_shared<torch::nn::Conv3d>(torch::nn::Conv3dOptions(4, 32, 4).stride(2).padding(1));
        auto down2 = std::make_shared<torch::nn::Conv3d>(torch::nn::Conv3dOptions(32, 64, 4).stride(2).padding(1));
        auto input = std::make_shared<torch::Tensor>(torch::randn({1, 4, 32, 32, 32}));
        return {nlohmann::json{{"kernel", "conv"}}, [down1, down2, input] {
                    const auto t0 = Clock::now();
                    (*down1)->zero_grad();
                    (*down2)->zero_grad();
                    (*down2)(torch::leaky_relu((*down1)(*input), 0.2)).abs().mean().backward();
                    return std::chrono::duration<double>(Clock::now() - t0).count();
                }};
    }
    struct Step {
        Step(const TrainConfig& c, int64_t b, int rank)
            : config(c), model(unetOptions(c)), adam(model->parameters(), torch::optim::AdamOptions(c.startLr)), batches(config, b, rank)
        {
            model->initWeights(c.convScale, c.convBias);
        }
        TrainConfig config;
        UNet model;
        torch::optim::Adam adam;
        ConfigBatches batches;
    };
    const TrainConfig& c = *options.model;
    const int64_t b = options.localBatch;
    auto step = std::make_shared<Step>(c, b, rank);
    nlohmann::json describe{{"kernel", "model"}, {"config", c.name}, {"local_batch", b}, {"data_workers", c.numDataWorkers}};
    if (step->batches.why().empty())
        describe["data"] = "loader";
    else
        describe.update({{"data", "random"}, {"data_note", step->batches.why()}});
    return {describe, [step] {
                const auto [input, target] = step->batches.next();
                const auto t0 = Clock::now();
                step->adam.zero_grad();  // in place in this libtorch, as the strategies zero their buckets
                computeLoss(step->model->forward(input), target, step->config.lambdaRho).backward();
                fusedAdamStep(step->adam);
                return std::chrono::duration<double>(Clock::now() - t0).count();
            }};
}

// The kernel's median over as many runs as fit in `seconds` (at least 3), after one untimed run.
double timeKernel(const ComputeKernel& kernel, double seconds, int* reps)
{
    using Clock = std::chrono::steady_clock;
    kernel();
    std::vector<double> times;
    const auto end = Clock::now() + std::chrono::duration<double>(seconds);
    while (times.size() < 3 || Clock::now() < end) {
        times.push_back(kernel());
    }
    if (reps) *reps = int(times.size());
    return median(times);
}

// Compute contention: rank 0's kernel alone, the others asleep (a rank waiting in a barrier may
// spin on a core), then every rank's at once. The sleepers wake after rank 0's time and a margin.
nlohmann::json benchCompute(Communicator& comm, const ComputeKernel& kernel, double seconds)
{
    kernel();  // first-touch allocations, outside every timing
    comm.barrier();
    double alone = 0;
    int reps = 0;
    if (comm.rank() == 0)
        alone = timeKernel(kernel, seconds, &reps);
    else
        std::this_thread::sleep_for(std::chrono::duration<double>(seconds * 1.5 + 1.0));
    comm.barrier();
    const double together = timeKernel(kernel, seconds, nullptr);
    const torch::Tensor all = everyRank(comm, together);
    nlohmann::json line{{"alone_s", alone}, {"seconds", all.max().item<double>()}, {"mean_s", all.mean().item<double>()},
                        {"reps", reps},     {"threads", at::get_num_threads()},    {"host_cpus", int(std::thread::hardware_concurrency())}};
    line.update(kernel.describe);
    return line;
}

// One collective's timings over the ranks, `reps` of them after two untimed calls.
struct Timings {
    /// barrier: the slowest rank's median; after compute: the mean over calls of the last rank in;
    /// overlapped: the ranks' mean wait after their kernels
    double seconds = 0;
    /// rank 0's fastest call (barrier), the fastest call of the last rank in (after compute), of any rank (overlapped)
    double fastest = 0;
    double wait = 0;                 ///< after compute: the ranks' mean time in the collective beyond the last rank in's
    double compute = 0;              ///< after compute: the ranks' mean time of the kernels before each call (overlapped: during it)
    double median = 0, slowest = 0;  ///< after compute: the median and the slowest call of the last rank in
};

// The mean of `values` (float64, 1-D) without the largest and smallest tenth of them (⌊n/10⌋ each).
double trimmedMean(const torch::Tensor& values)
{
    const torch::Tensor sorted = std::get<0>(values.sort());
    const int64_t n = sorted.numel(), cut = n / 10;
    return sorted.narrow(0, cut, n - 2 * cut).mean().item<double>();
}

// Times `op` on `buffer` (`shard`: this rank's part). With no kernels, the ranks meet in a barrier
// before each call: the collective alone. With `kernels` > 0, each rank runs that many compute
// kernels before each call and no barrier: the collective as training meets it, after a step's
// compute, with its caches cold and the ranks arriving when their compute ends. A rank that
// arrives first waits for the last inside the collective; the last one in measures the
// collective itself, and what the others spend beyond it is the wait, which a step pays once.
// `overlapped` (an allreduce, with kernels): each call is launched first, the kernels run while it
// progresses on the communication thread, and then the rank waits for it, as ddp's buckets go out
// during backward.
Timings timeCollective(Communicator& comm, const std::string& op, torch::Tensor& buffer, torch::Tensor& shard, int reps, int kernels,
                       const ComputeKernel* kernel, bool overlapped = false)
{
    using Clock = std::chrono::steady_clock;
    std::vector<double> times, computes;
    if (kernels > 0) comm.barrier();
    for (int r = 0; r < reps + 2; ++r) {
        const CommHandle launched = overlapped ? comm.allreduceAsync(buffer, ReduceOp::Avg) : nullptr;
        double computed = 0;
        if (kernels > 0)
            for (int k = 0; k < kernels; ++k) computed += (*kernel)();
        else
            comm.barrier();
        const auto t0 = Clock::now();
        // As the strategies call them: a reduction averages (the sum over n, inside the collective),
        // over the whole buffer (ddp, fused) or this rank's shard (zero1).
        if (launched) {  // overlapped: what is left of it after the kernels
            launched->wait();
        } else if (op == "allreduce") {
            comm.allreduce(buffer, ReduceOp::Avg);
        } else if (op == "reduce_scatter") {
            comm.reduceScatter(buffer, shard, ReduceOp::Avg);
        } else {
            comm.allgather(buffer, shard);
        }
        const double s = std::chrono::duration<double>(Clock::now() - t0).count();
        if (r >= 2) {  // the first two set up buffers and connections
            times.push_back(s);
            computes.push_back(computed);
        }
    }
    Timings t;
    if (overlapped) {  // the ranks' mean wait after their kernels (and its fastest, over every rank), and their mean compute
        const torch::Tensor all = everyRank(comm, times);
        t.seconds = all.mean().item<double>();
        t.fastest = all.min().item<double>();
        t.compute = everyRank(comm, computes).mean().item<double>();
        return t;
    }
    if (kernels == 0) {
        // Every rank's time counts: a collective is as slow as its slowest rank.
        t.seconds = everyRank(comm, median(times)).max().item<double>();
        t.fastest = *std::min_element(times.begin(), times.end());
        return t;
    }
    const torch::Tensor all = everyRank(comm, times);    // [ranks, reps]
    const torch::Tensor last = std::get<0>(all.min(0));  // per call: the last rank in's time
    // The mean, not the median: an epoch is a sum of steps and pays every slow call; but without
    // the slowest and fastest tenth of the calls (one each of 10), which ten calls cannot say how
    // often they come: one call descheduled for a third of a second among ten made a 4 MiB
    // allreduce's mean 20 times its median (docs/planner.md).
    t.seconds = trimmedMean(last);
    t.median = last.median().item<double>();
    t.slowest = last.max().item<double>();
    t.fastest = last.min().item<double>();
    t.wait = (all - last.unsqueeze(0)).mean().item<double>();
    t.compute = everyRank(comm, computes).mean().item<double>();
    return t;
}

// Rank 0's table row for one line, with the bus bandwidth as nccl-tests define it: an allreduce
// moves 2(n−1)/n of the buffer, the others (n−1)/n.
void printRow(const nlohmann::json& line, const std::string& label, int n)
{
    const double seconds = line["seconds"], bytes = line["bytes"];
    const double factor = (line["kind"] == "allreduce" ? 2.0 : 1.0) * (n - 1) / n;
    std::printf("| %s | %.0f | %.6g | %.6g | %.3f |\n", label.c_str(), bytes, seconds, double(line["min_s"]),
                factor * bytes / seconds / 1e9);
}
}  // namespace

std::vector<std::pair<long long, std::vector<std::string>>> benchSizes(const BenchCommOptions& options, const std::string& op, int ranks)
{
    const auto rounded = [ranks](long long asked) { return std::max<long long>(ranks, asked / 4 / ranks * ranks) * 4; };
    std::map<long long, std::vector<std::string>> sizes;
    for (const long long asked : options.sizes) sizes[rounded(asked)];
    if (options.model) {
        std::vector<int64_t> numels;
        for (const auto& p : UNet(unetOptions(*options.model))->parameters()) numels.push_back(p.numel());
        const auto sent = strategyMessageBytes(numels, options.bucketCapMb, options.fusionMb, options.zeroBucketMb, ranks);
        for (const auto& [strategy, messages] : sent) {
            if ((strategy == "zero1") != (op == "reduce_scatter" || op == "allgather")) continue;
            for (const int64_t bytes : messages) {
                std::vector<std::string>& by = sizes[rounded(bytes)];
                if (std::find(by.begin(), by.end(), strategy) == by.end()) by.push_back(strategy);
            }
        }
    }
    return {sizes.begin(), sizes.end()};
}

void runBenchComm(Communicator& comm, const BenchCommOptions& options)
{
    if (comm.size() < 2) throw CommError("bench-comm: an allreduce needs at least two ranks (launch it with mpirun -np N or srun -n N)");
    std::vector<std::string> hosts;
    const int nodes = countNodes(comm, &hosts);
    const bool rank0 = comm.rank() == 0;
    std::ofstream file;
    if (rank0 && !options.out.empty() && options.out != "-") {
        file.open(options.out, std::ios::app);
        if (!file) throw std::runtime_error("bench-comm: cannot write " + options.out);
    }
    const int n = comm.size();
    if (rank0) {
        std::printf("collectives over %d ranks on %d node(s), %s, float32, median of %d calls (after compute: mean)\n", n, nodes,
                    comm.backend().c_str(), options.reps);
        std::printf("| collective | bytes | median s | min s | bus GB/s |\n|---|---|---|---|---|\n");
    }
    // After compute: as many kernels before each call as fill `afterCompute` seconds, timed with
    // every rank computing at once (as in training), on rank 0.
    const ComputeKernel kernel = makeKernel(options, comm.rank());
    int kernels = 0;
    if (options.afterCompute > 0) {
        const double one = everyRank(comm, timeKernel(kernel, 0.5, nullptr))[0].item<double>();
        kernels = std::max(1, int(std::lround(options.afterCompute / one)));
        if (rank0) std::printf("after compute: %d kernel(s) of %.3g s before each call, no barrier\n", kernels, one);
    }
    auto now = [] { return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count(); };
    for (const std::string& op : options.ops) {
        if (op == "compute") {
            nlohmann::json line = benchCompute(comm, kernel, options.computeSeconds);
            if (!rank0) continue;
            const double alone = line["alone_s"], slowest = line["seconds"];
            std::printf("| compute | – | %.6g on every rank (slowest), %.6g alone: ×%.3f | | |\n", slowest, alone, slowest / alone);
            line.update(nlohmann::json{
                {"kind", "compute"}, {"backend", comm.backend()}, {"ranks", n}, {"nodes", nodes}, {"host", hosts.front()}, {"t", now()}});
            if (file.is_open()) file << line.dump() << '\n' << std::flush;
            continue;
        }
        for (const auto& size : benchSizes(options, op, n)) {
            const long long bytes = size.first;
            const std::vector<std::string>& sentBy = size.second;
            const long long count = bytes / 4;  // whole float32 elements, a whole number of them per rank
            torch::Tensor buffer = torch::ones({count}, torch::kFloat32);
            torch::Tensor shard = buffer.narrow(0, comm.rank() * (count / n), count / n);
            const auto describe = [&](const Timings& x) {
                nlohmann::json line{
                    {"kind", op},     {"backend", comm.backend()}, {"ranks", n},         {"nodes", nodes},       {"host", hosts.front()},
                    {"bytes", bytes}, {"seconds", x.seconds},      {"min_s", x.fastest}, {"reps", options.reps}, {"t", now()}};
                if (op != "allgather") line["averaged"] = true;  // the time includes the ×1/n of the sum
                if (!sentBy.empty()) line["sent_by"] = sentBy;
                return line;
            };
            const nlohmann::json line = describe(timeCollective(comm, op, buffer, shard, options.reps, 0, nullptr));
            if (rank0) {
                printRow(line, op, n);
                if (file.is_open()) file << line.dump() << '\n' << std::flush;
            }
            if (kernels == 0) continue;
            const Timings loaded = timeCollective(comm, op, buffer, shard, options.reps, kernels, &kernel);
            nlohmann::json after = describe(loaded);
            after["mode"] = "after_compute";
            after["wait_s"] = loaded.wait;
            after["median_s"] = loaded.median;
            after["max_s"] = loaded.slowest;
            after["compute_s"] = loaded.compute;
            after["kernels"] = kernels;
            after.update(kernel.describe);
            if (rank0) {
                printRow(after, op + " after compute", n);
                if (file.is_open()) file << after.dump() << '\n' << std::flush;
            }
            if (op != "allreduce") continue;
            // The allreduce once more, launched before the kernels and waited for after them.
            const Timings hidden = timeCollective(comm, op, buffer, shard, options.reps, kernels, &kernel, true);
            nlohmann::json overlapped = describe(hidden);
            overlapped["mode"] = "overlapped";
            overlapped["compute_s"] = hidden.compute;
            overlapped["kernels"] = kernels;
            overlapped.update(kernel.describe);
            if (rank0) {
                std::printf("| allreduce overlapped | %lld | %.6g exposed after %.6g of compute | | |\n", bytes, hidden.seconds,
                            hidden.compute);
                if (file.is_open()) file << overlapped.dump() << '\n' << std::flush;
            }
        }
    }
    std::fflush(stdout);
}

}  // namespace scaledesk::train
