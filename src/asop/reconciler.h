// SPDX-License-Identifier: Apache-2.0
#pragma once

// Public API (docs/library.md): what a controller implements (Reconciler), what it is asked
// (Request) and with what (ReconcileContext), and what it answers (ReconcileResult).

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "asop/errors.h"
#include "asop/object.h"

namespace asop {

class Client;

// What a reconcile is asked to do: a key only. The reconciler reads the object's current state from
// the cache (level-based), so it never learns why it was called and must be idempotent.
using Request = ObjectKey;

// The outcome of one reconcile, with controller-runtime's precedence:
//   error     -> retried with the per-key rate limiter (5 ms doubling to 1000 s); requeue ignored;
//   terminal  -> not retried (the reconciler should also record a Warning Event); the next change
//                to the object brings it back;
//   requeue_after(d) -> forgotten by the rate limiter, then added again after d;
//   conflict  -> a write was refused with 409 Conflict (the object changed since the cache showed
//                it): retried with the rate limiter like an error, but quietly: logged at -v=1,
//                counted in controller_runtime_reconcile_conflicts_total, not as an error;
//   done      -> forgotten; nothing happens until the object or a child changes.
// A retry (error, requeue_after) is queued at `priority` when set, else at the priority the key
// had, as controller-runtime's Result.Priority.
struct ReconcileResult {
  enum class Kind { done, requeue_after, error, terminal, conflict };

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
  static ReconcileResult conflict(std::string message) {
    ReconcileResult r;
    r.kind = Kind::conflict;
    r.message = std::move(message);
    return r;
  }
  // A request failed while `doing` something: conflict() for a 409 Conflict, else error(), with
  // the message "doing: <the server's words>".
  static ReconcileResult failed(std::string_view doing, const ApiError& api_error);
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
  // ReconciliationTimeout on the Reconcile context). The requests of `client` carry it, so
  // past it nothing more is sent and the request in flight is cut.
  std::optional<std::chrono::steady_clock::time_point> deadline;
  // The reconcile's door to the caches and the API server (asop/client.h): bound to the key, the
  // deadline and the log anchors above, and every write through it is read back before the key
  // is reconciled again. Set by the controller; null only where a test builds a context by hand.
  Client* client = nullptr;
};

class Reconciler {
 public:
  virtual ~Reconciler() = default;
  // Must not block the event loop: await I/O or return requeue_after. May throw; the controller
  // catches it, logs it with the key and retries it as an error.
  virtual boost::asio::awaitable<ReconcileResult> reconcile(Request request,
                                                            const ReconcileContext& context) = 0;
};

}  // namespace asop
