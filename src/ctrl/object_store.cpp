#include "ctrl/object_store.h"

#include <unordered_set>
#include <utility>

#include "ctrl/compact_object.h"
#include "ctrl/object_meta.h"
#include "ctrl/overloaded.h"

namespace ctrl {

std::vector<StoreChange> ObjectStore::apply(informer::StoreOp op) {
  std::vector<StoreChange> changes;
  auto upsert = [&](ObjectPtr object) {
    auto key = object_key(*object);
    auto old = get(key);
    if (old && meta_resource_version(*old) == meta_resource_version(*object)) return;
    objects_.insert_or_assign(key, pack(*object));
    changes.push_back({old ? StoreChange::Type::updated : StoreChange::Type::added, std::move(old),
                       std::move(object)});
  };
  std::visit(Overloaded{
                 [&](informer::Replace& replace) {
                   std::unordered_set<std::string> seen;
                   for (auto& object : replace.items) {
                     seen.insert(object_key(*object));
                     upsert(std::move(object));
                   }
                   std::vector<std::string> gone;
                   for (const auto& [key, text] : objects_) {
                     if (!seen.contains(key)) gone.push_back(key);
                   }
                   for (const auto& key : gone) {
                     auto last = get(key);
                     changes.push_back({StoreChange::Type::deleted, last, last});
                     objects_.erase(key);
                   }
                   synced_ = true;
                 },
                 [&](informer::Upsert& in) { upsert(std::move(in.object)); },
                 [&](informer::Delete& in) {
                   auto key = object_key(*in.object);
                   auto old = get(key);
                   changes.push_back({StoreChange::Type::deleted, old, std::move(in.object)});
                   objects_.erase(key);
                 },
             },
             op);
  return changes;
}

std::string ObjectStore::pack(const rapidjson::Value& object) {
  std::string text = compact_text(object);
  // The first object is the dictionary for every later one (and compresses to a few bytes itself).
  if (!codec_) codec_.emplace(text);
  return codec_->compress(text);
}

ObjectPtr ObjectStore::unpack(const std::string& data) const {
  thread_local std::string text;  // reused: a read allocates only the DOM it returns
  codec_->decompress(data, text);
  return parse_compact_text(text);
}

ObjectPtr ObjectStore::get(std::string_view key) const {
  auto it = objects_.find(std::string(key));
  return it == objects_.end() ? nullptr : unpack(it->second);
}

bool ObjectStore::contains(std::string_view key) const {
  return objects_.contains(std::string(key));
}

std::vector<std::string> ObjectStore::keys() const {
  std::vector<std::string> out;
  out.reserve(objects_.size());
  for (const auto& [key, text] : objects_) out.push_back(key);
  return out;
}

void ObjectStore::for_each(const std::function<void(const rapidjson::Document&)>& visit) const {
  for (const auto& [key, text] : objects_) visit(*unpack(text));
}

}  // namespace ctrl
