#include "dist/smallcollectives.h"

#include <torch/torch.h>

#include <algorithm>
#include <stdexcept>

namespace scaledesk::train {

namespace {

// FNV-1a over bytes, continuing from `h`.
uint64_t fnv1a(const unsigned char* bytes, int64_t n, uint64_t h = 1469598103934665603ULL)
{
    for (int64_t i = 0; i < n; ++i) h = (h ^ bytes[i]) * 1099511628211ULL;
    return h;
}

}  // namespace

std::vector<std::string> allgatherText(Communicator& comm, const std::string& text)
{
    constexpr int64_t kBytes = 256;
    if (comm.size() == 1) return {text.substr(0, std::size_t(kBytes - 1))};
    torch::Tensor full = torch::zeros({kBytes * comm.size()}, torch::kLong);
    torch::Tensor mine = torch::zeros({kBytes}, torch::kLong);
    auto* m = mine.data_ptr<int64_t>();
    for (std::size_t i = 0; i < text.size() && i < std::size_t(kBytes - 1); ++i) m[i] = int64_t(uint8_t(text[i]));
    comm.allgather(full, mine);
    std::vector<std::string> out;
    const auto* f = full.data_ptr<int64_t>();
    for (int r = 0; r < comm.size(); ++r) {
        std::string s;
        for (int64_t i = 0; i < kBytes && f[r * kBytes + i] != 0; ++i) s += char(f[r * kBytes + i]);
        out.push_back(s);
    }
    return out;
}

double allreduceMean(Communicator& comm, double value)
{
    if (comm.size() == 1) return value;
    torch::Tensor t = torch::full({1}, value, torch::kDouble);
    comm.allreduce(t);
    return t.item<double>() / double(comm.size());
}

bool anyRank(Communicator& comm, bool flag)
{
    if (comm.size() == 1) return flag;
    torch::Tensor t = torch::full({1}, int64_t(flag), torch::kLong);
    comm.allreduce(t);
    return t.item<int64_t>() > 0;
}

int64_t StopAgreement::stepsBetweenChecks(double intervalSeconds, double seconds, int64_t steps)
{
    constexpr int64_t kMostSteps = 1000;
    if (intervalSeconds <= 0.0 || steps <= 0 || !(seconds > 0.0)) return 1;
    const double perStep = seconds / double(steps);
    return std::clamp<int64_t>(int64_t(intervalSeconds / perStep), 1, kMostSteps);
}

bool StopAgreement::afterStep(Communicator& comm, bool requested, double stepSeconds)
{
    if (comm.size() == 1) return requested;
    secondsSinceCheck_ += stepSeconds;  // only rank 0's count reaches the proposal
    ++stepsSinceCheck_;
    if (--untilCheck_ > 0) return false;
    ++checks_;
    const int64_t proposal = comm.rank() == 0 ? stepsBetweenChecks(interval_, secondsSinceCheck_, stepsSinceCheck_) : 0;
    secondsSinceCheck_ = 0.0;
    stepsSinceCheck_ = 0;
    // The sum of the flags, and of rank 0's proposal alone: every rank reads the same count.
    torch::Tensor t = torch::tensor({int64_t(requested), proposal}, torch::kLong);
    comm.allreduce(t);
    untilCheck_ = std::max<int64_t>(1, t[1].item<int64_t>());
    return t[0].item<int64_t>() > 0;
}

bool StopAgreement::now(Communicator& comm, bool requested)
{
    if (comm.size() > 1) ++checks_;
    return anyRank(comm, requested);
}

std::string ranksDifferingFromRoot(Communicator& comm, int64_t value)
{
    if (comm.size() == 1) return {};
    torch::Tensor all = torch::zeros({comm.size()}, torch::kLong);
    comm.allgather(all, torch::full({1}, value, torch::kLong));
    const auto* a = all.data_ptr<int64_t>();
    std::string differing;
    for (int r = 1; r < comm.size(); ++r)
        if (a[r] != a[0]) differing += (differing.empty() ? "" : ", ") + std::to_string(r);
    return differing;
}

void checkReplicas(Communicator& comm, const torch::nn::Module& model, int64_t step)
{
    if (comm.size() == 1) return;
    uint64_t h = 1469598103934665603ULL;
    for (const auto& p : model.parameters()) {
        const torch::Tensor t = p.detach().to(torch::kCPU).contiguous();
        h = fnv1a(static_cast<const unsigned char*>(t.data_ptr()), t.numel() * int64_t(t.element_size()), h);
    }
    const std::string differing = ranksDifferingFromRoot(comm, int64_t(h & 0x7fffffffffffffffULL));
    if (!differing.empty())
        throw std::runtime_error("replica check failed after step " + std::to_string(step) + ": the parameters of rank(s) " + differing +
                                 " differ from rank 0's");
}

}  // namespace scaledesk::train
