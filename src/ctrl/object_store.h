#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ctrl/informer_state.h"
#include "ctrl/text_codec.h"

namespace ctrl {

// What a store operation changed, for event handlers.
struct StoreChange {
  enum class Type { added, updated, deleted };
  Type type;
  ObjectPtr old_object;  // null for added
  ObjectPtr new_object;  // for deleted: the last state known
};

// The informer's cache: objects by "namespace/name". Single-threaded, like everything on the event
// loop. Each object is kept as its compact JSON text deflated against the text of the first object
// the store took (TextCodec): a cache holds every object for as long as it lives, and objects of
// one kind are mostly alike, so one costs about a tenth of its text and a thirtieth of its DOM.
// Each read inflates and parses a fresh DOM for its reader, a few microseconds for the objects of
// this operator.
class ObjectStore {
 public:
  // Applies one informer operation and says what changed. A Replace (a full list) swaps the whole
  // content at once and reports the difference: objects gone since the last list are reported
  // deleted, so a delete missed while disconnected still reaches the handlers. An object whose
  // resourceVersion did not change is not reported.
  std::vector<StoreChange> apply(informer::StoreOp op);

  ObjectPtr get(std::string_view key) const;
  bool contains(std::string_view key) const;
  std::vector<std::string> keys() const;
  // Each object in turn, parsed one at a time: for readers of every object (metrics) that need
  // not hold them all at once.
  void for_each(const std::function<void(const rapidjson::Document&)>& visit) const;
  std::size_t size() const { return objects_.size(); }
  // True once the first full list is in.
  bool has_synced() const { return synced_; }

 private:
  std::string pack(const rapidjson::Value& object);
  ObjectPtr unpack(const std::string& data) const;

  std::unordered_map<std::string, std::string> objects_;  // key -> deflated compact JSON
  std::optional<TextCodec> codec_;                        // from the first object stored
  bool synced_ = false;
};

}  // namespace ctrl
