#pragma once

#include <QHash>
#include <QList>
#include <QString>
#include <QStringList>

#include <cmath>
#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace scaledesk {

class MinMaxIndex;

/// Why a line of metrics.jsonl (or a part of it) was not used. A bad line never stops the rest.
struct MetricWarning {
    enum class Kind {
        Malformed,      ///< not JSON, or cut off
        Binary,         ///< control bytes or invalid UTF-8 where text was expected
        NotAnObject,    ///< valid JSON, but not an object
        MissingField,   ///< no "kind", "step" or "t"
        BadValue,       ///< a field of the wrong type (a string where a number belongs)
        RepeatedSteps,  ///< steps seen before (a resumed run); the newer values were kept
        TooLong,        ///< a line over the limit (1 MiB)
    };
    Kind kind = Kind::Malformed;
    qint64 line = 0;  ///< 1-based line number in the file
    QString message;
};
QString metricWarningKindName(MetricWarning::Kind kind);

/// The step and time columns that every series of one record kind shares while each of its
/// records carries all of them (the trainer's step records: a dozen fields, one x). Stored once,
/// not once per series: the points of a large file are a third of the memory to write.
struct SharedX {
    std::vector<double> step, time;
};

/// One tag of one run: x as the step and as Unix time, and the value. NaN and ±inf values are
/// kept (a diverged loss is shown, not dropped); steps are strictly increasing, because a resumed
/// run's repeated steps replace the older ones.
class Series {
public:
    Series();
    ~Series();
    Series(Series&&) noexcept;
    Series& operator=(Series&&) noexcept;

    std::size_t size() const { return m_value.size(); }
    bool empty() const { return m_value.empty(); }
    const std::vector<double>& steps() const { return m_shared ? m_shared->step : m_step; }
    const std::vector<double>& times() const { return m_shared ? m_shared->time : m_time; }
    const std::vector<double>& values() const { return m_value; }

    /// Appends a point. A step at or before the last one first drops every point from that step
    /// on (the newer record wins) and returns how many were dropped.
    std::size_t append(double step, double time, double value);
    /// Appends every point of `later` (points that came after this series' in the file), by the
    /// same rule as append(); returns how many points were dropped.
    std::size_t append(const Series& later);
    void reserve(std::size_t n);

    /// How many times older points were replaced (a resume): caches built from the series check it.
    std::size_t truncations() const { return m_truncations; }

    /// The min/max index over the values, updated as points are appended (built on first use).
    const MinMaxIndex& index() const;

private:
    friend class SeriesGroup;
    void detach();  ///< takes its own copy of the shared step and time columns
    void pushValue(double value)
    {
        m_value.push_back(value);
        if (m_index) indexAppended();
    }
    void indexAppended();

    std::shared_ptr<SharedX> m_shared;  ///< set: steps and times are the group's (same length)
    std::vector<double> m_step, m_time, m_value;
    std::size_t m_truncations = 0;
    mutable std::unique_ptr<MinMaxIndex> m_index;
};

/// The series of one record kind that share its x columns. A record adds one row of x and a value
/// to each member; a member missing from a record, or a resume (a step at or before the last),
/// gives the member its own columns again, so the shared ones stay exactly its x.
class SeriesGroup {
public:
    SeriesGroup();
    /// Starts a record's row.
    void beginRow(double step, double time);
    /// Stores a value of the current row; returns the points dropped by a resume (append()'s rule).
    std::size_t add(Series& series, double value);
    /// Ends the row: members without a value in it take their own columns.
    void endRow();
    void reserve(std::size_t rows);
    /// Appends `later`'s rows and members' values when both hold the same tags, all of them
    /// members, and later's steps come after these; returns false (and changes nothing) otherwise.
    bool join(const SeriesGroup& later, const std::vector<std::pair<Series*, const Series*>>& pairs);
    /// Gives every member its own columns and starts over with none.
    void dissolve();
    const std::vector<Series*>& members() const { return m_members; }

private:
    std::shared_ptr<SharedX> m_x;
    std::vector<Series*> m_members;
    double m_step = 0, m_time = 0;
    bool m_resumed = false;  ///< this row's step is at or before the last: no sharing for it
};

/// Which x a view uses.
enum class XAxis { Step, RelativeTime, WallTime };

/// Every series of one run, by tag, plus what the parser had to say. Tags:
/// - `step/<field>` for each numeric field of the step records (`step/loss`, `step/lr`,
///   `step/step_s`, `step/data_s`, `step/compute_s`, `step/comm_exposed_s`, …);
/// - `epoch/<field>` for the epoch records (`epoch/train_loss`, `epoch/val_loss`, `epoch/epoch_s`,
///   `epoch/samples_per_s`, …);
/// - the NERSC TensorBoard tags: `Loss/train` and `Loss/valid` (step-0 losses, then each epoch's),
///   `Learning Rate` and `Avg iters per sec` (each epoch's), at the epoch's last step;
/// - `gpu/rank<N>/<field>` and `gpu_epoch/rank<N>/<field>` for the GPU telemetry (power_w,
///   util_pct, mem_used_mib; energy_wh, mean_util_pct, …);
/// - an imported TensorBoard scalar's own tag (`scalar` records).
class RunMetrics {
public:
    QStringList tags() const;
    const Series* series(const QString& tag) const;
    Series& ensureSeries(const QString& tag);  ///< creates the tag when new
    /// Unix time of the first record (the x origin of RelativeTime); NaN before any.
    double startTime() const { return m_startTime; }
    void noteTime(double t)
    {
        if (m_startTime != m_startTime && std::isfinite(t)) m_startTime = t;  // NaN until the first
    }
    QList<MetricWarning> warnings;
    qint64 linesParsed = 0;
    qint64 pointsStored = 0;

    /// The x-sharing group of a record kind ("step", "epoch"), created when new.
    SeriesGroup& group(const std::string& kind);
    const std::map<std::string, SeriesGroup>& groups() const { return m_groups; }
    /// Makes room for `scale` times the points each series (and group) holds now.
    void reserveScaled(double scale);

private:
    std::map<QString, Series> m_series;  // node-based: a Series* stays valid while others are added
    std::map<std::string, SeriesGroup> m_groups;
    double m_startTime;

public:
    RunMetrics();
};

struct MetricRecord;  // one parsed line (metrics.cpp)

/// Parses metrics.jsonl bytes as they arrive: complete lines only (a partial last line waits for
/// its newline), any chunking, into a RunMetrics. simdjson On-Demand over a padded copy of each
/// chunk.
class MetricsParser {
public:
    explicit MetricsParser(RunMetrics& into);
    ~MetricsParser();
    /// Parses every complete line of `data`; returns the bytes consumed (the rest is an
    /// incomplete line that must be fed again with what follows).
    std::size_t feed(const char* data, std::size_t size);
    /// Parses what is left as a last line (end of file without a newline).
    void finish(const char* data, std::size_t size);
    qint64 line() const { return m_line; }

private:
    void parseLine(const char* begin, std::size_t len, std::size_t capacity);
    void storeRecord(const MetricRecord& r);
    void addWarning(MetricWarning::Kind kind, const QString& message);
    struct Impl;
    std::unique_ptr<Impl> d;
    RunMetrics& m_out;
    qint64 m_line = 0;
    bool m_skipping = false;  ///< inside a line over the limit: dropped up to its newline
};

/// Reads a whole metrics.jsonl file (a missing file gives no series and no warning). A large file
/// is cut at line ends into one part per core, parsed at once, and the parts joined in file order:
/// the same series, warnings (with their file line numbers) and counts as one parser reading it
/// all. `threads` 0: one per core (at most 8); 1: one parser.
RunMetrics loadRunMetrics(const QString& path, int threads = 0);

}  // namespace scaledesk
