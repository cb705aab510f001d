// SPDX-License-Identifier: Apache-2.0
#pragma once

// Public API (docs/library.md): what a controller reads, the informers' caches, and the informer
// as a source of changes for the builder. The runtime's informers implement both; a reconciler
// reads a Cache, through its Client or directly, and never blocks on it.

#include <rapidjson/document.h>

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "asop/object.h"

namespace asop {

// One informer's cache, read-only: every object it lists and watches, by key ("namespace/name",
// or "name" for a cluster-scoped object). Each read hands out the object as of now; the cache is
// kept current on the event loop, the thread reconcilers run on, so it never changes under a
// reader between two co_awaits.
class Cache {
 public:
  virtual ~Cache() = default;

  // Null when the cache does not hold it (deleted, or not in the informer's selector).
  virtual ObjectPtr get(std::string_view key) const = 0;
  virtual bool contains(std::string_view key) const = 0;
  virtual std::vector<std::string> keys() const = 0;
  // Each object in turn, parsed one at a time: for readers of every object that need not hold
  // them all at once.
  virtual void for_each(const std::function<void(const rapidjson::Document&)>& visit) const = 0;
  virtual std::size_t size() const = 0;
  // True once the first full list is in.
  virtual bool has_synced() const = 0;

 protected:
  Cache() = default;
  Cache(const Cache&) = default;
  Cache& operator=(const Cache&) = default;
};

// An informer: lists and watches one kind (with a selector), keeps its Cache, and tells handlers
// about every change. Made by App::informer(); the builder wires its changes to a controller's
// queue.
class Informer {
 public:
  using Handler = std::function<void(const StoreChange&)>;

  virtual ~Informer() = default;

  virtual const Cache& store() const = 0;
  // Called on the event loop for each change after the cache applied it; must not block.
  virtual void add_handler(Handler handler) = 0;
  // "apps/v1 deployments", for logs.
  virtual const std::string& name() const = 0;

 protected:
  Informer() = default;
  Informer(const Informer&) = delete;
  Informer& operator=(const Informer&) = delete;
};

}  // namespace asop
