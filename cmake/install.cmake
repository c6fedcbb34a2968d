# The installed library for engines that embed kvpolicy (docs/api.md, "Components"): one shared
# and one static library per component, each with only the dependencies its layers call, the
# public headers, a CMake package (find_package(kvpolicy COMPONENTS core ...)) and pkg-config
# files. `cmake --install build --prefix P` puts them under P.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# Component -> the layers it is made of, the components below it, and its own libraries.
set(KVPOLICY_COMPONENT_LAYERS_core core predict policy cache)
set(KVPOLICY_COMPONENT_LAYERS_learned learned)
set(KVPOLICY_COMPONENT_LAYERS_trace trace)
set(KVPOLICY_COMPONENT_LAYERS_route route)
set(KVPOLICY_COMPONENT_LAYERS_embed embed)
set(KVPOLICY_COMPONENT_LAYERS_app serve sim app)
set(KVPOLICY_COMPONENT_DEPS_core "")
set(KVPOLICY_COMPONENT_DEPS_learned core)
set(KVPOLICY_COMPONENT_DEPS_trace core)
set(KVPOLICY_COMPONENT_DEPS_route core)
set(KVPOLICY_COMPONENT_DEPS_embed learned core)
set(KVPOLICY_COMPONENT_DEPS_app embed route learned trace core)
# fmt and simdjson appear in public headers (core/json_writer.h, trace/json_record.h); the
# others only inside the component's sources.
set(KVPOLICY_COMPONENT_PUBLIC_core fmt::fmt Threads::Threads)
set(KVPOLICY_COMPONENT_PUBLIC_trace simdjson::simdjson)
set(KVPOLICY_COMPONENT_PRIVATE_trace kvpolicy::zlib kvpolicy::zstd)
set(KVPOLICY_COMPONENT_PRIVATE_learned kvpolicy::xgboost kvpolicy::fasttext)
if(KVPOLICY_REDIS)
  set(KVPOLICY_COMPONENT_PRIVATE_embed kvpolicy::hiredis)
endif()
# pkg-config names of the same libraries (each ships a .pc on Debian).
set(KVPOLICY_PC_fmt__fmt fmt)
set(KVPOLICY_PC_simdjson__simdjson simdjson)
set(KVPOLICY_PC_kvpolicy__xgboost xgboost)
set(KVPOLICY_PC_kvpolicy__fasttext fasttext)
set(KVPOLICY_PC_kvpolicy__hiredis hiredis)
set(KVPOLICY_PC_kvpolicy__zlib zlib)
set(KVPOLICY_PC_kvpolicy__zstd libzstd)

set(KVPOLICY_COMPONENTS "")
foreach(component core learned trace route embed app)
  set(objects "")
  foreach(layer ${KVPOLICY_COMPONENT_LAYERS_${component}})
    if(TARGET kvpolicy_${layer})
      list(APPEND objects $<TARGET_OBJECTS:kvpolicy_${layer}>)
    endif()
  endforeach()
  if(NOT objects)
    continue()  # learned without KVPOLICY_LEARNED
  endif()
  list(APPEND KVPOLICY_COMPONENTS ${component})
  set(deps "")
  foreach(dep ${KVPOLICY_COMPONENT_DEPS_${component}})
    if(dep IN_LIST KVPOLICY_COMPONENTS)
      list(APPEND deps ${dep})
    endif()
  endforeach()
  set(KVPOLICY_COMPONENT_DEPS_${component} ${deps})

  # The shared library: self-registering objects run their initialisers when it is loaded.
  set(shared kvpolicy_${component}_shared)
  add_library(${shared} SHARED ${objects})
  set_target_properties(${shared} PROPERTIES OUTPUT_NAME kvpolicy_${component}
    EXPORT_NAME ${component} VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION_MAJOR})
  target_link_options(${shared} PRIVATE -Wl,--no-undefined)
  # A program may call nothing of a component but what registers itself (a learned predictor
  # chosen by name), and Debian's GCC links with --as-needed, which would drop the library.
  if(NOT component STREQUAL "core")
    target_link_options(${shared} INTERFACE "LINKER:--no-as-needed")
  endif()
  # An archive: its self-registering objects are kept only when it is linked whole, which the
  # interface target kvpolicy::<component>_static does for the consumer.
  set(archive kvpolicy_${component}_archive)
  add_library(${archive} STATIC ${objects})
  set_target_properties(${archive} PROPERTIES OUTPUT_NAME kvpolicy_${component}
                                              EXPORT_NAME ${component}_archive)
  set(static kvpolicy_${component}_static)
  add_library(${static} INTERFACE)
  set_target_properties(${static} PROPERTIES EXPORT_NAME ${component}_static)
  # A target inside $<LINK_LIBRARY:...> lends its link line only: the include path, standard
  # and public libraries are given to the interface target as well. install(EXPORT) does not
  # add the namespace inside the expression, so the installed name is spelled out.
  set(whole "$<BUILD_INTERFACE:${archive}>$<INSTALL_INTERFACE:kvpolicy::${component}_archive>")
  target_link_libraries(${static} INTERFACE "$<LINK_LIBRARY:WHOLE_ARCHIVE,${whole}>"
                                            ${KVPOLICY_COMPONENT_PUBLIC_${component}})
  foreach(target ${shared} ${archive} ${static})
    target_include_directories(${target} INTERFACE
                               $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
    target_compile_features(${target} INTERFACE cxx_std_20)
  endforeach()
  foreach(target ${shared} ${archive})
    target_link_libraries(${target} PUBLIC ${KVPOLICY_COMPONENT_PUBLIC_${component}}
                                    PRIVATE ${KVPOLICY_COMPONENT_PRIVATE_${component}})
  endforeach()
  foreach(dep ${deps})
    target_link_libraries(${shared} PUBLIC kvpolicy_${dep}_shared)
    target_link_libraries(${archive} PUBLIC kvpolicy_${dep}_static)
    target_link_libraries(${static} INTERFACE kvpolicy_${dep}_static)
  endforeach()
  install(TARGETS ${shared} ${archive} ${static} EXPORT kvpolicy_${component}
          LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
  install(EXPORT kvpolicy_${component} NAMESPACE kvpolicy::
          FILE kvpolicy_${component}-targets.cmake
          DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/kvpolicy)

  # pkg-config: kvpolicy-<component>.pc, requiring the components below it.
  set(pc_requires "")
  foreach(dep ${deps})
    list(APPEND pc_requires kvpolicy-${dep})
  endforeach()
  # Libraries named in public headers are Requires (their flags reach the consumer), the others
  # Requires.private (for --static only).
  set(pc_private "")
  foreach(visibility PUBLIC PRIVATE)
    foreach(lib ${KVPOLICY_COMPONENT_${visibility}_${component}})
      string(REPLACE ":" "_" key ${lib})
      if(DEFINED KVPOLICY_PC_${key})
        if(visibility STREQUAL "PUBLIC")
          list(APPEND pc_requires ${KVPOLICY_PC_${key}})
        else()
          list(APPEND pc_private ${KVPOLICY_PC_${key}})
        endif()
      endif()
    endforeach()
  endforeach()
  list(JOIN pc_requires ", " KVPOLICY_PC_REQUIRES)
  list(JOIN pc_private ", " KVPOLICY_PC_REQUIRES_PRIVATE)
  set(KVPOLICY_PC_LIBS_PRIVATE "")
  if(component STREQUAL "core")
    set(KVPOLICY_PC_LIBS_PRIVATE "-pthread")
  endif()
  set(KVPOLICY_PC_NAME kvpolicy-${component})
  set(KVPOLICY_PC_LIBS "-lkvpolicy_${component}")
  set(KVPOLICY_PC_DESCRIPTION "kvpolicy's ${component} component (docs/api.md)")
  configure_file(cmake/kvpolicy.pc.in ${CMAKE_BINARY_DIR}/package/kvpolicy-${component}.pc @ONLY)
  install(FILES ${CMAKE_BINARY_DIR}/package/kvpolicy-${component}.pc
          DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endforeach()

# `cmake --build build --target kvpolicy_libraries`: what `cmake --install` installs but the tool.
add_custom_target(kvpolicy_libraries)
foreach(component ${KVPOLICY_COMPONENTS})
  add_dependencies(kvpolicy_libraries kvpolicy_${component}_shared kvpolicy_${component}_archive)
endforeach()

# kvpolicy::kvpolicy and kvpolicy::kvpolicy_static: every component, for an engine that wants
# the whole library; kvpolicy.pc likewise.
add_library(kvpolicy_all INTERFACE)
add_library(kvpolicy_all_static INTERFACE)
set_target_properties(kvpolicy_all PROPERTIES EXPORT_NAME kvpolicy)
set_target_properties(kvpolicy_all_static PROPERTIES EXPORT_NAME kvpolicy_static)
set(pc_requires "")
foreach(component ${KVPOLICY_COMPONENTS})
  target_link_libraries(kvpolicy_all INTERFACE kvpolicy_${component}_shared)
  target_link_libraries(kvpolicy_all_static INTERFACE kvpolicy_${component}_static)
  list(APPEND pc_requires kvpolicy-${component})
endforeach()
install(TARGETS kvpolicy_all kvpolicy_all_static EXPORT kvpolicy_all)
install(EXPORT kvpolicy_all NAMESPACE kvpolicy:: FILE kvpolicy_all-targets.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/kvpolicy)
list(JOIN pc_requires ", " KVPOLICY_PC_REQUIRES)
set(KVPOLICY_PC_REQUIRES_PRIVATE "")
set(KVPOLICY_PC_LIBS_PRIVATE "")
set(KVPOLICY_PC_NAME kvpolicy)
set(KVPOLICY_PC_LIBS "")
set(KVPOLICY_PC_DESCRIPTION
    "Eviction policies and simulators for the prefix (KV) cache of LLM serving")
configure_file(cmake/kvpolicy.pc.in ${CMAKE_BINARY_DIR}/package/kvpolicy.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/package/kvpolicy.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

install(DIRECTORY include/kvpolicy DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

# The package: kvpolicyConfig.cmake includes the targets of the components asked for, after
# finding their dependencies (cmake/kvpolicyDependencies.cmake for those without a package).
foreach(component ${KVPOLICY_COMPONENTS})
  set(imports ${KVPOLICY_COMPONENT_PRIVATE_${component}})
  list(TRANSFORM imports REPLACE "^kvpolicy::" "")
  string(APPEND KVPOLICY_CONFIG_DEPS
         "set(_kvpolicy_deps_${component} \"${KVPOLICY_COMPONENT_DEPS_${component}}\")\n"
         "set(_kvpolicy_imports_${component} \"${imports}\")\n")
endforeach()
configure_package_config_file(cmake/kvpolicyConfig.cmake.in
  ${CMAKE_BINARY_DIR}/package/kvpolicyConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/kvpolicy)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/package/kvpolicyConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/package/kvpolicyConfig.cmake
              ${CMAKE_BINARY_DIR}/package/kvpolicyConfigVersion.cmake
              ${CMAKE_SOURCE_DIR}/cmake/kvpolicyDependencies.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/kvpolicy)

# examples/ built and run against an installed copy (find_package, static, pkg-config, and a
# core-only consumer that must not load an ML library or hiredis).
if(KVPOLICY_SANITIZE STREQUAL "")
  add_test(NAME InstalledLibrary
           COMMAND bash ${CMAKE_SOURCE_DIR}/tests/cli/check_install.sh ${CMAKE_BINARY_DIR}
                   ${CMAKE_SOURCE_DIR})
  set_tests_properties(InstalledLibrary PROPERTIES TIMEOUT 600)
endif()
