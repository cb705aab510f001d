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
                             NewestResourceVersion newest) {
  caches_[&store] = Cache{std::move(name), std::move(newest)};
}

void WriteTracker::add_informer(Informer& informer) {
  add_cache(informer.store(), informer.name(),
            [&informer] { return informer.newest_resource_version(); });
  informer.add_handler(forget_deleted(informer.store()));
}

void WriteTracker::record(const ObjectStore& cache, const std::string& owner_key,
                          const rapidjson::Value& written) {
  if (!caches_.count(&cache)) return;
  const auto rv = resource_version_number(meta_resource_version(written));
  if (!rv) return;  // not comparable: fail open
  const std::string object_key = ctrl::object_key(written);
  const std::string uid(meta_uid(written));
  {
    auto& by_key = owners_[&cache];
    auto owner = by_key.find(object_key);
    if (owner != by_key.end() && owner->second != owner_key) {
      drop(&cache, object_key);  // another owner's reconcile wrote it last: one record per object
    }
  }
  auto& records = records_[owner_key];
  for (auto& r : records) {
    if (r.cache != &cache || r.object_key != object_key) continue;
    // A newer write of the same object, or the first of its successor (another uid).
    if (r.uid != uid || *rv > r.resource_version) {
      r.uid = uid;
      r.resource_version = *rv;
      r.recorded_at = clock_.now();
    }
    return;
  }
  records.push_back(Record{&cache, object_key, uid, *rv, clock_.now()});
  owners_[&cache][object_key] = owner_key;
}

void WriteTracker::forget(const ObjectStore& cache, const std::string& object_key) {
  drop(&cache, object_key);
}

void WriteTracker::forget_owner(const std::string& owner_key) {
  auto it = records_.find(owner_key);
  if (it == records_.end()) return;
  for (const auto& r : it->second) {
    auto by_key = owners_.find(r.cache);
    if (by_key == owners_.end()) continue;
    by_key->second.erase(r.object_key);
    if (by_key->second.empty()) owners_.erase(by_key);
  }
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

void WriteTracker::drop(const ObjectStore* cache, std::string_view object_key,
                        std::optional<std::string_view> uid) {
  auto by_key = owners_.find(cache);
  if (by_key == owners_.end()) return;
  auto owner = by_key->second.find(std::string(object_key));
  if (owner == by_key->second.end()) return;
  auto it = records_.find(owner->second);
  if (it != records_.end()) {
    auto& records = it->second;
    auto r = std::find_if(records.begin(), records.end(), [&](const Record& r) {
      return r.cache == cache && r.object_key == object_key;
    });
    if (r != records.end() && uid && r->uid != *uid) return;  // a successor's record stays
    if (r != records.end()) records.erase(r);
    if (records.empty()) records_.erase(it);
  }
  by_key->second.erase(owner);
  if (by_key->second.empty()) owners_.erase(by_key);
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
    const std::string observed = cache->second.newest ? cache->second.newest() : std::string();
    const auto newest = resource_version_number(observed);
    bool stale = newest && *newest < r.resource_version;
    if (stale) {
      // The cache holds another object of that name: the one written was deleted and recreated
      // (or the write was never the cache's to see). Its record says nothing about this one.
      auto cached = r.cache->get(r.object_key);
      if (cached && meta_uid(*cached) != r.uid) stale = false;
    }
    // Held long enough: the cache may never see this write (fail open).
    if (stale && clock_.now() - r.recorded_at > max_hold_) stale = false;
    if (stale) {
      if (!found) found = Behind{cache->second.name, r.object_key, r.resource_version, observed};
      return false;
    }
    // Caught up (or not comparable: fail open); nothing more to wait for from this write.
    auto by_key = owners_.find(r.cache);
    if (by_key != owners_.end()) {
      by_key->second.erase(r.object_key);
      if (by_key->second.empty()) owners_.erase(by_key);
    }
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
