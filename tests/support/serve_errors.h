// serve()'s refusals in tests: one clear ConfigError naming what is wrong.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "kvpolicy/core/error.h"
#include "kvpolicy/serve/serve.h"

namespace kvpolicy::testing {

// serve() must refuse `options` with a ConfigError whose message contains `needle`.
inline void expect_serve_refuses(const Trace& trace, const ServeOptions& options,
                                 const std::string& needle) {
  try {
    serve(trace, options);
    ADD_FAILURE() << "no error; expected one mentioning " << needle;
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

}  // namespace kvpolicy::testing
