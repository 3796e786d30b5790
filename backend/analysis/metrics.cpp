#include "analysis/metrics.h"

#include "analysis/minmaxindex.h"

#include <simdjson.h>

#include <QFile>
#include <QSet>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <limits>
#include <string>
#include <thread>
#include <unordered_map>

#include <sys/mman.h>

namespace scaledesk {

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr std::size_t kMaxLine = 1 << 20;
// Distinct fields that become series, over every kind: a file of random keys must not make a
// million series (each one a store and an index).
constexpr std::size_t kMaxSeries = 20000;

// Numeric fields of step and epoch records that become series (others, like "kind", do not).
bool isSkippedField(std::string_view key) { return key == "kind" || key == "step" || key == "t" || key == "epoch" || key == "event"; }

// The parser's and the parts' join's words for the same two events.
QString capMessage() { return QStringLiteral("more than %1 distinct fields; the others are left out").arg(kMaxSeries); }
QString repeatedMessage(double step)
{
    return QStringLiteral("step %1 and later came again (a resumed run); the newer values replace the older ones").arg(step);
}
}  // namespace

QString metricWarningKindName(MetricWarning::Kind kind)
{
    switch (kind) {
    case MetricWarning::Kind::Malformed: return QStringLiteral("malformed");
    case MetricWarning::Kind::Binary: return QStringLiteral("binary");
    case MetricWarning::Kind::NotAnObject: return QStringLiteral("not-an-object");
    case MetricWarning::Kind::MissingField: return QStringLiteral("missing-field");
    case MetricWarning::Kind::BadValue: return QStringLiteral("bad-value");
    case MetricWarning::Kind::RepeatedSteps: return QStringLiteral("repeated-steps");
    case MetricWarning::Kind::TooLong: return QStringLiteral("too-long");
    }
    return QStringLiteral("unknown");
}

// ---------------- Series ----------------

Series::Series() = default;
Series::~Series() = default;
Series::Series(Series&&) noexcept = default;
Series& Series::operator=(Series&&) noexcept = default;

namespace {
// Large columns are filled once, front to back: ask the kernel for transparent huge pages where it
// gives them on request (a 2 MiB page is one fault where 4 KiB pages are 512).
void preferHugePages(std::vector<double>& v)
{
    constexpr std::uintptr_t kHuge = 2 << 20;
    const std::size_t bytes = v.capacity() * sizeof(double);
    if (bytes < 4 * kHuge) return;
    const auto begin = reinterpret_cast<std::uintptr_t>(v.data());
    const std::uintptr_t from = (begin + kHuge - 1) & ~(kHuge - 1), to = (begin + bytes) & ~(kHuge - 1);
    if (to > from) ::madvise(reinterpret_cast<void*>(from), to - from, MADV_HUGEPAGE);  // advice: a refusal changes nothing
}
// Room for n values; a column that had to grow is offered huge pages.
void reserveColumn(std::vector<double>& v, std::size_t n)
{
    if (n <= v.capacity()) return;
    v.reserve(n);
    preferHugePages(v);
}
}  // namespace

void Series::reserve(std::size_t n)
{
    reserveColumn(m_value, n);
    if (!m_shared) {
        reserveColumn(m_step, n);
        reserveColumn(m_time, n);
    }
}

void Series::detach()
{
    if (!m_shared) return;
    const std::size_t n = m_value.size();
    m_step.assign(m_shared->step.begin(), m_shared->step.begin() + std::ptrdiff_t(n));
    m_time.assign(m_shared->time.begin(), m_shared->time.begin() + std::ptrdiff_t(n));
    m_shared.reset();
}

void Series::indexAppended() { m_index->appended(m_value); }

std::size_t Series::append(double step, double time, double value)
{
    detach();
    std::size_t dropped = 0;
    if (!m_step.empty() && step <= m_step.back()) {
        const auto keep = std::size_t(std::lower_bound(m_step.begin(), m_step.end(), step) - m_step.begin());
        dropped = m_step.size() - keep;
        ++m_truncations;
        m_step.resize(keep);
        m_time.resize(keep);
        m_value.resize(keep);
        if (m_index) m_index->truncated(m_value);
    }
    m_step.push_back(step);
    m_time.push_back(time);
    pushValue(value);
    return dropped;
}

std::size_t Series::append(const Series& later)
{
    if (later.empty()) return 0;
    detach();
    const std::vector<double>&steps = later.steps(), &times = later.times(), &values = later.values();
    if (!empty() && steps.front() <= m_step.back()) {
        // Steps came again across the join: point by point, with append()'s rule.
        std::size_t dropped = 0;
        for (std::size_t i = 0; i < later.size(); ++i) dropped += append(steps[i], times[i], values[i]);
        return dropped;
    }
    if (size() + later.size() > m_value.capacity()) reserve(size() + later.size());
    m_step.insert(m_step.end(), steps.begin(), steps.begin() + std::ptrdiff_t(later.size()));
    m_time.insert(m_time.end(), times.begin(), times.begin() + std::ptrdiff_t(later.size()));
    m_value.insert(m_value.end(), values.begin(), values.end());
    m_truncations += later.m_truncations;
    if (m_index) m_index->appended(m_value);
    return 0;
}

// ---------------- SeriesGroup ----------------

SeriesGroup::SeriesGroup() : m_x(std::make_shared<SharedX>()) {}

void SeriesGroup::beginRow(double step, double time)
{
    m_step = step;
    m_time = time;
    if (!m_x) return;  // closed: its series keep their own columns
    if (!m_x->step.empty() && step <= m_x->step.back()) {
        // A resume: the members take their own columns and drop the repeated steps by append()'s rule.
        dissolve();
        return;
    }
    m_x->step.push_back(step);
    m_x->time.push_back(time);
}

std::size_t SeriesGroup::add(Series& series, double value)
{
    if (m_x) {
        const std::size_t rows = m_x->step.size();
        if (series.m_shared == m_x && series.size() + 1 == rows) {
            series.pushValue(value);
            return 0;
        }
        if (rows == 1 && series.empty() && !series.m_shared) {  // only a field of the first row joins
            series.m_shared = m_x;
            m_members.push_back(&series);
            series.pushValue(value);
            return 0;
        }
    }
    // Not a member, or a field repeated within the record (the later value wins, as on a resume).
    return series.append(m_step, m_time, value);
}

void SeriesGroup::endRow()
{
    if (!m_x) return;
    const std::size_t rows = m_x->step.size();
    m_members.erase(std::remove_if(m_members.begin(), m_members.end(),
                                   [rows](Series* s) {
                                       if (s->m_shared && s->size() == rows) return false;
                                       s->detach();  // missed the row (or took two values in it): its own columns from here
                                       return true;
                                   }),
                    m_members.end());
    if (m_members.empty()) m_x.reset();  // nobody shares: stop keeping the columns
}

void SeriesGroup::reserve(std::size_t rows)
{
    if (!m_x) return;
    reserveColumn(m_x->step, rows);
    reserveColumn(m_x->time, rows);
}

void SeriesGroup::dissolve()
{
    for (Series* s : m_members) s->detach();
    m_members.clear();
    m_x.reset();
}

bool SeriesGroup::join(const SeriesGroup& later, const std::vector<std::pair<Series*, const Series*>>& pairs)
{
    if (!m_x || !later.m_x || later.m_x->step.empty()) return false;
    if (!m_x->step.empty() && later.m_x->step.front() <= m_x->step.back()) return false;
    if (pairs.size() != m_members.size() || pairs.size() != later.m_members.size()) return false;
    for (const auto& [mine, theirs] : pairs)
        if (mine->m_shared != m_x || theirs->m_shared != later.m_x) return false;
    const std::size_t rows = m_x->step.size() + later.m_x->step.size();
    if (rows > m_x->step.capacity()) reserve(rows);
    std::vector<std::pair<std::vector<double>*, const std::vector<double>*>> columns{{&m_x->step, &later.m_x->step},
                                                                                     {&m_x->time, &later.m_x->time}};
    for (const auto& [mine, theirs] : pairs) {
        if (rows > mine->m_value.capacity()) mine->reserve(rows);
        columns.emplace_back(&mine->m_value, &theirs->m_value);
    }
    // The copy is as much page faulting as copying, and every core is idle at the join: the columns
    // are shared out (each column is written by one thread).
    auto copy = [&columns](std::size_t first, std::size_t step) {
        for (std::size_t i = first; i < columns.size(); i += step)
            columns[i].first->insert(columns[i].first->end(), columns[i].second->begin(), columns[i].second->end());
    };
    const std::size_t helpers =
        rows * columns.size() < (1u << 20) ? 0 : std::min<std::size_t>(std::max(1u, std::thread::hardware_concurrency()) - 1, 7);
    std::vector<std::thread> threads;
    for (std::size_t k = 1; k <= helpers; ++k) threads.emplace_back(copy, k, helpers + 1);
    copy(0, helpers + 1);
    for (auto& t : threads) t.join();
    for (const auto& [mine, theirs] : pairs)
        if (mine->m_index) mine->m_index->appended(mine->m_value);
    return true;
}

const MinMaxIndex& Series::index() const
{
    if (!m_index) {
        m_index = std::make_unique<MinMaxIndex>();
        m_index->rebuild(m_value);
    }
    return *m_index;
}

// ---------------- RunMetrics ----------------

RunMetrics::RunMetrics() : m_startTime(kNaN) {}

QStringList RunMetrics::tags() const
{
    QStringList t;
    for (const auto& [tag, s] : m_series) t << tag;
    return t;
}

const Series* RunMetrics::series(const QString& tag) const
{
    auto it = m_series.find(tag);
    return it == m_series.end() ? nullptr : &it->second;
}

Series& RunMetrics::ensureSeries(const QString& tag) { return m_series[tag]; }

SeriesGroup& RunMetrics::group(const std::string& kind) { return m_groups[kind]; }

void RunMetrics::reserveScaled(double scale)
{
    for (auto& [tag, s] : m_series) s.reserve(std::size_t(double(s.size()) * scale) + 16);
    for (auto& [kind, g] : m_groups)
        if (!g.members().empty()) g.reserve(std::size_t(double(g.members().front()->size()) * scale) + 16);
}

// ---------------- MetricsParser ----------------

struct MetricsParser::Impl {
    simdjson::ondemand::parser parser;
    std::vector<char> buffer;  // the chunk, with simdjson's padding after it
    // Field name → its series, found once per field name rather than once per line (the hot path).
    // Records of one kind list their fields in the same order line after line, so the field at
    // position i is nearly always the one cached at i: one comparison, not a lookup. Otherwise a
    // hash map finds it, whatever the number of distinct fields.
    struct Slot {
        std::string_view key;  // in `keys`
        Series* series = nullptr;
    };
    struct Kind {
        std::vector<Slot> byPosition;
        std::unordered_map<std::string_view, Series*> byKey;  // looked up by the line's own bytes
        std::deque<std::string> keys;                         // the keys' storage (a deque: they stay put)
    };
    Kind step, epoch;
    SeriesGroup *stepGroup = nullptr, *epochGroup = nullptr;  // in the RunMetrics (map nodes stay put)
    std::size_t seriesCount = 0;
    bool capped = false;  // the cap's warning is given once
    // Null when the cap on distinct series is reached (the field is then left out).
    Series* slot(Kind& kind, std::size_t position, const char* prefix, std::string_view key, RunMetrics& out)
    {
        if (position < kind.byPosition.size() && kind.byPosition[position].key == key) return kind.byPosition[position].series;
        Slot found;
        if (auto it = kind.byKey.find(key); it != kind.byKey.end()) {
            found = {it->first, it->second};
        } else {
            if (seriesCount >= kMaxSeries) return nullptr;
            ++seriesCount;
            found.series = &out.ensureSeries(QLatin1String(prefix) + QString::fromUtf8(key.data(), qsizetype(key.size())));
            found.key = kind.keys.emplace_back(key);
            kind.byKey.emplace(found.key, found.series);
        }
        if (position < 64) {
            if (position >= kind.byPosition.size()) kind.byPosition.resize(position + 1);
            kind.byPosition[position] = found;
        }
        return found.series;
    }
    // A resume repeats steps: one warning per repeated range, not one per line.
    double repeatFrom = -1;
};

MetricsParser::MetricsParser(RunMetrics& into) : d(std::make_unique<Impl>()), m_out(into) {}
MetricsParser::~MetricsParser() = default;

void MetricsParser::addWarning(MetricWarning::Kind kind, const QString& message)
{
    // Bounded: a file of garbage must not turn into a gigabyte of warnings.
    if (m_out.warnings.size() < 1000) m_out.warnings.append({kind, m_line, message});
}

std::size_t MetricsParser::feed(const char* data, std::size_t size)
{
    // A line longer than kMaxLine is dropped as it comes, never gathered: a file with no newline
    // costs no more memory than one with short lines.
    std::size_t skipped = 0;
    if (m_skipping) {
        const char* nl = static_cast<const char*>(std::memchr(data, '\n', size));
        if (!nl) return size;
        skipped = std::size_t(nl - data) + 1;
        m_skipping = false;
        data += skipped;
        size -= skipped;
    }
    const char* lastNewline = static_cast<const char*>(memrchr(data, '\n', size));
    if (!lastNewline) {
        if (size <= kMaxLine) return skipped;
        ++m_line;
        addWarning(MetricWarning::Kind::TooLong, QStringLiteral("a line of more than %1 bytes; skipped").arg(kMaxLine));
        m_skipping = true;
        return skipped + size;
    }
    const std::size_t used = std::size_t(lastNewline - data) + 1;
    // simdjson reads up to SIMDJSON_PADDING bytes past a document. Lines with that much of the
    // caller's buffer after them are parsed where they are; only the last few go through a
    // padded copy.
    const std::size_t safeEnd = size > simdjson::SIMDJSON_PADDING ? size - simdjson::SIMDJSON_PADDING : 0;
    std::size_t pos = 0;
    while (pos < used) {
        const char* nl = static_cast<const char*>(std::memchr(data + pos, '\n', used - pos));
        const std::size_t len = std::size_t(nl - (data + pos));
        if (pos + len >= safeEnd) break;
        ++m_line;
        parseLine(data + pos, len, size - pos);
        pos += len + 1;
    }
    if (pos < used) {
        const std::size_t rest = used - pos;
        d->buffer.resize(rest + simdjson::SIMDJSON_PADDING);
        std::memcpy(d->buffer.data(), data + pos, rest);
        std::memset(d->buffer.data() + rest, 0, simdjson::SIMDJSON_PADDING);
        const char* base = d->buffer.data();
        std::size_t p = 0;
        while (p < rest) {
            const char* nl = static_cast<const char*>(std::memchr(base + p, '\n', rest - p));
            const std::size_t len = std::size_t(nl - (base + p));
            ++m_line;
            parseLine(base + p, len, rest + simdjson::SIMDJSON_PADDING - p);
            p += len + 1;
        }
    }
    return skipped + used;
}

void MetricsParser::finish(const char* data, std::size_t size)
{
    if (size == 0 || m_skipping) return;
    d->buffer.resize(size + simdjson::SIMDJSON_PADDING);
    std::memcpy(d->buffer.data(), data, size);
    std::memset(d->buffer.data() + size, 0, simdjson::SIMDJSON_PADDING);
    ++m_line;
    parseLine(d->buffer.data(), size, d->buffer.size());
}

// A metrics.jsonl record's fields as one pass over its object read them.
struct MetricRecord {
    static constexpr int kMaxFields = 32;
    struct Field {
        std::string_view key;
        double value;
    };
    std::string_view kind, tag;
    double step = kNaN, t = kNaN;
    Field fields[kMaxFields];
    int nfields = 0;
    bool bad = false;  ///< a field that would not parse
    QString badField;  ///< a field of the wrong type

    /// Keeps a field that becomes a series (up to kMaxFields of them).
    void keep(std::string_view key, double value)
    {
        if (!isSkippedField(key) && nfields < kMaxFields) fields[nfields++] = {key, value};
    }
    const Field* find(std::string_view key) const
    {
        for (int i = 0; i < nfields; ++i)
            if (fields[i].key == key) return &fields[i];
        return nullptr;
    }
    bool has(std::string_view key) const { return find(key) != nullptr; }
    /// The field's value; NaN where it is missing (or null: has() tells them apart).
    double value(std::string_view key) const
    {
        const Field* f = find(key);
        return f ? f->value : kNaN;
    }
};

namespace {
// One pass over a record's fields in file order (On-Demand reads forward only); numbers are kept by
// field until the record's kind, step and time are known.
void readFields(simdjson::ondemand::object& obj, const char* begin, std::size_t len, MetricRecord& r)
{
    using namespace simdjson;
    for (auto field : obj) {
        // The key as it lies in the line, without unescaping it into simdjson's buffer (most of a
        // record's bytes are keys); only a key with an escape goes through unescaped_key().
        ondemand::field got;
        if (std::move(field).get(got) != SUCCESS) {
            r.bad = true;
            break;
        }
        std::string_view key;
        const char* keyStart = got.key().raw();
        const char* quote = keyStart;  // keys are short: a loop, not two library calls per key
        while (quote < begin + len && *quote != '"' && *quote != '\\') ++quote;
        if (quote < begin + len && *quote == '"') {
            key = std::string_view(keyStart, std::size_t(quote - keyStart));
        } else if (got.unescaped_key().get(key) != SUCCESS) {
            r.bad = true;
            break;
        }
        ondemand::value v = std::move(got).value();
        ondemand::json_type type;
        if (v.type().get(type) != SUCCESS) {
            // Python's json.dumps writes NaN, Infinity and -Infinity, which JSON lacks: kept as such.
            std::string_view raw = v.raw_json_token();
            raw = raw.substr(0, raw.find_first_of(",} \t"));
            const double x = raw == "NaN" ? kNaN
                : raw == "Infinity"       ? std::numeric_limits<double>::infinity()
                : raw == "-Infinity"      ? -std::numeric_limits<double>::infinity()
                                          : 0.0;
            if (raw != "NaN" && raw != "Infinity" && raw != "-Infinity") {
                r.bad = true;
                break;
            }
            if (key == "step" || key == "t")
                r.badField = QString::fromUtf8(key.data(), qsizetype(key.size()));
            else
                r.keep(key, x);
            continue;
        }
        if (key == "kind") {
            if (type != ondemand::json_type::string || v.get_string().get(r.kind) != SUCCESS) {
                r.badField = QStringLiteral("kind");
                continue;
            }
        } else if (key == "tag") {
            if (type != ondemand::json_type::string || v.get_string().get(r.tag) != SUCCESS) r.badField = QStringLiteral("tag");
        } else if (type == ondemand::json_type::number) {
            double x = 0;
            if (v.get_double().get(x) != SUCCESS) {
                // Out of double's range (1e400): what strtod makes of it, ±inf, as Python would.
                const std::string_view raw = v.raw_json_token();
                const std::string token(raw.substr(0, raw.find_first_of(",} \t")));
                char* end = nullptr;
                x = std::strtod(token.c_str(), &end);
                if (end == token.c_str()) {
                    r.bad = true;
                    break;
                }
            }
            if (key == "step")
                r.step = x;
            else if (key == "t")
                r.t = x;
            else
                r.keep(key, x);
        } else if (type == ondemand::json_type::null) {
            // The trainer writes a non-finite loss as null: kept, as NaN.
            if (key == "step" || key == "t")
                r.badField = QString::fromUtf8(key.data(), qsizetype(key.size()));
            else
                r.keep(key, kNaN);
        } else if (key == "step" || key == "t") {
            r.badField = QString::fromUtf8(key.data(), qsizetype(key.size()));
        }
    }
}
}  // namespace

void MetricsParser::parseLine(const char* begin, std::size_t len, std::size_t capacity)
{
    using namespace simdjson;
    auto warn = [&](MetricWarning::Kind kind, const QString& message) { addWarning(kind, message); };
    while (len > 0 && (begin[len - 1] == '\r' || begin[len - 1] == ' ')) --len;
    if (len == 0) return;
    if (len > kMaxLine) {
        warn(MetricWarning::Kind::TooLong, QStringLiteral("a line of %1 bytes; skipped").arg(len));
        return;
    }
    ++m_out.linesParsed;
    ondemand::document doc;
    if (auto e = d->parser.iterate(begin, len, capacity).get(doc); e != SUCCESS) {
        if (e == UTF8_ERROR)
            warn(MetricWarning::Kind::Binary, QStringLiteral("bytes that are not UTF-8"));
        else
            warn(MetricWarning::Kind::Malformed, QStringLiteral("not JSON"));
        return;
    }
    ondemand::object obj;
    if (auto e = doc.get_object().get(obj); e != SUCCESS) {
        const bool binary = std::any_of(begin, begin + len, [](char c) { return (unsigned char)c < 0x20 && c != '\t'; });
        warn(binary ? MetricWarning::Kind::Binary
                    : (e == INCORRECT_TYPE ? MetricWarning::Kind::NotAnObject : MetricWarning::Kind::Malformed),
             binary ? QStringLiteral("binary bytes where a JSON object belongs")
                    : (e == INCORRECT_TYPE ? QStringLiteral("a JSON value that is not an object") : QStringLiteral("not JSON")));
        return;
    }
    MetricRecord r;
    readFields(obj, begin, len, r);
    if (r.bad || begin[len - 1] != '}') {
        // A field that would not parse, or something after the object (On-Demand stops reading at
        // the object's end, so the last byte is checked here).
        warn(MetricWarning::Kind::Malformed, QStringLiteral("malformed or cut-off JSON object"));
        return;
    }
    if (!r.badField.isEmpty()) {
        warn(MetricWarning::Kind::BadValue, QStringLiteral("field '%1' has the wrong type").arg(r.badField));
        return;
    }
    if (r.kind.empty() || std::isnan(r.step) || std::isnan(r.t)) {
        warn(MetricWarning::Kind::MissingField,
             QStringLiteral("no %1").arg(r.kind.empty()           ? QStringLiteral("'kind'")
                                             : std::isnan(r.step) ? QStringLiteral("'step'")
                                                                  : QStringLiteral("'t'")));
        return;
    }
    storeRecord(r);
}

// A parsed record into the series: step and epoch records' fields, the TensorBoard-named series,
// GPU samples per rank, imported scalars.
void MetricsParser::storeRecord(const MetricRecord& r)
{
    auto warn = [&](MetricWarning::Kind kind, const QString& message) { addWarning(kind, message); };
    m_out.noteTime(r.t);
    SeriesGroup* group = nullptr;  // step and epoch records: their fields share one x
    auto store = [&](Series* series, double value) {
        if (!series) {  // the cap on distinct fields: said once
            if (!d->capped) warn(MetricWarning::Kind::BadValue, capMessage());
            d->capped = true;
            return;
        }
        const std::size_t dropped = group ? group->add(*series, value) : series->append(r.step, r.t, value);
        ++m_out.pointsStored;
        if (dropped > 0 && r.step > d->repeatFrom) {
            d->repeatFrom = r.step;
            warn(MetricWarning::Kind::RepeatedSteps, repeatedMessage(r.step));
        }
    };
    auto tb = [&](const char* tag, std::string_view key) {
        if (r.has(key)) store(&m_out.ensureSeries(QLatin1String(tag)), r.value(key));
    };
    if (r.kind == "step" || r.kind == "epoch") {
        const bool isStep = r.kind == "step";
        SeriesGroup*& cached = isStep ? d->stepGroup : d->epochGroup;
        if (!cached) cached = &m_out.group(isStep ? "step" : "epoch");
        group = cached;
        group->beginRow(r.step, r.t);
        for (int i = 0; i < r.nfields; ++i)
            store(d->slot(isStep ? d->step : d->epoch, std::size_t(i), isStep ? "step/" : "epoch/", r.fields[i].key, m_out),
                  r.fields[i].value);
        group->endRow();
        group = nullptr;
    }
    if (r.kind == "epoch") {
        tb("Loss/train", "train_loss");
        tb("Loss/valid", "val_loss");
        tb("Learning Rate", "lr");
        tb("Avg iters per sec", "iters_per_s");
    } else if (r.kind == "initial") {
        tb("Loss/train", "train_loss");
        tb("Loss/valid", "val_loss");
    } else if (r.kind == "gpu" || r.kind == "gpu_epoch") {
        // NVML samples of each rank's GPU (about one a second) and their per-epoch sums: one series
        // per rank and field, named as the trainer's TensorBoard tags (gpu/rank0/power_w).
        const double rank = r.value("rank");
        if (std::isnan(rank)) {
            warn(MetricWarning::Kind::MissingField, QStringLiteral("no 'rank'"));
            return;
        }
        const QString prefix = QStringLiteral("%1/rank%2/").arg(QLatin1String(r.kind.data(), qsizetype(r.kind.size()))).arg(qint64(rank));
        for (int i = 0; i < r.nfields; ++i)
            if (r.fields[i].key != "rank")
                store(&m_out.ensureSeries(prefix + QString::fromUtf8(r.fields[i].key.data(), qsizetype(r.fields[i].key.size()))),
                      r.fields[i].value);
    } else if (r.kind == "scalar") {
        // An imported TensorBoard scalar: the series is its tag, as TensorBoard names it.
        if (r.tag.empty() || !r.has("value")) {
            warn(MetricWarning::Kind::MissingField, r.tag.empty() ? QStringLiteral("no 'tag'") : QStringLiteral("no 'value'"));
            return;
        }
        store(&m_out.ensureSeries(QString::fromUtf8(r.tag.data(), qsizetype(r.tag.size()))), r.value("value"));
    }
    // "event" records carry no series; other kinds are ignored (a newer trainer may add some).
}

namespace {
// Parses the whole lines of bytes [from, to) of the file. `reserveFor`: the bytes the series of
// this part should have room for (the first part makes room for the whole file, so the later
// parts are joined onto it without moving it).
void parseRange(const QString& path, qint64 from, qint64 to, qint64 reserveFor, bool last, RunMetrics& m, qint64* lines)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly | QIODevice::Unbuffered) || !f.seek(from)) return;
    MetricsParser parser(m);
    // Read in chunks that stay in the cache while they are parsed (measured: 256 KiB reads load a
    // 1 GB file in two thirds of the time that parsing it through mmap or in 16 MiB reads takes: a
    // mapped file costs a TLB miss per page, a large buffer is read from memory twice). The
    // unparsed tail moves to the buffer's front, the next read fills the rest.
    constexpr qint64 kChunk = 256 << 10;
    std::vector<char> buffer(static_cast<std::size_t>(kChunk));
    std::size_t have = 0;
    bool reserved = false;
    qint64 consumed = 0, pos = from;
    while (pos < to) {
        if (buffer.size() - have < std::size_t(kChunk) / 2) buffer.resize(buffer.size() * 2);  // a very long line
        const qint64 got = f.read(buffer.data() + have, std::min(qint64(buffer.size() - have), to - pos));
        if (got <= 0) break;
        pos += got;
        have += std::size_t(got);
        const std::size_t used = parser.feed(buffer.data(), have);
        consumed += qint64(used);
        std::memmove(buffer.data(), buffer.data() + used, have - used);
        have -= used;
        if (!reserved && consumed > 0) {
            // The first chunk tells how many points a byte makes: room for all of them at once,
            // rather than growing (and copying) every series again and again.
            reserved = true;
            m.reserveScaled(double(reserveFor) / double(consumed) * 1.02);
        }
    }
    if (last) {
        const QByteArray carry(buffer.data(), qsizetype(have));
        parser.finish(carry.constData(), std::size_t(carry.size()));
    }
    *lines = parser.line();
}

// The offset just after the first newline at or after `at`, or `end` when there is none.
qint64 nextLineStart(QFile& f, qint64 at, qint64 end)
{
    if (!f.seek(at)) return end;
    QByteArray block;
    while (at < end) {
        block = f.read(64 << 10);
        if (block.isEmpty()) return end;
        const qsizetype nl = block.indexOf('\n');
        if (nl >= 0) return std::min(end, at + nl + 1);
        at += block.size();
    }
    return end;
}
}  // namespace

RunMetrics loadRunMetrics(const QString& path, int threads)
{
    RunMetrics m;
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return m;
    const qint64 size = f.size();
    // Parts of at least 32 MiB: a smaller file is read faster than threads start and join.
    constexpr qint64 kMinPart = 32 << 20;
    if (threads <= 0) threads = int(std::min(8u, std::max(1u, std::thread::hardware_concurrency())));
    const int parts = int(std::clamp<qint64>(size / kMinPart, 1, threads));
    std::vector<qint64> cut{0};
    for (int k = 1; k < parts; ++k) cut.push_back(std::max(cut.back(), nextLineStart(f, size / parts * k, size)));
    cut.push_back(size);
    f.close();
    std::vector<RunMetrics> got(static_cast<std::size_t>(parts));
    std::vector<qint64> lines(static_cast<std::size_t>(parts), 0);
    {
        std::vector<std::thread> workers;
        for (int k = 1; k < parts; ++k)
            workers.emplace_back(parseRange, path, cut[std::size_t(k)], cut[std::size_t(k) + 1],
                                 cut[std::size_t(k) + 1] - cut[std::size_t(k)], k == parts - 1, std::ref(got[std::size_t(k)]),
                                 &lines[std::size_t(k)]);
        parseRange(path, 0, cut[1], size, parts == 1, got[0], &lines[0]);
        for (auto& w : workers) w.join();
    }
    // Joined in file order, as one parser would have read it.
    m = std::move(got[0]);
    qint64 lineBase = lines[0];
    std::size_t seriesCount = m.tags().size();
    bool capped = false;
    auto warn = [&](MetricWarning w) {
        if (m.warnings.size() < 1000) m.warnings.append(std::move(w));
    };
    for (int k = 1; k < parts; ++k) {
        RunMetrics& part = got[std::size_t(k)];
        if (std::isnan(m.startTime())) m.noteTime(part.startTime());
        m.linesParsed += part.linesParsed;
        m.pointsStored += part.pointsStored;  // points appended, as the parser counts them (later drops included)
        for (MetricWarning w : part.warnings) {
            w.line += lineBase;
            if (w.kind == MetricWarning::Kind::BadValue && w.message == capMessage()) {
                if (capped) continue;
                capped = true;
            }
            warn(std::move(w));
        }
        // Groups first: the shared columns are joined once, each member's values after its own.
        const QStringList partTags = part.tags();
        QSet<QString> joined;
        for (const auto& [kind, later] : part.groups()) {
            std::vector<std::pair<Series*, const Series*>> pairs;
            QStringList tags;
            bool matched = true;
            for (const QString& tag : partTags) {
                const Series* theirs = part.series(tag);
                if (std::find(later.members().begin(), later.members().end(), theirs) == later.members().end()) continue;
                if (!m.series(tag)) {
                    matched = false;
                    break;
                }
                pairs.emplace_back(&m.ensureSeries(tag), theirs);
                tags << tag;
            }
            SeriesGroup& mine = m.group(kind);
            if (matched && mine.join(later, pairs)) {
                for (const QString& tag : tags) joined.insert(tag);
            } else {
                mine.dissolve();  // the series join one by one below
            }
        }
        double repeatedFrom = kNaN;  // one warning per join, as the parser gives one per repeated range
        for (const QString& tag : partTags) {
            if (joined.contains(tag)) continue;
            const Series& later = *part.series(tag);
            if (!m.series(tag)) {
                if (seriesCount >= kMaxSeries) {
                    if (!capped) warn({MetricWarning::Kind::BadValue, lineBase + 1, capMessage()});
                    capped = true;
                    continue;
                }
                ++seriesCount;
            }
            const std::size_t dropped = m.ensureSeries(tag).append(later);
            if (dropped > 0 && (std::isnan(repeatedFrom) || later.steps().front() < repeatedFrom)) repeatedFrom = later.steps().front();
        }
        if (!std::isnan(repeatedFrom)) warn({MetricWarning::Kind::RepeatedSteps, lineBase + 1, repeatedMessage(repeatedFrom)});
        lineBase += lines[std::size_t(k)];
        part = RunMetrics();  // its memory back before the next part is joined
    }
    return m;
}

}  // namespace scaledesk
