// The Python module kvpolicy._kvpolicy: the application layer's functions (app_bindings.cc), the
// online cache (KvCache) and the eviction-policy adapter for an engine's radix cache
// (PolicyTree). The package kvpolicy (python/kvpolicy/__init__.py) wraps it. Long calls release
// the GIL; kvpolicy's exceptions become Python exceptions with the same messages.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "kvpolicy/cache/kv_cache.h"
#include "kvpolicy/cache/policy_tree.h"
#include "kvpolicy/core/capacity.h"
#include "kvpolicy/core/cost_model.h"
#include "kvpolicy/core/error.h"
#include "kvpolicy/sim/sim.h"
#include "kvpolicy/sim/sweep.h"
#include "kvpolicy/trace/trace.h"
#include "kvpolicy/trace/trace_io.h"

namespace py = pybind11;
using namespace kvpolicy;

void bind_app(py::module_& m);

namespace {

Time seconds_to_us(double s) {
  if (!std::isfinite(s) || s < 0 || s > 9.2e12)
    throw ConfigError("time must be a finite number of seconds in [0, 9.2e12], got " +
                      std::to_string(s));
  return static_cast<Time>(std::llround(s * 1e6));
}

// An id argument in [0, max], or ValueError naming it: a cast to the id's width would keep only
// its low bits (session 2^32 + 5 would be session 5).
uint64_t id_argument(const py::object& value, const char* name, uint64_t max) {
  if (!py::isinstance<py::int_>(value))
    throw py::type_error(std::string(name) + " must be an int, got " +
                         std::string(py::str(py::type::of(value).attr("__name__"))));
  if (value < py::int_(0) || value > py::int_(max))
    throw py::value_error(std::string(name) + " = " + std::string(py::str(value)) +
                          " is out of range [0, " + std::to_string(max) + "]");
  return value.cast<uint64_t>();
}

// The request fields a policy may read, as keyword arguments (None = unknown).
RequestInfo request_info(std::optional<double> time, const py::object& session, uint32_t turn,
                         const py::object& category, uint32_t prompt_tokens, uint32_t output_tokens,
                         std::optional<double> continuation, int32_t priority) {
  RequestInfo info;
  if (time) info.time = seconds_to_us(*time);
  // kNoSession is "no session", so the largest id is one below it.
  if (!session.is_none())
    info.session = static_cast<SessionId>(id_argument(session, "session", kNoSession - 1));
  info.turn = turn;
  info.category = static_cast<CategoryId>(
      id_argument(category, "category", std::numeric_limits<CategoryId>::max()));
  info.prompt_tokens = prompt_tokens;
  info.output_tokens = output_tokens;
  if (continuation) info.continuation = static_cast<float>(*continuation);
  info.priority = priority;
  return info;
}

#define KVPOLICY_REQUEST_KWARGS                                                              \
  py::kw_only(), py::arg("time") = py::none(), py::arg("session") = py::none(),              \
                 py::arg("turn") = 1, py::arg("category") = 0, py::arg("prompt_tokens") = 0, \
                 py::arg("output_tokens") = 0, py::arg("continuation") = py::none(),         \
                 py::arg("priority") = 0

// A KvCache that Python threads may share: insert_many runs with the GIL released, so every call
// that touches the cache holds its mutex. A call waits for it with the GIL released (the holder
// may need the GIL to finish), then runs holding both.
struct SharedKvCache {
  SharedKvCache(const PolicySpec& spec, size_t capacity_blocks, uint32_t block_tokens,
                uint64_t seed)
      : cache(spec, capacity_blocks, block_tokens, seed) {}
  std::unique_lock<std::mutex> lock() {
    std::unique_lock<std::mutex> held(mutex, std::try_to_lock);
    if (!held) {
      py::gil_scoped_release release;
      held.lock();
    }
    return held;
  }
  KvCache cache;
  std::mutex mutex;
};

// Keys from any iterable of ints (a list, a set, a generator): vLLM passes its protected keys
// as a set, which pybind11's list conversion refuses.
std::vector<BlockKey> keys_of(const py::handle& keys) {
  std::vector<BlockKey> out;
  if (py::isinstance<py::list>(keys) || py::isinstance<py::tuple>(keys))
    return keys.cast<std::vector<BlockKey>>();
  for (py::handle k : keys) out.push_back(k.cast<BlockKey>());
  return out;
}

// kvpolicy.Inserted, an IntEnum (REFUSED is falsy, so `if not policy.on_insert(...)` reads as
// before), built once; its members are returned without a call.
py::object inserted_member(Inserted r) {
  static auto* members = new std::vector<py::object>();
  if (members->empty()) {
    py::object e = py::module_::import("kvpolicy._kvpolicy").attr("Inserted");
    for (int i = 0; i < 3; ++i) members->push_back(e(i));
  }
  return (*members)[static_cast<int>(r)];
}

py::dict stats_dict(const PolicyTreeStats& s, const PolicyStats& policy) {
  py::dict d;
  d["requests"] = s.requests;
  d["hits"] = s.hits;
  d["inserted"] = s.inserted;
  d["duplicates"] = s.duplicates;
  d["evictions"] = s.evictions;
  d["removed"] = s.removed;
  d["refused"] = s.refused;
  d["size"] = s.size;
  d["capacity"] = s.capacity;
  d["pinned"] = s.pinned;
  d["pending"] = s.pending;
  py::dict p;
  for (auto& [name, value] : policy) p[py::str(name)] = value;
  d["policy_stats"] = p;
  return d;
}

}  // namespace

PYBIND11_MODULE(_kvpolicy, m) {
  m.doc() = "kvpolicy's C++ engine: the simulator, the online cache and the policy adapter";
  m.attr("__version__") = KVPOLICY_PROJECT_VERSION;

  // Registered base first: pybind11 tries the latest registered translator first.
  static py::exception<Error> error(m, "Error", PyExc_RuntimeError);
  // A ConfigError is a kvpolicy Error (as in C++) and a ValueError (a bad argument).
  static py::exception<ConfigError> config_error(
      m, "ConfigError", py::make_tuple(error, py::handle(PyExc_ValueError)));
  static py::exception<InputError> input_error(m, "InputError", error.ptr());
  error.doc() = "Any error kvpolicy reports (a RuntimeError); its message names the cause.";
  config_error.doc() =
      "A bad argument or option (also a ValueError): an unknown policy, a capacity out of range.";
  input_error.doc() = "Bad input data: the message names the file, line and field.";
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const InputError& e) {
      input_error(e.what());
    } catch (const ConfigError& e) {
      config_error(e.what());
    } catch (const Error& e) {
      error(e.what());
    }
  });

  py::class_<Trace>(m, "Trace", "A replayable trace: requests with chained block keys")
      .def_readonly("name", &Trace::name, "the trace's name (its source and path)")
      .def_readonly("block_tokens", &Trace::block_tokens, "tokens per KV block")
      .def_property_readonly(
          "assumptions",
          [](const Trace& t) -> py::object {
            if (t.assumptions.empty()) return py::none();
            return py::str(t.assumptions.model);
          },
          "the assumption model its prompts were made by (trace import --assume), or None")
      .def_property_readonly(
          "assumptions_statement", [](const Trace& t) { return t.assumptions.statement; },
          "that model in one line for humans (\"\" when None)")
      .def("__len__", &Trace::size, "the number of requests")
      .def_property_readonly("block_accesses", &Trace::num_block_accesses,
                             "prompt blocks over all requests")
      .def_property_readonly(
          "unique_blocks", [](const Trace& t) { return count_unique_blocks(t); },
          "distinct block keys (what capacity \"100%\" is)")
      .def(
          "blocks",
          [](const Trace& t, size_t r) {
            if (r >= t.size()) throw py::index_error("request index out of range");
            auto p = t.prompt(r);
            return std::vector<BlockKey>(p.begin(), p.end());
          },
          py::arg("request"), "request r's prompt as chained block keys")
      .def(
          "request",
          [](const Trace& t, size_t r) {
            if (r >= t.size()) throw py::index_error("request index out of range");
            py::dict d;
            d["time"] = double(t.time[r]) / 1e6;
            d["session"] = t.session[r] == kNoSession ? py::object(py::none())
                                                      : py::object(py::int_(t.session[r]));
            d["turn"] = t.turn[r];
            d["category"] = t.category[r];
            d["prompt_tokens"] = t.prompt_tokens[r];
            d["output_tokens"] = t.output_tokens[r];
            d["continuation"] = t.has_continuation() ? py::object(py::float_(t.continuation[r]))
                                                     : py::object(py::none());
            return d;
          },
          py::arg("request"), "request r's fields (time in seconds), as RequestInfo takes them");

  m.attr("Inserted") = py::module_::import("enum").attr("IntEnum")(
      "Inserted", py::make_tuple(py::make_tuple("REFUSED", 0), py::make_tuple("ADDED", 1),
                                 py::make_tuple("CACHED", 2)));
  m.attr("Inserted").attr("__module__") = "kvpolicy";
  m.attr("Inserted").attr("__doc__") =
      "What EvictionPolicy.on_insert did: REFUSED (0: full, nothing added), ADDED, or CACHED "
      "(already tracked: no event, not a hit).";

  bind_app(m);  // load_trace, simulate, serve, mrc, import_trace, the listings (app_bindings.cc)
  m.def(
      "policy_names", [] { return PolicyRegistry::instance().names(); }, "every registered policy");
  m.def(
      "is_offline", [](const std::string& spec) { return needs_future(parse_policy_spec(spec)); },
      py::arg("policy"), "whether the policy reads the trace's future (replay only)");

  py::class_<SharedKvCache>(m, "_KvCache")
      .def(py::init([](const std::string& policy, size_t capacity_blocks, uint32_t block_tokens,
                       uint64_t seed) {
             return std::make_unique<SharedKvCache>(parse_policy_spec(policy), capacity_blocks,
                                                    block_tokens, seed);
           }),
           py::arg("policy"), py::arg("capacity_blocks"), py::arg("block_tokens") = 16,
           py::arg("seed") = 1)
      .def(
          "block_keys",
          [](const SharedKvCache& s, const std::vector<uint32_t>& tokens) {
            return s.cache.block_keys(tokens);  // reads only the block size
          },
          py::arg("tokens"))
      .def(
          "match",
          [](SharedKvCache& s, const std::vector<BlockKey>& k) {
            auto held = s.lock();
            return s.cache.match(k);
          },
          py::arg("keys"))
      .def(
          "lookup",
          [](SharedKvCache& s, const std::vector<BlockKey>& keys, std::optional<double> time,
             const py::object& session, uint32_t turn, const py::object& category, uint32_t pt,
             uint32_t ot, std::optional<double> cont, int32_t prio) {
            RequestInfo info = request_info(time, session, turn, category, pt, ot, cont, prio);
            auto held = s.lock();
            return s.cache.lookup(keys, info);
          },
          py::arg("keys"), KVPOLICY_REQUEST_KWARGS)
      .def(
          "insert",
          [](SharedKvCache& s, const std::vector<BlockKey>& keys, std::optional<double> time,
             const py::object& session, uint32_t turn, const py::object& category, uint32_t pt,
             uint32_t ot, std::optional<double> cont, int32_t prio) {
            RequestInfo info = request_info(time, session, turn, category, pt, ot, cont, prio);
            AccessResult r;
            {
              auto held = s.lock();
              r = s.cache.insert(keys, info);
            }
            return py::make_tuple(r.hit_blocks, r.inserted_blocks, r.evictions);
          },
          py::arg("keys"), KVPOLICY_REQUEST_KWARGS)
      .def(
          "insert_many",
          [](SharedKvCache& s, const std::vector<std::vector<BlockKey>>& requests) {
            std::vector<uint32_t> hits(requests.size());
            py::gil_scoped_release release;
            std::lock_guard<std::mutex> held(s.mutex);
            for (size_t i = 0; i < requests.size(); ++i)
              hits[i] = s.cache.insert(requests[i]).hit_blocks;
            return hits;
          },
          py::arg("requests"))
      .def(
          "pin",
          [](SharedKvCache& s, const std::vector<BlockKey>& k) {
            auto held = s.lock();
            s.cache.pin(k);
          },
          py::arg("keys"))
      .def(
          "unpin",
          [](SharedKvCache& s, const std::vector<BlockKey>& k) {
            auto held = s.lock();
            s.cache.unpin(k);
          },
          py::arg("keys"))
      .def(
          "evict",
          [](SharedKvCache& s, size_t n, const py::object& exclude, bool all_or_nothing) {
            std::vector<BlockKey> spared = keys_of(exclude);
            auto held = s.lock();
            return s.cache.evict(n, {.exclude = spared, .all_or_nothing = all_or_nothing});
          },
          py::arg("num_blocks"), py::kw_only(), py::arg("exclude") = py::tuple(),
          py::arg("all_or_nothing") = false)
      .def(
          "remove",
          [](SharedKvCache& s, const std::vector<BlockKey>& k) {
            auto held = s.lock();
            return s.cache.remove(k);
          },
          py::arg("keys"))
      .def("clear",
           [](SharedKvCache& s) {
             auto held = s.lock();
             s.cache.clear();
           })
      .def("stats",
           [](SharedKvCache& s) {
             auto held = s.lock();
             return stats_dict(s.cache.stats(), s.cache.policy_stats());
           })
      .def("__len__",
           [](SharedKvCache& s) {
             auto held = s.lock();
             return s.cache.size();
           })
      .def_property_readonly("capacity", [](const SharedKvCache& s) { return s.cache.capacity(); })
      .def_property_readonly("block_tokens",
                             [](const SharedKvCache& s) { return s.cache.block_tokens(); })
      .def_property_readonly("policy",
                             [](const SharedKvCache& s) { return s.cache.policy_label(); });

  py::class_<PolicyTree>(m, "_PolicyTree")
      .def(py::init([](const std::string& policy, size_t capacity_blocks, uint32_t block_tokens,
                       uint64_t seed, bool flat) {
             return std::make_unique<PolicyTree>(parse_policy_spec(policy), capacity_blocks,
                                                 block_tokens, seed,
                                                 flat ? TreeShape::kFlat : TreeShape::kPrefix);
           }),
           py::arg("policy"), py::arg("capacity_blocks"), py::arg("block_tokens") = 16,
           py::arg("seed") = 1, py::kw_only(), py::arg("flat") = false)
      .def(
          "begin_request",
          [](PolicyTree& t, std::optional<double> time, const py::object& session, uint32_t turn,
             const py::object& category, uint32_t pt, uint32_t ot, std::optional<double> cont,
             int32_t prio, std::vector<BlockKey> blocks) {
            RequestInfo info = request_info(time, session, turn, category, pt, ot, cont, prio);
            info.blocks = std::move(blocks);
            t.begin_request(info);
          },
          KVPOLICY_REQUEST_KWARGS, py::arg("blocks") = std::vector<BlockKey>{},
          "Begins one request: its fields (time in seconds, session, ...) and blocks, the ids of "
          "the prompt's pages in order, cached or not. Nodes it hits or inserts are held until "
          "end_request().")
      .def("end_request", &PolicyTree::end_request,
           "Ends the request begun by begin_request(): its held nodes become evictable.")
      .def("on_hit", &PolicyTree::hit, py::arg("node"), "A cached node was matched by a request.")
      .def(
          "on_insert",
          [](PolicyTree& t, BlockKey node, std::optional<BlockKey> parent, bool make_room) {
            return inserted_member(t.insert(node, parent, make_room));
          },
          py::arg("node"), py::arg("parent") = py::none(), py::kw_only(),
          py::arg("make_room") = false,
          "A node was added under parent (None: a root child; ignored when flat). Inserted.ADDED; "
          "CACHED if already tracked (no event, not a hit); REFUSED (falsy) when full and not "
          "make_room, or every node is locked: nothing was added.")
      .def(
          "on_insert_chain",
          [](PolicyTree& t, const std::vector<BlockKey>& nodes, std::optional<BlockKey> parent,
             bool make_room) { return t.insert_chain(nodes, parent, make_room); },
          py::arg("nodes"), py::arg("parent") = py::none(), py::kw_only(),
          py::arg("make_room") = false,
          "on_insert() of nodes[0] under parent and each next node under the one before, in one "
          "call; stops at the first refused. Returns how many nodes, from the front, are tracked.")
      .def("on_lock", &PolicyTree::pin, py::arg("node"),
           "A running request holds the node: never evicted until on_unlock().")
      .def("on_unlock", &PolicyTree::unpin, py::arg("node"), "Releases a hold of on_lock().")
      .def(
          "on_hits",
          [](PolicyTree& t, const std::vector<BlockKey>& nodes, bool ignore_missing) {
            return t.hits(nodes, ignore_missing);
          },
          py::arg("nodes"), py::kw_only(), py::arg("ignore_missing") = false,
          "on_hit() for each node, in order (ignore_missing: untracked nodes are skipped). "
          "Returns how many were tracked.")
      .def(
          "on_locks",
          [](PolicyTree& t, const std::vector<BlockKey>& nodes, bool ignore_missing) {
            return t.pins(nodes, ignore_missing);
          },
          py::arg("nodes"), py::kw_only(), py::arg("ignore_missing") = false,
          "on_lock() for each node, in order (ignore_missing as on_hits).")
      .def(
          "on_unlocks",
          [](PolicyTree& t, const std::vector<BlockKey>& nodes, bool ignore_missing) {
            return t.unpins(nodes, ignore_missing);
          },
          py::arg("nodes"), py::kw_only(), py::arg("ignore_missing") = false,
          "on_unlock() for each node, in order (ignore_missing as on_hits).")
      .def("on_remove", &PolicyTree::remove, py::arg("node"),
           "The cache dropped node (a failed store, an outside deletion): it and its descendants "
           "leave, told to the policy as removed, not evicted; their locks go too. Returns them, "
           "descendants first.")
      .def(
          "on_removes",
          [](PolicyTree& t, const std::vector<BlockKey>& nodes, bool ignore_missing) {
            return t.remove_all(nodes, ignore_missing);
          },
          py::arg("nodes"), py::kw_only(), py::arg("ignore_missing") = false,
          "on_remove() for each node; returns how many nodes left, descendants included.")
      .def(
          "evict",
          [](PolicyTree& t, size_t n, const py::object& exclude, bool all_or_nothing) {
            std::vector<BlockKey> spared = keys_of(exclude);
            return t.evict(n, {.exclude = spared, .all_or_nothing = all_or_nothing});
          },
          py::arg("num_blocks"), py::kw_only(), py::arg("exclude") = py::tuple(),
          py::arg("all_or_nothing") = false,
          "Up to num_blocks unlocked nodes to delete now, leaves first, in the policy's order; "
          "never an excluded node or an ancestor of one. all_or_nothing: [] and no change when "
          "fewer can be freed.")
      .def(
          "evictable",
          [](const PolicyTree& t, const py::object& exclude) {
            return t.evictable(keys_of(exclude));
          },
          py::kw_only(), py::arg("exclude") = py::tuple(),
          "How many nodes evict() could free now, sparing exclude (a dry run's count).")
      .def(
          "victims",
          [](PolicyTree& t, size_t n, const py::object& exclude) {
            return t.victims(n, keys_of(exclude));
          },
          py::arg("num_blocks"), py::kw_only(), py::arg("exclude") = py::tuple(),
          "Two-phase eviction: up to num_blocks nodes in the policy's order, taken out of it and "
          "kept pending (tracked, locked) until commit() or cancel().")
      .def(
          "commit", [](PolicyTree& t, const py::object& nodes) { return t.commit(keys_of(nodes)); },
          py::arg("nodes"), "Pending nodes the cache deleted leave; returns how many.")
      .def(
          "cancel", [](PolicyTree& t, const py::object& nodes) { return t.cancel(keys_of(nodes)); },
          py::arg("nodes"),
          "Pending nodes the cache kept go back as newly inserted; returns how many.")
      .def("clear", &PolicyTree::clear, "Drops every node and starts the policy afresh.")
      .def("__contains__", &PolicyTree::contains, "Whether the node is tracked.")
      .def("__len__", &PolicyTree::size, "The number of nodes tracked.")
      .def(
          "stats", [](const PolicyTree& t) { return stats_dict(t.stats(), t.policy_stats()); },
          "Counters (requests, hits, inserted, duplicates, evictions, removed, refused, size, "
          "capacity, pinned, pending) and the policy's own.")
      .def_property_readonly("in_request", &PolicyTree::in_request,
                             "whether a request is open (begin_request() without end_request())")
      .def_property_readonly("capacity", &PolicyTree::capacity, "capacity in blocks")
      .def_property_readonly(
          "flat", [](const PolicyTree& t) { return t.shape() == TreeShape::kFlat; },
          "whether nodes stand alone (any unlocked node evictable) instead of a prefix tree")
      .def_property_readonly("policy", &PolicyTree::policy_label, "the policy's label");
}
