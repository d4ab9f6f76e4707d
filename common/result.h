// Errors as values, for every library of the project: a Result<T> holds either
// a T or an Error; Status (= Result<void>) holds nothing or an Error. C++20 has
// no std::expected, so this is the minimal stand-in.
//
//   Result<int> r = ParseThing(text);
//   if (!r.ok()) return r.error();  // an Error converts to any Result
//   Use(r.value());
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace mtlemu {

struct Error {
  std::string message;
};

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::in_place_index<0>, std::move(value)) {}
  Result(Error error) : v_(std::in_place_index<1>, std::move(error)) {}

  bool ok() const { return v_.index() == 0; }

  // Only call when ok().
  const T& value() const& {
    assert(ok());
    return std::get<0>(v_);
  }
  T& value() & {
    assert(ok());
    return std::get<0>(v_);
  }
  T&& value() && {
    assert(ok());
    return std::get<0>(std::move(v_));
  }

  // Only call when !ok().
  const Error& error() const {
    assert(!ok());
    return std::get<1>(v_);
  }

 private:
  std::variant<T, Error> v_;
};

template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : error_(std::move(error)), ok_(false) {}

  bool ok() const { return ok_; }

  // Only call when !ok().
  const Error& error() const {
    assert(!ok_);
    return error_;
  }

 private:
  Error error_;
  bool ok_ = true;
};

using Status = Result<void>;

}  // namespace mtlemu
