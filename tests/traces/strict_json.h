// JSON as the tests read it back: nlohmann::json's parser (strict RFC 8259:
// no NaN, no trailing commas, no comments, UTF-8 only), which shares no code
// with the writers it checks, and no duplicate keys (which the parser would
// otherwise accept, keeping the last).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace mtlemu::traces::testing {

// Objects keep their members in the document's order.
using Json = nlohmann::ordered_json;

// The document in `text`, or nullopt with `error` set.
inline std::optional<Json> ParseStrictJson(std::string_view text,
                                           std::string* error) {
  std::vector<std::set<std::string>> keys;  // of each open object
  std::string duplicate;
  const Json::parser_callback_t check_keys =
      [&](int /*depth*/, Json::parse_event_t event, Json& parsed) {
        if (event == Json::parse_event_t::object_start) {
          keys.emplace_back();
        } else if (event == Json::parse_event_t::object_end) {
          keys.pop_back();
        } else if (event == Json::parse_event_t::key && !keys.empty() &&
                   !keys.back().insert(parsed.get<std::string>()).second &&
                   duplicate.empty()) {
          duplicate = parsed.get<std::string>();
        }
        return true;
      };
  try {
    Json doc = Json::parse(text, check_keys);
    if (duplicate.empty()) return doc;
    *error = "duplicate key '" + duplicate + "'";
  } catch (const Json::parse_error& e) {
    *error = e.what();
  }
  return std::nullopt;
}

}  // namespace mtlemu::traces::testing
