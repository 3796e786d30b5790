#include "analysis/minmaxindex.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace scaledesk {

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

struct Acc {
    double min = std::numeric_limits<double>::infinity();
    double max = -std::numeric_limits<double>::infinity();
    bool any = false;
    bool nonFinite = false;
    void add(double v)
    {
        if (!std::isfinite(v)) {
            nonFinite = true;
            return;
        }
        any = true;
        if (v < min) min = v;
        if (v > max) max = v;
    }
    template <typename A>
    void merge(const A& a)
    {
        nonFinite = nonFinite || a.nonFinite;
        if (std::isnan(a.min)) return;
        any = true;
        if (a.min < min) min = a.min;
        if (a.max > max) max = a.max;
    }
};
}  // namespace

std::size_t MinMaxIndex::blockSize(std::size_t level) const
{
    std::size_t b = kBase;
    for (std::size_t l = 1; l < level; ++l) b *= kFanout;
    return b;
}

void MinMaxIndex::appended(const std::vector<double>& values)
{
    while (m_n < values.size()) {
        ++m_n;
        // Close every block that this value completes, from the finest level up.
        std::size_t level = 1;
        std::size_t size = kBase;
        while (m_n % size == 0) {
            if (m_levels.size() < level) m_levels.emplace_back();
            Acc a;
            if (level == 1) {
                for (std::size_t i = m_n - size; i < m_n; ++i) a.add(values[i]);
            } else {
                const auto& below = m_levels[level - 2];
                for (std::size_t j = below.size() - kFanout; j < below.size(); ++j) a.merge(below[j]);
            }
            m_levels[level - 1].push_back({a.any ? a.min : kNaN, a.any ? a.max : kNaN, a.nonFinite});
            ++level;
            size *= kFanout;
        }
    }
}

void MinMaxIndex::truncated(const std::vector<double>& values)
{
    m_n = values.size();
    std::size_t size = kBase;
    for (auto& level : m_levels) {
        level.resize(std::min(level.size(), m_n / size));
        size *= kFanout;
    }
}

void MinMaxIndex::rebuild(const std::vector<double>& values)
{
    m_levels.clear();
    m_n = 0;
    appended(values);
}

MinMaxIndex::Range MinMaxIndex::range(const std::vector<double>& values, std::size_t begin, std::size_t end) const
{
    Acc a;
    end = std::min(end, m_n);
    std::size_t i = begin;
    while (i < end) {
        // The coarsest complete block that starts at i and ends by `end`.
        std::size_t level = 0, size = 1;
        for (std::size_t l = 1, s = kBase; l <= m_levels.size(); ++l, s *= kFanout) {
            if (i % s != 0 || i + s > end || i / s >= m_levels[l - 1].size()) break;
            level = l;
            size = s;
        }
        if (level == 0) {
            a.add(values[i]);
            ++i;
        } else {
            a.merge(m_levels[level - 1][i / size]);
            i += size;
        }
    }
    return {a.any ? a.min : kNaN, a.any ? a.max : kNaN, a.nonFinite};
}

std::vector<Column> decimate(const std::vector<double>& xs, const std::vector<double>& values, const MinMaxIndex& index, double x0,
                             double x1, int width, bool neighbours)
{
    std::vector<Column> out;
    const std::size_t n = std::min({xs.size(), values.size(), index.size()});
    if (n == 0 || width < 1 || !(x1 >= x0)) return out;
    const auto xbegin = xs.begin(), xend = xs.begin() + std::ptrdiff_t(n);
    const std::size_t lo = std::size_t(std::lower_bound(xbegin, xend, x0) - xbegin);
    const std::size_t hi = std::size_t(std::upper_bound(xbegin, xend, x1) - xbegin);
    auto single = [&](std::size_t i) {
        Column c;
        c.x0 = c.x1 = xs[i];
        c.first = c.last = values[i];
        c.count = 1;
        c.nonFinite = !std::isfinite(values[i]);
        c.min = c.max = c.nonFinite ? kNaN : values[i];
        return c;
    };
    if (neighbours && lo > 0) out.push_back(single(lo - 1));
    if (hi - lo <= std::size_t(2 * width)) {
        for (std::size_t i = lo; i < hi; ++i) out.push_back(single(i));
    } else {
        const double w = (x1 - x0) / width;
        std::size_t begin = lo;
        for (int c = 0; c < width && begin < hi; ++c) {
            const double edge = c + 1 == width ? x1 : x0 + w * (c + 1);
            std::size_t end = c + 1 == width ? hi : std::size_t(std::lower_bound(xs.begin() + std::ptrdiff_t(begin), xend, edge) - xbegin);
            end = std::min(end, hi);
            if (end == begin) continue;
            const auto r = index.range(values, begin, end);
            Column col;
            col.x0 = xs[begin];
            col.x1 = xs[end - 1];
            col.min = r.min;
            col.max = r.max;
            col.first = values[begin];
            col.last = values[end - 1];
            col.count = std::uint32_t(end - begin);
            col.nonFinite = r.nonFinite;
            out.push_back(col);
            begin = end;
        }
    }
    if (neighbours && hi < n) out.push_back(single(hi));
    return out;
}

std::vector<double> smoothTensorBoard(const std::vector<double>& values, double weight)
{
    std::vector<double> out(values.size());
    // As TensorBoard: a constant series is left alone (no rounding wiggles).
    const bool constant = std::all_of(values.begin(), values.end(), [&](double v) { return v == values.front(); });
    if (constant || weight <= 0) return values;
    double last = 0;
    double weightPower = 1;  // weight^k after k finite values (TensorBoard: Math.pow(weight, k))
    for (std::size_t i = 0; i < values.size(); ++i) {
        const double v = values[i];
        if (!std::isfinite(v)) {
            out[i] = v;
            continue;
        }
        last = last * weight + (1 - weight) * v;
        weightPower *= weight;
        const double debias = weight == 1 ? 1.0 : 1 - weightPower;
        out[i] = last / debias;
    }
    return out;
}

}  // namespace scaledesk
