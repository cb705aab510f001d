// SPDX-License-Identifier: Apache-2.0
#pragma once

// Public API (docs/library.md): the Client a reconciler reads and writes through, and the
// request vocabulary its verbs take (paths from asop/kind.h, bodies, patch types, answers).

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <boost/asio/awaitable.hpp>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "asop/cache.h"
#include "asop/errors.h"
#include "asop/kind.h"
#include "asop/object.h"

namespace asop {

// The PATCH flavours the API server accepts, told apart by Content-Type.
enum class PatchType {
  apply,            // server-side apply; needs a field manager
  merge,            // RFC 7386 JSON merge patch
  json,             // RFC 6902 JSON patch (supports "test" for optimistic concurrency)
  strategic_merge,  // built-in types only
};

// A request body: JSON text as given, or a RapidJSON value serialized once on construction, so REST
// verbs take either without an overload per verb.
struct JsonBody {
  JsonBody(std::string json) : text(std::move(json)) {}
  JsonBody(const char* json) : text(json) {}
  JsonBody(const rapidjson::Value& value) {
    rapidjson::StringBuffer buffer;
    rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
    value.Accept(writer);
    text.assign(buffer.GetString(), buffer.GetSize());
  }

  std::string text;
};

// A successful (2xx) REST response. `body` is never null (an empty body is a Null document),
// except in the answer of a Client call that had nothing to send: status 0, no body. Shared
// so a cache can keep the object without copying it.
struct ApiResponse {
  // Not an aggregate: GCC 12 co_await temporaries.
  ApiResponse() = default;
  ApiResponse(int s, std::shared_ptr<rapidjson::Document> b) : status(s), body(std::move(b)) {}

  int status = 0;
  std::shared_ptr<rapidjson::Document> body;
};

// Body of a delete (metav1.DeleteOptions).
struct DeleteOptions {
  // Not an aggregate: GCC 12 co_await temporaries.
  DeleteOptions() = default;

  std::string propagation_policy;  // "Foreground", "Background", "Orphan"; empty: server default
  // Preconditions: the delete fails with 409 Conflict unless the object still has these.
  std::string precondition_uid;
  std::string precondition_resource_version;
  std::optional<std::int64_t> grace_period_seconds;
  bool dry_run = false;
};

// The one door of a reconciler (controller-runtime's client.Client), bound to one reconcile:
// reads come from the caches the controller is fed from; writes go to the API server, each
// logged at -v=1 under the reconcile's anchors with the reason the caller gives, each ending at
// the reconcile's deadline, and each recorded for read-your-own-writes under the reconcile's key:
// the key is
// not reconciled again before every cache that holds the object written has observed the write,
// including a write that ends in the object's deletion (the last finalizer of a deleting object
// removed: held until the object leaves the cache). A DELETE forgets earlier writes of the
// object. No reconciler calls the tracker itself.
//
// Objects are JSON documents today; typed objects slot in as overloads of the same verbs.
// Results are values: `if (!r) ... r.error().is(Errc::conflict)`; a reconciler hands an
// unhandled failure to ReconcileResult::failed, which makes a 409 a quiet requeue.
class Client {
 public:
  using Response = Result<ApiResponse>;

  // The controller makes one per reconcile (its Impl is the runtime's own).
  struct Impl;
  explicit Client(std::unique_ptr<Impl> impl);
  ~Client();
  Client(Client&&) noexcept;
  Client& operator=(Client&&) noexcept;

  const ObjectKey& key() const;

  // ---- reads -----------------------------------------------------------------------------
  // From a cache: null when it does not hold the object (deleted, or not in its selector).
  ObjectPtr get(const Cache& cache, const ObjectKey& key) const;
  // Every object of a cache in namespace `ns` (empty: every namespace).
  std::vector<ObjectPtr> list(const Cache& cache, std::string_view ns = {}) const;
  // From the API server, for what no cache can tell (an object outside every cache, fields the
  // cache drops). Nothing to record.
  boost::asio::awaitable<Response> get_live(const ResourcePath& object);

  // ---- writes, each saying why ------------------------------------------------------------
  // POST to the collection.
  boost::asio::awaitable<Response> create(const ResourcePath& collection, JsonBody body,
                                          std::string why);
  // Creates by server-side apply, never touching an object that exists (409 then): the apply
  // carries a resourceVersion precondition no existing object can match. `body` must be a JSON
  // object with metadata (Errc::bad_request and nothing sent otherwise).
  boost::asio::awaitable<Response> apply_create(const ResourcePath& object, JsonBody body,
                                                std::string_view field_manager, std::string why);
  // Server-side apply, forced.
  boost::asio::awaitable<Response> apply(const ResourcePath& object, JsonBody body,
                                         std::string_view field_manager, std::string why);
  boost::asio::awaitable<Response> patch(const ResourcePath& object, PatchType type, JsonBody body,
                                         std::string why);
  // A merge patch of the status subresource: `body` is {"status": {...}}.
  boost::asio::awaitable<Response> patch_status(const ResourcePath& object, JsonBody body,
                                                std::string why);
  // PUT of the status subresource: the whole object, its resourceVersion a precondition.
  boost::asio::awaitable<Response> update_status(const ResourcePath& object, JsonBody body,
                                                 std::string why);
  // Writes `status` as the status of `cached` (the object at `object` as the cache shows it) only
  // when it differs from the status `cached` has: then a PUT of the status subresource, guarded
  // by the cached resourceVersion (a 409 means the object moved on: hand it to
  // ReconcileResult::failed for a quiet requeue). When they are equal nothing is sent: an
  // ApiResponse with status 0 and no body, so a reconcile at rest writes nothing. Build `status`
  // from the cached one (what the server stores: defaults applied, unknown fields pruned), or a
  // status the server would normalize differs on every pass and is sent each time.
  boost::asio::awaitable<Response> update_status_if_changed(const ResourcePath& object,
                                                            const rapidjson::Value& cached,
                                                            const rapidjson::Value& status,
                                                            std::string why);
  // DELETE; 200 (deleted, or finalizers pending) and 202 are both success. An answer that is the
  // object still there (finalizers pending) is recorded like any write; a Status, an object the
  // server deleted, or a 404 forgets our earlier writes to it.
  boost::asio::awaitable<Response> remove(const ResourcePath& object, DeleteOptions options,
                                          std::string why);

  // The finalizer's writes (asop/finalizers.h), on `cached`, the object at `object` as the
  // cache shows it. add_finalizer is guarded by its resourceVersion, remove_finalizer by the
  // entry's place in the list; a failed guard (the API server answers 422 to a failed "test" op)
  // comes back as Errc::conflict, like a 409: someone wrote first, the caller retries from the
  // cache. When there is nothing to do, nothing is sent: an ApiResponse with status 0 and no body.
  boost::asio::awaitable<Response> add_finalizer(const ResourcePath& object,
                                                 const rapidjson::Value& cached,
                                                 std::string_view finalizer);
  boost::asio::awaitable<Response> remove_finalizer(const ResourcePath& object,
                                                    const rapidjson::Value& cached,
                                                    std::string_view finalizer, std::string why);

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace asop
