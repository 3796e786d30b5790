#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace scaledesk {

/// A multi-resolution min/max index over an append-only array of values: blocks of 16 values,
/// then blocks of 8 blocks, and so on. A min/max over any index range costs O(levels × 8 + 32)
/// however many values it spans, so a chart can ask for every pixel column of a 10-million-point
/// series at any zoom. Non-finite values (NaN, ±inf) are left out of min and max and flagged.
class MinMaxIndex {
public:
    struct Range {
        double min;  ///< NaN when the range holds no finite value
        double max;
        bool nonFinite = false;
    };

    /// Keeps the index in step with `values` after values.push_back().
    void appended(const std::vector<double>& values);
    /// Rebuilds after `values` was cut to a shorter length.
    void truncated(const std::vector<double>& values);
    void rebuild(const std::vector<double>& values);
    Range range(const std::vector<double>& values, std::size_t begin, std::size_t end) const;
    std::size_t size() const { return m_n; }

private:
    struct Agg {
        double min, max;
        bool nonFinite;
    };
    static constexpr std::size_t kBase = 16;
    static constexpr std::size_t kFanout = 8;
    std::size_t blockSize(std::size_t level) const;  // level 1 = kBase
    std::vector<std::vector<Agg>> m_levels;          // m_levels[L-1]: complete blocks of level L
    std::size_t m_n = 0;
};

/// One pixel column of a decimated view.
struct Column {
    double x0 = 0, x1 = 0;       ///< x of the first and the last point in the column
    double min = 0, max = 0;     ///< over the finite values; NaN when there are none
    double first = 0, last = 0;  ///< the first and the last value (may be non-finite)
    std::uint32_t count = 0;     ///< points in the column
    bool nonFinite = false;      ///< the column holds a NaN or ±inf value
};

/// The points of (xs, values) with x in [x0, x1] for a chart `width` pixels wide: when there are
/// at most 2 × width of them, every point as its own column (exact); otherwise one column per
/// pixel with min, max, first and last, so no spike is ever hidden. `xs` must be non-decreasing.
/// With `neighbours`, the last point before x0 and the first after x1 are added as one-point
/// columns, so a line can be drawn to the edges.
std::vector<Column> decimate(const std::vector<double>& xs, const std::vector<double>& values, const MinMaxIndex& index, double x0,
                             double x1, int width, bool neighbours = false);

/// TensorBoard's smoothing: an exponential moving average with the startup bias removed
/// (divided by 1 − w^k after k finite values); non-finite values pass through and are skipped;
/// a constant series is returned as it is. Applied to full-resolution data, never to a view.
std::vector<double> smoothTensorBoard(const std::vector<double>& values, double weight);

}  // namespace scaledesk
