// SPDX-License-Identifier: Apache-2.0
#include "kube/core/resource_path.h"

#include <catch2/catch.hpp>

#include "kube/core/url_query.h"

using kube::ResourcePath;
using kube::UrlQuery;

TEST_CASE("core and grouped collection paths", "[rest][path]") {
  const auto cm = ResourcePath::from_api_version("v1", "configmaps");
  CHECK(cm.group.empty());
  CHECK(cm.api_version() == "v1");
  CHECK(cm.path() == "/api/v1/configmaps");
  CHECK(cm.in_namespace("default").path() == "/api/v1/namespaces/default/configmaps");

  const auto deploy = ResourcePath::from_api_version("apps/v1", "deployments");
  CHECK(deploy.group == "apps");
  CHECK(deploy.version == "v1");
  CHECK(deploy.api_version() == "apps/v1");
  CHECK(deploy.path() == "/apis/apps/v1/deployments");
  CHECK(deploy.in_namespace("ns1").named("web").path() ==
        "/apis/apps/v1/namespaces/ns1/deployments/web");
}

TEST_CASE("cluster-scoped objects and namespaces themselves", "[rest][path]") {
  const auto cr = ResourcePath::from_api_version("rbac.authorization.k8s.io/v1", "clusterroles");
  CHECK(cr.named("admin").path() == "/apis/rbac.authorization.k8s.io/v1/clusterroles/admin");
  const auto ns = ResourcePath::from_api_version("v1", "namespaces").named("team-a");
  CHECK(ns.path() == "/api/v1/namespaces/team-a");
  CHECK(ns.sub("finalize").path() == "/api/v1/namespaces/team-a/finalize");
}

TEST_CASE("subresources status, scale and finalizers", "[rest][path]") {
  const auto app = ResourcePath::from_api_version("app.example.com/v1", "appservices")
                       .in_namespace("prod")
                       .named("nginx-app");
  CHECK(app.sub("status").path() ==
        "/apis/app.example.com/v1/namespaces/prod/appservices/nginx-app/status");
  CHECK(app.sub("scale").path() ==
        "/apis/app.example.com/v1/namespaces/prod/appservices/nginx-app/scale");
  CHECK(app.sub("finalizers").path() ==
        "/apis/app.example.com/v1/namespaces/prod/appservices/nginx-app/finalizers");
  // Builders copy: the base is unchanged.
  CHECK(app.subresource.empty());
  CHECK(app.sub("status") != app);
}

TEST_CASE("path segments are percent-encoded", "[rest][path]") {
  const auto odd =
      ResourcePath::from_api_version("v1", "configmaps").in_namespace("a b").named("x/y");
  CHECK(odd.path() == "/api/v1/namespaces/a%20b/configmaps/x%2Fy");
}

TEST_CASE("query values with selector syntax are percent-encoded", "[rest][path]") {
  UrlQuery q;
  q.add("labelSelector", "app.kubernetes.io/managed-by=appservice-operator,tier!=db,env in (a,b)")
      .add("fieldSelector", "metadata.name=x")
      .add_if("continue", "")
      .add("limit", "500");
  CHECK(q.str() ==
        "labelSelector=app.kubernetes.io%2Fmanaged-by%3Dappservice-operator%2Ctier%21%3Ddb%2Cenv%"
        "20in%20%28a%2Cb%29&fieldSelector=metadata.name%3Dx&limit=500");
  CHECK(UrlQuery::encode("AZaz09-._~") == "AZaz09-._~");
  CHECK(UrlQuery::encode("+&=?#%") == "%2B%26%3D%3F%23%25");
  CHECK(UrlQuery::encode("\xC3\xA9") == "%C3%A9");

  const auto pods = ResourcePath::from_api_version("v1", "pods");
  CHECK(request_target(pods, UrlQuery{}) == "/api/v1/pods");
  CHECK(request_target(pods, UrlQuery().add("watch", "1")) == "/api/v1/pods?watch=1");
}

TEST_CASE("segments that would address another resource are refused", "[rest][path]") {
  using Target = ResourcePath::Target;
  const auto cm = ResourcePath::from_api_version("v1", "configmaps").in_namespace("ns");
  CHECK(cm.named("web").invalid_reason(Target::object).empty());
  CHECK(cm.invalid_reason(Target::collection).empty());
  CHECK(cm.in_namespace("").invalid_reason(Target::collection).empty());  // all namespaces

  // An empty name would make the object verb a collection verb (DELETE of every ConfigMap).
  CHECK(cm.invalid_reason(Target::object) == "resource name may not be empty (configmaps)");
  CHECK(cm.named("web").invalid_reason(Target::collection) ==
        "a collection request may not name an object (configmaps web)");

  for (const char* bad : {".", ".."}) {
    CHECK(cm.named(bad).invalid_reason(Target::object) ==
          std::string("name may not be \"") + bad + "\"");
    CHECK(cm.in_namespace(bad).invalid_reason(Target::collection) ==
          std::string("namespace may not be \"") + bad + "\"");
  }
  CHECK(cm.named("a/b").invalid_reason(Target::object) == "name may not contain '/'");
  CHECK(cm.named("a%2Fb").invalid_reason(Target::object) == "name may not contain '%'");
  CHECK(cm.in_namespace("x/y").invalid_reason(Target::collection) ==
        "namespace may not contain '/'");
  CHECK(cm.named("web").sub("..").invalid_reason(Target::object) ==
        "subresource may not be \"..\"");
  CHECK(ResourcePath::from_api_version("a/b/c", "things").invalid_reason(Target::collection) ==
        "version may not contain '/'");
  CHECK(cm.sub("status").invalid_reason(Target::collection) ==
        "subresource status of configmaps needs an object name");

  const auto refused = cm.refusal(Target::object, "DELETE");
  REQUIRE(refused);
  CHECK(refused->is(kube::Errc::bad_request));
  CHECK(refused->http_status == 0);
  CHECK(refused->message == "DELETE not sent: resource name may not be empty (configmaps)");
  CHECK_FALSE(cm.named("web").refusal(Target::object, "DELETE"));
}
