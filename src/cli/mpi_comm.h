// The ranks of an mpirun, for distributed sweeps. Only mpi_comm.cc speaks MPI (and only when
// built with it: KVPOLICY_HAVE_MPI), so nothing else includes mpi.h.
#pragma once

#include "kvpolicy/core/cell_sweep.h"

namespace kvpolicy::cli {

// How many processes the launcher (mpirun, srun) started with this one; 0 without one.
int mpi_launched_size();
// The ranks of the mpirun that started this process (MPI initialised on the first call), or
// nullptr for a plain run. Throws ConfigError when mpirun started several processes but this
// build has no MPI (they would each run the whole sweep into the same file).
SweepComm* mpi_sweep_comm();
// Ends MPI after a distributed sweep (every rank calls it); nothing when there is none.
void mpi_finish();
// On an error: ends every rank of a distributed run (MPI_Abort), so none waits forever.
void mpi_abort_on_error(int code);

}  // namespace kvpolicy::cli
