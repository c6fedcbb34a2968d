// PolicyTree's request cycle for a call made outside an explicit one (policy_tree.cc and
// policy_tree_owner.cc): opened before the call and closed after it.
#pragma once

#include "kvpolicy/cache/policy_tree.h"

namespace kvpolicy {

// Opens a cycle of its own for a call made outside an explicit one, and closes it after.
class ImplicitRequest {
 public:
  explicit ImplicitRequest(PolicyTree& t) : t_(t), own_(!t.open_) {
    if (own_) t_.begin_request();
  }
  ~ImplicitRequest() {
    if (own_) t_.end_request();
  }

 private:
  PolicyTree& t_;
  bool own_;
};

}  // namespace kvpolicy
