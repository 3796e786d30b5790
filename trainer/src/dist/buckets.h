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

/// The collectives one step of each strategy sends, in bytes, for parameters of these sizes at
/// `worldSize` ranks (what manifest.json records as `comm_message_bytes`, for the planner):
/// ddp: its buckets (a 1 MiB first one, then `bucketCapMb`); fused: its fusion buffers; zero1: the
/// flat vector, padded to a multiple of the world size, that its reduce-scatter and its allgather
/// each carry.
std::map<std::string, std::vector<int64_t>> strategyMessageBytes(const std::vector<int64_t>& numels, double bucketCapMb, double fusionMb,
                                                                 int worldSize);

}  // namespace scaledesk::train
