// What squeue/sacct (SLURM) or the local scheduler's query printed: parsed into job states.
#include "remote/localtransport.h"
#include "scheduler/localscheduler.h"
#include "scheduler/slurmscheduler.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    using namespace scaledesk;
    static LocalTransport transport;  // never used: parsing only
    static SlurmScheduler slurm(transport);
    static LocalScheduler local(transport);
    static const QList<JobRef> jobs{{QStringLiteral("42"), QStringLiteral("/r/a"), QStringLiteral("a")},
                                    {QStringLiteral("43_1"), QStringLiteral("/r/b"), QStringLiteral("b")},
                                    {QStringLiteral("1234"), QStringLiteral("/r/c"), QStringLiteral("c")}};
    const QByteArray bytes = QByteArray::fromRawData(reinterpret_cast<const char*>(data), qsizetype(size));
    for (const Scheduler* s : {static_cast<const Scheduler*>(&slurm), static_cast<const Scheduler*>(&local)}) {
        const auto states = s->parseQuery(bytes, jobs);
        for (auto it = states.begin(); it != states.end(); ++it) {
            bool asked = false;
            for (const auto& j : jobs) asked = asked || j.jobId == it.key();
            if (!asked) __builtin_trap();  // a job nobody asked about never appears
        }
    }
    return 0;
}
