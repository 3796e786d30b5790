#include "run/recorder.h"

#include "run/config.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

namespace scaledesk::train {

namespace fs = std::filesystem;
using json = nlohmann::json;

json jsonNumber(double v)
{
    if (std::isfinite(v)) return v;
    return nullptr;
}

std::string csvNumber(double v)
{
    if (std::isnan(v)) return "nan";
    return pythonFloatRepr(v);
}

void RunRecorder::open(const std::string& runDirText, RunLog& log)
{
    if (!m_rank0) return;
    const fs::path runDir(runDirText);
    m_metrics.open((runDir / "metrics.jsonl").string());
    log.info(m_tensorboard.open(runDir.string(), unixNow()));
    const fs::path csv = runDir / "epochs.csv";
    const bool newCsv = !fs::exists(csv) || fs::file_size(csv) == 0;
    m_epochsCsvWidth = epochsCsvColumns().size();
    if (!newCsv) {
        std::ifstream existing(csv);
        std::string header;
        std::getline(existing, header);
        m_epochsCsvWidth = std::min(m_epochsCsvWidth, std::size_t(std::count(header.begin(), header.end(), ',') + 1));
    }
    m_epochsCsv.open(csv.string());
    if (newCsv) {
        std::string header;
        for (const auto& col : epochsCsvColumns()) header += (header.empty() ? "" : ",") + col;
        m_epochsCsv.writeLine(header);
    }
}

void RunRecorder::write(const json& record)
{
    if (!m_rank0) return;
    m_metrics.writeLine(record.dump());
    m_tensorboard.record(record);
}

void RunRecorder::event(const std::string& name, int64_t step, int64_t epoch, const json& extra)
{
    if (!m_rank0) return;
    json j = {{"kind", "event"}, {"event", name}, {"t", unixNow()}, {"step", step}, {"epoch", epoch}};
    for (auto& [k, v] : extra.items()) j[k] = v;
    write(j);
}

void RunRecorder::epochRow(const std::vector<std::string>& row)
{
    if (!m_rank0) return;
    std::string text;
    for (std::size_t i = 0; i < row.size() && i < m_epochsCsvWidth; ++i) text += (i == 0 ? "" : ",") + row[i];
    m_epochsCsv.writeLine(text);
}

}  // namespace scaledesk::train
