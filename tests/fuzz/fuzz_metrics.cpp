// metrics.jsonl bytes, fed in chunks the input chooses (as a live mirror grows), then finished.
#include "analysis/metrics.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    using namespace scaledesk;
    if (size < 2) return 0;
    const std::size_t chunk = 1 + (std::size_t(data[0]) << 8 | data[1]) % 4096;
    data += 2;
    size -= 2;
    RunMetrics metrics;
    MetricsParser parser(metrics);
    QByteArray pending;
    for (std::size_t i = 0; i < size; i += chunk) {
        pending.append(reinterpret_cast<const char*>(data) + i, qsizetype(std::min(chunk, size - i)));
        const std::size_t used = parser.feed(pending.constData(), std::size_t(pending.size()));
        if (used > std::size_t(pending.size())) __builtin_trap();
        pending.remove(0, qsizetype(used));
    }
    parser.finish(pending.constData(), std::size_t(pending.size()));
    for (const QString& tag : metrics.tags()) {
        const Series* s = metrics.series(tag);
        for (std::size_t i = 1; i < s->size(); ++i)
            if (!(s->steps()[i - 1] < s->steps()[i])) __builtin_trap();  // steps strictly increase
    }
    return 0;
}
