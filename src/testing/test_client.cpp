// SPDX-License-Identifier: Apache-2.0
// asop::testing::TestClient: the REST client on a thread of its own, each call waited for.
#include "asop/testing/test_client.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <future>
#include <thread>
#include <utility>

#include "kube/api/rest_client.h"
#include "kube/config/kubeconfig.h"
#include "kube/http/http_transport.h"
#include "kube/http/request_metrics.h"

namespace asop::testing {

struct TestClient::Impl {
  boost::asio::io_context io;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work{io.get_executor()};
  std::shared_ptr<kube::RestClient> client;
  std::thread thread;

  // Runs a request coroutine on the client's thread and waits for its answer. `make` must be a
  // coroutine itself (co_return co_await c.verb(...)): a verb's defaulted options are temporaries
  // that must live until its co_await ends.
  template <class Make>
  Response call(Make make) {
    std::promise<Response> answer;
    auto future = answer.get_future();
    boost::asio::co_spawn(
        io, [&]() -> boost::asio::awaitable<void> { answer.set_value(co_await make(*client)); },
        [&](std::exception_ptr e) {
          if (e) answer.set_exception(e);
        });
    return future.get();
  }
};

TestClient::TestClient(const ControlPlane& control_plane) : impl_(std::make_unique<Impl>()) {
  kube::HttpTransport::Options options;
  options.request_timeout = std::chrono::seconds(30);
  options.user_agent = "asop-testing";
  impl_->client = std::make_shared<kube::RestClient>(std::make_shared<kube::HttpTransport>(
      impl_->io.get_executor(), kube::Kubeconfig::load_file(control_plane.kubeconfig()).resolve(),
      options, nullptr, std::make_shared<kube::RequestMetrics>()));
  impl_->thread = std::thread([io = &impl_->io] { io->run(); });
}

TestClient::~TestClient() {
  // The client goes on its own thread; pending operations (idle connections) with the io_context.
  boost::asio::post(impl_->io, [impl = impl_.get()] {
    impl->client.reset();
    impl->io.stop();
  });
  impl_->thread.join();
}

TestClient::Response TestClient::get(const ResourcePath& object) {
  return impl_->call([&](kube::RestClient& c) -> boost::asio::awaitable<Response> {
    co_return co_await c.get(object);
  });
}

TestClient::Response TestClient::list(const ResourcePath& collection,
                                      std::string_view label_selector) {
  kube::ListOptions options;
  options.label_selector = std::string(label_selector);
  return impl_->call([&](kube::RestClient& c) -> boost::asio::awaitable<Response> {
    co_return co_await c.list_all(collection, options);
  });
}

TestClient::Response TestClient::create(const ResourcePath& collection, JsonBody body) {
  return impl_->call([&](kube::RestClient& c) -> boost::asio::awaitable<Response> {
    co_return co_await c.create(collection, body);
  });
}

TestClient::Response TestClient::apply(const ResourcePath& object, JsonBody body,
                                       std::string_view field_manager) {
  return impl_->call([&](kube::RestClient& c) -> boost::asio::awaitable<Response> {
    co_return co_await c.apply(object, body, field_manager);
  });
}

TestClient::Response TestClient::patch(const ResourcePath& object, PatchType type, JsonBody body) {
  return impl_->call([&](kube::RestClient& c) -> boost::asio::awaitable<Response> {
    co_return co_await c.patch(object, type, body);
  });
}

TestClient::Response TestClient::remove(const ResourcePath& object, DeleteOptions options) {
  return impl_->call([&](kube::RestClient& c) -> boost::asio::awaitable<Response> {
    co_return co_await c.delete_(object, options);
  });
}

std::string TestClient::field(const ResourcePath& object, std::string_view path) {
  auto r = get(object);
  if (!r) return {};
  const rapidjson::Value* at = r->body.get();
  while (at != nullptr && !path.empty()) {
    const auto dot = path.find('.');
    const std::string step(path.substr(0, dot));
    path = dot == std::string_view::npos ? std::string_view{} : path.substr(dot + 1);
    if (!at->IsObject()) return {};
    auto member = at->FindMember(step.c_str());
    at = member == at->MemberEnd() ? nullptr : &member->value;
  }
  if (at == nullptr) return {};
  if (at->IsString()) return std::string(at->GetString(), at->GetStringLength());
  if (at->IsBool()) return at->GetBool() ? "true" : "false";
  if (at->IsInt64()) return std::to_string(at->GetInt64());
  if (at->IsArray()) {  // a list of strings (finalizers): joined with ","
    std::string joined;
    for (const auto& item : at->GetArray()) {
      if (!item.IsString()) return {};
      if (!joined.empty()) joined += ",";
      joined.append(item.GetString(), item.GetStringLength());
    }
    return joined;
  }
  return {};
}

}  // namespace asop::testing
