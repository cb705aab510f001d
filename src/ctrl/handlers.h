// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "asop/cache.h"
#include "asop/object.h"
#include "ctrl/queue/work_queue.h"

namespace ctrl::handlers {

// From a change of a watched object to the keys it queues, controller-runtime's handler package
// in three parts the builder wires (for_kind, owns, watches), a predicate, and one priority rule.

// The keys a change concerns (handler.MapFunc); may be none.
using Keys = std::function<std::vector<asop::ObjectKey>(const asop::StoreChange& change)>;
// Whether a change may queue anything at all (predicate.Funcs).
using Filter = std::function<bool(const asop::StoreChange& change)>;

// The priority every handler queues at, controller-runtime's WithLowPriorityWhenUnchanged: an
// add from the initial list and an update that changed nothing (a resync) wait at kLowPriority
// behind every change seen live (0).
int priority_of(const asop::StoreChange& change);

// for_kind (handler.EnqueueRequestForObject): the object's own key.
std::vector<asop::ObjectKey> own_key(const asop::StoreChange& change);

// owns (handler.EnqueueRequestForOwner with OnlyControllerOwner): the key of the controller owner
// of the old and of the new object (an object whose owner changed concerns both), when that owner
// is of `group` and `kind` (same namespace). With `owners`, only owners in that cache: a shard
// (--label-selector) caches all children but only its own owners.
Keys controller_owner_keys(std::string group, std::string kind,
                           const asop::Cache* owners = nullptr);

// predicate: not an update that changed only the status (status_only_change). For a reconciler
// that writes the primary's status itself: a status that differs on every failed pass would
// otherwise bring the key back at once, past the rate limiter's backoff.
bool not_status_only_update(const asop::StoreChange& change);

// The informer handler: the keys `keys` names, into `queue` at priority_of(change), unless
// `filter` (when set) refuses the change.
asop::Informer::Handler enqueue(WorkQueue& queue, Keys keys, Filter filter = nullptr);

}  // namespace ctrl::handlers
