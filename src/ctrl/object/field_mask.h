// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <rapidjson/document.h>

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace ctrl {

// Keeps of a JSON object only the listed paths, for informer transforms that cut cached objects
// down to what their readers use. A path is a list of member names; it keeps everything below its
// last name. Arrays are transparent: a path through a list applies to each of its items. Members
// named by no path are removed.
class FieldMask {
 public:
  using Path = std::vector<std::string_view>;
  explicit FieldMask(const std::vector<Path>& paths);

  void apply(rapidjson::Value& value) const;

 private:
  struct Node {
    std::map<std::string, Node, std::less<>> children;
    bool whole = false;  // a path ends here: keep the whole subtree
  };
  static void apply(const Node& node, rapidjson::Value& value);

  Node root_;
};

}  // namespace ctrl
