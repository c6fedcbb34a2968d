// The only MPI code: point-to-point messages on MPI_COMM_WORLD for coordinate_cells and
// work_for_coordinator. Without MPI in the build, a plain run is unaffected and an mpirun of
// several processes is refused.
#include "mpi_comm.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>

#include "kvpolicy/core/error.h"

#ifdef KVPOLICY_HAVE_MPI
#include <mpi.h>
#endif

namespace kvpolicy::cli {
namespace {

#ifdef KVPOLICY_HAVE_MPI
class MpiComm final : public SweepComm {
 public:
  MpiComm() {
    int provided = 0;
    // Only the main thread calls MPI; rank 0's cell thread never does.
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
  }
  ~MpiComm() override { MPI_Finalize(); }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void send(int to, int tag, const std::string& data) override {
    MPI_Send(data.data(), static_cast<int>(data.size()), MPI_CHAR, to, tag, MPI_COMM_WORLD);
  }
  Message receive(int from) override {
    // Probe and sleep: a blocking MPI_Recv busy-polls a core that rank 0's cells need.
    MPI_Status status;
    for (int flag = 0;;) {
      MPI_Iprobe(from < 0 ? MPI_ANY_SOURCE : from, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &status);
      if (flag) break;
      std::this_thread::sleep_for(std::chrono::microseconds(500));
    }
    int count = 0;
    MPI_Get_count(&status, MPI_CHAR, &count);
    Message m;
    m.from = status.MPI_SOURCE;
    m.tag = status.MPI_TAG;
    m.data.resize(static_cast<size_t>(count));
    MPI_Recv(m.data.data(), count, MPI_CHAR, m.from, m.tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    return m;
  }
  void abort_all(int code) { MPI_Abort(MPI_COMM_WORLD, code); }

 private:
  int rank_ = 0, size_ = 1;
};

std::unique_ptr<MpiComm>& the_comm() {
  static std::unique_ptr<MpiComm> comm;
  return comm;
}
#endif

}  // namespace

int mpi_launched_size() {
  // OpenMPI's mpirun sets OMPI_COMM_WORLD_SIZE; MPICH's hydra and Slurm's PMI set PMI_SIZE.
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"})
    if (const char* v = std::getenv(name)) return std::max(1, std::atoi(v));
  return 0;
}

SweepComm* mpi_sweep_comm() {
  int size = mpi_launched_size();
  if (size == 0) return nullptr;
#ifdef KVPOLICY_HAVE_MPI
  auto& comm = the_comm();
  if (!comm) comm = std::make_unique<MpiComm>();
  return comm.get();
#else
  if (size == 1) return nullptr;
  throw ConfigError(
      "this kvpolicy was built without MPI (install libopenmpi-dev and rebuild), so mpirun would "
      "run the whole sweep " +
      std::to_string(size) + " times; run the processes with --shard i/" + std::to_string(size) +
      " and join their files with `kvpolicy merge` instead");
#endif
}

void mpi_finish() {
#ifdef KVPOLICY_HAVE_MPI
  the_comm().reset();
#endif
}

void mpi_abort_on_error(int code) {
#ifdef KVPOLICY_HAVE_MPI
  if (the_comm() && the_comm()->size() > 1) the_comm()->abort_all(code);
#endif
  (void)code;
}

}  // namespace kvpolicy::cli
