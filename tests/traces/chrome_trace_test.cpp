#include "traces/chrome_trace.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <map>
#include <sstream>
#include <streambuf>
#include <string>
#include <vector>

#include "tests/traces/strict_json.h"
#include "tests/traces/trace_test_util.h"

namespace mtlemu::traces {
namespace {

using testing::HavePython;
using testing::Json;
using testing::ParseStrictJson;
using testing::ReadFile;
using testing::RunPython;
using testing::TempPath;

std::string Trace(const Timeline& timeline) {
  std::ostringstream out;
  WriteChromeTrace(timeline, out);
  return out.str();
}

Json Parse(const std::string& text) {
  std::string error;
  std::optional<Json> doc = ParseStrictJson(text, &error);
  if (!doc) {
    ADD_FAILURE() << "not JSON: " << error << "\n" << text.substr(0, 2000);
    return Json{};
  }
  return *doc;
}

const Json kNull;

// The member `key` of `object`, or null.
const Json& Member(const Json& object, std::string_view key) {
  if (!object.is_object()) return kNull;
  const auto it = object.find(std::string(key));
  return it != object.end() ? *it : kNull;
}

// The string `key` of `object`, or "" when it is not a string.
std::string Str(const Json& object, std::string_view key) {
  const Json& value = Member(object, key);
  return value.is_string() ? value.get<std::string>() : "";
}
double Num(const Json& object, std::string_view key) {
  const Json& value = Member(object, key);
  EXPECT_TRUE(value.is_number()) << "'" << key << "' not a number";
  return value.is_number() ? value.get<double>() : 0;
}
double Arg(const Json& event, std::string_view key) {
  return Num(Member(event, "args"), key);
}

// The events with phase `ph` (and name `name` unless empty).
std::vector<const Json*> Events(const Json& doc, std::string_view ph,
                                std::string_view name = "") {
  std::vector<const Json*> events;
  const Json& all = Member(doc, "traceEvents");
  if (!all.is_array()) return events;
  for (const Json& e : all) {
    if (Str(e, "ph") == ph && (name.empty() || Str(e, "name") == name)) {
      events.push_back(&e);
    }
  }
  return events;
}

struct Thread {
  int tid;
  std::string name;
  int sort_index;
};

// The named threads in display order (by thread_sort_index).
std::vector<Thread> Threads(const Json& doc) {
  std::map<int, std::string> names;
  std::map<int, int> sort_index;
  for (const Json* e : Events(doc, "M", "thread_name")) {
    const int tid = static_cast<int>(Num(*e, "tid"));
    EXPECT_FALSE(names.contains(tid)) << "tid " << tid << " named twice";
    names[tid] = Str(Member(*e, "args"), "name");
  }
  for (const Json* e : Events(doc, "M", "thread_sort_index")) {
    sort_index[static_cast<int>(Num(*e, "tid"))] =
        static_cast<int>(Arg(*e, "sort_index"));
  }
  std::vector<Thread> threads;
  for (const auto& [tid, name] : names) {
    EXPECT_TRUE(sort_index.contains(tid)) << name << " has no sort index";
    threads.push_back({tid, name, sort_index[tid]});
  }
  std::sort(threads.begin(), threads.end(),
            [](const Thread& a, const Thread& b) {
              return a.sort_index < b.sort_index;
            });
  return threads;
}

std::vector<std::string> ThreadNames(const Json& doc) {
  std::vector<std::string> names;
  for (const Thread& t : Threads(doc)) names.push_back(t.name);
  return names;
}

int TidOf(const Json& doc, const std::string& thread_name) {
  for (const Thread& t : Threads(doc)) {
    if (t.name == thread_name) return t.tid;
  }
  ADD_FAILURE() << "no thread named '" << thread_name << "'";
  return -1;
}

// Nanoseconds as Perfetto reads a ts or dur (it truncates us * 1000).
int64_t PerfettoNs(double us) { return static_cast<int64_t>(us * 1000.0); }

// Viewers cannot draw slices that partly overlap on one thread.
void ExpectNoOverlapOnAnyThread(const Json& doc) {
  std::map<int, std::vector<std::pair<int64_t, int64_t>>> by_tid;
  for (const Json* e : Events(doc, "X")) {
    const int64_t start = PerfettoNs(Num(*e, "ts"));
    by_tid[static_cast<int>(Num(*e, "tid"))].push_back(
        {start, start + PerfettoNs(Num(*e, "dur"))});
  }
  for (auto& [tid, spans] : by_tid) {
    std::sort(spans.begin(), spans.end());
    for (size_t i = 1; i < spans.size(); ++i) {
      EXPECT_LE(spans[i - 1].second, spans[i].first)
          << "slices overlap on tid " << tid << " at " << spans[i].first
          << " ns";
    }
  }
}

Slice MakeSlice(int core, int slot, uint64_t start, uint64_t end,
                std::string name,
                std::vector<std::pair<std::string, double>> args = {}) {
  Slice s;
  s.core = core;
  s.slot = slot;
  s.start_cycle = start;
  s.end_cycle = end;
  s.name = std::move(name);
  s.args = std::move(args);
  return s;
}

// Four cores at 1000 MHz: a cycle is a nanosecond.
Timeline Basic() {
  Timeline t;
  t.chip = "m2-max";
  t.kernel = "vector_add";
  t.clock_mhz = 1000;
  t.cores = 4;
  t.total_cycles = 10000;
  t.slices = {
      MakeSlice(1, -1, 1500, 4000, "threadgroup (0,0,0)",
                {{"threadgroup_x", 0}, {"simd_groups", 8}}),
      MakeSlice(2, -1, 0, 1000, "threadgroup (1,0,0)"),
      MakeSlice(1, -1, 4000, 6000, "threadgroup (2,0,0)"),
  };
  t.counters = {
      {.name = "resident SIMD groups",
       .core = 1,
       .samples = {{0, 4}, {1500, 8}}},
      {.name = "DRAM GB/s", .core = -1, .samples = {{500, 12.5}}},
      {.name = "ALU busy %", .core = 1, .samples = {{0, 37.5}}},
  };
  return t;
}

TEST(ChromeTrace, IsJsonWithTheDocumentedTopLevel) {
  const Json doc = Parse(Trace(Basic()));
  ASSERT_TRUE(doc.is_object());
  EXPECT_TRUE(Member(doc, "traceEvents").is_array());
  EXPECT_EQ(Str(doc, "displayTimeUnit"), "ns");
  const Json& other = Member(doc, "otherData");
  EXPECT_EQ(Str(other, "chip"), "m2-max");
  EXPECT_EQ(Str(other, "kernel"), "vector_add");
  EXPECT_EQ(Num(other, "clock_mhz"), 1000);
  EXPECT_EQ(Num(other, "cores"), 4);
  EXPECT_EQ(Num(other, "total_cycles"), 10000);
}

TEST(ChromeTrace, OneProcessNamedAfterChipAndKernel) {
  const Json doc = Parse(Trace(Basic()));
  const std::vector<const Json*> names = Events(doc, "M", "process_name");
  ASSERT_EQ(names.size(), 1u);
  EXPECT_EQ(Str(Member(*names[0], "args"), "name"), "m2-max: vector_add");
  // Everything in that one process (not pid 0: Perfetto's idle process).
  const double pid = Num(*names[0], "pid");
  EXPECT_NE(pid, 0);
  for (const Json& e : Member(doc, "traceEvents")) {
    EXPECT_EQ(Num(e, "pid"), pid) << Str(e, "name");
  }
}

TEST(ChromeTrace, OneThreadPerCoreInCoreOrder) {
  const Json doc = Parse(Trace(Basic()));
  // Cores 0 and 3 ran nothing and still have their thread.
  EXPECT_EQ(ThreadNames(doc),
            (std::vector<std::string>{"core 0", "core 1", "core 2", "core 3"}));
  std::vector<int> tids;
  for (const Thread& t : Threads(doc)) tids.push_back(t.tid);
  // Viewers that ignore thread_sort_index order by tid: the same order.
  EXPECT_TRUE(std::is_sorted(tids.begin(), tids.end()));
  EXPECT_EQ(std::adjacent_find(tids.begin(), tids.end()), tids.end());
}

TEST(ChromeTrace, SlicesAreCompleteEventsInMicroseconds) {
  const Json doc = Parse(Trace(Basic()));
  EXPECT_EQ(Events(doc, "X").size(), 3u);
  const std::vector<const Json*> slices =
      Events(doc, "X", "threadgroup (0,0,0)");
  ASSERT_EQ(slices.size(), 1u);
  const Json& s = *slices[0];
  // 1500 cycles at 1000 MHz are 1.5 us; 2500 cycles long are 2.5 us.
  EXPECT_EQ(Num(s, "ts"), 1.5);
  EXPECT_EQ(Num(s, "dur"), 2.5);
  EXPECT_EQ(Num(s, "tid"), TidOf(doc, "core 1"));
  EXPECT_EQ(Str(s, "cat"), "threadgroup");
  EXPECT_EQ(Arg(s, "threadgroup_x"), 0);
  EXPECT_EQ(Arg(s, "simd_groups"), 8);
  EXPECT_EQ(Arg(s, "start_cycle"), 1500);
  EXPECT_EQ(Arg(s, "end_cycle"), 4000);

  const Json& other = *Events(doc, "X", "threadgroup (1,0,0)").at(0);
  EXPECT_EQ(Num(other, "ts"), 0);
  EXPECT_EQ(Num(other, "dur"), 1);
  EXPECT_EQ(Num(other, "tid"), TidOf(doc, "core 2"));
  ExpectNoOverlapOnAnyThread(doc);
}

TEST(ChromeTrace, MicrosecondsFollowTheClock) {
  Timeline t = Basic();
  t.clock_mhz = 1250;  // 0.8 ns per cycle
  t.slices = {MakeSlice(0, -1, 2500, 5000, "tg")};
  const Json doc = Parse(Trace(t));
  const Json& s = *Events(doc, "X", "tg").at(0);
  EXPECT_DOUBLE_EQ(Num(s, "ts"), 2.0);
  EXPECT_DOUBLE_EQ(Num(s, "dur"), 2.0);
}

TEST(ChromeTrace, SimdSlotThreadsSortRightAfterTheirCore) {
  Timeline t = Basic();
  t.cores = 2;
  t.slices = {
      MakeSlice(1, 0, 0, 100, "simdgroup 0 of tg (1,0,0)"),
      MakeSlice(0, 1, 0, 100, "simdgroup 1 of tg (0,0,0)"),
      MakeSlice(0, -1, 0, 100, "threadgroup (0,0,0)"),
      MakeSlice(0, 0, 0, 100, "simdgroup 0 of tg (0,0,0)"),
  };
  const Json doc = Parse(Trace(t));
  EXPECT_EQ(ThreadNames(doc),
            (std::vector<std::string>{"core 0", "core 0 / simd slot 0",
                                      "core 0 / simd slot 1", "core 1",
                                      "core 1 / simd slot 0"}));
  const Json& s = *Events(doc, "X", "simdgroup 1 of tg (0,0,0)").at(0);
  EXPECT_EQ(Num(s, "tid"), TidOf(doc, "core 0 / simd slot 1"));
  EXPECT_EQ(Str(s, "cat"), "simdgroup");
  EXPECT_EQ(Num(*Events(doc, "X", "simdgroup 0 of tg (1,0,0)").at(0), "tid"),
            TidOf(doc, "core 1 / simd slot 0"));
}

TEST(ChromeTrace, OverlappingSlicesOnATrackGoToExtraLanes) {
  Timeline t = Basic();
  t.cores = 1;
  // b overlaps a; c starts when a ends, so it can take a's lane again.
  t.slices = {MakeSlice(0, -1, 0, 100, "a"), MakeSlice(0, -1, 50, 150, "b"),
              MakeSlice(0, -1, 100, 200, "c"), MakeSlice(0, -1, 120, 130, "d")};
  const Json doc = Parse(Trace(t));
  EXPECT_EQ(ThreadNames(doc),
            (std::vector<std::string>{"core 0", "core 0 (2)", "core 0 (3)"}));
  const auto tid = [&](const char* name) {
    return Num(*Events(doc, "X", name).at(0), "tid");
  };
  EXPECT_EQ(tid("a"), TidOf(doc, "core 0"));
  EXPECT_EQ(tid("b"), TidOf(doc, "core 0 (2)"));
  EXPECT_EQ(tid("c"), TidOf(doc, "core 0"));
  EXPECT_EQ(tid("d"), TidOf(doc, "core 0 (3)"));
  ExpectNoOverlapOnAnyThread(doc);
}

// Perfetto stores nanoseconds and truncates us * 1000; slices that touch in
// cycles must touch there too, or the later one is dropped as badly nested.
TEST(ChromeTrace, SlicesThatTouchInCyclesTouchInPerfetto) {
  Timeline t = Basic();
  t.clock_mhz = 1398;  // M2: 0.715... ns per cycle
  t.cores = 1;
  t.slices.clear();
  uint64_t cycle = 1001;
  uint32_t random = 12345;
  for (int i = 0; i < 5000; ++i) {
    random = random * 1103515245u + 12345u;
    const uint64_t length = 1 + (random >> 16) % 97;
    t.slices.push_back(
        MakeSlice(0, 0, cycle, cycle + length, "s" + std::to_string(i)));
    cycle += length;
  }
  const Json doc = Parse(Trace(t));
  const std::vector<const Json*> slices = Events(doc, "X");
  ASSERT_EQ(slices.size(), t.slices.size());
  std::map<uint64_t, std::pair<int64_t, int64_t>> by_start;  // ns start, end
  for (const Json* e : slices) {
    const int64_t start = PerfettoNs(Num(*e, "ts"));
    by_start[static_cast<uint64_t>(Arg(*e, "start_cycle"))] = {
        start, start + PerfettoNs(Num(*e, "dur"))};
  }
  int64_t previous_end = -1;
  for (const auto& [start_cycle, span] : by_start) {
    // Within half a nanosecond of the exact time.
    EXPECT_NEAR(static_cast<double>(span.first),
                static_cast<double>(start_cycle) * 1000.0 / 1398.0, 0.5);
    if (previous_end >= 0) {
      EXPECT_EQ(span.first, previous_end);
    }
    previous_end = span.second;
  }
  // All on one thread: back to back, never overlapping.
  EXPECT_EQ(ThreadNames(doc),
            (std::vector<std::string>{"core 0", "core 0 / simd slot 0"}));
}

TEST(ChromeTrace, CountersAreCounterEvents) {
  const Json doc = Parse(Trace(Basic()));
  const std::vector<const Json*> resident =
      Events(doc, "C", "core 1: resident SIMD groups");
  ASSERT_EQ(resident.size(), 2u);
  EXPECT_EQ(Num(*resident[0], "ts"), 0);
  EXPECT_EQ(Arg(*resident[0], "value"), 4);
  EXPECT_EQ(Num(*resident[1], "ts"), 1.5);
  EXPECT_EQ(Arg(*resident[1], "value"), 8);

  const std::vector<const Json*> dram = Events(doc, "C", "DRAM GB/s");
  ASSERT_EQ(dram.size(), 1u);
  EXPECT_EQ(Num(*dram[0], "ts"), 0.5);
  EXPECT_EQ(Arg(*dram[0], "value"), 12.5);

  const std::vector<const Json*> alu = Events(doc, "C", "core 1: ALU busy %");
  ASSERT_EQ(alu.size(), 1u);
  EXPECT_EQ(Arg(*alu[0], "value"), 37.5);
  EXPECT_EQ(Events(doc, "C").size(), 4u);
}

TEST(ChromeTrace, EscapesQuotesBackslashesAndControlCharacters) {
  Timeline t = Basic();
  t.chip = "m1 \"pro\"";
  t.kernel = "say \"hi\" C:\\dir\\ \n\t\x01 end";
  t.slices = {MakeSlice(0, -1, 0, 10, "tg \"q\" \\", {{"a\"b\\c", 1}})};
  t.counters = {{.name = "odd \"counter\"", .core = -1, .samples = {{0, 1}}}};
  const std::string text = Trace(t);
  EXPECT_NE(text.find(R"(say \"hi\" C:\\dir\\ \n\t\u0001 end)"),
            std::string::npos)
      << text;
  const Json doc = Parse(text);
  EXPECT_EQ(Str(Member(doc, "otherData"), "kernel"), t.kernel);
  EXPECT_EQ(Str(Member(doc, "otherData"), "chip"), t.chip);
  EXPECT_EQ(
      Str(Member(*Events(doc, "M", "process_name").at(0), "args"), "name"),
      t.chip + ": " + t.kernel);
  const std::vector<const Json*> slices = Events(doc, "X", "tg \"q\" \\");
  ASSERT_EQ(slices.size(), 1u);
  EXPECT_EQ(Arg(*slices[0], "a\"b\\c"), 1);
  EXPECT_EQ(Events(doc, "C", "odd \"counter\"").size(), 1u);
}

TEST(ChromeTrace, InvalidUtf8BecomesTheReplacementCharacter) {
  Timeline t = Basic();
  t.kernel = "k\xff\xc3\xa9";  // a stray byte, then a well-formed e-acute
  const Json doc = Parse(Trace(t));
  EXPECT_EQ(Str(Member(doc, "otherData"), "kernel"), "k\xEF\xBF\xBD\xc3\xa9");
}

TEST(ChromeTrace, NonFiniteNumbersAreWrittenAsZero) {
  Timeline t = Basic();
  t.clock_mhz = std::numeric_limits<double>::quiet_NaN();
  t.slices = {MakeSlice(0, -1, 3, 5, "tg",
                        {{"nan", std::numeric_limits<double>::quiet_NaN()},
                         {"inf", std::numeric_limits<double>::infinity()}})};
  t.counters = {{.name = "c",
                 .core = -1,
                 .samples = {{7, -std::numeric_limits<double>::infinity()}}}};
  const std::string text = Trace(t);
  const Json doc = Parse(text);  // JSON has no NaN or Infinity
  EXPECT_EQ(Num(Member(doc, "otherData"), "clock_mhz"), 0);
  const Json& s = *Events(doc, "X", "tg").at(0);
  EXPECT_EQ(Arg(s, "nan"), 0);
  EXPECT_EQ(Arg(s, "inf"), 0);
  // Without a clock, one cycle per microsecond.
  EXPECT_EQ(Num(s, "ts"), 3);
  EXPECT_EQ(Num(s, "dur"), 2);
  const Json& c = *Events(doc, "C", "c").at(0);
  EXPECT_EQ(Num(c, "ts"), 7);
  EXPECT_EQ(Arg(c, "value"), 0);
}

TEST(ChromeTrace, ArgsNamedLikeTheCycleArgsAreNotDuplicated) {
  Timeline t = Basic();
  t.slices = {MakeSlice(0, -1, 10, 20, "tg", {{"start_cycle", 99}})};
  const Json doc = Parse(Trace(t));  // the reader rejects duplicate keys
  EXPECT_EQ(Arg(*Events(doc, "X", "tg").at(0), "start_cycle"), 10);
}

TEST(ChromeTrace, EmptyTimelineIsStillATrace) {
  const Json doc = Parse(Trace(Timeline{}));
  EXPECT_EQ(Events(doc, "M", "process_name").size(), 1u);
  EXPECT_TRUE(ThreadNames(doc).empty());
  EXPECT_EQ(Str(doc, "displayTimeUnit"), "ns");
}

TEST(ChromeTraceFile, WritesWhatTheStreamGets) {
  const std::string path = TempPath("trace.json");
  const Status status = WriteChromeTraceFile(Basic(), path);
  ASSERT_TRUE(status.ok()) << status.error().message;
  EXPECT_EQ(ReadFile(path), Trace(Basic()));
  std::filesystem::remove(path);
}

TEST(ChromeTraceFile, AnErrorNamesThePath) {
  const std::string path = TempPath("no_such_dir") + "/trace.json";
  const Status status = WriteChromeTraceFile(Basic(), path);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.error().message.find(path), std::string::npos)
      << status.error().message;
}

TEST(ChromeTraceFile, PythonsJsonModuleReadsIt) {
  if (!HavePython()) GTEST_SKIP() << "no /usr/bin/python3";
  Timeline t = Basic();
  t.kernel = "k \"q\" \\ \x01 \xff";
  t.slices.push_back(MakeSlice(0, 3, 0, 7, "simd"));
  const std::string path = TempPath("python.json");
  ASSERT_TRUE(WriteChromeTraceFile(t, path).ok());
  // Strict: UTF-8 only, no NaN or Infinity.
  const char* script = R"(
import json, sys
def bad(c): raise ValueError('non-standard constant ' + c)
with open(sys.argv[1], encoding='utf-8') as f:
    doc = json.load(f, parse_constant=bad)
events = doc['traceEvents']
assert doc['displayTimeUnit'] == 'ns'
assert doc['otherData']['kernel'] == 'k "q" \\ \x01 \ufffd', doc['otherData']
assert sum(e['ph'] == 'X' for e in events) == 4
assert sum(e['ph'] == 'C' for e in events) == 4
names = {e['args']['name'] for e in events if e['name'] == 'thread_name'}
assert 'core 0 / simd slot 3' in names, names
)";
  EXPECT_EQ(RunPython(script, path), 0);
  std::filesystem::remove(path);
}

// A name ending in .gz gets gzip (which Perfetto opens), read back here by
// Python's gzip module: the same bytes as the plain file.
TEST(ChromeTraceFile, GzipWhenTheNameEndsInGz) {
  if (!HavePython()) GTEST_SKIP() << "no /usr/bin/python3";
  Timeline t = Basic();
  for (int i = 0; i < 1000; ++i) {
    t.slices.push_back(MakeSlice(i % 4, 0, 10 * i, 10 * i + 7, "threadgroup"));
  }
  const std::string plain = TempPath("gz.json");
  const std::string gz = plain + ".gz";
  ASSERT_TRUE(WriteChromeTraceFile(t, plain).ok());
  const Status status = WriteChromeTraceFile(t, gz);
  ASSERT_TRUE(status.ok()) << status.error().message;
  const std::string compressed = ReadFile(gz);
  ASSERT_GE(compressed.size(), 2u);
  EXPECT_EQ(static_cast<unsigned char>(compressed[0]), 0x1f);
  EXPECT_EQ(static_cast<unsigned char>(compressed[1]), 0x8b);
  EXPECT_LT(compressed.size(), ReadFile(plain).size() / 4);
  const char* script = R"(
import gzip, sys
with gzip.open(sys.argv[1]) as f:
    unpacked = f.read()
with open(sys.argv[1][:-3], 'rb') as f:
    assert unpacked == f.read(), 'gzip differs from the plain trace'
)";
  EXPECT_EQ(RunPython(script, gz), 0);
  std::filesystem::remove(plain);
  std::filesystem::remove(gz);
}

// A stream that keeps nothing and counts lines (one event per line).
class LineCounter : public std::streambuf {
 public:
  size_t lines = 0;
  size_t bytes = 0;

 protected:
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    lines += static_cast<size_t>(std::count(s, s + n, '\n'));
    bytes += static_cast<size_t>(n);
    return n;
  }
  int overflow(int c) override {
    if (c == '\n') ++lines;
    ++bytes;
    return c;
  }
};

TEST(ChromeTrace, WritesAMillionSlicesQuickly) {
  Timeline t = Basic();
  t.cores = 40;
  constexpr int kSlots = 25;
  constexpr int kSlices = 1'000'000;
  t.slices.clear();
  t.slices.reserve(kSlices);
  for (int i = 0; i < kSlices; ++i) {
    const int track = i % (t.cores * kSlots);
    const uint64_t start = static_cast<uint64_t>(i / (t.cores * kSlots)) * 100;
    t.slices.push_back(MakeSlice(track / kSlots, track % kSlots, start,
                                 start + 90, "simdgroup 3 of tg (12,0,0)",
                                 {{"threadgroup", 12}, {"simdgroup", 3}}));
  }
  LineCounter counter;
  std::ostream out(&counter);
  const auto begin = std::chrono::steady_clock::now();
  WriteChromeTrace(t, out);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin)
          .count();
  // Events: process name, 2 per thread (40 cores + 1000 slots), slices,
  // counter samples; then 4 closing lines.
  EXPECT_EQ(counter.lines, 1 + 2 * (40 + 40 * kSlots) + kSlices + 4 + 4);
  // About half a second in a release build; generous for debug builds.
  EXPECT_LT(seconds, 15.0) << counter.bytes << " bytes";
}

}  // namespace
}  // namespace mtlemu::traces
