#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace scaledesk::train {

/// How gradients fill buckets (ddp) or fusion buffers (fused): in reverse definition order (the
/// order backward produces them), the first group up to `firstCapMb` MiB, each later one up to
/// `capMb`; a parameter never splits, so a group closes before the parameter that would overflow
/// it (and a parameter larger than the cap is a group of its own). Elements are float32.
std::vector<std::vector<std::size_t>> bucketGroups(const std::vector<int64_t>& numels, double capMb, double firstCapMb);

/// How zero1 lays out `total` float32 parameters over `worldSize` ranks in buckets of at most
/// `bucketMb` MiB (DeepSpeed's reduce_bucket_size and allgather_bucket_size): the flat vector is
/// cut into buckets of worldSize × chunk elements, the last one of worldSize × lastChunk (padded);
/// in bucket k, rank r owns the elements [k·bucket + r·c, k·bucket + (r+1)·c), c its chunk, and
/// keeps them at [k·chunk, k·chunk + c) of its shard. One reduce-scatter and one allgather per
/// bucket per step.
struct ZeroLayout {
    int64_t chunk = 0;      ///< elements per rank in a full bucket
    int64_t lastChunk = 0;  ///< elements per rank in the last bucket
    int64_t buckets = 0;
    int64_t padded = 0;  ///< the flat vector's length, padding included
    int64_t shard = 0;   ///< elements each rank owns
    int64_t ranks = 1;
    int64_t chunkOf(int64_t k) const { return k + 1 == buckets ? lastChunk : chunk; }
    int64_t offsetOf(int64_t k) const { return k * chunk * ranks; }  ///< bucket k's first element in the flat vector
};
ZeroLayout zeroLayout(int64_t total, int worldSize, double bucketMb);

/// The collectives one step of each strategy sends, in bytes, for parameters of these sizes at
/// `worldSize` ranks (what manifest.json records as `comm_message_bytes`, for the planner):
/// ddp: its buckets (a 1 MiB first one, then `bucketCapMb`); fused: its fusion buffers; zero1: its
/// buckets (zeroLayout; padding included), each carried by a reduce-scatter and by an allgather.
std::map<std::string, std::vector<int64_t>> strategyMessageBytes(const std::vector<int64_t>& numels, double bucketCapMb, double fusionMb,
                                                                 double zeroBucketMb, int worldSize);

}  // namespace scaledesk::train
