// SPDX-License-Identifier: Apache-2.0
#include "ctrl/client.h"

#include <utility>

#include "ctrl/object/finalizers.h"
#include "ctrl/object/object_meta.h"

namespace asop {
namespace asio = boost::asio;

Client::Impl::Impl(kube::RestClient rest_, ctrl::WriteTracker& tracker_, ObjectKey key_,
                   std::string log_prefix_)
    : rest(std::move(rest_)),
      tracker(tracker_),
      key(std::move(key_)),
      owner_key(key.key()),
      log_prefix(std::move(log_prefix_)) {}

Client::Client(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Client::~Client() = default;
Client::Client(Client&&) noexcept = default;
Client& Client::operator=(Client&&) noexcept = default;

const ObjectKey& Client::key() const {
  return impl_->key;
}

ObjectPtr Client::get(const Cache& cache, const ObjectKey& key) const {
  return cache.get(key.key());
}

std::vector<ObjectPtr> Client::list(const Cache& cache, std::string_view ns) const {
  std::vector<ObjectPtr> out;
  for (const auto& key : cache.keys()) {
    auto object = cache.get(key);
    if (object && (ns.empty() || meta_namespace(*object) == ns)) out.push_back(std::move(object));
  }
  return out;
}

kube::RestClient Client::Impl::writer(std::string why) const {
  return rest.logging_writes(log_prefix, std::move(why));
}

Client::Response Client::Impl::recorded(const ResourcePath& object, Response result) {
  if (result && result->body) tracker.record_write(object, owner_key, *result->body);
  return result;
}

asio::awaitable<Client::Response> Client::get_live(const ResourcePath& object) {
  co_return co_await impl_->rest.get(object);
}

asio::awaitable<Client::Response> Client::create(const ResourcePath& collection, JsonBody body,
                                                 std::string why) {
  auto w = impl_->writer(std::move(why));
  auto result = co_await w.create(collection, std::move(body));
  co_return impl_->recorded(collection, std::move(result));
}

asio::awaitable<Client::Response> Client::apply_create(const ResourcePath& object, JsonBody body,
                                                       std::string_view field_manager,
                                                       std::string why) {
  auto w = impl_->writer(std::move(why));
  auto result = co_await w.apply_create(object, std::move(body), field_manager);
  co_return impl_->recorded(object, std::move(result));
}

asio::awaitable<Client::Response> Client::apply(const ResourcePath& object, JsonBody body,
                                                std::string_view field_manager, std::string why) {
  auto w = impl_->writer(std::move(why));
  auto result = co_await w.apply(object, std::move(body), field_manager);
  co_return impl_->recorded(object, std::move(result));
}

asio::awaitable<Client::Response> Client::patch(const ResourcePath& object, PatchType type,
                                                JsonBody body, std::string why) {
  auto w = impl_->writer(std::move(why));
  auto result = co_await w.patch(object, type, std::move(body));
  co_return impl_->recorded(object, std::move(result));
}

asio::awaitable<Client::Response> Client::patch_status(const ResourcePath& object, JsonBody body,
                                                       std::string why) {
  auto w = impl_->writer(std::move(why));
  const auto status = object.sub("status");
  auto result = co_await w.patch(status, PatchType::merge, std::move(body));
  co_return impl_->recorded(object, std::move(result));
}

asio::awaitable<Client::Response> Client::update_status(const ResourcePath& object, JsonBody body,
                                                        std::string why) {
  auto w = impl_->writer(std::move(why));
  const auto status = object.sub("status");
  auto result = co_await w.update(status, std::move(body));
  co_return impl_->recorded(object, std::move(result));
}

asio::awaitable<Client::Response> Client::update_status_if_changed(const ResourcePath& object,
                                                                   const rapidjson::Value& cached,
                                                                   const rapidjson::Value& status,
                                                                   std::string why) {
  const auto* current = json::member(&cached, "status");
  if (current != nullptr && *current == status) co_return ApiResponse();
  rapidjson::Document whole;
  whole.CopyFrom(cached, whole.GetAllocator());
  rapidjson::Value copy(status, whole.GetAllocator());
  if (auto it = whole.FindMember("status"); it != whole.MemberEnd()) {
    it->value = std::move(copy);
  } else {
    whole.AddMember("status", copy, whole.GetAllocator());
  }
  auto result = co_await update_status(object, JsonBody(whole), std::move(why));
  co_return result;
}

asio::awaitable<Client::Response> Client::remove(const ResourcePath& object, DeleteOptions options,
                                                 std::string why) {
  auto w = impl_->writer(std::move(why));
  auto result = co_await w.delete_(object, options);
  if (result && result->body && !meta_uid(*result->body).empty() &&
      !meta_finalizers(*result->body).empty()) {
    // Still there, being deleted (foreground, or another finalizer): a write the cache must see.
    co_return impl_->recorded(object, std::move(result));
  }
  // Whatever our earlier writes to it returned is moot: its deletion is what the cache will see.
  if (result || result.error().is(Errc::not_found)) impl_->tracker.forget_write(object);
  co_return result;
}

namespace {

// A guarded JSON patch whose "test" op failed is answered 422 Invalid (the API server's
// applyJSPatch: "testing value ... failed: test failed"), not 409; to the caller it is the same:
// another writer came first.
Client::Response guard_failed_as_conflict(Client::Response result) {
  if (result || !result.error().is(Errc::invalid) ||
      result.error().message.find("test failed") == std::string::npos) {
    return result;
  }
  ApiError conflict = std::move(result).error();
  conflict.code = make_error_code(Errc::conflict);
  return conflict;
}

}  // namespace

asio::awaitable<Client::Response> Client::add_finalizer(const ResourcePath& object,
                                                        const rapidjson::Value& cached,
                                                        std::string_view finalizer) {
  auto patch_text = ctrl::add_finalizer_patch(cached, finalizer);
  if (!patch_text) co_return ApiResponse();
  auto result = co_await patch(object, PatchType::json, JsonBody(std::move(*patch_text)),
                               "adding finalizer " + std::string(finalizer));
  co_return guard_failed_as_conflict(std::move(result));
}

asio::awaitable<Client::Response> Client::remove_finalizer(const ResourcePath& object,
                                                           const rapidjson::Value& cached,
                                                           std::string_view finalizer,
                                                           std::string why) {
  auto patch_text = ctrl::remove_finalizer_patch(cached, finalizer);
  if (!patch_text) co_return ApiResponse();
  auto result =
      co_await patch(object, PatchType::json, JsonBody(std::move(*patch_text)), std::move(why));
  co_return guard_failed_as_conflict(std::move(result));
}

}  // namespace asop

namespace ctrl {

Client make_client(kube::RestClient rest, WriteTracker& tracker, asop::ObjectKey key,
                   std::string log_prefix) {
  return Client(std::make_unique<Client::Impl>(std::move(rest), tracker, std::move(key),
                                               std::move(log_prefix)));
}

}  // namespace ctrl
