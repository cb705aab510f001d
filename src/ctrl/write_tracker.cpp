// SPDX-License-Identifier: Apache-2.0
#include "ctrl/write_tracker.h"

#include <algorithm>

#include "ctrl/object/object_meta.h"

namespace ctrl {

const Clock& WriteTracker::default_clock() {
  static const RealClock clock;
  return clock;
}

void WriteTracker::add_cache(const ObjectStore& store, std::string name,
                             NewestResourceVersion newest, std::optional<Scope> scope) {
  Cache cache{std::move(name), std::move(newest), std::nullopt, std::nullopt};
  if (scope) {
    cache.selector = LabelSelector::parse(scope->label_selector);
    if (cache.selector) cache.scope = std::move(scope);
  }
  caches_[&store] = std::move(cache);
}

void WriteTracker::add_informer(Informer& informer) {
  if (caches_.count(&informer.store())) return;
  const auto& options = informer.options();
  // A field selector is not evaluated here: such a cache is written to by store only.
  std::optional<Scope> scope;
  if (options.field_selector.empty()) scope = Scope(options.collection, options.label_selector);
  add_cache(
      informer.store(), informer.name(), [&informer] { return informer.newest_resource_version(); },
      std::move(scope));
  informer.add_handler(forget_deleted(informer.store()));
}

bool WriteTracker::holds_path(const Cache& c, const kube::ResourcePath& object) {
  if (!c.scope) return false;
  const auto& collection = c.scope->collection;
  return collection.group == object.group && collection.resource == object.resource &&
         (collection.ns.empty() || collection.ns == object.ns);
}

void WriteTracker::record_write(const kube::ResourcePath& object, const std::string& owner_key,
                                const rapidjson::Value& written) {
  for (const auto& [store, cache] : caches_) {
    if (holds_path(cache, object) && cache.selector->matches(written)) {
      record(*store, owner_key, written);
    }
  }
}

void WriteTracker::forget_write(const kube::ResourcePath& object) {
  const std::string key = object_key(object.ns, object.name);
  for (const auto& [store, cache] : caches_) {
    if (holds_path(cache, object)) forget(*store, key);
  }
}

void WriteTracker::record(const ObjectStore& cache, const std::string& owner_key,
                          const rapidjson::Value& written) {
  if (!caches_.count(&cache)) return;
  const auto rv = resource_version_number(meta_resource_version(written));
  if (!rv) return;  // not comparable: fail open
  const std::string object_key = ctrl::object_key(written);
  const std::string uid(meta_uid(written));
  // The last finalizer of an object being deleted is gone: the server deletes it now, and its
  // answer carries the resourceVersion the cache may already hold.
  const bool deleting = meta_deleted_by_write(written);
  auto& records = records_[owner_key];
  for (auto& r : records) {
    if (r.cache != &cache || r.object_key != object_key) continue;
    // A newer write of the same object, or the first of its successor (another uid).
    if (r.uid != uid || *rv > r.resource_version || (deleting && !r.deleting)) {
      r.uid = uid;
      r.resource_version = *rv;
      r.deleting = deleting;
      r.recorded_at = clock_.now();
    }
    return;
  }
  records.push_back(Record{&cache, object_key, uid, *rv, deleting, clock_.now()});
  owners_[&cache][object_key].push_back(owner_key);
}

void WriteTracker::forget(const ObjectStore& cache, const std::string& object_key) {
  drop(&cache, object_key);
}

void WriteTracker::forget_owner(const std::string& owner_key) {
  auto it = records_.find(owner_key);
  if (it == records_.end()) return;
  for (const auto& r : it->second) unlink(r.cache, r.object_key, owner_key);
  records_.erase(it);
}

void WriteTracker::deleted(const ObjectStore& cache, const rapidjson::Value& object) {
  const auto uid = meta_uid(object);
  // A deletion without a uid is of whatever has that name.
  drop(&cache, object_key(object), uid.empty() ? std::nullopt : std::optional(uid));
}

Informer::Handler WriteTracker::forget_deleted(const ObjectStore& cache) {
  return [this, cache = &cache](const StoreChange& change) {
    if (change.type != StoreChange::Type::deleted) return;
    const auto& last = change.old_object ? change.old_object : change.new_object;
    if (last) deleted(*cache, *last);
  };
}

void WriteTracker::unlink(const ObjectStore* cache, const std::string& object_key,
                          const std::string& owner_key) {
  auto by_key = owners_.find(cache);
  if (by_key == owners_.end()) return;
  auto owners = by_key->second.find(object_key);
  if (owners == by_key->second.end()) return;
  std::erase(owners->second, owner_key);
  if (owners->second.empty()) by_key->second.erase(owners);
  if (by_key->second.empty()) owners_.erase(by_key);
}

void WriteTracker::drop(const ObjectStore* cache, std::string_view object_key,
                        std::optional<std::string_view> uid) {
  auto by_key = owners_.find(cache);
  if (by_key == owners_.end()) return;
  auto owners = by_key->second.find(std::string(object_key));
  if (owners == by_key->second.end()) return;
  // Every key that wrote the object: its record goes, unless it is a successor's (another uid).
  std::erase_if(owners->second, [&](const std::string& owner_key) {
    auto it = records_.find(owner_key);
    if (it == records_.end()) return true;
    auto& records = it->second;
    auto r = std::find_if(records.begin(), records.end(), [&](const Record& r) {
      return r.cache == cache && r.object_key == object_key;
    });
    if (r == records.end()) return true;
    if (uid && r->uid != *uid) return false;  // a successor's record stays
    records.erase(r);
    if (records.empty()) records_.erase(it);
    return true;
  });
  if (owners->second.empty()) by_key->second.erase(owners);
  if (by_key->second.empty()) owners_.erase(by_key);
}

bool WriteTracker::stale(const Record& r, const Cache& cache, std::string& observed) const {
  observed = cache.newest ? cache.newest() : std::string();
  if (r.deleting) {
    // Caught up once the object written (that uid) has left the cache.
    auto cached = r.cache->get(r.object_key);
    return cached && meta_uid(*cached) == r.uid;
  }
  const auto newest = resource_version_number(observed);
  if (!newest || *newest >= r.resource_version) return false;  // caught up, or fail open
  // The cache holds another object of that name: the one written was deleted and recreated (or
  // the write was never the cache's to see). Its record says nothing about this one.
  auto cached = r.cache->get(r.object_key);
  return !(cached && meta_uid(*cached) != r.uid);
}

std::optional<WriteTracker::Behind> WriteTracker::behind(const std::string& owner_key) {
  auto it = records_.find(owner_key);
  if (it == records_.end()) return std::nullopt;
  std::optional<Behind> found;
  auto& records = it->second;
  // Records this check settles go in place (no copy of the vector on every reconcile).
  std::erase_if(records, [&](const Record& r) {
    auto cache = caches_.find(r.cache);
    if (cache == caches_.end()) return false;
    std::string observed;
    // Held long enough: the cache may never see this write (fail open).
    if (stale(r, cache->second, observed) && clock_.now() - r.recorded_at <= max_hold_) {
      if (!found) found = Behind{cache->second.name, r.object_key, r.resource_version, observed};
      return false;
    }
    unlink(r.cache, r.object_key, owner_key);  // caught up: nothing more to wait for
    return true;
  });
  if (records.empty()) records_.erase(it);
  return found;
}

std::size_t WriteTracker::size() const {
  std::size_t n = 0;
  for (const auto& [owner, records] : records_) n += records.size();
  return n;
}

}  // namespace ctrl
