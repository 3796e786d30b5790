#include "device/stepclock.h"

#include <chrono>
#include <vector>

namespace scaledesk::train {

namespace {

class HostClock : public StepClock {
public:
    int mark() override
    {
        m_points.push_back(std::chrono::steady_clock::now());
        return int(m_points.size()) - 1;
    }
    void settle() override {}
    double seconds(int a, int b) const override
    {
        return std::chrono::duration<double>(m_points.at(std::size_t(b)) - m_points.at(std::size_t(a))).count();
    }
    void reset() override { m_points.clear(); }

private:
    std::vector<std::chrono::steady_clock::time_point> m_points;
};

}  // namespace

std::unique_ptr<StepClock> makeHostClock() { return std::make_unique<HostClock>(); }

}  // namespace scaledesk::train
