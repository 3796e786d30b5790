#include "eventfile.h"

#include "tensorboard.pb.h"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <unistd.h>

namespace scaledesk::tb {

namespace {

// The value of a scalar tensor (TF2 summaries): one element of a numeric type, in a typed field or
// in tensor_content. False when the tensor is not a single number.
bool tensorScalar(const TensorProto& t, double* value)
{
    std::int64_t elements = 1;
    for (const auto& dim : t.tensor_shape().dim()) elements *= dim.size();
    if (elements != 1) return false;
    const std::string& raw = t.tensor_content();
    auto fromRaw = [&](auto sample) {
        if (raw.size() != sizeof sample) return false;
        std::memcpy(&sample, raw.data(), sizeof sample);  // little-endian, as TensorFlow writes it
        *value = double(sample);
        return true;
    };
    switch (t.dtype()) {
    case DT_FLOAT:
        if (t.float_val_size() == 1) return *value = t.float_val(0), true;
        return fromRaw(float());
    case DT_DOUBLE:
        if (t.double_val_size() == 1) return *value = t.double_val(0), true;
        return fromRaw(double());
    case DT_INT32:
        if (t.int_val_size() == 1) return *value = t.int_val(0), true;
        return fromRaw(std::int32_t());
    case DT_INT64:
        if (t.int64_val_size() == 1) return *value = double(t.int64_val(0)), true;
        return fromRaw(std::int64_t());
    case DT_BOOL:
        if (t.bool_val_size() == 1) return *value = t.bool_val(0) ? 1.0 : 0.0, true;
        return false;
    default: return false;  // half and bfloat16 scalars are not written by any summary writer we know of
    }
}

}  // namespace

namespace {
// The records the reader gives, into `out`; offsets shifted by `base` (where the bytes start in the file).
void readRecords(TfRecordReader& reader, std::uint64_t base, EventFileContents& out)
{
    std::string_view record;
    std::uint64_t offset = 0;
    Event event;
    while (reader.next(&record, &offset)) {
        ++out.records;
        if (!event.ParseFromArray(record.data(), int(record.size()))) {
            out.problems.push_back(
                {base + offset, "a record of " + std::to_string(record.size()) + " bytes is not an Event message: skipped"});
            continue;
        }
        if (event.has_file_version()) {
            out.fileVersion = event.file_version();
            out.fileVersionWallTime = event.wall_time();
        }
        if (!event.has_summary()) continue;
        for (const Summary::Value& v : event.summary().value()) {
            double value = 0;
            if (v.has_simple_value())
                value = double(v.simple_value());
            else if (!v.has_tensor() || !tensorScalar(v.tensor(), &value))
                continue;  // images, histograms, text, audio: not scalars
            out.scalars.push_back({v.tag(), event.step(), event.wall_time(), value});
        }
    }
}
}  // namespace

EventFileContents readEventBytes(const char* data, std::size_t size)
{
    EventFileContents out;
    TfRecordReader reader(data, size);
    readRecords(reader, 0, out);
    for (const RecordProblem& p : reader.problems()) out.problems.push_back(p);
    return out;
}

EventFileContents EventStreamReader::feed(const char* data, std::size_t size)
{
    m_pending.append(data, size);
    EventFileContents out;
    TfRecordReader reader(m_pending.data(), m_pending.size());
    readRecords(reader, m_base, out);
    // The cut record at the end is not a problem yet: it is being written.
    const std::uint64_t used = reader.truncatedTail() ? reader.tailOffset() : m_pending.size();
    for (const RecordProblem& p : reader.problems())
        if (!(reader.truncatedTail() && p.offset == reader.tailOffset())) out.problems.push_back({m_base + p.offset, p.message});
    m_pending.erase(0, std::size_t(used));
    m_base += used;
    return out;
}

EventFileContents readEventFile(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        EventFileContents out;
        out.problems.push_back({0, "cannot open: " + std::string(std::strerror(errno))});
        return out;
    }
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return readEventBytes(bytes.data(), bytes.size());
}

EventFileWriter::~EventFileWriter() { close(); }

void EventFileWriter::open(const std::string& dir, double wallTime)
{
    close();
    char host[256] = "localhost";
    gethostname(host, sizeof host - 1);
    m_path = dir + "/events.out.tfevents." + std::to_string(static_cast<long long>(wallTime)) + "." + host + "." +
        std::to_string(getpid()) + ".0";
    m_file = std::fopen(m_path.c_str(), "ab");
    if (!m_file) throw std::runtime_error(m_path + ": cannot create the TensorBoard event file: " + std::strerror(errno));
    Event first;
    first.set_wall_time(wallTime);
    first.set_file_version("brain.Event:2");
    write(first.SerializeAsString());
}

void EventFileWriter::addScalar(const std::string& tag, std::int64_t step, double value, double wallTime)
{
    addScalars(step, wallTime, {{tag, value}});
}

void EventFileWriter::addScalars(std::int64_t step, double wallTime, const std::vector<Scalar>& scalars)
{
    if (!m_file || scalars.empty()) return;
    Event event;
    event.set_wall_time(wallTime);
    event.set_step(step);
    for (const Scalar& s : scalars) {
        Summary::Value* v = event.mutable_summary()->add_value();
        v->set_tag(s.tag);
        v->set_simple_value(float(s.value));
    }
    write(event.SerializeAsString());
}

void EventFileWriter::write(const std::string& event)
{
    const std::string framed = frameRecord(event);
    if (std::fwrite(framed.data(), 1, framed.size(), m_file) != framed.size() || std::fflush(m_file) != 0)
        throw std::runtime_error(m_path + ": cannot write the TensorBoard event file: " + std::strerror(errno));
}

void EventFileWriter::close()
{
    if (m_file) std::fclose(m_file);
    m_file = nullptr;
}

}  // namespace scaledesk::tb
