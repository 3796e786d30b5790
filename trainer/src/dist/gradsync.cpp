#include "dist/gradsync.h"

#include "compat/torchcompat.h"
#include "dist/buckets.h"
#include "dist/smallcollectives.h"
#include "model/fusedadam.h"

#include <torch/csrc/autograd/engine.h>
#include <torch/csrc/autograd/functions/accumulate_grad.h>
#include <torch/csrc/autograd/utils/lambda_post_hook.h>
#include <torch/torch.h>

#include <chrono>

namespace scaledesk::train {

namespace {

using Clock = std::chrono::steady_clock;

torch::optim::AdamParamState& adamState(torch::optim::Adam& optimizer, const torch::Tensor& p)
{
    auto& states = optimizer.state();
    auto it = states.find(compat::optimizerStateKey(p));
    if (it == states.end()) {
        auto fresh = std::make_unique<torch::optim::AdamParamState>();
        fresh->step(0);
        fresh->exp_avg(torch::zeros_like(p, torch::MemoryFormat::Contiguous));
        fresh->exp_avg_sq(torch::zeros_like(p, torch::MemoryFormat::Contiguous));
        it = states.emplace(compat::optimizerStateKey(p), std::move(fresh)).first;
    }
    return static_cast<torch::optim::AdamParamState&>(*it->second);
}

void setLr(torch::optim::Adam& optimizer, double lr)
{
    static_cast<torch::optim::AdamOptions&>(optimizer.param_groups()[0].options()).lr(lr);
}

// One process: libtorch's own gradients, the fused Adam step.
class LocalSync : public GradientSync {
public:
    LocalSync(torch::optim::Adam& optimizer, StepClock& clock) : GradientSync(clock), m_optimizer(optimizer) {}
    std::string strategy() const override { return "none"; }
    void zeroGrad() override { m_optimizer.zero_grad(); }
    void afterBackward() override {}
    std::vector<torch::Tensor> gradients() override
    {
        std::vector<torch::Tensor> out;
        for (const auto& group : m_optimizer.param_groups())
            for (const auto& p : group.params())
                if (p.grad().defined()) out.push_back(p.grad());
        return out;
    }
    void step(double lr) override
    {
        setLr(m_optimizer, lr);
        fusedAdamStep(m_optimizer);
    }

private:
    torch::optim::Adam& m_optimizer;
};

struct Bucket {
    torch::Tensor flat;
    std::vector<std::size_t> params;
    int pending = 0;
    CommHandle handle;
    Clock::time_point launched;
};

// Gradients as views of flat buckets (DDP's gradient_as_bucket_view): AccumulateGrad adds in
// place into the views, so no gradient is ever copied in or out.
class BucketSync : public GradientSync {
public:
    BucketSync(Communicator& comm, UNet& model, torch::optim::Adam& optimizer, StepClock& clock, double capMb, double firstCapMb,
               bool overlap)
        : GradientSync(clock), m_comm(comm), m_optimizer(optimizer), m_overlap(overlap)
    {
        m_params = model->parameters();
        std::vector<int64_t> numels;
        for (const auto& p : m_params) numels.push_back(p.numel());
        const std::vector<std::vector<std::size_t>> groups = bucketGroups(numels, capMb, firstCapMb);
        m_bucketOf.assign(m_params.size(), 0);
        torch::NoGradGuard noGrad;
        for (std::size_t b = 0; b < groups.size(); ++b) {
            int64_t total = 0;
            for (std::size_t idx : groups[b]) total += m_params[idx].numel();
            Bucket bucket;
            bucket.flat = torch::zeros({total}, m_params[0].options());
            int64_t offset = 0;
            for (std::size_t idx : groups[b]) {
                auto& p = m_params[idx];
                p.mutable_grad() = bucket.flat.narrow(0, offset, p.numel()).view(p.sizes());
                offset += p.numel();
                m_bucketOf[idx] = b;
            }
            bucket.params = groups[b];
            m_buckets.push_back(std::move(bucket));
        }
        if (m_overlap) {
            for (std::size_t idx = 0; idx < m_params.size(); ++idx) {
                auto accumulator = torch::autograd::impl::grad_accumulator(m_params[idx]);
                accumulator->add_post_hook(std::make_unique<torch::autograd::utils::LambdaPostHook>(
                    [this, idx](const torch::autograd::variable_list& outputs, const torch::autograd::variable_list&) {
                        markReady(idx);
                        return outputs;
                    }));
                // The variable keeps only a weak reference to its accumulator.
                m_accumulators.push_back(std::move(accumulator));
            }
        }
        resetPending();
    }

    std::string strategy() const override { return m_overlap ? "ddp" : "fused"; }

    void zeroGrad() override
    {
        for (auto& b : m_buckets) b.flat.zero_();
    }

    void afterBackward() override
    {
        if (!m_overlap) {
            // Horovod-style: everything launches after backward, in buffer order.
            for (auto& b : m_buckets) launch(b);
        } else {
            // A parameter that got no gradient never fired its hook; launch what is left, in order.
            for (auto& b : m_buckets)
                if (!b.handle) launch(b);
        }
        const int waitStart = m_clock.mark();
        for (auto& b : m_buckets) {
            b.handle->wait();
            recordCollective(std::move(b.handle), b.launched);
            b.handle.reset();
        }
        recordWait(waitStart, m_clock.mark());
        if (measuresNoise())
            for (const auto& b : m_buckets) noteSquaredNorm(b.flat, false);
        resetPending();
    }

    std::vector<torch::Tensor> gradients() override
    {
        std::vector<torch::Tensor> out;
        for (const auto& b : m_buckets) out.push_back(b.flat);
        return out;
    }

    void step(double lr) override
    {
        setLr(m_optimizer, lr);
        fusedAdamStep(m_optimizer);
    }

private:
    void resetPending()
    {
        for (auto& b : m_buckets) b.pending = int(b.params.size());
        m_nextBucket = 0;
    }

    void launch(Bucket& b)
    {
        if (measuresNoise()) noteSquaredNorm(b.flat, true);  // before the average overwrites it
        b.launched = Clock::now();
        // The mean, not the sum: part of the collective (NCCL's ncclAvg; the CPU backends scale before
        // the work completes), so it counts in the communication and never in the optimizer's time.
        b.handle = m_comm.allreduceAsync(b.flat, ReduceOp::Avg);
    }

    // Runs on the autograd thread right after a parameter's gradient was accumulated.
    void markReady(std::size_t idx)
    {
        Bucket& bucket = m_buckets[m_bucketOf[idx]];
        if (--bucket.pending > 0) return;
        // Launch strictly in bucket order so every rank issues the same collective sequence.
        while (m_nextBucket < m_buckets.size() && m_buckets[m_nextBucket].pending == 0) {
            launch(m_buckets[m_nextBucket]);
            ++m_nextBucket;
        }
    }

    Communicator& m_comm;
    torch::optim::Adam& m_optimizer;
    bool m_overlap;
    std::vector<torch::Tensor> m_params;
    std::vector<std::size_t> m_bucketOf;
    std::vector<Bucket> m_buckets;
    std::vector<std::shared_ptr<torch::autograd::Node>> m_accumulators;
    std::size_t m_nextBucket = 0;
};

// ZeRO-1: one flat parameter buffer and one flat gradient buffer, cut into buckets (zeroLayout);
// this rank owns its chunk of each bucket, kept contiguous in its shard with the Adam moments of it.
class Zero1Sync : public GradientSync {
public:
    Zero1Sync(Communicator& comm, UNet& model, torch::optim::Adam& optimizer, StepClock& clock, double bucketMb)
        : GradientSync(clock), m_comm(comm), m_optimizer(optimizer)
    {
        m_params = model->parameters();
        int64_t total = 0;
        for (const auto& p : m_params) total += p.numel();
        m_layout = zeroLayout(total, comm.size(), bucketMb);
        torch::NoGradGuard noGrad;
        m_flatParams = torch::zeros({m_layout.padded}, m_params[0].options());
        m_flatGrads = torch::zeros({m_layout.padded}, m_params[0].options());
        int64_t offset = 0;
        for (auto& p : m_params) {
            m_flatParams.narrow(0, offset, p.numel()).copy_(p.view(-1));
            p.set_data(m_flatParams.narrow(0, offset, p.numel()).view(p.sizes()));
            p.mutable_grad() = m_flatGrads.narrow(0, offset, p.numel()).view(p.sizes());
            m_offsets.push_back(offset);
            offset += p.numel();
        }
        m_shardParams = torch::zeros({m_layout.shard}, m_params[0].options());
        takeMine(m_flatParams, m_shardParams);
        m_shardGrads = torch::zeros({m_layout.shard}, m_params[0].options());
        m_expAvg = torch::zeros({m_layout.shard}, m_params[0].options());
        m_expAvgSq = torch::zeros({m_layout.shard}, m_params[0].options());
    }

    std::string strategy() const override { return "zero1"; }

    void zeroGrad() override { m_flatGrads.zero_(); }

    void afterBackward() override
    {
        if (measuresNoise()) noteSquaredNorm(m_flatGrads, true);  // the padding is zeros
        eachBucket(m_flatGrads, m_shardGrads, [this](const torch::Tensor& full, const torch::Tensor& mine) {
            return m_comm.reduceScatterAsync(full, mine, ReduceOp::Avg);
        });
        // This rank's part of the averaged gradient: takeNoise() sums the parts over the ranks.
        if (measuresNoise()) noteSquaredNorm(m_shardGrads, false);
    }

    std::vector<torch::Tensor> gradients() override { return {m_shardGrads}; }
    bool shardedGradients() const override { return true; }

    void step(double lr) override
    {
        const auto& options = static_cast<const torch::optim::AdamOptions&>(m_optimizer.param_groups()[0].options());
        ++m_step;
        adamUpdate(m_shardParams, m_shardGrads, m_expAvg, m_expAvgSq, m_step, lr, std::get<0>(options.betas()),
                   std::get<1>(options.betas()), options.eps());
        setLr(m_optimizer, lr);
        allgather(m_flatParams, m_shardParams);
    }

    void exportOptimizerState() override
    {
        torch::Tensor fullAvg = torch::zeros({m_layout.padded}, m_expAvg.options());
        torch::Tensor fullAvgSq = torch::zeros({m_layout.padded}, m_expAvg.options());
        allgather(fullAvg, m_expAvg);
        allgather(fullAvgSq, m_expAvgSq);
        discardTimes();           // a checkpoint's collectives are no step's
        if (m_step == 0) return;  // no step yet: Adam has no state either
        for (std::size_t i = 0; i < m_params.size(); ++i) {
            auto& st = adamState(m_optimizer, m_params[i]);
            st.step(m_step);
            st.exp_avg(fullAvg.narrow(0, m_offsets[i], m_params[i].numel()).view(m_params[i].sizes()).clone());
            st.exp_avg_sq(fullAvgSq.narrow(0, m_offsets[i], m_params[i].numel()).view(m_params[i].sizes()).clone());
        }
    }

    void importOptimizerState() override
    {
        torch::Tensor fullAvg = torch::zeros({m_layout.padded}, m_expAvg.options());
        torch::Tensor fullAvgSq = torch::zeros({m_layout.padded}, m_expAvg.options());
        int64_t step = 0;
        for (std::size_t i = 0; i < m_params.size(); ++i) {
            auto it = m_optimizer.state().find(compat::optimizerStateKey(m_params[i]));
            if (it == m_optimizer.state().end()) continue;
            auto& st = static_cast<torch::optim::AdamParamState&>(*it->second);
            step = st.step();
            fullAvg.narrow(0, m_offsets[i], m_params[i].numel()).copy_(st.exp_avg().reshape(-1));
            fullAvgSq.narrow(0, m_offsets[i], m_params[i].numel()).copy_(st.exp_avg_sq().reshape(-1));
        }
        m_step = step;
        takeMine(fullAvg, m_expAvg);
        takeMine(fullAvgSq, m_expAvgSq);
        // The full state lives in the shards now; drop the copy.
        m_optimizer.state().clear();
    }

private:
    // This rank's chunk of each bucket of `full`, copied into `shard`.
    void takeMine(const torch::Tensor& full, const torch::Tensor& shard) const
    {
        for (int64_t k = 0; k < m_layout.buckets; ++k) {
            const int64_t c = m_layout.chunkOf(k);
            shard.narrow(0, k * m_layout.chunk, c).copy_(full.narrow(0, m_layout.offsetOf(k) + m_comm.rank() * c, c));
        }
    }
    // One collective per bucket, all started, then all waited for: the training stream waits for
    // all of it (zero1's communication is exposed).
    template <typename Start>
    void eachBucket(const torch::Tensor& full, const torch::Tensor& shard, Start start)
    {
        const int waitStart = m_clock.mark();
        std::vector<std::pair<CommHandle, Clock::time_point>> launched;
        for (int64_t k = 0; k < m_layout.buckets; ++k) {
            const int64_t c = m_layout.chunkOf(k);
            const auto at = Clock::now();
            launched.emplace_back(start(full.narrow(0, m_layout.offsetOf(k), c * m_comm.size()), shard.narrow(0, k * m_layout.chunk, c)),
                                  at);
        }
        for (auto& [handle, at] : launched) {
            handle->wait();
            recordCollective(std::move(handle), at);
        }
        recordWait(waitStart, m_clock.mark());
    }
    void allgather(const torch::Tensor& full, const torch::Tensor& shard)
    {
        eachBucket(full, shard, [this](const torch::Tensor& f, const torch::Tensor& mine) { return m_comm.allgatherAsync(f, mine); });
    }

    Communicator& m_comm;
    torch::optim::Adam& m_optimizer;
    std::vector<torch::Tensor> m_params;
    std::vector<int64_t> m_offsets;
    ZeroLayout m_layout;
    int64_t m_step = 0;
    torch::Tensor m_flatParams, m_flatGrads, m_shardParams, m_shardGrads, m_expAvg, m_expAvgSq;
};

}  // namespace

void GradientSync::noteSquaredNorm(const torch::Tensor& flat, bool local)
{
    torch::NoGradGuard noGrad;
    const torch::Tensor sq = torch::dot(flat, flat).to(torch::kDouble);
    torch::Tensor& sum = local ? m_stepLocalSq : m_stepGlobalSq;
    sum = sum.defined() ? sum + sq : sq;
}

void GradientSync::countNoiseStep(double weight)
{
    if (m_stepLocalSq.defined() && m_stepGlobalSq.defined() && weight > 0) {
        m_epochLocalSq = m_epochLocalSq.defined() ? m_epochLocalSq + weight * m_stepLocalSq : weight * m_stepLocalSq;
        m_epochGlobalSq = m_epochGlobalSq.defined() ? m_epochGlobalSq + weight * m_stepGlobalSq : weight * m_stepGlobalSq;
        ++m_noiseSteps;
    }
    m_stepLocalSq = torch::Tensor();
    m_stepGlobalSq = torch::Tensor();
    ++m_noiseStep;
}

GradientSync::NoiseSums GradientSync::takeNoise(Communicator& comm)
{
    NoiseSums n;
    // Every rank counted the same steps (a skipped fp16 step is skipped everywhere).
    if (comm.size() > 1 && m_noiseSteps > 0) {
        const double steps = double(m_noiseSteps);
        n.localSq = allreduceMean(comm, m_epochLocalSq.item<double>()) / steps;
        // Replicated averaged gradients (ddp, fused): the mean is each rank's; a shard (zero1): the sum of the ranks' parts.
        n.globalSq = allreduceMean(comm, m_epochGlobalSq.item<double>()) * (shardedGradients() ? comm.size() : 1) / steps;
        n.steps = m_noiseSteps;
    }
    m_epochLocalSq = m_epochGlobalSq = torch::Tensor();
    m_noiseSteps = 0;
    return n;
}

SyncTimes GradientSync::takeTimes()
{
    SyncTimes t;
    for (const auto& [from, to] : m_waits) t.exposedSeconds += m_clock.seconds(from, to);
    // On the device (nccl: one stream, so their times add up); else the union of the host intervals.
    bool onDevice = !m_collectives.empty();
    double deviceSum = 0.0;
    for (const auto& c : m_collectives) {
        const std::optional<double> s = c.handle->deviceSeconds();
        onDevice = onDevice && s.has_value();
        deviceSum += s.value_or(0.0);
    }
    if (onDevice) {
        t.commSeconds = deviceSum;
    } else if (!m_collectives.empty()) {
        std::vector<std::pair<Clock::time_point, Clock::time_point>> busy;
        for (const auto& c : m_collectives) busy.emplace_back(c.launched, c.handle->completedAt());
        std::sort(busy.begin(), busy.end());
        Clock::time_point coveredUntil = busy.front().first;
        for (const auto& [begin, end] : busy) {
            const auto from = std::max(begin, coveredUntil);
            if (end > from) {
                t.commSeconds += std::chrono::duration<double>(end - from).count();
                coveredUntil = end;
            }
        }
    }
    m_waits.clear();
    m_collectives.clear();
    return t;
}

std::unique_ptr<GradientSync> makeGradientSync(const std::string& strategy, Communicator& comm, UNet& model, torch::optim::Adam& optimizer,
                                               StepClock& clock, double bucketCapMb, double fusionMb, double zeroBucketMb)
{
    if (strategy == "none" || comm.size() == 1) {
        if (strategy != "none" && strategy != "ddp" && strategy != "fused" && strategy != "zero1")
            throw std::invalid_argument("unknown strategy '" + strategy + "'");
        return std::make_unique<LocalSync>(optimizer, clock);
    }
    if (strategy == "ddp") return std::make_unique<BucketSync>(comm, model, optimizer, clock, bucketCapMb, 1.0, true);
    if (strategy == "fused") return std::make_unique<BucketSync>(comm, model, optimizer, clock, fusionMb, fusionMb, false);
    if (strategy == "zero1") return std::make_unique<Zero1Sync>(comm, model, optimizer, clock, zeroBucketMb);
    throw std::invalid_argument("unknown strategy '" + strategy + "' (choose ddp, fused or zero1)");
}

void broadcastState(Communicator& comm, UNet& model, torch::optim::Adam& optimizer)
{
    if (comm.size() == 1) return;
    torch::NoGradGuard noGrad;
    // Does rank 0 have Adam state (a resumed run)? Everyone must agree before broadcasting it.
    torch::Tensor flag = torch::zeros({1}, torch::kLong);
    if (comm.rank() == 0) flag.fill_(optimizer.state().empty() ? 0 : 1);
    comm.broadcast(flag, 0);
    for (auto& p : model->parameters()) {
        torch::Tensor buffer = p.detach().contiguous();
        comm.broadcast(buffer, 0);
        if (buffer.data_ptr() != p.data_ptr()) p.detach().copy_(buffer);
        if (flag.item<int64_t>() == 0) continue;
        auto& st = adamState(optimizer, p);
        torch::Tensor step = torch::full({1}, st.step(), torch::kLong);
        comm.broadcast(step, 0);
        st.step(step.item<int64_t>());
        comm.broadcast(st.exp_avg(), 0);
        comm.broadcast(st.exp_avg_sq(), 0);
    }
}

}  // namespace scaledesk::train
