// run.json as the run store reads it: JSON, then the record's fields.
#include "runs/runrecord.h"

#include <QJsonDocument>

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    using namespace scaledesk;
    const QJsonDocument doc = QJsonDocument::fromJson(QByteArray::fromRawData(reinterpret_cast<const char*>(data), qsizetype(size)));
    RunRecord r;
    QString error;
    if (RunRecord::fromJson(doc.object(), &r, &error)) {
        RunRecord again;
        if (!RunRecord::fromJson(r.toJson(), &again, &error)) __builtin_trap();  // what it writes, it reads
    }
    return 0;
}
