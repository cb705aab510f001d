// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <rapidjson/document.h>

#include <boost/asio/awaitable.hpp>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ctrl/cache/object_store.h"
#include "ctrl/reconciler.h"
#include "ctrl/write_tracker.h"
#include "kube/api/rest_client.h"

namespace ctrl {

// The one door of a reconciler (controller-runtime's client.Client), bound to one reconcile:
// reads come from the caches the controller is fed from; writes go to the API server, each
// logged at -v=1 under the reconcile's anchors with the reason the caller gives
// (kube::RestClient::logging_writes), each ending at the reconcile's deadline, and each recorded
// for read-your-own-writes under the reconcile's key (WriteTracker::record_write): the key is
// not reconciled again before every cache that holds the object written has observed the write,
// including a write that ends in the object's deletion (the last finalizer of a deleting object
// removed: held until the object leaves the cache). A DELETE forgets earlier writes of the
// object. No reconciler calls the tracker itself.
//
// Objects are JSON documents today; typed objects slot in as overloads of the same verbs.
// Results are values: `if (!r) ... r.error().is(kube::Errc::conflict)`; a reconciler hands an
// unhandled failure to ReconcileResult::failed, which makes a 409 a quiet requeue.
class Client {
 public:
  using Response = kube::Result<kube::ApiResponse>;

  // `rest` carries the reconcile's deadline, if any; `key` is the reconcile's.
  Client(kube::RestClient rest, WriteTracker& tracker, ObjectKey key, std::string log_prefix);

  const ObjectKey& key() const { return key_; }

  // ---- reads -----------------------------------------------------------------------------
  // From a cache: null when it does not hold the object (deleted, or not in its selector).
  ObjectPtr get(const ObjectStore& cache, const ObjectKey& key) const;
  // Every object of a cache in namespace `ns` (empty: every namespace).
  std::vector<ObjectPtr> list(const ObjectStore& cache, std::string_view ns = {}) const;
  // From the API server, for what no cache can tell (an object outside every cache, fields the
  // cache drops). Nothing to record.
  boost::asio::awaitable<Response> get_live(const kube::ResourcePath& object);

  // ---- writes, each saying why ------------------------------------------------------------
  // POST to the collection.
  boost::asio::awaitable<Response> create(const kube::ResourcePath& collection, kube::JsonBody body,
                                          std::string why);
  // Creates by server-side apply, never touching an object that exists (409 then):
  // kube::RestClient::apply_create.
  boost::asio::awaitable<Response> apply_create(const kube::ResourcePath& object,
                                                const rapidjson::Value& body,
                                                std::string_view field_manager, std::string why);
  // Server-side apply, forced.
  boost::asio::awaitable<Response> apply(const kube::ResourcePath& object, kube::JsonBody body,
                                         std::string_view field_manager, std::string why);
  boost::asio::awaitable<Response> patch(const kube::ResourcePath& object, kube::PatchType type,
                                         kube::JsonBody body, std::string why);
  // A merge patch of the status subresource: `body` is {"status": {...}}.
  boost::asio::awaitable<Response> patch_status(const kube::ResourcePath& object,
                                                kube::JsonBody body, std::string why);
  // PUT of the status subresource: the whole object, its resourceVersion a precondition.
  boost::asio::awaitable<Response> update_status(const kube::ResourcePath& object,
                                                 kube::JsonBody body, std::string why);
  // DELETE; 200 (deleted, or finalizers pending) and 202 are both success. An answer that is the
  // object still there (finalizers pending) is recorded like any write; a Status, an object the
  // server deleted, or a 404 forgets our earlier writes to it.
  boost::asio::awaitable<Response> remove(const kube::ResourcePath& object,
                                          kube::DeleteOptions options, std::string why);

  // The finalizer's writes (ctrl/object/finalizers.h), on `cached`, the object at `object` as the
  // cache shows it. add_finalizer is guarded by its resourceVersion, remove_finalizer by the
  // entry's place in the list; a failed guard (the API server answers 422 to a failed "test" op)
  // comes back as Errc::conflict, like a 409: someone wrote first, the caller retries from the
  // cache. When there is nothing to do, nothing is sent: an ApiResponse with status 0 and no body.
  boost::asio::awaitable<Response> add_finalizer(const kube::ResourcePath& object,
                                                 const rapidjson::Value& cached,
                                                 std::string_view finalizer);
  boost::asio::awaitable<Response> remove_finalizer(const kube::ResourcePath& object,
                                                    const rapidjson::Value& cached,
                                                    std::string_view finalizer, std::string why);

 private:
  kube::RestClient writer(std::string why) const;
  // Records a successful write's answer; the result passes through.
  Response recorded(const kube::ResourcePath& object, Response result);
  static Response guard_failed_as_conflict(Response result);

  kube::RestClient rest_;
  WriteTracker& tracker_;
  ObjectKey key_;
  std::string owner_key_;
  std::string log_prefix_;
};

}  // namespace ctrl
