// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <utility>
#include <variant>

#include "kube/core/api_error.h"

namespace kube {

// Aborts with a log line: a Result was read the wrong way (a bug, like a failed CHECK). Kept out of
// line so this header does not pull glog's CHECK macro into files that use Catch2's.
[[noreturn]] void result_misuse(const char* what, const ApiError* error);

// A value or the ApiError that prevented it: a small stand-in for std::expected<T, ApiError>,
// which GCC 12 lacks. Failures on network paths are values, never exceptions.
template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::in_place_index<0>, std::move(value)) {}
  Result(ApiError error) : v_(std::in_place_index<1>, std::move(error)) {}

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & {
    if (!ok()) result_misuse("Result::value() on an error", &std::get<1>(v_));
    return std::get<0>(v_);
  }
  const T& value() const& {
    if (!ok()) result_misuse("Result::value() on an error", &std::get<1>(v_));
    return std::get<0>(v_);
  }
  T&& value() && {
    if (!ok()) result_misuse("Result::value() on an error", &std::get<1>(v_));
    return std::get<0>(std::move(v_));
  }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const ApiError& error() const& {
    if (ok()) result_misuse("Result::error() on a value", nullptr);
    return std::get<1>(v_);
  }
  ApiError&& error() && {
    if (ok()) result_misuse("Result::error() on a value", nullptr);
    return std::get<1>(std::move(v_));
  }

 private:
  std::variant<T, ApiError> v_;
};

// For operations that yield nothing but success or an error.
struct Ok {};

}  // namespace kube
