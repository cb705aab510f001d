// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_set>
#include <vector>

#include "asop/cache.h"
#include "ctrl/cache/informer_state.h"
#include "ctrl/cache/text_codec.h"

namespace ctrl {

using asop::StoreChange;

// The informer's cache: objects by "namespace/name". Single-threaded, like everything on the event
// loop. Each object is kept as its compact JSON text deflated against the text of the first object
// the store took (TextCodec): a cache holds every object for as long as it lives, and objects of
// one kind are mostly alike, so one costs about a tenth of its text and a thirtieth of its DOM.
// Each read inflates and parses a fresh DOM for its reader, a few microseconds for the objects of
// this operator.
class ObjectStore final : public asop::Cache {
 public:
  // Applies one informer operation and says what changed. A Replace (a full list) swaps the whole
  // content at once and reports the difference: objects gone since the last list are reported
  // deleted, so a delete missed while disconnected still reaches the handlers. An object whose
  // resourceVersion did not change is not reported.
  std::vector<StoreChange> apply(informer::StoreOp op);
  // Swaps in `staged` as a complete list, as a Replace of its objects would, but one object at a
  // time: each change goes to `visit` as it is made, so only one object exists as a DOM at a
  // time (a Replace holds them all). For streaming lists, gathered in a staging store.
  void replace_from(const ObjectStore& staged,
                    const std::function<void(const StoreChange&)>& visit);

  ObjectPtr get(std::string_view key) const override;
  bool contains(std::string_view key) const override;
  std::vector<std::string> keys() const override;
  // Each object in turn, parsed one at a time: for readers of every object (metrics) that need
  // not hold them all at once.
  void for_each(const std::function<void(const rapidjson::Document&)>& visit) const override;
  std::size_t size() const override { return objects_.size(); }
  // True once the first full list is in.
  bool has_synced() const override { return synced_; }

 private:
  // One cached object: its key and its deflated text in a single allocation. A map of string to
  // string took an 80-byte node, a key allocation past 15 bytes and the text's own: about 100
  // bytes per object more, for 3 objects per AppService.
  class Entry {
   public:
    Entry(std::string_view key, std::string_view data);
    std::string_view key() const;
    std::string_view data() const;
    // The key stays the same, so the entry keeps its place in the table.
    void set_data(std::string_view data) const;
    // `bytes` must come from make() with this entry's key.
    void replace(std::unique_ptr<char[]> bytes) const noexcept;
    static std::unique_ptr<char[]> make(std::string_view key, std::string_view data);

   private:
    mutable std::unique_ptr<char[]> bytes_;  // u32 data size, u16 key size, key, data
  };
  struct KeyHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view key) const noexcept {
      return std::hash<std::string_view>{}(key);
    }
    std::size_t operator()(const Entry& e) const noexcept { return (*this)(e.key()); }
  };
  struct KeyEqual {
    using is_transparent = void;
    static std::string_view key_of(std::string_view key) { return key; }
    static std::string_view key_of(const Entry& e) { return e.key(); }
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const noexcept {
      return key_of(a) == key_of(b);
    }
  };

  // Stores `object` unless the cache has it at the same resourceVersion; what changed, if anything.
  std::optional<StoreChange> upsert(ObjectPtr object, bool initial);
  std::string pack(const rapidjson::Value& object);
  ObjectPtr unpack(std::string_view data) const;
  void erase(std::string_view key);

  // A noexcept hash is not stored in the node (libstdc++): 16 bytes per object, not 24.
  static_assert(std::is_nothrow_invocable_v<const KeyHash&, const Entry&>);
  // Re-deflating runs on the event loop: only while the store is this small (about 6 ms).
  static constexpr std::size_t kMaxRedeflate = 512;

  std::unordered_set<Entry, KeyHash, KeyEqual> objects_;
  std::optional<TextCodec> codec_;  // from the first object stored, or a longer later one
  bool synced_ = false;
};

}  // namespace ctrl
