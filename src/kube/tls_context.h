#pragma once

#include <boost/asio/ssl/context.hpp>
#include <memory>

#include "kube/rest_config.h"

namespace kube {

// The OpenSSL client context for one API server: trust (configured CA PEM, or the system store),
// peer verification (unless insecure-skip-tls-verify), and the client certificate and key.
// Per-connection settings (SNI, expected host name or IP) are applied by HttpConnection.
// Runs at start-up: throws ConfigError naming what is wrong, never printing key material.
std::shared_ptr<boost::asio::ssl::context> make_tls_context(const RestConfig& config);

}  // namespace kube
