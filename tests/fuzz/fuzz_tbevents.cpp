// TensorBoard event-file bytes (tbevents/): TFRecord framing and Event protos, as any writer, a
// crash mid-write or a damaged disk may leave them. Every record it reads must lie inside the input.
#include "eventfile.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    using namespace scaledesk::tb;
    const char* bytes = reinterpret_cast<const char*>(data);
    TfRecordReader reader(bytes, size);
    std::string_view record;
    std::uint64_t offset = 0;
    while (reader.next(&record, &offset))
        if (record.data() < bytes || record.data() + record.size() > bytes + size || offset >= size) std::abort();
    if (reader.position() > size) std::abort();
    (void)readEventBytes(bytes, size);
    return 0;
}
