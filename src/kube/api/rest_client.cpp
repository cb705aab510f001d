// SPDX-License-Identifier: Apache-2.0
#include "kube/api/rest_client.h"

#include <glog/logging.h>
#include <rapidjson/error/en.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <utility>

#include "kube/core/json_access.h"

namespace kube {

namespace http = boost::beast::http;
using boost::asio::awaitable;
using Target = ResourcePath::Target;

namespace {

constexpr std::string_view kJson = "application/json";

// A 2xx response parsed.
Result<ApiResponse> to_result(HttpResponse&& res, std::string_view method,
                              const std::string& target) {
  auto doc = std::make_shared<rapidjson::Document>();
  if (!res.body.empty()) {
    doc->Parse<rapidjson::kParseIterativeFlag>(res.body.data(), res.body.size());
    if (doc->HasParseError()) {
      ApiError err;
      err.code = make_error_code(Errc::unknown);
      err.http_status = res.status;
      err.message = std::string(method) + " " + target + ": response is not JSON (" +
                    rapidjson::GetParseError_En(doc->GetParseError()) + " at offset " +
                    std::to_string(doc->GetErrorOffset()) + ")";
      return err;
    }
  }
  return ApiResponse{res.status, std::move(doc)};
}

UrlQuery write_query(const WriteOptions& options) {
  UrlQuery q;
  q.add_if("fieldManager", options.field_manager);
  if (options.force) q.add("force", "true");
  if (options.dry_run) q.add("dryRun", "All");
  return q;
}

std::string delete_body(const DeleteOptions& options) {
  rapidjson::Document doc(rapidjson::kObjectType);
  auto& a = doc.GetAllocator();
  doc.AddMember("kind", "DeleteOptions", a);
  doc.AddMember("apiVersion", "v1", a);
  if (!options.propagation_policy.empty()) {
    doc.AddMember("propagationPolicy", rapidjson::Value(options.propagation_policy, a), a);
  }
  if (!options.precondition_uid.empty() || !options.precondition_resource_version.empty()) {
    rapidjson::Value pre(rapidjson::kObjectType);
    if (!options.precondition_uid.empty()) {
      pre.AddMember("uid", rapidjson::Value(options.precondition_uid, a), a);
    }
    if (!options.precondition_resource_version.empty()) {
      pre.AddMember("resourceVersion", rapidjson::Value(options.precondition_resource_version, a),
                    a);
    }
    doc.AddMember("preconditions", pre, a);
  }
  if (options.grace_period_seconds) {
    doc.AddMember("gracePeriodSeconds", *options.grace_period_seconds, a);
  }
  if (options.dry_run) {
    rapidjson::Value dry(rapidjson::kArrayType);
    dry.PushBack("All", a);
    doc.AddMember("dryRun", dry, a);
  }
  return JsonBody(doc).text;
}

// metadata.continue of a list, or empty.
std::string continue_of(const rapidjson::Document& list) {
  return json::text(json::member(json::member(&list, "metadata"), "continue"));
}

// Moves the items of `page` to the end of `into`'s items (a deep copy: the documents have
// different allocators).
void append_items(rapidjson::Document& into, const rapidjson::Document& page) {
  auto& a = into.GetAllocator();
  if (!into.HasMember("items") || !into["items"].IsArray()) {
    into.RemoveMember("items");
    into.AddMember("items", rapidjson::Value(rapidjson::kArrayType), a);
  }
  auto it = page.FindMember("items");
  if (it == page.MemberEnd() || !it->value.IsArray()) return;
  auto& items = into["items"];
  items.Reserve(items.Size() + it->value.Size(), a);
  for (const auto& item : it->value.GetArray()) items.PushBack(rapidjson::Value(item, a), a);
}

// The joined list is complete: no continue token or remaining count must leak to callers.
void drop_paging_metadata(rapidjson::Document& list) {
  if (!list.IsObject()) return;
  auto md = list.FindMember("metadata");
  if (md == list.MemberEnd() || !md->value.IsObject()) return;
  md->value.RemoveMember("continue");
  md->value.RemoveMember("remainingItemCount");
}

}  // namespace

RestClient::RestClient(std::shared_ptr<HttpTransport> transport, int max_retries)
    : transport_(std::move(transport)), max_retries_(max_retries) {
  CHECK(transport_) << "RestClient needs a transport";
  CHECK_GE(max_retries_, 0);
}

RestClient RestClient::with_deadline(std::chrono::steady_clock::time_point deadline) const {
  RestClient bounded(*this);
  bounded.deadline_ = deadline;
  return bounded;
}

RestClient RestClient::logging_writes(std::string context, std::string why) const {
  RestClient logged(*this);
  logged.log_context_ = std::move(context);
  logged.log_why_ = std::move(why);
  return logged;
}

UrlQuery RestClient::list_query(const ListOptions& options) {
  UrlQuery q;
  q.add_if("labelSelector", options.label_selector);
  q.add_if("fieldSelector", options.field_selector);
  q.add_if("resourceVersion", options.resource_version);
  q.add_if("resourceVersionMatch", options.resource_version_match);
  if (options.limit > 0) q.add("limit", std::to_string(options.limit));
  q.add_if("continue", options.continue_token);
  if (options.timeout_seconds) q.add("timeoutSeconds", std::to_string(*options.timeout_seconds));
  return q;
}

awaitable<Result<HttpResponse>> RestClient::send(http::verb method, std::string target,
                                                 std::string_view content_type, std::string body) {
  HttpRequest req;
  req.method = method;
  req.target = std::move(target);
  req.content_type = std::string(content_type);
  req.body = std::move(body);
  req.deadline = deadline_;
  for (int retries = 0;; ++retries) {
    auto res = co_await transport_->send(req);
    if (method != http::verb::get && VLOG_IS_ON(1)) {
      // One line per write sent, whatever came of it: what a test that counts writes (the
      // rest_client_requests_total metric) prints when the count is not what it wants.
      VLOG(1) << log_context_ << (log_context_.empty() ? "" : " ")
              << "write: " << http::to_string(method) << " " << req.target << " -> "
              << (res ? std::to_string(res->status) : "error: " + res.error().describe())
              << (log_why_.empty() ? "" : " (" + log_why_ + ")");
    }
    if (!res) co_return std::move(res).error();
    if (res->status >= 200 && res->status <= 299) co_return std::move(*res);
    ApiError error = api_error_from_response(res->status, res->body, res->retry_after);
    if (retries >= max_retries_ || !error.retry_after ||
        !(error.is(Errc::too_many_requests) || error.http_status >= 500)) {
      co_return error;
    }
    // A wait that would end past the deadline is not worth starting.
    if (deadline_ && std::chrono::steady_clock::now() + *error.retry_after >= *deadline_) {
      co_return error;
    }
    VLOG(1) << http::to_string(method) << " " << req.target << ": " << error.describe()
            << "; retrying in " << error.retry_after->count() << " s (Retry-After)";
    boost::asio::steady_timer wait(co_await boost::asio::this_coro::executor, *error.retry_after);
    co_await wait.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
  }
}

awaitable<Result<ApiResponse>> RestClient::request(http::verb method, std::string target,
                                                   std::string_view content_type,
                                                   std::string body) {
  const std::string shown = target;
  auto res = co_await send(method, std::move(target), content_type, std::move(body));
  if (!res) co_return std::move(res).error();
  co_return to_result(std::move(*res), http::to_string(method), shown);
}

awaitable<Result<ApiResponse>> RestClient::get(const ResourcePath& object) {
  if (auto refused = object.refusal(Target::object, "GET")) co_return std::move(*refused);
  co_return co_await request(http::verb::get, object.path());
}

awaitable<Result<ApiResponse>> RestClient::list(const ResourcePath& collection,
                                                const ListOptions& options) {
  if (auto refused = collection.refusal(Target::collection, "list")) co_return std::move(*refused);
  co_return co_await request(http::verb::get, request_target(collection, list_query(options)));
}

awaitable<Result<std::string>> RestClient::list_text(const ResourcePath& collection,
                                                     const ListOptions& options) {
  if (auto refused = collection.refusal(Target::collection, "list")) co_return std::move(*refused);
  auto res = co_await send(http::verb::get, request_target(collection, list_query(options)));
  if (!res) co_return std::move(res).error();
  co_return std::move(res->body);
}

awaitable<Result<ApiResponse>> RestClient::list_all(const ResourcePath& collection,
                                                    ListOptions options) {
  if (options.limit <= 0) options.limit = 500;
  const std::string first_resource_version = options.resource_version;
  options.continue_token.clear();
  int expired = 0;
  std::shared_ptr<rapidjson::Document> joined;
  int pages = 0;
  for (;;) {
    auto page = co_await list(collection, options);
    if (!page) {
      if (page.error().is(Errc::gone) && !options.continue_token.empty() && expired < 2) {
        ++expired;
        LOG(INFO) << "list " << collection.path() << ": continue token expired after " << pages
                  << " pages, restarting the list" << (expired == 2 ? " without paging" : "");
        joined.reset();
        pages = 0;
        options.continue_token.clear();
        options.resource_version = first_resource_version;
        if (expired == 2) options.limit = 0;
        continue;
      }
      co_return std::move(page).error();
    }
    ++pages;
    const std::string next = continue_of(*page->body);
    if (!joined) {
      joined = page->body;
    } else {
      append_items(*joined, *page->body);
    }
    if (next.empty()) {
      drop_paging_metadata(*joined);
      co_return ApiResponse{page->status, std::move(joined)};
    }
    // The server pins later pages to the first page's snapshot; resourceVersion may not be sent
    // with a continue token.
    options.continue_token = next;
    options.resource_version.clear();
    options.resource_version_match.clear();
  }
}

awaitable<Result<ApiResponse>> RestClient::create(const ResourcePath& collection, JsonBody body,
                                                  const WriteOptions& options) {
  if (auto refused = collection.refusal(Target::collection, "POST")) co_return std::move(*refused);
  co_return co_await request(http::verb::post, request_target(collection, write_query(options)),
                             kJson, std::move(body.text));
}

awaitable<Result<ApiResponse>> RestClient::update(const ResourcePath& object, JsonBody body,
                                                  const WriteOptions& options) {
  if (auto refused = object.refusal(Target::object, "PUT")) co_return std::move(*refused);
  co_return co_await request(http::verb::put, request_target(object, write_query(options)), kJson,
                             std::move(body.text));
}

awaitable<Result<ApiResponse>> RestClient::patch(const ResourcePath& object, PatchType type,
                                                 JsonBody body, const WriteOptions& options) {
  CHECK(type != PatchType::apply || !options.field_manager.empty())
      << "server-side apply needs a field manager";
  if (auto refused = object.refusal(Target::object, "PATCH")) co_return std::move(*refused);
  co_return co_await request(http::verb::patch, request_target(object, write_query(options)),
                             content_type(type), std::move(body.text));
}

awaitable<Result<ApiResponse>> RestClient::apply(const ResourcePath& object, JsonBody body,
                                                 std::string_view field_manager) {
  WriteOptions options;
  options.field_manager = std::string(field_manager);
  options.force = true;
  co_return co_await patch(object, PatchType::apply, std::move(body), options);
}

awaitable<Result<ApiResponse>> RestClient::apply_create(const ResourcePath& object, JsonBody body,
                                                        std::string_view field_manager) {
  rapidjson::Document doc;
  doc.Parse(body.text.data(), body.text.size());
  if (doc.HasParseError() || !doc.IsObject() || !doc.HasMember("metadata") ||
      !doc["metadata"].IsObject()) {
    ApiError err;
    err.code = make_error_code(Errc::bad_request);
    err.reason = std::string(default_reason(Errc::bad_request));
    err.message = "PATCH not sent: apply_create needs a JSON object with metadata";
    co_return err;
  }
  auto& metadata = doc["metadata"];
  metadata.RemoveMember("resourceVersion");
  metadata.AddMember(
      "resourceVersion",
      rapidjson::Value(kNoObjectResourceVersion.data(),
                       static_cast<rapidjson::SizeType>(kNoObjectResourceVersion.size())),
      doc.GetAllocator());
  WriteOptions options;
  options.field_manager = std::string(field_manager);
  co_return co_await patch(object, PatchType::apply, JsonBody(doc), options);
}

awaitable<Result<ApiResponse>> RestClient::delete_(const ResourcePath& object,
                                                   const DeleteOptions& options) {
  if (auto refused = object.refusal(Target::object, "DELETE")) co_return std::move(*refused);
  co_return co_await request(http::verb::delete_, object.path(), kJson, delete_body(options));
}

awaitable<Result<std::unique_ptr<WatchStream>>> RestClient::watch(const ResourcePath& collection,
                                                                  WatchOptions options) {
  co_return co_await WatchStream::open(*transport_, collection, std::move(options));
}

}  // namespace kube
