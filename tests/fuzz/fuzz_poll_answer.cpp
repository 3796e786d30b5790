// A poll's answers (bytes from a cluster's shell): the sizes ("<size> <mtime> <path>", @gone, @odd)
// and the data (@data framing with the poll's sentinel). The first byte picks which.
#include "runs/runpoller.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    using namespace scaledesk;
    if (size < 1) return 0;
    const QByteArray bytes = QByteArray::fromRawData(reinterpret_cast<const char*>(data) + 1, qsizetype(size - 1));
    if (data[0] & 1) {
        static const QList<RunPoller::AskedFile> asked{{0, QStringLiteral("metrics.jsonl"), QStringLiteral("/r/a/metrics.jsonl")},
                                                       {0, QStringLiteral("rank-1.log"), QStringLiteral("/r/a/rank-1.log")},
                                                       {1, QStringLiteral("slurm-42.out"), QStringLiteral("/r/b b/slurm-42.out")}};
        const auto seen = RunPoller::parseSizes(bytes, asked);
        for (auto it = seen.begin(); it != seen.end(); ++it) {
            if (it.key() != 0 && it.key() != 1) __builtin_trap();  // only runs that were asked about
            for (const auto& f : it.value().files)
                if (f.size < 0 || f.mtime < 0 || f.name.isEmpty()) __builtin_trap();
        }
    } else {
        static const QHash<int, qint64> expected{{0, 3}, {1, 0}, {2, 100}, {7, 1 << 20}};
        const auto got = RunPoller::parseData(bytes, QByteArrayLiteral("5eed"), expected);
        for (auto it = got.begin(); it != got.end(); ++it)
            if (!expected.contains(it.key()) || it.value().size() != expected.value(it.key())) __builtin_trap();  // exact lengths only
    }
    return 0;
}
