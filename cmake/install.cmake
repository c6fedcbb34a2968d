# libkvpolicy for engines that embed kvpolicy (docs/api.md): `cmake --install build --prefix P`
# puts the shared and static libraries, the public headers, a CMake package (find_package(kvpolicy)
# gives kvpolicy::kvpolicy, shared, and kvpolicy::kvpolicy_static) and kvpolicy.pc under P.
include(GNUInstallDirs)

set(KVPOLICY_OBJECTS "")
foreach(layer ${KVPOLICY_LAYERS})
  list(APPEND KVPOLICY_OBJECTS $<TARGET_OBJECTS:kvpolicy_${layer}>)
endforeach()
# What the engine's objects call: fmt, simdjson, XGBoost, fastText, hiredis, threads.
set(KVPOLICY_LINK_DEPS fmt::fmt simdjson::simdjson ${XGBOOST_LIBRARY} ${FASTTEXT_LIBRARY}
    PkgConfig::HIREDIS Threads::Threads)

add_library(kvpolicy_shared SHARED ${KVPOLICY_OBJECTS})
set_target_properties(kvpolicy_shared PROPERTIES OUTPUT_NAME kvpolicy VERSION ${PROJECT_VERSION}
                                                 SOVERSION ${PROJECT_VERSION_MAJOR})
target_link_libraries(kvpolicy_shared PRIVATE ${KVPOLICY_LINK_DEPS})
target_link_options(kvpolicy_shared PRIVATE -Wl,--no-undefined)

# Policies, formats and routers register themselves from static initialisers, which a linker
# drops from an archive unless the whole archive is linked: the package's static target does so.
add_library(kvpolicy_static STATIC ${KVPOLICY_OBJECTS})
set_target_properties(kvpolicy_static PROPERTIES OUTPUT_NAME kvpolicy)

install(TARGETS kvpolicy_shared kvpolicy_static
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY include/kvpolicy DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

get_filename_component(KVPOLICY_XGBOOST_DIR ${XGBOOST_LIBRARY} DIRECTORY)
get_filename_component(KVPOLICY_FASTTEXT_DIR ${FASTTEXT_LIBRARY} DIRECTORY)
configure_file(cmake/kvpolicyConfig.cmake.in
               ${CMAKE_BINARY_DIR}/package/kvpolicyConfig.cmake @ONLY)
include(CMakePackageConfigHelpers)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/package/kvpolicyConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/package/kvpolicyConfig.cmake
              ${CMAKE_BINARY_DIR}/package/kvpolicyConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/kvpolicy)
configure_file(cmake/kvpolicy.pc.in ${CMAKE_BINARY_DIR}/package/kvpolicy.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/package/kvpolicy.pc
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# examples/ built and run against an installed copy (find_package, static, pkg-config).
if(KVPOLICY_SANITIZE STREQUAL "")
  add_test(NAME InstalledLibrary
           COMMAND bash ${CMAKE_SOURCE_DIR}/tests/cli/check_install.sh ${CMAKE_BINARY_DIR}
                   ${CMAKE_SOURCE_DIR})
  set_tests_properties(InstalledLibrary PROPERTIES TIMEOUT 600)
endif()
