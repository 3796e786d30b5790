#include "run/checkpoint.h"

#include <torch/serialize.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <sys/stat.h>
#include <unistd.h>

namespace scaledesk::train {

namespace {
std::string encodeSettings(const std::map<std::string, std::string>& settings)
{
    std::string text;
    for (const auto& [k, v] : settings) text += k + "=" + v + "\n";
    return text;
}

std::map<std::string, std::string> decodeSettings(const std::string& text)
{
    std::map<std::string, std::string> out;
    std::size_t pos = 0;
    while (pos < text.size()) {
        const auto end = text.find('\n', pos);
        const std::string line = text.substr(pos, end - pos);
        const auto eq = line.find('=');
        if (eq != std::string::npos) out[line.substr(0, eq)] = line.substr(eq + 1);
        if (end == std::string::npos) break;
        pos = end + 1;
    }
    return out;
}
}  // namespace

void saveCheckpoint(const std::string& path, UNet& model, torch::optim::Adam& optimizer, const CheckpointState& state)
{
    torch::serialize::OutputArchive archive;
    torch::serialize::OutputArchive modelArchive, optimizerArchive;
    model->save(modelArchive);
    optimizer.save(optimizerArchive);
    archive.write("model", modelArchive);
    archive.write("optimizer", optimizerArchive);
    archive.write("epoch", c10::IValue(state.epoch));
    archive.write("batch_in_epoch", c10::IValue(state.batchInEpoch));
    archive.write("iters", c10::IValue(state.iters));
    archive.write("epoch_loss_sum", c10::IValue(state.epochLossSum));
    archive.write("settings", c10::IValue(encodeSettings(state.settings)));
    if (state.lossScale > 0) {
        archive.write("loss_scale", c10::IValue(state.lossScale));
        archive.write("loss_scale_growth", c10::IValue(state.lossScaleGrowth));
    }

    const std::string tmp = path + ".tmp-" + std::to_string(::getpid());
    try {
        archive.save_to(tmp);
    } catch (const c10::Error& e) {
        std::remove(tmp.c_str());
        throw CheckpointError(path + ": cannot write the checkpoint: " + e.what_without_backtrace());
    }
    // Make the data durable before the rename publishes it.
    const int fd = ::open(tmp.c_str(), O_RDONLY);
    if (fd >= 0) {
        ::fsync(fd);
        ::close(fd);
    }
    std::error_code ec;
    std::filesystem::rename(tmp, path, ec);
    if (ec) {
        const std::string why = ec.message();
        std::filesystem::remove(tmp, ec);
        throw CheckpointError(path + ": cannot move the checkpoint into place: " + why);
    }
}

namespace {
std::string modeText(mode_t mode)
{
    char text[8];
    std::snprintf(text, sizeof text, "%04o", unsigned(mode & 07777));
    return text;
}
}  // namespace

CheckpointState loadCheckpoint(const std::string& path, UNet& model, torch::optim::Adam& optimizer,
                               const std::map<std::string, std::string>& expected)
{
    CheckpointState state;
    // The trust boundary: a checkpoint is a TorchScript archive, and libtorch's importer reads it
    // whole, so only a file this user wrote, and no one else can have changed, is loaded.
    struct stat st{};
    if (::stat(path.c_str(), &st) != 0) throw CheckpointError(path + ": cannot read the checkpoint: " + std::strerror(errno));
    if (st.st_uid != ::geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH)) != 0)
        throw CheckpointError(path + ": not loaded: " +
                              (st.st_uid != ::geteuid() ? "it belongs to user id " + std::to_string(st.st_uid) + ", not to you"
                                                        : std::string("others may write it (mode ") + modeText(st.st_mode) + ")") +
                              "; a checkpoint is read by libtorch's whole archive importer, so scaledesk-train resumes only from "
                              "its own user's files that no one else can change (docs/trainer.md, \"Checkpoints\")");
    torch::serialize::InputArchive archive;
    try {
        const auto params = model->parameters();
        archive.load_from(path, params.empty() ? c10::Device(c10::DeviceType::CPU) : params.front().device());
    } catch (const c10::Error& e) {
        throw CheckpointError(path + ": corrupt or unreadable checkpoint (" + std::string(e.what_without_backtrace()).substr(0, 160) + ")");
    }
    try {
        c10::IValue value;
        if (!archive.try_read("settings", value) || !value.isString())
            throw CheckpointError(path + ": not a scaledesk-train checkpoint (no settings record)");
        state.settings = decodeSettings(value.toStringRef());
        std::string differences;
        for (const auto& [key, want] : expected) {
            auto it = state.settings.find(key);
            const std::string have = it == state.settings.end() ? "(absent)" : it->second;
            if (have != want)
                differences += (differences.empty() ? "" : "; ") + key + " is " + have + " in the checkpoint but " + want + " now";
        }
        if (!differences.empty()) throw CheckpointError(path + ": checkpoint does not match this run: " + differences);
        archive.read("epoch", value);
        state.epoch = value.toInt();
        archive.read("batch_in_epoch", value);
        state.batchInEpoch = value.toInt();
        archive.read("iters", value);
        state.iters = value.toInt();
        archive.read("epoch_loss_sum", value);
        state.epochLossSum = value.toDouble();
        if (archive.try_read("loss_scale", value) && value.isDouble()) {
            state.lossScale = value.toDouble();
            if (!archive.try_read("loss_scale_growth", value) || !value.isInt())
                throw CheckpointError(path + ": field 'loss_scale_growth' is missing beside 'loss_scale'");
            state.lossScaleGrowth = value.toInt();
        }
        torch::serialize::InputArchive modelArchive, optimizerArchive;
        archive.read("model", modelArchive);
        archive.read("optimizer", optimizerArchive);
        model->load(modelArchive);
        optimizer.load(optimizerArchive);
    } catch (const c10::Error& e) {
        throw CheckpointError(path + ": corrupt or mismatched checkpoint (" + std::string(e.what_without_backtrace()).substr(0, 160) + ")");
    }
    return state;
}

}  // namespace scaledesk::train
