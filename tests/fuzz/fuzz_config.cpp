// A YAML file as config resolution (every named config, merge keys, aliases) and as a cluster
// profile reads it.
#include "config/clusterprofile.h"
#include "config/configresolve.h"

#include <QFile>

#include <cstddef>
#include <cstdint>
#include <unistd.h>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    using namespace scaledesk;
    static const QString path = QStringLiteral("/tmp/scaledesk-fuzz-config-%1.yaml").arg(::getpid());
    {
        QFile f(path);
        if (!f.open(QIODevice::WriteOnly)) return 0;
        f.write(reinterpret_cast<const char*>(data), qint64(size));
    }
    if (auto names = configNames(path))
        for (const QString& name : *names) (void)resolvedConfigWithSources(path, name);
    (void)configParents(path);
    (void)loadClusterProfile(path);
    return 0;
}
