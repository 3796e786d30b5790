#include "data/dataset.h"

#include "data/rotations.h"

#include <ATen/ATen.h>

#include <omp.h>

#include <random>

namespace scaledesk::train {

namespace {

uint64_t splitmix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

uint64_t streamSeed(uint64_t seed, int rank, Stream stream, int64_t epoch, int64_t index)
{
    uint64_t h = splitmix(seed);
    h = splitmix(h ^ uint64_t(rank));
    h = splitmix(h ^ uint64_t(stream));
    h = splitmix(h ^ uint64_t(epoch));
    return splitmix(h ^ uint64_t(index));
}

class H5Source : public VolumeSource {
public:
    H5Source(const std::string& path, int64_t box, int64_t outChannels, bool inMemory)
        : m_volume(std::make_unique<H5Volume>(path)), m_box(box), m_outChannels(outChannels)
    {
        m_volume->requireShape("Nbody", 4, box);
        m_volume->requireShape("Hydro", outChannels, box);
        if (inMemory) {
            m_nbody = at::empty({4, box, box, box}, at::kFloat);
            m_hydro = at::empty({outChannels, box, box, box}, at::kFloat);
            m_volume->readAll("Nbody", m_nbody.data_ptr<float>());
            m_volume->readAll("Hydro", m_hydro.data_ptr<float>());
            m_volume.reset();
        }
    }
    int64_t box() const override { return m_box; }
    int64_t outChannels() const override { return m_outChannels; }
    void readCrop(const SampleSpec& s, int64_t crop, float* input, float* target) const override
    {
        if (m_volume) {
            m_volume->readCrop("Nbody", 4, s.x, s.y, s.z, crop, input);
            m_volume->readCrop("Hydro", m_outChannels, s.x, s.y, s.z, crop, target);
            return;
        }
        auto cut = [&](const at::Tensor& v, float* out) {
            at::from_blob(out, {v.size(0), crop, crop, crop}, at::kFloat)
                .copy_(v.narrow(1, s.x, crop).narrow(2, s.y, crop).narrow(3, s.z, crop));
        };
        cut(m_nbody, input);
        cut(m_hydro, target);
    }

private:
    std::unique_ptr<H5Volume> m_volume;
    at::Tensor m_nbody, m_hydro;
    int64_t m_box;
    int64_t m_outChannels;
};

// The original's RandomJunkDataset (broken as shipped, spec §2.3): uniform noise in [−1, 1],
// here reproducible from the sample's own stream.
class SyntheticSource : public VolumeSource {
public:
    SyntheticSource(int64_t box, int64_t outChannels, uint64_t seed) : m_box(box), m_outChannels(outChannels), m_seed(seed) {}
    int64_t box() const override { return m_box; }
    int64_t outChannels() const override { return m_outChannels; }
    void readCrop(const SampleSpec& s, int64_t crop, float* input, float* target) const override
    {
        std::mt19937 gen(uint32_t(splitmix(m_seed ^ uint64_t(s.x * 1000003 + s.y * 1009 + s.z))));
        std::uniform_real_distribution<float> u(-1.0f, 1.0f);
        const int64_t n = crop * crop * crop;
        for (int64_t i = 0; i < 4 * n; ++i) input[i] = u(gen);
        for (int64_t i = 0; i < m_outChannels * n; ++i) target[i] = u(gen);
    }

private:
    int64_t m_box;
    int64_t m_outChannels;
    uint64_t m_seed;
};

}  // namespace

SampleSpec drawSample(uint64_t seed, int rank, Stream stream, int64_t epoch, int64_t index, int64_t box, int64_t crop)
{
    std::mt19937_64 gen(streamSeed(seed, rank, stream, epoch, index));
    std::uniform_int_distribution<int64_t> corner(0, box - crop - 1);
    std::uniform_int_distribution<int> rotation(0, 23);
    SampleSpec spec;
    spec.x = corner(gen);
    spec.y = corner(gen);
    spec.z = corner(gen);
    spec.rotation = rotation(gen);
    return spec;
}

std::shared_ptr<VolumeSource> openVolumeSource(DataLoaderMode mode, const std::string& path, int64_t box, int64_t outChannels,
                                               uint64_t seed)
{
    switch (mode) {
    case DataLoaderMode::Synthetic: return std::make_shared<SyntheticSource>(box, outChannels, seed);
    case DataLoaderMode::Inmem: return std::make_shared<H5Source>(path, box, outChannels, true);
    case DataLoaderMode::Lowmem:
    case DataLoaderMode::DaliLowmem: return std::make_shared<H5Source>(path, box, outChannels, false);
    }
    return nullptr;
}

BatchLoader::BatchLoader(std::shared_ptr<const VolumeSource> source, LoaderPlan plan) : m_source(std::move(source)), m_plan(plan)
{
    m_numBatches = (plan.numSamples + plan.batchSize - 1) / plan.batchSize;
    m_depth = plan.depth > 0 ? plan.depth : std::max<int64_t>(2, 2 * plan.workers);
    const int64_t c = plan.crop;
    for (int64_t i = 0; i < m_depth; ++i) {
        m_inputs.push_back(at::empty({plan.batchSize, m_source->inChannels(), c, c, c}, at::kFloat));
        m_targets.push_back(at::empty({plan.batchSize, m_source->outChannels(), c, c, c}, at::kFloat));
    }
    m_slotReady.assign(std::size_t(m_depth), -1);
    m_nextClaim = m_released = m_nextOut = std::min(plan.firstBatch, m_numBatches);
    for (int64_t i = 0; i < plan.workers; ++i) m_threads.emplace_back([this] { workerLoop(); });
}

BatchLoader::~BatchLoader()
{
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        m_stop = true;
    }
    m_workCv.notify_all();
    for (auto& t : m_threads) t.join();
}

void BatchLoader::fill(int64_t batch)
{
    const int64_t slot = batch % m_depth;
    const int64_t first = batch * m_plan.batchSize;
    const int64_t count = std::min(m_plan.batchSize, m_plan.numSamples - first);
    const int64_t stride = m_plan.indexStride > 0 ? m_plan.indexStride : m_plan.batchSize;
    const int64_t streamFirst = batch * stride + m_plan.indexOffset;
    const int64_t c = m_plan.crop;
    const int64_t inC = m_source->inChannels(), outC = m_source->outChannels();
    at::Tensor rawIn = at::empty({inC, c, c, c}, at::kFloat);
    at::Tensor rawOut = at::empty({outC, c, c, c}, at::kFloat);
    for (int64_t i = 0; i < count; ++i) {
        const SampleSpec spec =
            drawSample(m_plan.seed, m_plan.streamRank, m_plan.stream, m_plan.epoch, streamFirst + i, m_source->box(), c);
        m_source->readCrop(spec, c, rawIn.data_ptr<float>(), rawOut.data_ptr<float>());
        const SpatialTransform& t = rotatorTable()[std::size_t(spec.rotation)];
        m_inputs[std::size_t(slot)][i].copy_(applyTransform(rawIn, t));
        m_targets[std::size_t(slot)][i].copy_(applyTransform(rawOut, t));
    }
}

void BatchLoader::workerLoop()
{
    // Copies here are large enough for ATen to open an OpenMP team; keep the workers to one
    // thread each so they never compete with the training step's intra-op threads.
    omp_set_num_threads(1);
    for (;;) {
        int64_t batch;
        {
            std::unique_lock<std::mutex> lock(m_mutex);
            m_workCv.wait(lock, [this] { return m_stop || m_error || m_nextClaim >= m_numBatches || m_nextClaim < m_released + m_depth; });
            if (m_stop || m_error || m_nextClaim >= m_numBatches) return;
            batch = m_nextClaim++;
        }
        try {
            fill(batch);
        } catch (...) {
            std::lock_guard<std::mutex> lock(m_mutex);
            if (!m_error) m_error = std::current_exception();
            m_readyCv.notify_all();
            return;
        }
        {
            std::lock_guard<std::mutex> lock(m_mutex);
            m_slotReady[std::size_t(batch % m_depth)] = batch;
        }
        m_readyCv.notify_all();
    }
}

std::optional<Batch> BatchLoader::next()
{
    std::unique_lock<std::mutex> lock(m_mutex);
    if (m_handedOut) {
        ++m_released;
        m_handedOut = false;
        m_workCv.notify_all();
    }
    if (m_nextOut >= m_numBatches) return std::nullopt;
    const int64_t batch = m_nextOut;
    const std::size_t slot = std::size_t(batch % m_depth);
    if (m_threads.empty()) {
        lock.unlock();
        fill(batch);
        lock.lock();
    } else {
        m_readyCv.wait(lock, [&] { return m_error || m_slotReady[slot] == batch; });
        if (m_slotReady[slot] != batch && m_error) std::rethrow_exception(m_error);
    }
    ++m_nextOut;
    m_handedOut = true;
    const int64_t count = std::min(m_plan.batchSize, m_plan.numSamples - batch * m_plan.batchSize);
    return Batch{m_inputs[slot].narrow(0, 0, count), m_targets[slot].narrow(0, 0, count), batch};
}

}  // namespace scaledesk::train
