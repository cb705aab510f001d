// SPDX-License-Identifier: Apache-2.0
// Boost.Asio's and Boost.Beast's non-template code, compiled once here instead of inline in every
// file that includes them (BOOST_ASIO_SEPARATE_COMPILATION and BOOST_BEAST_SEPARATE_COMPILATION,
// set for every user of the headers by asop_third_party in CMakeLists.txt; docs/build-time.md).
#include <boost/asio/impl/src.hpp>
#include <boost/asio/ssl/impl/src.hpp>
#include <boost/beast/src.hpp>
