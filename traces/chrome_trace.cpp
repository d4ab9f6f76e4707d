#include "traces/chrome_trace.h"

#include <algorithm>
#include <boost/iostreams/filter/gzip.hpp>
#include <boost/iostreams/filtering_stream.hpp>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <queue>
#include <set>
#include <string_view>
#include <utility>
#include <vector>

#include "traces/escape.h"

namespace mtlemu::traces {
namespace {

// Perfetto treats pid 0 as the Linux idle ("swapper") process, so the one
// process of the trace is pid 1, and its threads start at 2 so that none of
// them is taken for the process's main thread.
constexpr int kPid = 1;
constexpr int kFirstTid = kPid + 1;

// The output is built in a string and handed to the stream in large pieces:
// no stream formatting or allocation per event.
class JsonWriter {
 public:
  explicit JsonWriter(std::ostream& out) : out_(out) {
    buffer_.reserve(kFlushAt + 4096);
  }
  JsonWriter(const JsonWriter&) = delete;
  JsonWriter& operator=(const JsonWriter&) = delete;
  ~JsonWriter() { Flush(); }

  JsonWriter& Raw(std::string_view text) {
    buffer_ += text;
    return *this;
  }
  JsonWriter& String(std::string_view text) {
    buffer_ += '"';
    AppendJsonEscaped(text, buffer_);
    buffer_ += '"';
    return *this;
  }
  JsonWriter& Int(int64_t value) { return ToChars(value); }
  JsonWriter& Uint(uint64_t value) { return ToChars(value); }
  // The shortest text that reads back as the same double; JSON has no NaN
  // or infinity, so those are written as 0.
  JsonWriter& Number(double value) {
    if (!std::isfinite(value)) value = 0;
    return ToChars(value);
  }

  // Starts an event object in the traceEvents array.
  JsonWriter& BeginEvent() {
    buffer_ += first_event_ ? "\n{" : ",\n{";
    first_event_ = false;
    return *this;
  }
  void EndEvent() {
    buffer_ += '}';
    if (buffer_.size() >= kFlushAt) Flush();
  }

  void Flush() {
    out_.write(buffer_.data(), static_cast<std::streamsize>(buffer_.size()));
    buffer_.clear();
  }

 private:
  static constexpr size_t kFlushAt = size_t{1} << 20;

  template <class T>
  JsonWriter& ToChars(T value) {
    char text[32];
    const std::to_chars_result r =
        std::to_chars(text, text + sizeof(text), value);
    buffer_.append(text, r.ptr);
    return *this;
  }

  std::ostream& out_;
  std::string buffer_;
  bool first_event_ = true;
};

// Cycles to trace time. Times are whole nanoseconds, a pure function of the
// cycle, so slices that touch in cycles touch in the trace (Perfetto stores
// nanoseconds and truncates what it reads; a slice starting 1 ns before its
// neighbour on the track ends would be dropped as badly nested).
class TraceClock {
 public:
  // A clock that is not a positive number is taken as 1 MHz: one cycle per
  // microsecond, so the trace still shows the cycles.
  explicit TraceClock(double mhz)
      : ns_per_cycle_(std::isfinite(mhz) && mhz > 0 ? 1000.0 / mhz : 1000.0) {}

  int64_t Ns(uint64_t cycle) const {
    const double ns = static_cast<double>(cycle) * ns_per_cycle_;
    constexpr double kMaxNs = 9.0e18;  // fits int64_t
    return std::llround(std::min(ns, kMaxNs));
  }

  // Microseconds for `ns` >= 0: the double nearest ns / 1000 that Perfetto
  // (static_cast<int64_t>(us * 1000.0)) reads back as exactly `ns`.
  static double Us(int64_t ns) {
    double us = static_cast<double>(ns) / 1000.0;
    for (int i = 0; i < 4 && static_cast<int64_t>(us * 1000.0) < ns; ++i) {
      us = std::nextafter(us, std::numeric_limits<double>::infinity());
    }
    return us;
  }

 private:
  double ns_per_cycle_;
};

int TrackSlot(const Slice& slice) { return slice.slot < 0 ? -1 : slice.slot; }

// The slices of one track (a core's threadgroups, or one SIMD-group slot),
// spread over as few lanes as needed so that no two slices on a lane
// overlap: trace viewers cannot show partly overlapping slices on one thread
// (Perfetto drops them), and a core holds several threadgroups at once.
struct Track {
  int core = 0;
  int slot = -1;
  size_t begin = 0, end = 0;  // range in the sorted slice order
  int lanes = 1;
  int first_tid = 0;  // lane L is thread first_tid + L
};

struct Layout {
  std::vector<uint32_t> order;  // slice indices by track, then start
  std::vector<uint32_t> lane;   // per slice index
  std::vector<Track> tracks;    // by core, threadgroups first, then slots
};

Layout LayOut(const Timeline& timeline) {
  const std::vector<Slice>& slices = timeline.slices;
  Layout layout;
  layout.order.resize(slices.size());
  for (size_t i = 0; i < slices.size(); ++i) {
    layout.order[i] = static_cast<uint32_t>(i);
  }
  // Longer slices first among equal starts; the index keeps it deterministic.
  std::sort(layout.order.begin(), layout.order.end(),
            [&](uint32_t a, uint32_t b) {
              const Slice& x = slices[a];
              const Slice& y = slices[b];
              const int x_slot = TrackSlot(x), y_slot = TrackSlot(y);
              if (x.core != y.core) return x.core < y.core;
              if (x_slot != y_slot) return x_slot < y_slot;
              if (x.start_cycle != y.start_cycle) {
                return x.start_cycle < y.start_cycle;
              }
              if (x.end_cycle != y.end_cycle) return x.end_cycle > y.end_cycle;
              return a < b;
            });

  // Every core gets its threadgroup track, also a core without slices.
  std::set<int> cores;
  for (int c = 0; c < timeline.cores; ++c) cores.insert(c);
  std::vector<Track> slice_tracks;
  layout.lane.resize(slices.size());
  for (size_t begin = 0; begin < layout.order.size();) {
    const Slice& first = slices[layout.order[begin]];
    size_t end = begin;
    while (end < layout.order.size() &&
           slices[layout.order[end]].core == first.core &&
           TrackSlot(slices[layout.order[end]]) == TrackSlot(first)) {
      ++end;
    }
    // Greedy interval partitioning: each slice takes the lowest lane that is
    // free at its start.
    using Busy = std::pair<uint64_t, uint32_t>;  // (end cycle, lane)
    std::priority_queue<Busy, std::vector<Busy>, std::greater<>> busy;
    std::priority_queue<uint32_t, std::vector<uint32_t>, std::greater<>>
        free_lanes;
    uint32_t lanes = 0;
    for (size_t i = begin; i < end; ++i) {
      const Slice& slice = slices[layout.order[i]];
      while (!busy.empty() && busy.top().first <= slice.start_cycle) {
        free_lanes.push(busy.top().second);
        busy.pop();
      }
      uint32_t lane;
      if (free_lanes.empty()) {
        lane = lanes++;
      } else {
        lane = free_lanes.top();
        free_lanes.pop();
      }
      layout.lane[layout.order[i]] = lane;
      busy.push({std::max(slice.end_cycle, slice.start_cycle), lane});
    }
    cores.insert(first.core);
    slice_tracks.push_back({.core = first.core,
                            .slot = TrackSlot(first),
                            .begin = begin,
                            .end = end,
                            .lanes = static_cast<int>(lanes)});
    begin = end;
  }

  // Threads in display order: per core, its threadgroup lanes, then each
  // slot's lanes.
  int next_tid = kFirstTid;
  size_t next = 0;  // in slice_tracks, which are in the same order
  for (int core : cores) {
    if (next < slice_tracks.size() && slice_tracks[next].core == core &&
        slice_tracks[next].slot == -1) {
      layout.tracks.push_back(slice_tracks[next++]);
    } else {
      layout.tracks.push_back({.core = core, .slot = -1});
    }
    while (next < slice_tracks.size() && slice_tracks[next].core == core) {
      layout.tracks.push_back(slice_tracks[next++]);
    }
  }
  for (Track& track : layout.tracks) {
    track.first_tid = next_tid;
    next_tid += track.lanes;
  }
  return layout;
}

std::string ThreadName(const Track& track, int lane) {
  std::string name = "core " + std::to_string(track.core);
  if (track.slot >= 0) name += " / simd slot " + std::to_string(track.slot);
  if (lane > 0) name += " (" + std::to_string(lane + 1) + ")";
  return name;
}

void WriteMetadata(const Timeline& timeline, const Layout& layout,
                   JsonWriter& json) {
  std::string process = timeline.chip.empty() ? "GPU" : timeline.chip;
  if (!timeline.kernel.empty()) process += ": " + timeline.kernel;
  json.BeginEvent()
      .Raw(R"("name":"process_name","ph":"M","pid":)")
      .Int(kPid)
      .Raw(R"(,"args":{"name":)")
      .String(process)
      .Raw("}")
      .EndEvent();
  int sort_index = 0;
  for (const Track& track : layout.tracks) {
    for (int lane = 0; lane < track.lanes; ++lane) {
      const int tid = track.first_tid + lane;
      json.BeginEvent()
          .Raw(R"("name":"thread_name","ph":"M","pid":)")
          .Int(kPid)
          .Raw(R"(,"tid":)")
          .Int(tid)
          .Raw(R"(,"args":{"name":)")
          .String(ThreadName(track, lane))
          .Raw("}")
          .EndEvent();
      json.BeginEvent()
          .Raw(R"("name":"thread_sort_index","ph":"M","pid":)")
          .Int(kPid)
          .Raw(R"(,"tid":)")
          .Int(tid)
          .Raw(R"(,"args":{"sort_index":)")
          .Int(sort_index++)
          .Raw("}")
          .EndEvent();
    }
  }
}

void WriteSlices(const Timeline& timeline, const Layout& layout,
                 const TraceClock& clock, JsonWriter& json) {
  for (const Track& track : layout.tracks) {
    const std::string_view category =
        track.slot < 0 ? "threadgroup" : "simdgroup";
    for (size_t i = track.begin; i < track.end; ++i) {
      const uint32_t index = layout.order[i];
      const Slice& slice = timeline.slices[index];
      const uint64_t end_cycle = std::max(slice.end_cycle, slice.start_cycle);
      const int64_t start_ns = clock.Ns(slice.start_cycle);
      json.BeginEvent()
          .Raw(R"("name":)")
          .String(slice.name)
          .Raw(R"(,"cat":")")
          .Raw(category)
          .Raw(R"(","ph":"X","pid":)")
          .Int(kPid)
          .Raw(R"(,"tid":)")
          .Int(track.first_tid + static_cast<int>(layout.lane[index]))
          .Raw(R"(,"ts":)")
          .Number(TraceClock::Us(start_ns))
          .Raw(R"(,"dur":)")
          .Number(TraceClock::Us(clock.Ns(end_cycle) - start_ns))
          .Raw(R"(,"args":{)");
      for (const auto& [key, value] : slice.args) {
        // Ours below; a JSON object must not hold a key twice.
        if (key == "start_cycle" || key == "end_cycle") continue;
        json.String(key).Raw(":").Number(value).Raw(",");
      }
      json.Raw(R"("start_cycle":)")
          .Uint(slice.start_cycle)
          .Raw(R"(,"end_cycle":)")
          .Uint(slice.end_cycle)
          .Raw("}")
          .EndEvent();
    }
  }
}

void WriteCounters(const Timeline& timeline, const TraceClock& clock,
                   JsonWriter& json) {
  for (const Counter& counter : timeline.counters) {
    const std::string name =
        counter.core < 0
            ? counter.name
            : "core " + std::to_string(counter.core) + ": " + counter.name;
    for (const CounterSample& sample : counter.samples) {
      json.BeginEvent()
          .Raw(R"("name":)")
          .String(name)
          .Raw(R"(,"ph":"C","pid":)")
          .Int(kPid)
          .Raw(R"(,"ts":)")
          .Number(TraceClock::Us(clock.Ns(sample.cycle)))
          .Raw(R"(,"args":{"value":)")
          .Number(sample.value)
          .Raw("}")
          .EndEvent();
    }
  }
}

}  // namespace

void WriteChromeTrace(const Timeline& timeline, std::ostream& out) {
  const Layout layout = LayOut(timeline);
  const TraceClock clock(timeline.clock_mhz);
  JsonWriter json(out);
  json.Raw(R"({"traceEvents":[)");
  WriteMetadata(timeline, layout, json);
  WriteSlices(timeline, layout, clock, json);
  WriteCounters(timeline, clock, json);
  // displayTimeUnit only chooses how times are shown; ts and dur are
  // microseconds whatever it says.
  json.Raw("\n],\n\"displayTimeUnit\":\"ns\",\n\"otherData\":{\"chip\":")
      .String(timeline.chip)
      .Raw(R"(,"kernel":)")
      .String(timeline.kernel)
      .Raw(R"(,"clock_mhz":)")
      .Number(timeline.clock_mhz)
      .Raw(R"(,"cores":)")
      .Int(timeline.cores)
      .Raw(R"(,"total_cycles":)")
      .Uint(timeline.total_cycles)
      .Raw("}}\n");
}

Status WriteChromeTraceFile(const Timeline& timeline, const std::string& path) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file.is_open()) {
    return Error{path + ": cannot open for writing: " + std::strerror(errno)};
  }
  if (path.ends_with(".gz")) {
    // Perfetto and chrome://tracing open gzip directly; a large dispatch's
    // trace shrinks about tenfold.
    try {
      boost::iostreams::filtering_ostream gzip;
      gzip.push(boost::iostreams::gzip_compressor());
      gzip.push(file);
      WriteChromeTrace(timeline, gzip);
      boost::iostreams::close(gzip);
    } catch (const std::exception& e) {
      return Error{path + ": cannot compress the trace: " + e.what()};
    }
  } else {
    WriteChromeTrace(timeline, file);
  }
  file.close();
  if (file.fail()) return Error{path + ": cannot write the trace"};
  return {};
}

}  // namespace mtlemu::traces
