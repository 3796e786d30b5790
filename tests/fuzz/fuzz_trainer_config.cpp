// A YAML file as scaledesk-train's config loader reads it (every named config): a clear error or
// a valid config, never a crash.
#include "run/config.h"

#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <unistd.h>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    using namespace scaledesk::train;
    static const std::string path = "/tmp/scaledesk-fuzz-trainer-" + std::to_string(::getpid()) + ".yaml";
    {
        std::ofstream f(path, std::ios::binary | std::ios::trunc);
        f.write(reinterpret_cast<const char*>(data), std::streamsize(size));
    }
    std::vector<std::string> names;
    try {
        const YAML::Node root = YAML::LoadFile(path);
        if (root.IsMap())
            for (auto it = root.begin(); it != root.end() && names.size() < 8; ++it)
                if (it->first.IsScalar()) names.push_back(it->first.Scalar());
    } catch (const YAML::Exception&) {}
    if (names.empty()) names.push_back("base");
    for (const auto& name : names) {
        try {
            const TrainConfig c = loadTrainConfig(path, name);
            validateTrainConfig(c);
        } catch (const ConfigError&) {}
    }
    return 0;
}
