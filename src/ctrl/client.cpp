// SPDX-License-Identifier: Apache-2.0
#include "ctrl/client.h"

#include <utility>

#include "ctrl/object/finalizers.h"
#include "ctrl/object/object_meta.h"

namespace ctrl {
namespace asio = boost::asio;

Client::Client(kube::RestClient rest, WriteTracker& tracker, ObjectKey key, std::string log_prefix)
    : rest_(std::move(rest)),
      tracker_(tracker),
      key_(std::move(key)),
      owner_key_(key_.key()),
      log_prefix_(std::move(log_prefix)) {}

ObjectPtr Client::get(const ObjectStore& cache, const ObjectKey& key) const {
  return cache.get(key.key());
}

std::vector<ObjectPtr> Client::list(const ObjectStore& cache, std::string_view ns) const {
  std::vector<ObjectPtr> out;
  for (const auto& key : cache.keys()) {
    auto object = cache.get(key);
    if (object && (ns.empty() || meta_namespace(*object) == ns)) out.push_back(std::move(object));
  }
  return out;
}

kube::RestClient Client::writer(std::string why) const {
  return rest_.logging_writes(log_prefix_, std::move(why));
}

Client::Response Client::recorded(const kube::ResourcePath& object, Response result) {
  if (result && result->body) tracker_.record_write(object, owner_key_, *result->body);
  return result;
}

asio::awaitable<Client::Response> Client::get_live(const kube::ResourcePath& object) {
  co_return co_await rest_.get(object);
}

asio::awaitable<Client::Response> Client::create(const kube::ResourcePath& collection,
                                                 kube::JsonBody body, std::string why) {
  auto w = writer(std::move(why));
  auto result = co_await w.create(collection, std::move(body));
  co_return recorded(collection, std::move(result));
}

asio::awaitable<Client::Response> Client::apply_create(const kube::ResourcePath& object,
                                                       const rapidjson::Value& body,
                                                       std::string_view field_manager,
                                                       std::string why) {
  auto w = writer(std::move(why));
  auto result = co_await w.apply_create(object, body, field_manager);
  co_return recorded(object, std::move(result));
}

asio::awaitable<Client::Response> Client::apply(const kube::ResourcePath& object,
                                                kube::JsonBody body, std::string_view field_manager,
                                                std::string why) {
  auto w = writer(std::move(why));
  auto result = co_await w.apply(object, std::move(body), field_manager);
  co_return recorded(object, std::move(result));
}

asio::awaitable<Client::Response> Client::patch(const kube::ResourcePath& object,
                                                kube::PatchType type, kube::JsonBody body,
                                                std::string why) {
  auto w = writer(std::move(why));
  auto result = co_await w.patch(object, type, std::move(body));
  co_return recorded(object, std::move(result));
}

asio::awaitable<Client::Response> Client::patch_status(const kube::ResourcePath& object,
                                                       kube::JsonBody body, std::string why) {
  auto w = writer(std::move(why));
  const auto status = object.sub("status");
  auto result = co_await w.patch(status, kube::PatchType::merge, std::move(body));
  co_return recorded(object, std::move(result));
}

asio::awaitable<Client::Response> Client::update_status(const kube::ResourcePath& object,
                                                        kube::JsonBody body, std::string why) {
  auto w = writer(std::move(why));
  const auto status = object.sub("status");
  auto result = co_await w.update(status, std::move(body));
  co_return recorded(object, std::move(result));
}

asio::awaitable<Client::Response> Client::remove(const kube::ResourcePath& object,
                                                 kube::DeleteOptions options, std::string why) {
  auto w = writer(std::move(why));
  auto result = co_await w.delete_(object, options);
  if (result && result->body && !meta_uid(*result->body).empty() &&
      !meta_finalizers(*result->body).empty()) {
    // Still there, being deleted (foreground, or another finalizer): a write the cache must see.
    co_return recorded(object, std::move(result));
  }
  // Whatever our earlier writes to it returned is moot: its deletion is what the cache will see.
  if (result || result.error().is(kube::Errc::not_found)) tracker_.forget_write(object);
  co_return result;
}

// A guarded JSON patch whose "test" op failed is answered 422 Invalid (the API server's
// applyJSPatch: "testing value ... failed: test failed"), not 409; to the caller it is the same:
// another writer came first.
Client::Response Client::guard_failed_as_conflict(Response result) {
  if (result || !result.error().is(kube::Errc::invalid) ||
      result.error().message.find("test failed") == std::string::npos) {
    return result;
  }
  kube::ApiError conflict = std::move(result).error();
  conflict.code = kube::make_error_code(kube::Errc::conflict);
  return conflict;
}

asio::awaitable<Client::Response> Client::add_finalizer(const kube::ResourcePath& object,
                                                        const rapidjson::Value& cached,
                                                        std::string_view finalizer) {
  auto patch_text = add_finalizer_patch(cached, finalizer);
  if (!patch_text) co_return kube::ApiResponse();
  auto result =
      co_await patch(object, kube::PatchType::json, kube::JsonBody(std::move(*patch_text)),
                     "adding finalizer " + std::string(finalizer));
  co_return guard_failed_as_conflict(std::move(result));
}

asio::awaitable<Client::Response> Client::remove_finalizer(const kube::ResourcePath& object,
                                                           const rapidjson::Value& cached,
                                                           std::string_view finalizer,
                                                           std::string why) {
  auto patch_text = remove_finalizer_patch(cached, finalizer);
  if (!patch_text) co_return kube::ApiResponse();
  auto result = co_await patch(object, kube::PatchType::json,
                               kube::JsonBody(std::move(*patch_text)), std::move(why));
  co_return guard_failed_as_conflict(std::move(result));
}

}  // namespace ctrl
