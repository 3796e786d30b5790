// Each rank fills its tensors with whole numbers known to every rank, (r + 1)·(i mod 97 + 1), so
// the expected sums, means and gathers are exact and computed on the CPU without communication;
// a result that differs in any element (or a collective that throws) is a failed check.
#include "dist/checkcomm.h"

#include "dist/comm.h"
#include "dist/smallcollectives.h"

#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include <chrono>
#include <cstdio>
#include <functional>

namespace scaledesk::train {

namespace {

// The tensor rank `r` contributes: (r + 1)·(i mod 97 + 1).
torch::Tensor pattern(int r, int64_t numel, torch::ScalarType dtype)
{
    return ((torch::arange(numel, torch::kLong) % 97 + 1) * (r + 1)).to(dtype);
}

// Σ over ranks of the patterns: n(n+1)/2 · (i mod 97 + 1).
torch::Tensor summed(int n, int64_t numel, torch::ScalarType dtype)
{
    return ((torch::arange(numel, torch::kLong) % 97 + 1) * (int64_t(n) * (n + 1) / 2)).to(dtype);
}

struct Check {
    std::string name, op;
    torch::ScalarType dtype;
    int64_t numel;
    // Runs the collective on device tensors; returns the result and what it should be (CPU).
    std::function<std::pair<torch::Tensor, torch::Tensor>()> run;
};

std::vector<Check> checksFor(Communicator& comm, const CheckCommOptions& o, int64_t numel, torch::ScalarType dtype)
{
    const int n = comm.size(), r = comm.rank();
    const auto on = torch::TensorOptions().dtype(dtype).device(o.device);
    std::vector<Check> checks;
    checks.push_back({"allreduce", "sum", dtype, numel, [&comm, on, n, r, numel, dtype] {
                          torch::Tensor t = pattern(r, numel, dtype).to(on.device());
                          comm.allreduce(t, ReduceOp::Sum);
                          return std::make_pair(t, summed(n, numel, dtype));
                      }});
    if (dtype != torch::kLong)
        checks.push_back({"allreduce", "avg", dtype, numel, [&comm, on, n, r, numel, dtype] {
                              torch::Tensor t = pattern(r, numel, dtype).to(on.device());
                              comm.allreduce(t, ReduceOp::Avg);
                              return std::make_pair(t, summed(n, numel, dtype) / double(n));
                          }});
    for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Avg}) {
        if (op == ReduceOp::Avg && dtype == torch::kLong) continue;
        checks.push_back({"reduce_scatter", op == ReduceOp::Sum ? "sum" : "avg", dtype, numel, [&comm, on, n, r, numel, dtype, op] {
                              torch::Tensor full = pattern(r, numel * n, dtype).to(on.device());
                              torch::Tensor shard = torch::zeros({numel}, on);
                              comm.reduceScatter(full, shard, op);
                              torch::Tensor want = summed(n, numel * n, dtype).narrow(0, int64_t(r) * numel, numel);
                              return std::make_pair(shard, op == ReduceOp::Avg ? want / double(n) : want);
                          }});
    }
    for (bool inPlace : {false, true}) {
        checks.push_back({"allgather", inPlace ? "in_place" : "copy", dtype, numel, [&comm, on, n, r, numel, dtype, inPlace] {
                              torch::Tensor full = torch::zeros({numel * n}, on);
                              torch::Tensor mine = pattern(r, numel, dtype).to(on.device());
                              if (inPlace) {
                                  full.narrow(0, int64_t(r) * numel, numel).copy_(mine);
                                  mine = full.narrow(0, int64_t(r) * numel, numel);
                              }
                              comm.allgather(full, mine);
                              std::vector<torch::Tensor> parts;
                              for (int k = 0; k < n; ++k) parts.push_back(pattern(k, numel, dtype));
                              return std::make_pair(full, torch::cat(parts));
                          }});
    }
    checks.push_back({"broadcast", "root_last", dtype, numel, [&comm, on, n, r, numel, dtype] {
                          torch::Tensor t = pattern(r, numel, dtype).to(on.device());
                          comm.broadcast(t, n - 1);
                          return std::make_pair(t, pattern(n - 1, numel, dtype));
                      }});
    return checks;
}

}  // namespace

int runCheckComm(Communicator& comm, const CheckCommOptions& o)
{
    using Clock = std::chrono::steady_clock;
    const bool rank0 = comm.rank() == 0;
    int failed = 0, total = 0;
    auto report = [&](nlohmann::json line, bool ok) {
        ++total;
        failed += ok ? 0 : 1;
        line["ok"] = ok;
        line["backend"] = comm.backend();
        line["ranks"] = comm.size();
        line["device"] = o.device.str();
        if (rank0) std::printf("%s\n", line.dump().c_str());
    };
    for (torch::ScalarType dtype : {torch::kFloat, torch::kDouble, torch::kLong})
        for (int64_t numel : o.numels)
            for (const Check& c : checksFor(comm, o, numel, dtype)) {
                nlohmann::json line{{"check", c.name}, {"op", c.op}, {"dtype", c10::toString(dtype)}, {"numel", numel}};
                const auto t0 = Clock::now();
                bool ok = false;
                try {
                    const auto [got, want] = c.run();
                    line["seconds"] = std::chrono::duration<double>(Clock::now() - t0).count();
                    const torch::Tensor error = (got.to(torch::kCPU).to(torch::kDouble) - want.to(torch::kDouble)).abs();
                    const double maxError = error.numel() ? error.max().item<double>() : 0.0;
                    line["max_error"] = maxError;
                    // Sums, gathers and broadcasts of whole numbers are exact; a mean is the sum times
                    // 1/n, which may round its last bit.
                    const double ulp = dtype == torch::kFloat ? 1.2e-7 : dtype == torch::kDouble ? 2.3e-16 : 0.0;
                    const double tolerance = c.op == "avg" ? 2 * ulp * want.abs().max().item<double>() : 0.0;
                    ok = got.sizes() == want.sizes() && maxError <= tolerance;
                } catch (const std::exception& e) {
                    line["error"] = std::string(e.what()).substr(0, 300);
                }
                // A check failed on any rank fails on all: the ranks agree before going on.
                report(line, !anyRank(comm, !ok));
            }
    const auto t0 = Clock::now();
    comm.barrier();
    report({{"check", "barrier"},
            {"op", ""},
            {"dtype", ""},
            {"numel", 0},
            {"seconds", std::chrono::duration<double>(Clock::now() - t0).count()}},
           true);
    if (rank0)
        std::printf("%s\n",
                    nlohmann::json{{"summary", "check-comm"},
                                   {"checks", total},
                                   {"failed", failed},
                                   {"backend", comm.backend()},
                                   {"ranks", comm.size()},
                                   {"device", o.device.str()}}
                        .dump()
                        .c_str());
    return failed;
}

}  // namespace scaledesk::train
