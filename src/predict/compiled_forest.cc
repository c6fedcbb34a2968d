// Boosted trees as flat arrays, read from XGBoost's text dump: evaluating a few rows costs a
// few hundred node visits, where one XGBoost predict call costs ~20 us of fixed overhead.
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>

#include "kvpolicy/core/error.h"
#include "kvpolicy/predict/reuse_predictor.h"

namespace kvpolicy {
namespace {

// Reads `name=<int>` after position p of line; throws when absent.
int32_t field(const std::string& line, const char* name) {
  size_t p = line.find(name);
  if (p == std::string::npos) throw Error(std::string("tree dump: no '") + name + "' in " + line);
  return static_cast<int32_t>(std::strtol(line.c_str() + p + std::strlen(name), nullptr, 10));
}

}  // namespace

CompiledForest::CompiledForest(std::span<const std::string> dump, float base_margin)
    : base_(base_margin) {
  for (const std::string& tree : dump) {
    int32_t offset = static_cast<int32_t>(nodes_.size());
    std::istringstream in(tree);
    std::string line;
    std::vector<Node> local;
    while (std::getline(in, line)) {
      size_t start = line.find_first_not_of('\t');
      if (start == std::string::npos) continue;
      char* end = nullptr;
      long id = std::strtol(line.c_str() + start, &end, 10);
      if (end == line.c_str() + start || *end != ':' || id < 0)
        throw Error("tree dump: bad line " + line);
      if (size_t(id) >= local.size()) local.resize(size_t(id) + 1, Node{-2, 0, 0, 0, 0});
      Node& node = local[size_t(id)];
      const char* rest = end + 1;
      if (std::strncmp(rest, "leaf=", 5) == 0) {
        node = {-1, std::strtof(rest + 5, nullptr), 0, 0, 0};
      } else if (rest[0] == '[' && rest[1] == 'f') {
        char* lt = nullptr;
        long f = std::strtol(rest + 2, &lt, 10);
        if (*lt != '<') throw Error("tree dump: bad split " + line);
        node.feature = static_cast<int32_t>(f);
        node.value = std::strtof(lt + 1, nullptr);
        node.yes = offset + field(line, "yes=");
        node.no = offset + field(line, "no=");
        node.missing = offset + field(line, "missing=");
      } else {
        throw Error("tree dump: bad line " + line);
      }
    }
    if (local.empty()) throw Error("tree dump: an empty tree");
    for (const Node& n : local)
      if (n.feature == -2) throw Error("tree dump: a node id is missing");
    roots_.push_back(offset);
    nodes_.insert(nodes_.end(), local.begin(), local.end());
  }
}

float CompiledForest::margin(const float* row) const {
  float sum = base_;
  const Node* nodes = nodes_.data();
  for (int32_t root : roots_) {
    const Node* n = nodes + root;
    while (n->feature >= 0) {
      float x = row[n->feature];
      n = nodes + (std::isnan(x) ? n->missing : x < n->value ? n->yes : n->no);
    }
    sum += n->value;
  }
  return sum;
}

}  // namespace kvpolicy
