#include "run/config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <functional>
#include <map>
#include <sstream>

namespace scaledesk::train {

namespace {

std::string locationOf(const std::string& file, const YAML::Mark& mark)
{
    if (mark.is_null()) return file;
    return file + ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
}

bool isNone(const YAML::Node& node) { return node.IsNull() || (node.IsScalar() && node.Scalar() == "None"); }

struct Resolved {
    std::string key;
    YAML::Node keyNode;
    YAML::Node value;
};

// yaml-cpp 0.7 keeps `<<` as an ordinary key whose value is the aliased map (or a list of maps):
// resolve it here. Inherited keys keep their position; explicit keys override in place.
std::vector<Resolved> resolveMap(const YAML::Node& map, const std::string& file, int depth = 0)
{
    if (depth > 64) throw ConfigError(locationOf(file, map.Mark()) + ": merge keys nest too deeply (a cycle?)");
    std::vector<Resolved> out;
    auto put = [&out](Resolved entry, bool override) {
        for (auto& existing : out) {
            if (existing.key == entry.key) {
                if (override) existing = std::move(entry);
                return;
            }
        }
        out.push_back(std::move(entry));
    };
    for (auto it = map.begin(); it != map.end(); ++it) {
        if (!it->first.IsScalar() || it->first.Scalar() != "<<") continue;
        const YAML::Node source = it->second;  // a copy: `it->` returns a proxy that dies with this statement
        std::vector<YAML::Node> sources;
        if (source.IsMap())
            sources.push_back(source);
        else if (source.IsSequence())
            for (const auto& s : source) sources.push_back(s);
        for (const auto& s : sources) {
            if (!s.IsMap()) throw ConfigError(locationOf(file, s.Mark()) + ": a merge key '<<' must refer to a mapping");
            for (auto& inherited : resolveMap(s, file, depth + 1)) put(std::move(inherited), false);  // earlier sources win over later ones
        }
    }
    for (auto it = map.begin(); it != map.end(); ++it) {
        if (!it->first.IsScalar()) throw ConfigError(locationOf(file, it->first.Mark()) + ": keys must be plain scalars");
        if (it->first.Scalar() == "<<") continue;
        put(Resolved{it->first.Scalar(), it->first, it->second}, true);
    }
    return out;
}

std::string pythonDisplay(const YAML::Node& node, const std::string& file);

// Python-like str() of a scalar; `isString` tells whether Python would hold it as a str.
std::string pythonScalar(const YAML::Node& node, bool* isString = nullptr)
{
    if (isString) *isString = false;
    if (isNone(node)) return "None";
    const std::string& s = node.Scalar();
    if (node.Tag() != "!") {  // plain (unquoted) scalars may be bools or numbers
        bool b;
        if (s != "0" && s != "1" && YAML::convert<bool>::decode(node, b)) return b ? "True" : "False";
        int64_t i;
        auto [ip, iec] = std::from_chars(s.data(), s.data() + s.size(), i);
        if (iec == std::errc() && ip == s.data() + s.size()) return s;
        double d;
        if (YAML::convert<double>::decode(node, d)) return pythonFloatRepr(d);
    }
    if (isString) *isString = true;
    return s;
}

// Python-like str() of a YAML value, for the configuration dump.
std::string pythonDisplay(const YAML::Node& node, const std::string& file)
{
    auto element = [&file](const YAML::Node& n) {
        if (!n.IsScalar()) return pythonDisplay(n, file);
        bool isString = false;
        const std::string text = pythonScalar(n, &isString);
        return isString ? "'" + text + "'" : text;
    };
    if (node.IsMap()) {
        std::string out = "{";
        for (const auto& e : resolveMap(node, file)) out += (out.size() > 1 ? ", '" : "'") + e.key + "': " + element(e.value);
        return out + "}";
    }
    if (node.IsSequence()) {
        std::string out = "[";
        for (std::size_t i = 0; i < node.size(); ++i) out += (i ? ", " : "") + element(node[i]);
        return out + "]";
    }
    return pythonScalar(node);
}

class Reader {
public:
    Reader(std::string file, std::string config) : m_file(std::move(file)), m_config(std::move(config)) {}

    [[noreturn]] void fail(const YAML::Node& node, const std::string& key, const std::string& what) const
    {
        throw ConfigError(locationOf(m_file, node.Mark()) + ": config '" + m_config + "', key '" + key + "': " + what);
    }

    int64_t integer(const YAML::Node& n, const std::string& key, int64_t min = 0) const
    {
        int64_t v = 0;
        if (!n.IsScalar() || n.Tag() == "!" || !YAML::convert<int64_t>::decode(n, v))
            fail(n, key, "expected an integer, got " + describe(n));
        if (v < min) fail(n, key, "must be at least " + std::to_string(min) + ", got " + std::to_string(v));
        return v;
    }
    double number(const YAML::Node& n, const std::string& key) const
    {
        double v = 0;
        if (!n.IsScalar() || n.Tag() == "!" || !YAML::convert<double>::decode(n, v) || !std::isfinite(v))
            fail(n, key, "expected a finite number, got " + describe(n));
        return v;
    }
    bool boolean(const YAML::Node& n, const std::string& key) const
    {
        bool v = false;
        if (!n.IsScalar() || n.Tag() == "!" || !YAML::convert<bool>::decode(n, v))
            fail(n, key, "expected true or false, got " + describe(n));
        return v;
    }
    std::string string(const YAML::Node& n, const std::string& key) const
    {
        if (!n.IsScalar() || isNone(n)) fail(n, key, "expected a string, got " + describe(n));
        return n.Scalar();
    }
    std::optional<std::string> optionalString(const YAML::Node& n, const std::string& key) const
    {
        if (isNone(n)) return std::nullopt;
        return string(n, key);
    }

    static std::string describe(const YAML::Node& n)
    {
        if (n.IsMap()) return "a mapping";
        if (n.IsSequence()) return "a list";
        if (isNone(n)) return "None";
        return "'" + n.Scalar() + "'";
    }

    const std::string& file() const { return m_file; }

private:
    std::string m_file;
    std::string m_config;
};

using Setter = std::function<void(TrainConfig&, const Reader&, const YAML::Node&, const std::string&)>;

template <typename F>
void forEachSubKey(const Reader& r, const YAML::Node& node, const std::string& key, const std::map<std::string, F>& fields)
{
    if (!node.IsMap()) r.fail(node, key, "expected a mapping, got " + Reader::describe(node));
    for (const auto& e : resolveMap(node, r.file())) {
        auto f = fields.find(e.key);
        if (f == fields.end()) r.fail(e.keyNode, key + "." + e.key, "unknown key");
        f->second(e.value, key + "." + e.key);
    }
}

const std::map<std::string, Setter>& schema()
{
    using N = const YAML::Node&;
    using K = const std::string&;
    static const std::map<std::string, Setter> table = {
        {"weight_init",
         [](TrainConfig& c, const Reader& r, N n, K k) {
             using Sub = std::function<void(N, K)>;
             forEachSubKey<Sub>(r, n, k,
                                {
                                    {"conv_init",
                                     [&](N v, K kk) {
                                         c.convInit = r.string(v, kk);
                                         if (c.convInit != "normal") r.fail(v, kk, "only 'normal' is supported");
                                     }},
                                    {"conv_scale", [&](N v, K kk) { c.convScale = r.number(v, kk); }},
                                    {"conv_bias", [&](N v, K kk) { c.convBias = r.number(v, kk); }},
                                });
         }},
        {"lambda_rho", [](TrainConfig& c, const Reader& r, N n, K k) { c.lambdaRho = r.number(n, k); }},
        {"full_scale", [](TrainConfig& c, const Reader& r, N n, K k) { c.fullScale = r.boolean(n, k); }},
        {"global_batch_size", [](TrainConfig& c, const Reader& r, N n, K k) { c.globalBatchSize = r.integer(n, k, 1); }},
        {"base_batch_size", [](TrainConfig& c, const Reader& r, N n, K k) { c.baseBatchSize = r.integer(n, k, 1); }},
        {"Nsamples", [](TrainConfig& c, const Reader& r, N n, K k) { c.nSamples = r.integer(n, k, 1); }},
        {"Nsamples_val", [](TrainConfig& c, const Reader& r, N n, K k) { c.nSamplesVal = r.integer(n, k, 1); }},
        {"num_epochs", [](TrainConfig& c, const Reader& r, N n, K k) { c.numEpochs = r.integer(n, k, 1); }},
        {"enable_amp", [](TrainConfig& c, const Reader& r, N n, K k) { c.enableAmp = r.boolean(n, k); }},
        {"amp_mode",
         [](TrainConfig& c, const Reader& r, N n, K k) {
             AmpMode mode = AmpMode::None;
             if (!parseAmpMode(r.string(n, k), mode)) r.fail(n, k, "expected one of none, fp16, bf16, got " + Reader::describe(n));
             c.ampMode = mode;
         }},
        {"enable_apex", [](TrainConfig& c, const Reader& r, N n, K k) { c.enableApex = r.boolean(n, k); }},
        {"enable_benchy", [](TrainConfig& c, const Reader& r, N n, K k) { c.enableBenchy = r.boolean(n, k); }},
        {"enable_jit", [](TrainConfig& c, const Reader& r, N n, K k) { c.enableJit = r.boolean(n, k); }},
        {"expdir", [](TrainConfig& c, const Reader& r, N n, K k) { c.expdir = r.string(n, k); }},
        {"lr_schedule",
         [](TrainConfig& c, const Reader& r, N n, K k) {
             using Sub = std::function<void(N, K)>;
             forEachSubKey<Sub>(r, n, k,
                                {
                                    {"scaling",
                                     [&](N v, K kk) {
                                         if (!parseLrScaling(r.string(v, kk), c.lrScaling))
                                             r.fail(v, kk, "expected one of none, linear, sqrt, got " + Reader::describe(v));
                                     }},
                                    {"start_lr", [&](N v, K kk) { c.startLr = r.number(v, kk); }},
                                    {"end_lr", [&](N v, K kk) { c.endLr = r.number(v, kk); }},
                                    {"warmup_steps", [&](N v, K kk) { c.warmupSteps = r.integer(v, kk, 0); }},
                                });
         }},
        {"data_loader_config",
         [](TrainConfig& c, const Reader& r, N n, K k) {
             if (!parseDataLoaderMode(r.string(n, k), c.dataLoader))
                 r.fail(n, k, "expected one of synthetic, inmem, lowmem, dali-lowmem, got " + Reader::describe(n));
         }},
        {"box_size",
         [](TrainConfig& c, const Reader& r, N n, K k) {
             if (!n.IsSequence() || n.size() != 2)
                 r.fail(n, k, "expected a list [train side, validation side], got " + Reader::describe(n));
             c.trainBox = r.integer(n[0], k + "[0]", 1);
             c.valBox = r.integer(n[1], k + "[1]", 1);
         }},
        {"data_size", [](TrainConfig& c, const Reader& r, N n, K k) { c.dataSize = r.integer(n, k, 1); }},
        {"num_data_workers", [](TrainConfig& c, const Reader& r, N n, K k) { c.numDataWorkers = r.integer(n, k, 0); }},
        {"N_out_channels", [](TrainConfig& c, const Reader& r, N n, K k) { c.outChannels = r.integer(n, k, 1); }},
        {"train_path", [](TrainConfig& c, const Reader& r, N n, K k) { c.trainPath = r.string(n, k); }},
        {"val_path", [](TrainConfig& c, const Reader& r, N n, K k) { c.valPath = r.string(n, k); }},
        {"train_path_npy_data", [](TrainConfig& c, const Reader& r, N n, K k) { c.trainPathNpyData = r.string(n, k); }},
        {"train_path_npy_label", [](TrainConfig& c, const Reader& r, N n, K k) { c.trainPathNpyLabel = r.string(n, k); }},
        {"val_path_npy_data", [](TrainConfig& c, const Reader& r, N n, K k) { c.valPathNpyData = r.string(n, k); }},
        {"val_path_npy_label", [](TrainConfig& c, const Reader& r, N n, K k) { c.valPathNpyLabel = r.string(n, k); }},
        {"use_cache", [](TrainConfig& c, const Reader& r, N n, K k) { c.useCache = r.optionalString(n, k); }},
        {"base_channels", [](TrainConfig& c, const Reader& r, N n, K k) { c.baseChannels = r.integer(n, k, 1); }},
        {"seed",
         [](TrainConfig& c, const Reader& r, N n, K k) {
             if (isNone(n))
                 c.seed.reset();
             else
                 c.seed = uint64_t(r.integer(n, k, 0));
         }},
    };
    return table;
}

YAML::Node loadYamlFile(const std::string& path)
{
    namespace fs = std::filesystem;
    std::error_code ec;
    if (!fs::exists(path, ec)) throw ConfigError(path + ": no such file");
    if (fs::is_directory(path, ec)) throw ConfigError(path + ": is a directory, not a YAML file");
    try {
        YAML::Node root = YAML::LoadFile(path);
        if (!root.IsMap()) throw ConfigError(path + ": expected a mapping of named configs at the top level");
        return root;
    } catch (const YAML::BadFile&) {
        throw ConfigError(path + ": cannot be read");
    } catch (const YAML::Exception& e) {
        throw ConfigError(locationOf(path, e.mark) + ": malformed YAML: " + e.msg);
    }
}

}  // namespace

const char* dataLoaderModeName(DataLoaderMode mode)
{
    switch (mode) {
    case DataLoaderMode::Lowmem: return "lowmem";
    case DataLoaderMode::Inmem: return "inmem";
    case DataLoaderMode::Synthetic: return "synthetic";
    case DataLoaderMode::DaliLowmem: return "dali-lowmem";
    }
    return "?";
}

bool parseDataLoaderMode(const std::string& text, DataLoaderMode& out)
{
    for (auto m : {DataLoaderMode::Lowmem, DataLoaderMode::Inmem, DataLoaderMode::Synthetic, DataLoaderMode::DaliLowmem}) {
        if (text == dataLoaderModeName(m)) {
            out = m;
            return true;
        }
    }
    return false;
}

std::vector<std::string> listConfigNames(const std::string& yamlPath)
{
    const YAML::Node root = loadYamlFile(yamlPath);
    std::vector<std::string> names;
    for (auto it = root.begin(); it != root.end(); ++it) names.push_back(it->first.Scalar());
    return names;
}

TrainConfig loadTrainConfig(const std::string& yamlPath, const std::string& name)
{
    namespace fs = std::filesystem;
    const YAML::Node root = loadYamlFile(yamlPath);
    const std::string file = yamlPath;
    // Indexing a const node never inserts; a missing key gives an undefined node.
    const YAML::Node configNode = root[name];
    if (!configNode.IsDefined()) {
        std::string known;
        for (auto it = root.begin(); it != root.end(); ++it) known += (known.empty() ? "" : ", ") + it->first.Scalar();
        throw ConfigError(file + ": no config named '" + name + "' (configs: " + known + ")");
    }
    if (!configNode.IsMap()) throw ConfigError(locationOf(file, configNode.Mark()) + ": config '" + name + "' is not a mapping");

    TrainConfig config;
    std::error_code ec;
    config.yamlPath = fs::absolute(yamlPath, ec).lexically_normal().string();
    config.name = name;
    config.location = file;
    for (auto it = root.begin(); it != root.end(); ++it)
        if (it->first.Scalar() == name) config.location = locationOf(file, it->first.Mark());
    const Reader reader(file, name);
    const auto& table = schema();
    try {
        for (const auto& e : resolveMap(configNode, file)) {
            auto setter = table.find(e.key);
            if (setter == table.end()) reader.fail(e.keyNode, e.key, "unknown key");
            setter->second(config, reader, e.value, e.key);
            config.entries.push_back({e.key, pythonDisplay(e.value, file), locationOf(file, e.value.Mark())});
        }
    } catch (const YAML::Exception& e) {
        throw ConfigError(locationOf(file, e.mark) + ": config '" + name + "': " + e.msg);
    }
    return config;
}

void overrideEntry(TrainConfig& config, const std::string& key, const std::string& display)
{
    for (auto& e : config.entries) {
        if (e.key == key) {
            e.display = display;
            e.location = "command line";
            return;
        }
    }
    config.entries.push_back({key, display, "command line"});
}

void validateTrainConfig(const TrainConfig& c)
{
    auto where = [&c](const std::string& key) {
        for (const auto& e : c.entries)
            if (e.key == key) return e.location;
        return c.location.empty() ? c.yamlPath : c.location;  // a missing key: where its config begins
    };
    auto fail = [&](const std::string& key, const std::string& what) {
        throw ConfigError(where(key) + ": config '" + c.name + "', key '" + key + "': " + what);
    };
    if (c.enableAmp && c.ampMode == AmpMode::None)
        fail("amp_mode",
             "is none, but enable_amp is True (" + where("enable_amp") +
                 "), which asks for fp16: give one of them (amp_mode fp16 or bf16, or enable_amp False)");
    const int64_t divisor = int64_t(1) << c.levels();
    if (c.dataSize % divisor != 0)
        fail("data_size",
             "crop side " + std::to_string(c.dataSize) + " must be divisible by 2^" + std::to_string(c.levels()) + " = " +
                 std::to_string(divisor) + " (full_scale " + (c.fullScale ? "True" : "False") + ")");
    // Crops are drawn inside the box, synthetic data too.
    if (c.trainBox <= c.dataSize)
        fail("box_size",
             "train box side " + std::to_string(c.trainBox) + " must be larger than the crop side " + std::to_string(c.dataSize));
    if (c.valBox <= c.dataSize)
        fail("box_size",
             "validation box side " + std::to_string(c.valBox) + " must be larger than the crop side " + std::to_string(c.dataSize));
    if (c.dataLoader != DataLoaderMode::Synthetic) {
        if (c.trainPath.empty()) fail("train_path", "is required");
        if (c.valPath.empty()) fail("val_path", "is required");
    }
    if (c.nSamples < c.globalBatchSize) fail("Nsamples", "must be at least global_batch_size (" + std::to_string(c.globalBatchSize) + ")");
    if (c.outChannels != 5 && c.dataLoader != DataLoaderMode::Synthetic) fail("N_out_channels", "the NERSC data has 5 target channels");
    if (c.lambdaRho != 0.0 && c.outChannels < 1) fail("lambda_rho", "needs a density channel");
}

std::string pythonFloatRepr(double value)
{
    if (std::isnan(value)) return "nan";
    if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
    char buf[64];
    auto res = std::to_chars(buf, buf + sizeof buf, value, std::chars_format::scientific);
    std::string sci(buf, res.ptr);
    // sci looks like "-7.529529612064362e+02": split into sign, digits and exponent.
    const bool negative = sci[0] == '-';
    if (negative) sci.erase(0, 1);
    const auto ePos = sci.find('e');
    std::string digits = sci.substr(0, ePos);
    digits.erase(std::remove(digits.begin(), digits.end(), '.'), digits.end());
    const int exponent = std::stoi(sci.substr(ePos + 1));
    std::string out;
    if (exponent < -4 || exponent >= 16) {
        out = digits.substr(0, 1);
        if (digits.size() > 1) out += "." + digits.substr(1);
        char e[16];
        std::snprintf(e, sizeof e, "e%c%02d", exponent < 0 ? '-' : '+', std::abs(exponent));
        out += e;
    } else if (exponent < 0) {
        out = "0." + std::string(std::size_t(-exponent - 1), '0') + digits;
    } else {
        const std::size_t intLen = std::size_t(exponent) + 1;
        if (digits.size() <= intLen)
            out = digits + std::string(intLen - digits.size(), '0') + ".0";
        else
            out = digits.substr(0, intLen) + "." + digits.substr(intLen);
    }
    return negative ? "-" + out : out;
}

}  // namespace scaledesk::train
