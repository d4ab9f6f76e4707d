#include "emu/dispatch/schedule.h"

#include <charconv>

namespace mtlemu::emu {

Result<Schedule> ParseSchedule(std::string_view text) {
  Schedule s;
  if (text == "interleaved") return s;
  if (text == "sequential") {
    s.order = SimdgroupOrder::kSequential;
    return s;
  }
  if (text == "random" || text.starts_with("random:")) {
    s.order = SimdgroupOrder::kRandom;
    if (text.size() > 7) {
      const std::string_view seed = text.substr(7);
      const auto [end, ec] =
          std::from_chars(seed.data(), seed.data() + seed.size(), s.seed);
      if (ec != std::errc() || end != seed.data() + seed.size()) {
        return Error{"the seed in '" + std::string(text) +
                     "' is not a non-negative integer"};
      }
    }
    return s;
  }
  return Error{"unknown schedule '" + std::string(text) +
               "' (interleaved, sequential, random or random:SEED)"};
}

std::string ScheduleText(const Schedule& schedule) {
  switch (schedule.order) {
    case SimdgroupOrder::kInterleaved:
      return "interleaved";
    case SimdgroupOrder::kSequential:
      return "sequential";
    case SimdgroupOrder::kRandom:
      return "random:" + std::to_string(schedule.seed);
  }
  return "?";
}

}  // namespace mtlemu::emu
