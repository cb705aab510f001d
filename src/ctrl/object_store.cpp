#include "ctrl/object_store.h"

#include <utility>

#include "ctrl/object_meta.h"
#include "ctrl/overloaded.h"

namespace ctrl {
namespace {

std::string owner_uid(const ObjectPtr& object) {
  auto owner = controller_owner(*object);
  return owner ? owner->uid : std::string();
}

}  // namespace

void ObjectStore::insert(const std::string& key, ObjectPtr object) {
  erase(key);
  if (auto uid = owner_uid(object); !uid.empty()) by_owner_uid_[uid].insert(key);
  objects_.emplace(key, std::move(object));
}

void ObjectStore::erase(const std::string& key) {
  auto it = objects_.find(key);
  if (it == objects_.end()) return;
  if (auto uid = owner_uid(it->second); !uid.empty()) {
    auto index = by_owner_uid_.find(uid);
    if (index != by_owner_uid_.end()) {
      index->second.erase(key);
      if (index->second.empty()) by_owner_uid_.erase(index);
    }
  }
  objects_.erase(it);
}

std::vector<StoreChange> ObjectStore::apply(informer::StoreOp op) {
  std::vector<StoreChange> changes;
  auto upsert = [&](ObjectPtr object) {
    auto key = object_key(*object);
    auto old = get(key);
    if (old && meta_resource_version(*old) == meta_resource_version(*object)) return;
    changes.push_back({old ? StoreChange::Type::updated : StoreChange::Type::added, old, object});
    insert(key, std::move(object));
  };
  std::visit(Overloaded{
                 [&](informer::Replace& replace) {
                   std::unordered_set<std::string> seen;
                   for (auto& object : replace.items) {
                     seen.insert(object_key(*object));
                     upsert(std::move(object));
                   }
                   std::vector<std::string> gone;
                   for (const auto& [key, object] : objects_) {
                     if (!seen.contains(key)) gone.push_back(key);
                   }
                   for (const auto& key : gone) {
                     changes.push_back({StoreChange::Type::deleted, get(key), get(key)});
                     erase(key);
                   }
                   synced_ = true;
                 },
                 [&](informer::Upsert& in) { upsert(std::move(in.object)); },
                 [&](informer::Delete& in) {
                   auto key = object_key(*in.object);
                   auto old = get(key);
                   changes.push_back({StoreChange::Type::deleted, old, std::move(in.object)});
                   erase(key);
                 },
             },
             op);
  return changes;
}

ObjectPtr ObjectStore::get(std::string_view key) const {
  auto it = objects_.find(std::string(key));
  return it == objects_.end() ? nullptr : it->second;
}

std::vector<ObjectPtr> ObjectStore::list() const {
  std::vector<ObjectPtr> out;
  out.reserve(objects_.size());
  for (const auto& [key, object] : objects_) out.push_back(object);
  return out;
}

std::vector<ObjectPtr> ObjectStore::list_namespace(std::string_view ns) const {
  std::vector<ObjectPtr> out;
  for (const auto& [key, object] : objects_) {
    if (meta_namespace(*object) == ns) out.push_back(object);
  }
  return out;
}

std::vector<ObjectPtr> ObjectStore::by_controller_uid(std::string_view uid) const {
  std::vector<ObjectPtr> out;
  auto index = by_owner_uid_.find(std::string(uid));
  if (index == by_owner_uid_.end()) return out;
  for (const auto& key : index->second) out.push_back(get(key));
  return out;
}

}  // namespace ctrl
