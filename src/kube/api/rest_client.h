// SPDX-License-Identifier: Apache-2.0
#pragma once

// Room src/kube/api/: the REST client: verbs on any resource, list splitting, request options and
// patch types. May use: src/asop/, src/kube/http/, src/kube/watch/, src/kube/core/ (the Rooms table
// in docs/architecture.md).

#include <boost/asio/awaitable.hpp>
#include <boost/beast/http/verb.hpp>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "kube/api/api_response.h"
#include "kube/api/delete_options.h"
#include "kube/api/json_body.h"
#include "kube/api/list_options.h"
#include "kube/api/patch_type.h"
#include "kube/api/write_options.h"
#include "kube/core/resource_path.h"
#include "kube/core/result.h"
#include "kube/core/url_query.h"
#include "kube/http/http_transport.h"
#include "kube/watch/watch_options.h"
#include "kube/watch/watch_stream.h"

namespace kube {

// REST verbs on any resource path. A 2xx is an ApiResponse with the parsed JSON body; anything
// else is an ApiError parsed from the Status body (with Retry-After), so callers switch on
// Errc (not_found, conflict, gone...) and keep the server's message for logs and Events.
//
// A 429, or a 5xx with Retry-After, means the server did not process the request: like client-go's
// rest client, it is sent again after the Retry-After seconds (a timer, the thread never blocks),
// up to `max_retries` times; then the error is returned.
class RestClient {
 public:
  static constexpr int kDefaultMaxRetries = 10;  // client-go's maxRetries

  explicit RestClient(std::shared_ptr<HttpTransport> transport,
                      int max_retries = kDefaultMaxRetries);

  // A client on the same transport whose requests end at `deadline` (a reconcile's, like the
  // context a controller-runtime Reconcile gets): none starts after it, the one in flight fails
  // there with Errc::timeout, and no Retry-After wait reaches past it. Cheap: share it by value.
  RestClient with_deadline(std::chrono::steady_clock::time_point deadline) const;

  // A client on the same transport that says who writes and why: every request other than a GET
  // (each try of it) is logged at VLOG(1) as one line, "CONTEXT write: VERB TARGET -> STATUS
  // (WHY)", where CONTEXT is the caller's log anchors (a reconcile's "controller=... namespace=...
  // name=... reconcileID=...", or a component's name) and WHY the caller's reason for the write.
  // Writes of a client without them are logged too, without. Never the body (it may carry a
  // token). Cheap: share it by value.
  RestClient logging_writes(std::string context, std::string why) const;

  boost::asio::awaitable<Result<ApiResponse>> get(const ResourcePath& object);

  // One page. The response's metadata.continue is the next page's token.
  boost::asio::awaitable<Result<ApiResponse>> list(const ResourcePath& collection,
                                                   const ListOptions& options = {});
  // One page as the server sent it, for callers that split it rather than parse it whole
  // (kube/list_split.h).
  boost::asio::awaitable<Result<std::string>> list_text(const ResourcePath& collection,
                                                        const ListOptions& options = {});
  // Every page (limit 500 unless given), items joined into one List whose metadata.resourceVersion
  // is the snapshot's. An expired continue token (410) restarts the list from scratch; when that
  // happens twice, the last try is unpaginated so it cannot expire again (client-go's pager).
  boost::asio::awaitable<Result<ApiResponse>> list_all(const ResourcePath& collection,
                                                       ListOptions options = {});

  // POST to the collection.
  boost::asio::awaitable<Result<ApiResponse>> create(const ResourcePath& collection, JsonBody body,
                                                     const WriteOptions& options = {});
  // PUT the whole object; metadata.resourceVersion in the body makes it a compare-and-swap.
  boost::asio::awaitable<Result<ApiResponse>> update(const ResourcePath& object, JsonBody body,
                                                     const WriteOptions& options = {});
  // PATCH; for PatchType::apply, options.field_manager is required (CHECKed).
  boost::asio::awaitable<Result<ApiResponse>> patch(const ResourcePath& object, PatchType type,
                                                    JsonBody body,
                                                    const WriteOptions& options = {});
  // Server-side apply as controllers do it: fieldManager=field_manager&force=true.
  boost::asio::awaitable<Result<ApiResponse>> apply(const ResourcePath& object, JsonBody body,
                                                    std::string_view field_manager);
  // Creates `object` by server-side apply (fieldManager=field_manager, no force) and never
  // touches one that exists: the body is sent with a resourceVersion no object can have, which
  // the API server ignores when the apply creates and refuses with 409 Conflict otherwise. Unlike
  // a POST, whose managedFields entry is an "Update" that a later apply cannot remove fields of,
  // the object starts with the manager's "Apply" entry. `body` must be a JSON object with
  // metadata.name; its resourceVersion, if any, is replaced. Any other body is not sent
  // (Errc::bad_request).
  boost::asio::awaitable<Result<ApiResponse>> apply_create(const ResourcePath& object,
                                                           JsonBody body,
                                                           std::string_view field_manager);
  // The resourceVersion apply_create sends: the largest value the API server parses, above any
  // etcd revision (an int64), so no object carries it.
  static constexpr std::string_view kNoObjectResourceVersion = "18446744073709551615";
  // DELETE with DeleteOptions as the body; 200 (deleted, or finalizers pending) and 202 (deletion
  // started) are both success.
  boost::asio::awaitable<Result<ApiResponse>> delete_(const ResourcePath& object,
                                                      const DeleteOptions& options = {});

  // Opens a watch on a collection (see WatchStream): HTTP 410 here, or an ERROR event with code
  // 410 later, is Errc::gone.
  boost::asio::awaitable<Result<std::unique_ptr<WatchStream>>> watch(const ResourcePath& collection,
                                                                     WatchOptions options);

  // Any verb on a target (path and query), for what the helpers above do not cover.
  boost::asio::awaitable<Result<ApiResponse>> request(boost::beast::http::verb method,
                                                      std::string target,
                                                      std::string_view content_type = {},
                                                      std::string body = {});

  // The query string a list or watch sends for `options`.
  static UrlQuery list_query(const ListOptions& options);

  HttpTransport& transport() { return *transport_; }
  const std::shared_ptr<HttpTransport>& shared_transport() const { return transport_; }

 private:
  // A 2xx response, or the error of the last try: 429 and 5xx with Retry-After are retried up to
  // max_retries times.
  boost::asio::awaitable<Result<HttpResponse>> send(boost::beast::http::verb method,
                                                    std::string target,
                                                    std::string_view content_type = {},
                                                    std::string body = {});

  std::shared_ptr<HttpTransport> transport_;
  int max_retries_;
  std::optional<std::chrono::steady_clock::time_point> deadline_;
  std::string log_context_;  // logging_writes
  std::string log_why_;
};

}  // namespace kube
