#pragma once

#include "tfrecord.h"

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace scaledesk::tb {

/// One scalar of an event file: a `simple_value` (what PyTorch's SummaryWriter and TF1 write) or a
/// scalar tensor (TF2's `tf.summary.scalar`), with the event's step and wall time.
struct ScalarPoint {
    std::string tag;
    std::int64_t step = 0;
    double wallTime = 0;  ///< Unix seconds
    double value = 0;
};

/// What one event file holds, as far as scalars go, and what could not be read.
struct EventFileContents {
    std::string fileVersion;         ///< "brain.Event:2" in files that PyTorch and TensorFlow write
    double fileVersionWallTime = 0;  ///< the wall time of the event that carried it (the file's creation)
    std::vector<ScalarPoint> scalars;
    std::uint64_t records = 0;            ///< sound records read
    std::vector<RecordProblem> problems;  ///< bad framing (by offset) and records that are not Events
};

/// Reads the scalars of an event file. A file that cannot be opened gives one problem at offset 0;
/// bad records are reported with their offsets and skipped; nothing throws.
EventFileContents readEventFile(const std::string& path);
/// The same, from bytes already in memory.
EventFileContents readEventBytes(const char* data, std::size_t size);

/// Reads a growing event file piece by piece, as the live mirror brings its appended bytes: each
/// feed() gives the scalars of the records that are complete so far, exactly those a whole read of
/// the same bytes gives; a record cut at the end of what has arrived is kept and read once the rest
/// of it comes (no problem is reported for it). Problems carry offsets in the whole file.
class EventStreamReader {
public:
    EventFileContents feed(const char* data, std::size_t size);
    /// Bytes of the file read so far (records and reported problems), before the pending tail.
    std::uint64_t consumed() const { return m_base; }
    /// Bytes of a record still being written, waiting for the rest of it.
    std::size_t pending() const { return m_pending.size(); }

private:
    std::string m_pending;
    std::uint64_t m_base = 0;
};

/// Writes an event file as PyTorch's SummaryWriter does: the name
/// `events.out.tfevents.<unix seconds>.<host>.<pid>.0`, a first event with `file_version`
/// "brain.Event:2", then one event per scalar (`simple_value`). Every event is flushed, so that a
/// reader (TensorBoard, `scaledesk import`) sees it at once.
class EventFileWriter {
public:
    EventFileWriter() = default;
    ~EventFileWriter();
    EventFileWriter(const EventFileWriter&) = delete;
    EventFileWriter& operator=(const EventFileWriter&) = delete;

    /// Creates the file in `dir` (which must exist); throws std::runtime_error naming the path when
    /// it cannot.
    void open(const std::string& dir, double wallTime);
    bool isOpen() const { return m_file != nullptr; }
    const std::string& path() const { return m_path; }
    void addScalar(const std::string& tag, std::int64_t step, double value, double wallTime);
    /// Several scalars of one step in one event (one record), as a SummaryWriter flushes them.
    struct Scalar {
        std::string tag;
        double value;
    };
    void addScalars(std::int64_t step, double wallTime, const std::vector<Scalar>& scalars);
    void close();

private:
    void write(const std::string& event);
    std::FILE* m_file = nullptr;
    std::string m_path;
};

}  // namespace scaledesk::tb
