#include "model/fusedadam.h"

#include "compat/torchcompat.h"

#include <ATen/Parallel.h>

#include <cmath>

namespace scaledesk::train {

void adamUpdate(float* pp, const float* gp, float* mp, float* vp, int64_t n, int64_t step, double lr, double beta1, double beta2,
                double eps)
{
    const double stepSize = lr / (1.0 - std::pow(beta1, double(step)));
    const double bias2Sqrt = std::sqrt(1.0 - std::pow(beta2, double(step)));
    const float b1 = float(beta1), b2 = float(beta2), c1 = float(1 - beta1), c2 = float(1 - beta2);
    const float e = float(eps), s = float(stepSize), r = float(bias2Sqrt);
    at::parallel_for(0, n, 16384, [=](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
            const float g = gp[i];
            const float mi = mp[i] * b1 + c1 * g;
            const float vi = vp[i] * b2 + c2 * g * g;
            mp[i] = mi;
            vp[i] = vi;
            pp[i] -= s * mi / (std::sqrt(vi) / r + e);
        }
    });
}

namespace {

bool rawCpuFloat(const torch::Tensor& t) { return t.device().is_cpu() && t.scalar_type() == torch::kFloat && t.is_contiguous(); }
bool cudaFloat(const torch::Tensor& t) { return t.is_cuda() && t.scalar_type() == torch::kFloat; }

// torch::optim::Adam's own sequence: for tensors neither path above takes.
void referenceUpdate(const torch::Tensor& p, const torch::Tensor& grad, const torch::Tensor& m, const torch::Tensor& v, int64_t step,
                     double lr, double beta1, double beta2, double eps)
{
    const double bias2Sqrt = std::sqrt(1.0 - std::pow(beta2, double(step)));
    m.mul_(beta1).add_(grad, 1 - beta1);
    v.mul_(beta2).addcmul_(grad, grad, 1 - beta2);
    p.addcdiv_(m, (v.sqrt() / bias2Sqrt).add_(eps), -lr / (1.0 - std::pow(beta1, double(step))));
}

// The fused kernel over lists of CUDA tensors; false where this libtorch lacks it.
bool cudaUpdate(const std::vector<torch::Tensor>& params, const std::vector<torch::Tensor>& grads, const std::vector<torch::Tensor>& m,
                const std::vector<torch::Tensor>& v, const std::vector<int64_t>& steps, double lr, double beta1, double beta2, double eps)
{
    std::vector<float> counts(steps.begin(), steps.end());
    const torch::Tensor stepTensor = torch::tensor(counts, torch::kFloat).to(params.front().device());
    std::vector<torch::Tensor> stepViews;
    for (int64_t i = 0; i < int64_t(steps.size()); ++i) stepViews.push_back(stepTensor[i]);
    return compat::fusedCudaAdam(params, grads, m, v, stepViews, lr, beta1, beta2, eps);
}

}  // namespace

void adamUpdate(const torch::Tensor& param, const torch::Tensor& grad, const torch::Tensor& expAvg, const torch::Tensor& expAvgSq,
                int64_t step, double lr, double beta1, double beta2, double eps)
{
    torch::NoGradGuard noGrad;
    if (rawCpuFloat(param) && rawCpuFloat(grad) && rawCpuFloat(expAvg) && rawCpuFloat(expAvgSq)) {
        adamUpdate(param.data_ptr<float>(), grad.data_ptr<float>(), expAvg.data_ptr<float>(), expAvgSq.data_ptr<float>(), param.numel(),
                   step, lr, beta1, beta2, eps);
        return;
    }
    if (cudaFloat(param) && cudaUpdate({param}, {grad}, {expAvg}, {expAvgSq}, {step}, lr, beta1, beta2, eps)) return;
    referenceUpdate(param, grad, expAvg, expAvgSq, step, lr, beta1, beta2, eps);
}

void fusedAdamStep(torch::optim::Adam& optimizer)
{
    torch::NoGradGuard noGrad;
    for (auto& group : optimizer.param_groups()) {
        const auto& options = static_cast<const torch::optim::AdamOptions&>(group.options());
        TORCH_CHECK(options.weight_decay() == 0.0 && !options.amsgrad(), "fusedAdamStep: weight decay and AMSGrad are not supported");
        const double lr = options.lr();
        const double beta1 = std::get<0>(options.betas()), beta2 = std::get<1>(options.betas());
        const double eps = options.eps();
        std::vector<torch::Tensor> params, grads, m, v;
        std::vector<int64_t> steps;
        bool allCuda = true;
        for (auto& p : group.params()) {
            if (!p.grad().defined()) continue;
            auto& states = optimizer.state();
            const auto key = compat::optimizerStateKey(p);
            auto it = states.find(key);
            if (it == states.end()) {
                auto fresh = std::make_unique<torch::optim::AdamParamState>();
                fresh->step(0);
                fresh->exp_avg(torch::zeros_like(p, torch::MemoryFormat::Preserve));
                fresh->exp_avg_sq(torch::zeros_like(p, torch::MemoryFormat::Preserve));
                it = states.emplace(key, std::move(fresh)).first;
            }
            auto& state = static_cast<torch::optim::AdamParamState&>(*it->second);
            state.step(state.step() + 1);
            params.push_back(p);
            grads.push_back(p.grad());
            m.push_back(state.exp_avg());
            v.push_back(state.exp_avg_sq());
            steps.push_back(state.step());
            allCuda = allCuda && cudaFloat(p) && cudaFloat(p.grad());
        }
        if (params.empty()) continue;
        if (allCuda && cudaUpdate(params, grads, m, v, steps, lr, beta1, beta2, eps)) continue;
        for (std::size_t i = 0; i < params.size(); ++i) adamUpdate(params[i], grads[i], m[i], v[i], steps[i], lr, beta1, beta2, eps);
    }
}

}  // namespace scaledesk::train
