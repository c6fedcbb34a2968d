# The fuzz targets (-DKVPOLICY_FUZZ=ON in the clang address-sanitizer build): the layers a
# reader or a policy needs with libFuzzer's coverage, the fuzzer (fuzz/fuzzer_main.cc) and the
# seed writer.
# `make fuzz` and `make test-fuzz` drive it (tools/fuzz.sh).
set(KVPOLICY_LAYER_DEPS_fuzz learned cache policy predict trace core)
kvpolicy_layer_root(fuzz KVPOLICY_FUZZ_ROOT)
add_library(kvpolicy_fuzz_targets OBJECT ${KVPOLICY_FUZZ_TARGET_SOURCES})
target_include_directories(kvpolicy_fuzz_targets PUBLIC ${KVPOLICY_FUZZ_ROOT} ${CMAKE_SOURCE_DIR}/fuzz
                           PRIVATE ${CMAKE_SOURCE_DIR}/src/trace)
target_compile_options(kvpolicy_fuzz_targets PRIVATE ${KVPOLICY_WARNINGS})
add_library(kvpolicy_fuzz_engine INTERFACE)
target_link_libraries(kvpolicy_fuzz_engine INTERFACE kvpolicy_fuzz_targets
                      $<TARGET_OBJECTS:kvpolicy_fuzz_targets>)
foreach(layer ${KVPOLICY_LAYER_DEPS_fuzz})
  if(TARGET kvpolicy_${layer})
    target_link_libraries(kvpolicy_fuzz_engine INTERFACE kvpolicy_${layer}
                          $<TARGET_OBJECTS:kvpolicy_${layer}>)
  endif()
endforeach()

add_executable(kvpolicy_fuzz fuzz/fuzzer_main.cc)
target_link_libraries(kvpolicy_fuzz PRIVATE kvpolicy_fuzz_engine)
target_link_options(kvpolicy_fuzz PRIVATE -fsanitize=fuzzer)
add_executable(kvpolicy_fuzz_seeds fuzz/write_seeds.cc)
target_link_libraries(kvpolicy_fuzz_seeds PRIVATE kvpolicy_fuzz_engine)
