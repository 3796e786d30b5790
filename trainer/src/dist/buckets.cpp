#include "dist/buckets.h"

#include <algorithm>

namespace scaledesk::train {

std::vector<std::vector<std::size_t>> bucketGroups(const std::vector<int64_t>& numels, double capMb, double firstCapMb)
{
    const auto elements = [](double mb) { return int64_t(mb * 1024 * 1024 / sizeof(float)); };
    const int64_t cap = elements(capMb), firstCap = elements(firstCapMb);
    std::vector<std::vector<std::size_t>> groups(1);
    int64_t filled = 0;
    for (std::size_t i = numels.size(); i-- > 0;) {
        const int64_t limit = groups.size() == 1 ? firstCap : cap;
        if (!groups.back().empty() && filled + numels[i] > limit) {
            groups.emplace_back();
            filled = 0;
        }
        groups.back().push_back(i);
        filled += numels[i];
    }
    if (groups.back().empty()) groups.pop_back();
    return groups;
}

ZeroLayout zeroLayout(int64_t total, int worldSize, double bucketMb)
{
    ZeroLayout z;
    z.ranks = std::max(1, worldSize);
    const auto capElements = int64_t(bucketMb * 1024 * 1024 / sizeof(float));
    z.chunk = std::max<int64_t>(1, capElements / z.ranks);
    const int64_t bucket = z.chunk * z.ranks;
    z.buckets = std::max<int64_t>(1, (total + bucket - 1) / bucket);
    const int64_t rest = total - (z.buckets - 1) * bucket;
    z.lastChunk = std::max<int64_t>(1, (rest + z.ranks - 1) / z.ranks);
    z.padded = (z.buckets - 1) * bucket + z.lastChunk * z.ranks;
    z.shard = (z.buckets - 1) * z.chunk + z.lastChunk;
    return z;
}

std::map<std::string, std::vector<int64_t>> strategyMessageBytes(const std::vector<int64_t>& numels, double bucketCapMb, double fusionMb,
                                                                 double zeroBucketMb, int worldSize)
{
    const auto bytesOf = [&](const std::vector<std::vector<std::size_t>>& groups) {
        std::vector<int64_t> bytes;
        for (const auto& g : groups) {
            int64_t n = 0;
            for (std::size_t i : g) n += numels[i];
            bytes.push_back(n * int64_t(sizeof(float)));
        }
        return bytes;
    };
    int64_t total = 0;
    for (int64_t n : numels) total += n;
    const ZeroLayout z = zeroLayout(total, worldSize, zeroBucketMb);
    std::vector<int64_t> zero;
    for (int64_t k = 0; k < z.buckets; ++k) zero.push_back(z.chunkOf(k) * z.ranks * int64_t(sizeof(float)));
    return {{"ddp", bytesOf(bucketGroups(numels, bucketCapMb, 1.0))},
            {"fused", bytesOf(bucketGroups(numels, fusionMb, fusionMb))},
            {"zero1", zero}};
}

}  // namespace scaledesk::train
