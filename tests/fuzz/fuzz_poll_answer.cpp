// The file half of a poll's answer (bytes from a cluster's shell): framing, lengths, names.
#include "runs/runpoller.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    using namespace scaledesk;
    static const QHash<int, QStringList> asked{
        {0, {QStringLiteral("metrics.jsonl"), QStringLiteral("epochs.csv"), QStringLiteral("manifest.json"), QStringLiteral("rank-1.log")}},
        {1, {QStringLiteral("slurm-42.out"), QStringLiteral("exit_code")}},
    };
    const auto seen = RunPoller::parseFiles(QByteArray::fromRawData(reinterpret_cast<const char*>(data), qsizetype(size)), asked);
    for (auto it = seen.begin(); it != seen.end(); ++it) {
        if (!asked.contains(it.key())) __builtin_trap();  // only runs that were asked about
        for (const auto& f : it.value().files)
            if (!asked.value(it.key()).contains(f.name) || f.size < 0 || f.data.size() > qsizetype(size)) __builtin_trap();
    }
    return 0;
}
