// A sweep's ranks as threads for tests: one mailbox per rank, the SweepComm the cell sweeps use
// under mpirun (tests/core/cell_sweep_test.cc, tests/app/sweep_test.cc).
#pragma once

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "kvpolicy/core/cell_sweep.h"

namespace kvpolicy::testing {

struct FakeWorld {
  struct Box {
    std::mutex mu;
    std::condition_variable cv;
    std::deque<SweepComm::Message> messages;
  };
  explicit FakeWorld(int n) : boxes(n) {
    for (auto& b : boxes) b = std::make_unique<Box>();
  }
  std::vector<std::unique_ptr<Box>> boxes;
};

class FakeComm final : public SweepComm {
 public:
  FakeComm(FakeWorld& world, int rank) : world_(world), rank_(rank) {}
  int rank() const override { return rank_; }
  int size() const override { return static_cast<int>(world_.boxes.size()); }
  void send(int to, int tag, const std::string& data) override {
    auto& box = *world_.boxes.at(to);
    std::lock_guard lock(box.mu);
    box.messages.push_back({rank_, tag, data});
    box.cv.notify_all();
  }
  Message receive(int from) override {
    auto& box = *world_.boxes.at(rank_);
    std::unique_lock lock(box.mu);
    for (;;) {
      for (auto it = box.messages.begin(); it != box.messages.end(); ++it)
        if (from < 0 || it->from == from) {
          Message m = *it;
          box.messages.erase(it);
          return m;
        }
      box.cv.wait(lock);
    }
  }

 private:
  FakeWorld& world_;
  int rank_;
};

}  // namespace kvpolicy::testing
