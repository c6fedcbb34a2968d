// Temp files and error capture for the trace reader tests.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>

#include "kvpolicy/core/error.h"
#include "kvpolicy/trace/trace.h"

namespace kvpolicy::testing {

// Every request column and the block size equal (not the name or category names).
inline void expect_same_requests(const Trace& a, const Trace& b) {
  EXPECT_EQ(a.block_tokens, b.block_tokens);
  EXPECT_EQ(a.time, b.time);
  EXPECT_EQ(a.session, b.session);
  EXPECT_EQ(a.turn, b.turn);
  EXPECT_EQ(a.category, b.category);
  EXPECT_EQ(a.user, b.user);
  EXPECT_EQ(a.prompt_tokens, b.prompt_tokens);
  EXPECT_EQ(a.output_tokens, b.output_tokens);
  EXPECT_EQ(a.block_offset, b.block_offset);
  EXPECT_EQ(a.blocks, b.blocks);
  EXPECT_EQ(a.continuation, b.continuation);
}

// A fresh path under $KVPOLICY_TEST_TMP (set by ctest) or the system temp dir, unique per test
// and process, so parallel test processes never share a file.
inline std::string temp_path(const std::string& name) {
  const char* env = std::getenv("KVPOLICY_TEST_TMP");
  std::filesystem::path dir = env && *env
                                  ? std::filesystem::path(env)
                                  : std::filesystem::temp_directory_path() / "kvpolicy-tests";
  std::filesystem::create_directories(dir);
  auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string test = info ? std::string(info->test_suite_name()) + "." + info->name() : "none";
  for (char& c : test)
    if (c == '/') c = '_';
  return (dir / (test + "." + std::to_string(getpid()) + "." + name)).string();
}

inline std::string write_file(const std::string& name, const std::string& content) {
  std::string path = temp_path(name);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << content;
  return path;
}

inline std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// `rel` under $KVPOLICY_DATA (the shared real traces), or "" when it is unset or lacks the file.
inline std::string data_file(const std::string& rel) {
  const char* dir = std::getenv("KVPOLICY_DATA");
  if (!dir || !*dir) return "";
  std::string path = std::string(dir) + "/" + rel;
  return std::filesystem::exists(path) ? path : "";
}

// The InputError that `f` throws; fails the test if it throws nothing or something else.
inline InputError input_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected an InputError, got: " << e.what();
    return InputError("", 0, "", "wrong exception");
  }
  ADD_FAILURE() << "expected an InputError, nothing was thrown";
  return InputError("", 0, "", "nothing thrown");
}

}  // namespace kvpolicy::testing
