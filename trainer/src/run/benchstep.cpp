#include "run/benchstep.h"

#include "amp/mixedprecision.h"
#include "device/device.h"
#include "device/stepclock.h"
#include "dist/comm.h"
#include "dist/gradsync.h"
#include "run/trainstep.h"

#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

namespace scaledesk::train {

void runBenchStep(const BenchStepOptions& o)
{
    using Clock = std::chrono::steady_clock;
    if (o.steps < 1 || o.warmup < 0) throw std::invalid_argument("bench-step: --steps must be at least 1 and --warmup at least 0");
    const TrainConfig& c = o.config;
    const std::string why = o.amp == AmpMode::Bf16 ? whyNoBf16(o.device) : o.amp == AmpMode::Fp16 ? whyNoFp16(o.device) : std::string();
    if (!why.empty()) throw ConfigError(std::string("bench-step: amp_mode ") + ampModeName(o.amp) + ": " + why);
    torch::manual_seed(o.seed);
    UNet model(unetOptions(c));
    model->initWeights(c.convScale, c.convBias);
    model->to(o.device);
    model->train();
    torch::optim::Adam adam(model->parameters(), torch::optim::AdamOptions(c.startLr).betas({0.9, 0.999}).eps(1e-8));
    const auto comm =
        makeCommunicator(availableBackends().empty() ? "gloo" : availableBackends().front(), DistEnv{}, std::chrono::seconds(60), o.device);
    const auto clock = makeStepClock(o.device);
    const auto sync = makeGradientSync("none", *comm, model, adam, *clock, 25, 64, 25);
    MixedPrecision amp(o.amp, o.device.type());
    TrainStep step(model, *sync, amp, *comm, *clock, c.lambdaRho);
    const auto on = torch::TensorOptions().device(o.device);
    const torch::Tensor input = torch::randn({o.localBatch, 4, c.dataSize, c.dataSize, c.dataSize}, on) * 0.1;
    const torch::Tensor target = torch::tanh(torch::randn({o.localBatch, c.outChannels, c.dataSize, c.dataSize, c.dataSize}, on));
    std::vector<double> times;
    double first = 0, last = 0;
    const auto start = Clock::now();
    Clock::time_point timedStart;
    for (int i = 0; i < o.warmup + o.steps; ++i) {
        if (i == o.warmup) timedStart = Clock::now();
        const auto t0 = Clock::now();
        const StepOutcome s = step.run(input, target, c.startLr);  // ends with the loss on the host: the step is done
        times.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
        if (i == 0) first = s.loss;
        last = s.loss;
    }
    const double seconds = std::chrono::duration<double>(Clock::now() - timedStart).count();
    std::vector<double> timed(times.begin() + o.warmup, times.end());
    std::sort(timed.begin(), timed.end());
    const DeviceInfo d = describeDevice(o.device);
    nlohmann::json line{{"kind", "bench_step"},
                        {"config", c.name},
                        {"parameters", model->parameterCount()},
                        {"local_batch", o.localBatch},
                        {"data_size", c.dataSize},
                        {"amp_mode", ampModeName(o.amp)},
                        {"device", d.device},
                        {"gpu_name", d.gpuName},
                        {"tf32", d.tf32},
                        {"threads", at::get_num_threads()},
                        {"warmup", o.warmup},
                        {"steps", o.steps},
                        {"seconds", seconds},
                        {"total_s", std::chrono::duration<double>(Clock::now() - start).count()},
                        {"samples_per_s", double(o.steps * o.localBatch) / seconds},
                        {"step_s_median", timed[timed.size() / 2]},
                        {"step_s_min", timed.front()},
                        {"loss_first", first},
                        {"loss_last", last},
                        {"peak_mem_mib", peakDeviceMemoryMiB(o.device)}};
    std::printf("%s\n", line.dump().c_str());
    std::fflush(stdout);
}

}  // namespace scaledesk::train
