#pragma once

#include "data/hdf5volume.h"
#include "run/config.h"

#include <ATen/Tensor.h>

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace scaledesk::train {

/// Which random stream a pass draws from. Each (seed, rank, stream, epoch, sample) gets its own
/// counter-based generator, so results do not depend on worker scheduling and a resumed run
/// draws exactly the samples an uninterrupted one would.
enum class Stream : uint64_t { Train = 1, Valid = 2, InitialTrain = 3, InitialValid = 4 };

/// Where a sample is cut and how it is transformed.
struct SampleSpec {
    int64_t x = 0, y = 0, z = 0;
    int rotation = 0;  ///< index into rotatorTable(), i.e. r − 1
};

/// Crop corner in 0 … box − crop − 1 on each axis (numpy randint excludes its bound) and a
/// rotation r drawn uniformly from 1 … 24.
SampleSpec drawSample(uint64_t seed, int rank, Stream stream, int64_t epoch, int64_t index, int64_t box, int64_t crop);

/// A volume pair (input "Nbody", target "Hydro") that raw crops are read from.
class VolumeSource {
public:
    virtual ~VolumeSource() = default;
    virtual int64_t box() const = 0;
    virtual int64_t inChannels() const { return 4; }
    virtual int64_t outChannels() const { return 5; }
    /// Writes the un-rotated crop of side `crop` at `spec` into `input` (4·crop³) and `target` (5·crop³).
    virtual void readCrop(const SampleSpec& spec, int64_t crop, float* input, float* target) const = 0;
};

/// Opens the HDF5 file of one split in `mode` (lowmem: hyperslab reads; inmem: whole volume in
/// memory; synthetic: random junk, no file) after checking names, shapes and the box side.
std::shared_ptr<VolumeSource> openVolumeSource(DataLoaderMode mode, const std::string& path, int64_t box, int64_t outChannels,
                                               uint64_t seed);

/// What one pass over the data draws.
struct LoaderPlan {
    uint64_t seed = 0;
    Stream stream = Stream::Train;
    int64_t epoch = 0;
    int64_t crop = 64;
    int64_t numSamples = 0;  ///< samples of this rank in this pass
    int64_t batchSize = 1;
    int64_t firstBatch = 0;  ///< resume inside a pass
    /// Sample i of batch k is drawn as stream index k·indexStride + indexOffset + i from the
    /// generator of rank `streamRank`. Independent streams (the NERSC default): the rank's own
    /// generator, stride = batchSize, offset 0. Shared streams: rank 0's generator for everyone,
    /// stride = global batch, offset = rank·batchSize, so N ranks together draw exactly what one
    /// rank with an N-times larger batch draws.
    int streamRank = 0;
    int64_t indexStride = 0;  ///< 0: batchSize
    int64_t indexOffset = 0;
    int64_t workers = 2;  ///< 0 = produce on the caller's thread
    int64_t depth = 0;    ///< batches in flight; 0 = 2 × workers (at least 2)
};

struct Batch {
    at::Tensor input;   ///< (n, 4, c, c, c) float32, contiguous
    at::Tensor target;  ///< (n, 5, c, c, c)
    int64_t index = 0;
};

/// Prefetching loader: `workers` threads fill a bounded ring of preallocated batches in order.
/// A batch handed out by next() stays valid until the following call to next().
class BatchLoader {
public:
    BatchLoader(std::shared_ptr<const VolumeSource> source, LoaderPlan plan);
    ~BatchLoader();
    BatchLoader(const BatchLoader&) = delete;
    BatchLoader& operator=(const BatchLoader&) = delete;

    int64_t numBatches() const { return m_numBatches; }
    /// The next batch in order, or nullopt at the end; rethrows a worker's DataError.
    std::optional<Batch> next();

private:
    void workerLoop();
    void fill(int64_t batch);

    std::shared_ptr<const VolumeSource> m_source;
    LoaderPlan m_plan;
    int64_t m_numBatches = 0;
    int64_t m_depth = 2;
    std::vector<at::Tensor> m_inputs, m_targets;  // one per ring slot
    std::mutex m_mutex;
    std::condition_variable m_workCv, m_readyCv;
    std::vector<int64_t> m_slotReady;
    int64_t m_nextClaim = 0, m_released = 0, m_nextOut = 0;
    bool m_handedOut = false, m_stop = false;
    std::exception_ptr m_error;
    std::vector<std::thread> m_threads;
};

}  // namespace scaledesk::train
