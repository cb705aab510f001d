// SPDX-License-Identifier: Apache-2.0
#include "ctrl/cache/object_store.h"

#include <glog/logging.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <unordered_set>
#include <utility>

#include "ctrl/base/overloaded.h"
#include "ctrl/object/compact_object.h"
#include "ctrl/object/object_meta.h"

namespace ctrl {

std::optional<StoreChange> ObjectStore::upsert(ObjectPtr object, bool initial) {
  auto key = object_key(*object);
  const auto it = objects_.find(std::string_view(key));
  ObjectPtr old = it == objects_.end() ? nullptr : unpack(it->data());
  if (old && meta_resource_version(*old) == meta_resource_version(*object)) return std::nullopt;
  // pack() may re-deflate every entry; that replaces their bytes, not their nodes, so `it`
  // stays valid.
  std::string data = pack(*object);
  if (it != objects_.end()) {
    it->set_data(data);
  } else {
    objects_.emplace(key, data);
  }
  return StoreChange{old ? StoreChange::Type::updated : StoreChange::Type::added, std::move(old),
                     std::move(object), initial};
}

void ObjectStore::replace_from(const ObjectStore& staged,
                               const std::function<void(const StoreChange&)>& visit) {
  const bool initial = !synced_;
  std::unordered_set<std::string, KeyHash, KeyEqual> seen;
  seen.reserve(staged.size());
  for (const Entry& e : staged.objects_) {
    seen.emplace(e.key());
    if (auto change = upsert(staged.unpack(e.data()), initial)) visit(*change);
  }
  std::vector<std::string> gone;
  for (const Entry& e : objects_) {
    if (!seen.contains(e.key())) gone.emplace_back(e.key());
  }
  for (const auto& key : gone) {
    auto last = get(key);
    erase(key);
    visit({StoreChange::Type::deleted, last, last});
  }
  synced_ = true;
}

std::vector<StoreChange> ObjectStore::apply(informer::StoreOp op) {
  std::vector<StoreChange> changes;
  bool initial = false;
  auto upsert = [&](ObjectPtr object) {
    if (auto change = this->upsert(std::move(object), initial)) {
      changes.push_back(std::move(*change));
    }
  };
  std::visit(Overloaded{
                 [&](informer::Replace& replace) {
                   initial = !synced_;
                   std::unordered_set<std::string, KeyHash, KeyEqual> seen;
                   for (auto& object : replace.items) {
                     seen.insert(object_key(*object));
                     upsert(std::move(object));
                   }
                   std::vector<std::string> gone;
                   for (const Entry& e : objects_) {
                     if (!seen.contains(e.key())) gone.emplace_back(e.key());
                   }
                   for (const auto& key : gone) {
                     auto last = get(key);
                     changes.push_back({StoreChange::Type::deleted, last, last});
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

std::string ObjectStore::pack(const rapidjson::Value& object) {
  std::string text = compact_text(object);
  // The first object is the dictionary for every later one (and compresses to a few bytes itself).
  if (!codec_) {
    codec_.emplace(text);
  } else if (text.size() > codec_->dictionary().size() + codec_->dictionary().size() / 4 &&
             codec_->dictionary().size() < TextCodec::kWindow && objects_.size() < kMaxRedeflate) {
    // A first object just created has none of the status its kind carries later: deflated
    // against it, every status stays nearly whole. While the store is small, a text a quarter
    // longer takes its place and the objects already stored are deflated again. The dictionary
    // only grows, up to the window deflate can use, so this happens a few times at most.
    TextCodec codec(text);
    std::vector<std::unique_ptr<char[]>> blobs;
    blobs.reserve(objects_.size());
    std::string inflated;
    for (const Entry& e : objects_) {
      codec_->decompress(e.data(), inflated);
      blobs.push_back(Entry::make(e.key(), codec.compress(inflated)));
    }
    // Nothing below throws: every object moves to the new dictionary, or none does.
    auto blob = blobs.begin();
    for (const Entry& e : objects_) e.replace(std::move(*blob++));
    *codec_ = std::move(codec);
  }
  return codec_->compress(text);
}

ObjectPtr ObjectStore::unpack(std::string_view data) const {
  thread_local std::string text;  // reused: a read allocates only the DOM it returns
  codec_->decompress(data, text);
  return parse_compact_text(text);
}

ObjectPtr ObjectStore::get(std::string_view key) const {
  auto it = objects_.find(key);
  return it == objects_.end() ? nullptr : unpack(it->data());
}

bool ObjectStore::contains(std::string_view key) const {
  return objects_.contains(key);
}

void ObjectStore::erase(std::string_view key) {
  if (auto it = objects_.find(key); it != objects_.end()) objects_.erase(it);
}

std::vector<std::string> ObjectStore::keys() const {
  std::vector<std::string> out;
  out.reserve(objects_.size());
  for (const Entry& e : objects_) out.emplace_back(e.key());
  return out;
}

void ObjectStore::for_each(const std::function<void(const rapidjson::Document&)>& visit) const {
  for (const Entry& e : objects_) visit(*unpack(e.data()));
}

namespace {
constexpr std::size_t kHeader = sizeof(std::uint32_t) + sizeof(std::uint16_t);
}  // namespace

ObjectStore::Entry::Entry(std::string_view key, std::string_view data) : bytes_(make(key, data)) {}

std::unique_ptr<char[]> ObjectStore::Entry::make(std::string_view key, std::string_view data) {
  // Keys are "namespace/name": at most 63 + 1 + 253 bytes.
  CHECK_LE(key.size(), std::numeric_limits<std::uint16_t>::max());
  CHECK_LE(data.size(), std::numeric_limits<std::uint32_t>::max());
  const auto data_size = static_cast<std::uint32_t>(data.size());
  const auto key_size = static_cast<std::uint16_t>(key.size());
  auto bytes = std::make_unique_for_overwrite<char[]>(kHeader + key.size() + data.size());
  std::memcpy(bytes.get(), &data_size, sizeof data_size);
  std::memcpy(bytes.get() + sizeof data_size, &key_size, sizeof key_size);
  std::memcpy(bytes.get() + kHeader, key.data(), key.size());
  std::memcpy(bytes.get() + kHeader + key.size(), data.data(), data.size());
  return bytes;
}

std::string_view ObjectStore::Entry::key() const {
  std::uint16_t key_size = 0;
  std::memcpy(&key_size, bytes_.get() + sizeof(std::uint32_t), sizeof key_size);
  return {bytes_.get() + kHeader, key_size};
}

std::string_view ObjectStore::Entry::data() const {
  std::uint32_t data_size = 0;
  std::memcpy(&data_size, bytes_.get(), sizeof data_size);
  return {bytes_.get() + kHeader + key().size(), data_size};
}

void ObjectStore::Entry::set_data(std::string_view data) const {
  replace(make(key(), data));
}

void ObjectStore::Entry::replace(std::unique_ptr<char[]> bytes) const noexcept {
  bytes_ = std::move(bytes);
}

}  // namespace ctrl
