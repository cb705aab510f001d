// SPDX-License-Identifier: Apache-2.0
#include "ctrl/handlers.h"

#include <string_view>
#include <utility>

#include "asop/kind.h"
#include "ctrl/object/object_meta.h"
#include "ctrl/object/status_only_change.h"

namespace ctrl::handlers {

int priority_of(const asop::StoreChange& change) {
  using Type = asop::StoreChange::Type;
  if (change.type == Type::added && change.in_initial_list) return kLowPriority;
  if (change.type == Type::updated && change.old_object && change.new_object &&
      meta_resource_version(*change.old_object) == meta_resource_version(*change.new_object)) {
    return kLowPriority;
  }
  return 0;
}

std::vector<asop::ObjectKey> own_key(const asop::StoreChange& change) {
  const auto& object = change.new_object ? change.new_object : change.old_object;
  if (!object) return {};
  return {asop::ObjectKey(std::string(meta_namespace(*object)), std::string(meta_name(*object)))};
}

Keys controller_owner_keys(std::string group, std::string kind, const asop::Cache* owners) {
  return
      [group = std::move(group), kind = std::move(kind), owners](const asop::StoreChange& change) {
        std::vector<asop::ObjectKey> keys;
        for (const auto* object : {&change.old_object, &change.new_object}) {
          if (!*object) continue;
          auto owner = controller_owner(**object);
          if (!owner || owner->kind != kind || asop::group_of(owner->api_version) != group)
            continue;
          if (owners && !owners->contains(object_key(meta_namespace(**object), owner->name))) {
            continue;
          }
          asop::ObjectKey key(std::string(meta_namespace(**object)), owner->name);
          if (keys.empty() || !(keys.back() == key)) keys.push_back(std::move(key));
        }
        return keys;
      };
}

bool not_status_only_update(const asop::StoreChange& change) {
  return !(change.type == asop::StoreChange::Type::updated && change.old_object &&
           change.new_object && status_only_change(*change.old_object, *change.new_object));
}

asop::Informer::Handler enqueue(WorkQueue& queue, Keys keys, Filter filter) {
  return [&queue, keys = std::move(keys),
          filter = std::move(filter)](const asop::StoreChange& change) {
    if (filter && !filter(change)) return;
    const int priority = priority_of(change);
    for (const auto& key : keys(change)) queue.add(key.key(), priority);
  };
}

}  // namespace ctrl::handlers
