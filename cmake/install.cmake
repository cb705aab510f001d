# SPDX-License-Identifier: Apache-2.0
# `cmake --install` of the runtime as a library (docs/library.md): the public headers, src/asop/,
# as include/asop/ (`#include "asop/app.h"` in and out of tree) and nothing of src/kube/ or
# src/ctrl/, which stay the runtime's own; one static library per room of those layers; and the
# CMake package AsopRuntime with namespaced targets:
#   asop::ctrl      the controller runtime (manager, builder, controller), linking every room
#                   below it; asop::ctrl_app adds the common main() set-up (flags, config, exit
#                   codes)
#   asop::kube      the client rooms (config, http, api, watch, core) alone
#   asop::<room>    each room library: asop::kube_core, ..., asop::ctrl_cache, ...
#   asop::api       the public headers' target (every room links it)
# The AppService domain (src/appservice/) and its tests are not installed. Included from the top
# CMakeLists.txt after the room libraries exist (ASOP_ROOMS).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(ASOP_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/AsopRuntime)

set(asop_installed_rooms "")
foreach(room IN LISTS ASOP_ROOMS)
  if(room MATCHES "^asop_(kube|ctrl|testing)(_|$)" OR room STREQUAL "asop_asop_testing")
    string(REGEX REPLACE "^asop_" "" export_name ${room})
    set_target_properties(${room} PROPERTIES EXPORT_NAME ${export_name})
    list(APPEND asop_installed_rooms ${room})
  endif()
endforeach()
if(NOT asop_ctrl IN_LIST asop_installed_rooms)
  message(FATAL_ERROR "cmake/install.cmake: no asop_ctrl room to install")
endif()

# asop::kube: every client room, for a program that talks to an API server without controllers.
add_library(asop_kube INTERFACE)
foreach(room IN LISTS asop_installed_rooms)
  if(room MATCHES "^asop_kube_")
    target_link_libraries(asop_kube INTERFACE ${room})
  endif()
endforeach()
set_target_properties(asop_kube PROPERTIES EXPORT_NAME kube)
set_target_properties(asop_third_party PROPERTIES EXPORT_NAME third_party)

# A sanitizer build's archives call into the sanitizer runtimes: whatever links them must link those
# too (test/run-all.sh runs unit.install_consumer in the Sanitize build as well).
if(CMAKE_BUILD_TYPE STREQUAL "Sanitize")
  target_link_options(asop_third_party INTERFACE
                      $<INSTALL_INTERFACE:-fsanitize=address,undefined>)
endif()

set_target_properties(asop_boost PROPERTIES EXPORT_NAME boost)
set_target_properties(asop_asop PROPERTIES EXPORT_NAME api)
set_target_properties(asop_asop_testing PROPERTIES EXPORT_NAME testing_api)
# asop::testing (docs/testing.md) starts control planes with the scripts of test/controlplane/,
# installed beside the package; a test binary finds them through this definition.
install(DIRECTORY test/controlplane/ DESTINATION ${CMAKE_INSTALL_DATADIR}/asop/controlplane
        USE_SOURCE_PERMISSIONS)
target_compile_definitions(asop_testing INTERFACE
  "$<INSTALL_INTERFACE:ASOP_TESTING_SCRIPTS_DIR=\"$<INSTALL_PREFIX>/${CMAKE_INSTALL_DATADIR}/asop/controlplane\">")
install(TARGETS asop_boost asop_third_party asop_asop asop_kube ${asop_installed_rooms}
        EXPORT AsopRuntimeTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY src/asop DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.h")
install(EXPORT AsopRuntimeTargets NAMESPACE asop:: DESTINATION ${ASOP_INSTALL_CMAKEDIR})
install(TARGETS appservice-operator RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

configure_package_config_file(cmake/AsopRuntimeConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/AsopRuntimeConfig.cmake
                              INSTALL_DESTINATION ${ASOP_INSTALL_CMAKEDIR})
# One version, project()'s: 0.1.x builds against any 0.1 install, nothing else (the API may still
# change between minors before 1.0).
write_basic_package_version_file(${PROJECT_BINARY_DIR}/AsopRuntimeConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/AsopRuntimeConfig.cmake
              ${PROJECT_BINARY_DIR}/AsopRuntimeConfigVersion.cmake
        DESTINATION ${ASOP_INSTALL_CMAKEDIR})
