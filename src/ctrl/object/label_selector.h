// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <rapidjson/document.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ctrl {

// A label selector in the text form a list or watch sends (apimachinery's labels.Parse): terms
// joined by commas, each `key`, `!key`, `key=value`, `key==value`, `key!=value`,
// `key in (a,b)` or `key notin (a,b)`. Used to tell which caches will see an object a controller
// wrote (the write tracker), so it never needs more than the API server's own grammar.
class LabelSelector {
 public:
  // nullopt for text it cannot read; callers fail open. An empty text selects everything.
  static std::optional<LabelSelector> parse(std::string_view text);

  // Whether the object's metadata.labels satisfy every term.
  bool matches(const rapidjson::Value& object) const;

 private:
  struct Term {
    enum class Op { exists, not_exists, equals, not_equals, in, not_in };
    std::string key;
    Op op = Op::exists;
    std::vector<std::string> values;
  };
  std::vector<Term> terms_;
};

}  // namespace ctrl
