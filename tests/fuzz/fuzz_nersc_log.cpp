// A NERSC Python trainer's out.log (scaledesk import): any bytes, cut anywhere.
#include "runs/importer.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    using namespace scaledesk;
    (void)parseNerscLog(QByteArray::fromRawData(reinterpret_cast<const char*>(data), qsizetype(size)), QStringLiteral("out.log"));
    return 0;
}
