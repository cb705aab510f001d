#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ctrl/informer_state.h"

namespace ctrl {

// What a store operation changed, for event handlers.
struct StoreChange {
  enum class Type { added, updated, deleted };
  Type type;
  ObjectPtr old_object;  // null for added
  ObjectPtr new_object;  // for deleted: the last state known
};

// The informer's indexed cache: objects by "namespace/name" and by the uid of their controller
// owner (for Owns()-style lookups). Single-threaded, like everything on the event loop.
class ObjectStore {
 public:
  // Applies one informer operation and says what changed. A Replace (a full list) swaps the whole
  // content at once and reports the difference: objects gone since the last list are reported
  // deleted, so a delete missed while disconnected still reaches the handlers. An object whose
  // resourceVersion did not change is not reported.
  std::vector<StoreChange> apply(informer::StoreOp op);

  ObjectPtr get(std::string_view key) const;
  std::vector<ObjectPtr> list() const;
  std::vector<ObjectPtr> list_namespace(std::string_view ns) const;
  std::vector<ObjectPtr> by_controller_uid(std::string_view uid) const;
  std::size_t size() const { return objects_.size(); }
  // True once the first full list is in.
  bool has_synced() const { return synced_; }

 private:
  void insert(const std::string& key, ObjectPtr object);
  void erase(const std::string& key);

  std::unordered_map<std::string, ObjectPtr> objects_;
  std::unordered_map<std::string, std::unordered_set<std::string>> by_owner_uid_;
  bool synced_ = false;
};

}  // namespace ctrl
