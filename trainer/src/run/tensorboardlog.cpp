#include "run/tensorboardlog.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <limits>
#include <stdexcept>
#include <system_error>

#ifdef SCALEDESK_HAVE_TBEVENTS
#include "eventfile.h"
#endif

namespace scaledesk::train {

using json = nlohmann::json;

std::vector<std::pair<std::string, double>> tensorboardScalars(const json& r)
{
    std::vector<std::pair<std::string, double>> out;
    const std::string kind = r.value("kind", "");
    auto number = [](const json& v) { return v.is_number() ? v.get<double>() : std::numeric_limits<double>::quiet_NaN(); };
    auto nersc = [&](const char* tag, const char* field) {
        if (r.contains(field) && (r[field].is_number() || r[field].is_null())) out.emplace_back(tag, number(r[field]));
    };
    auto fields = [&](const std::string& prefix) {
        for (const auto& [key, value] : r.items()) {
            if (key == "kind" || key == "t" || key == "step" || key == "epoch" || key == "rank") continue;
            if (value.is_number() || value.is_null()) out.emplace_back(prefix + key, number(value));
        }
    };
    if (kind == "initial") {
        nersc("Loss/train", "train_loss");
        nersc("Loss/valid", "val_loss");
    } else if (kind == "epoch") {
        nersc("Loss/train", "train_loss");
        nersc("Loss/valid", "val_loss");
        nersc("Learning Rate", "lr");
        nersc("Avg iters per sec", "iters_per_s");
        nersc("GNS/B_simple", "gns_b_simple");
        fields("epoch/");
    } else if (kind == "step") {
        fields("step/");
    } else if (kind == "gpu" || kind == "gpu_epoch") {
        fields((kind == "gpu" ? "gpu/rank" : "gpu_epoch/rank") + std::to_string(r.value("rank", 0)) + "/");
    }
    return out;
}

#ifdef SCALEDESK_HAVE_TBEVENTS
struct TensorBoardLog::Impl {
    tb::EventFileWriter writer;
};

std::string TensorBoardLog::open(const std::string& runDir, double wallTime)
{
    const std::filesystem::path logs = std::filesystem::path(runDir) / "logs";
    std::error_code ec;
    std::filesystem::create_directories(logs, ec);
    if (ec) throw std::runtime_error(logs.string() + ": cannot create the TensorBoard folder: " + ec.message());
    d->writer.open(logs.string(), wallTime);
    return "TensorBoard: " + d->writer.path();
}

void TensorBoardLog::record(const json& r)
{
    if (!d->writer.isOpen()) return;
    const auto scalars = tensorboardScalars(r);
    if (scalars.empty()) return;
    std::vector<tb::EventFileWriter::Scalar> values;
    values.reserve(scalars.size());
    for (const auto& [tag, value] : scalars) values.push_back({tag, value});
    d->writer.addScalars(r.value("step", int64_t(0)), r.value("t", 0.0), values);
}

bool TensorBoardLog::isOpen() const { return d->writer.isOpen(); }
#else
struct TensorBoardLog::Impl {};

std::string TensorBoardLog::open(const std::string&, double)
{
    return "TensorBoard event files: not written (this scaledesk-train was built without protobuf)";
}
void TensorBoardLog::record(const json&) {}
bool TensorBoardLog::isOpen() const { return false; }
#endif

TensorBoardLog::TensorBoardLog() : d(std::make_unique<Impl>()) {}
TensorBoardLog::~TensorBoardLog() = default;

}  // namespace scaledesk::train
