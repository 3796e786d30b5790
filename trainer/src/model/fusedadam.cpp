#include "model/fusedadam.h"

#include <ATen/Parallel.h>
#include <c10/util/StringUtil.h>

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

void fusedAdamStep(torch::optim::Adam& optimizer)
{
    torch::NoGradGuard noGrad;
    for (auto& group : optimizer.param_groups()) {
        const auto& options = static_cast<const torch::optim::AdamOptions&>(group.options());
        TORCH_CHECK(options.weight_decay() == 0.0 && !options.amsgrad(), "fusedAdamStep: weight decay and AMSGrad are not supported");
        const double lr = options.lr();
        const double beta1 = std::get<0>(options.betas()), beta2 = std::get<1>(options.betas());
        const double eps = options.eps();
        for (auto& p : group.params()) {
            if (!p.grad().defined()) continue;
            const torch::Tensor& grad = p.grad();
            auto& states = optimizer.state();
            const std::string key = c10::guts::to_string(p.unsafeGetTensorImpl());
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
            const double bias1 = 1.0 - std::pow(beta1, double(state.step()));
            const double bias2 = 1.0 - std::pow(beta2, double(state.step()));
            const double stepSize = lr / bias1;
            const double bias2Sqrt = std::sqrt(bias2);
            torch::Tensor m = state.exp_avg(), v = state.exp_avg_sq();

            const bool fast = p.device().is_cpu() && p.scalar_type() == torch::kFloat && p.is_contiguous() && grad.is_contiguous() &&
                grad.scalar_type() == torch::kFloat && m.is_contiguous() && v.is_contiguous();
            if (!fast) {  // the reference sequence of torch::optim::Adam
                m.mul_(beta1).add_(grad, 1 - beta1);
                v.mul_(beta2).addcmul_(grad, grad, 1 - beta2);
                p.addcdiv_(m, (v.sqrt() / bias2Sqrt).add_(eps), -stepSize);
                continue;
            }
            adamUpdate(p.data_ptr<float>(), grad.data_ptr<float>(), m.data_ptr<float>(), v.data_ptr<float>(), p.numel(), state.step(), lr,
                       beta1, beta2, eps);
        }
    }
}

}  // namespace scaledesk::train
