#pragma once

#include "amp/ampmode.h"
#include "model/lrschedule.h"

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace scaledesk::train {

/// A configuration problem; the message names the file, line and column, and the key.
class ConfigError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// How training and validation crops are read (spec §2.3).
enum class DataLoaderMode { Lowmem, Inmem, Synthetic, DaliLowmem };
const char* dataLoaderModeName(DataLoaderMode mode);
bool parseDataLoaderMode(const std::string& text, DataLoaderMode& out);

/// One resolved key of a named config: its text as Python would print it, and where it was set.
struct ConfigEntry {
    std::string key;
    std::string display;   ///< value formatted like the original's `str(val)`
    std::string location;  ///< file:line:column of the value (after merge-key resolution)
};

/// Every key of a named config of the NERSC `UNet.yaml` format, with the ScaleDesk extensions.
struct TrainConfig {
    std::string yamlPath;              ///< absolute path of the YAML file
    std::string name;                  ///< the named config
    std::string location;              ///< file:line:column of the config's name in the file (a missing key's place)
    std::vector<ConfigEntry> entries;  ///< resolved keys in file order, for the configuration dump

    std::string convInit = "normal";
    double convScale = 0.02;
    double convBias = 0.0;
    double lambdaRho = 0.0;
    bool fullScale = true;
    int64_t globalBatchSize = 64;
    int64_t baseBatchSize = 64;
    int64_t nSamples = 65536;
    int64_t nSamplesVal = 8192;
    int64_t numEpochs = 10;
    bool enableAmp = false;          ///< the NERSC switch: fp16 autocast with a loss scaler
    std::optional<AmpMode> ampMode;  ///< amp_mode (the tutorial's sc-22 key), when given
    bool enableApex = false;
    bool enableBenchy = false;
    bool enableJit = false;
    std::string expdir = "/logs";
    LrScaling lrScaling = LrScaling::Sqrt;
    double startLr = 2.0e-4;
    double endLr = 0.0;
    int64_t warmupSteps = 128;
    DataLoaderMode dataLoader = DataLoaderMode::Lowmem;
    int64_t trainBox = 1024;
    int64_t valBox = 512;
    int64_t dataSize = 64;
    int64_t numDataWorkers = 2;
    int64_t outChannels = 5;
    std::string trainPath;
    std::string valPath;
    std::string trainPathNpyData, trainPathNpyLabel, valPathNpyData, valPathNpyLabel;
    std::optional<std::string> useCache;
    // ScaleDesk extensions
    int64_t baseChannels = 64;
    std::optional<uint64_t> seed;

    int levels() const { return fullScale ? 6 : 5; }
    /// The mixed precision the run trains in: amp_mode when given, else fp16 with enable_amp
    /// (the NERSC trainer's AMP), else none.
    AmpMode amp() const { return ampMode ? *ampMode : (enableAmp ? AmpMode::Fp16 : AmpMode::None); }
};

/// Loads `name` from a YAML file of named configs (anchors, `<<:` merge keys, 'None').
/// Throws ConfigError naming file:line:column for malformed YAML, a missing config, unknown keys,
/// wrong types and invalid values.
TrainConfig loadTrainConfig(const std::string& yamlPath, const std::string& name);

/// Names of the top-level configs of a YAML file, in file order.
std::vector<std::string> listConfigNames(const std::string& yamlPath);

/// Checks the cross-key rules (crop divisible by 2^levels, boxes larger than the crop, …).
/// Throws ConfigError naming the key and where it was set.
void validateTrainConfig(const TrainConfig& config);

/// Replaces the display text of `key` (for CLI overrides) and marks it as set on the command line.
void overrideEntry(TrainConfig& config, const std::string& key, const std::string& display);

/// Formats a double as Python's repr() does (shortest round-trip text, e.g. 752.9529612064362).
std::string pythonFloatRepr(double value);

}  // namespace scaledesk::train
