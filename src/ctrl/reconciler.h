// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <optional>
#include <string>

namespace ctrl {

// What a reconcile is asked to do: a key only. The reconciler reads the object's current state from
// the cache (level-based), so it never learns why it was called and must be idempotent.
struct Request {
  Request() = default;  // not an aggregate: GCC 12 co_await temporaries (kube/list_options.h)
  Request(std::string n, std::string nm) : ns(std::move(n)), name(std::move(nm)) {}

  std::string ns;
  std::string name;

  static Request from_key(const std::string& key);
  std::string key() const;
};

// The outcome of one reconcile, with controller-runtime's precedence:
//   error     -> retried with the per-key rate limiter (5 ms doubling to 1000 s); requeue ignored;
//   terminal  -> not retried (the reconciler should also record a Warning Event); the next change
//                to the object brings it back;
//   requeue_after(d) -> forgotten by the rate limiter, then added again after d;
//   done      -> forgotten; nothing happens until the object or a child changes.
// A retry (error, requeue_after) is queued at `priority` when set, else at the priority the key
// had, as controller-runtime's Result.Priority.
struct ReconcileResult {
  enum class Kind { done, requeue_after, error, terminal };

  static ReconcileResult done() { return {}; }
  static ReconcileResult requeue(std::chrono::milliseconds after) {
    ReconcileResult r;
    r.kind = Kind::requeue_after;
    r.after = after;
    return r;
  }
  static ReconcileResult error(std::string message) {
    ReconcileResult r;
    r.kind = Kind::error;
    r.message = std::move(message);
    return r;
  }
  static ReconcileResult terminal(std::string message) {
    ReconcileResult r;
    r.kind = Kind::terminal;
    r.message = std::move(message);
    return r;
  }

  Kind kind = Kind::done;
  std::chrono::milliseconds after{0};
  std::string message;
  std::optional<int> priority;
};

// Per-reconcile context: the log anchors a user greps for one object's story.
struct ReconcileContext {
  std::string controller;
  std::string reconcile_id;
  // "controller=NAME namespace=NS name=NAME reconcileID=ID"
  std::string log_prefix;
  // With --reconcile-timeout: when this reconcile must be over (controller-runtime's
  // ReconciliationTimeout on the Reconcile context). The reconciler's API requests carry it
  // (kube::RestClient::with_deadline), so past it nothing more is sent and the request in flight
  // is cut.
  std::optional<std::chrono::steady_clock::time_point> deadline;
};

class Reconciler {
 public:
  virtual ~Reconciler() = default;
  // Must not block the event loop: await I/O or return requeue_after. May throw; the controller
  // catches it, logs it with the key and retries it as an error.
  virtual boost::asio::awaitable<ReconcileResult> reconcile(Request request,
                                                            const ReconcileContext& context) = 0;
};

}  // namespace ctrl
