// epochs.csv bytes (a run's mirror, possibly cut mid-line or written by anything).
#include "analysis/epochscsv.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    using namespace scaledesk;
    (void)parseEpochsCsv(QByteArray::fromRawData(reinterpret_cast<const char*>(data), qsizetype(size)), QStringLiteral("epochs.csv"));
    return 0;
}
