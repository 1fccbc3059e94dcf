// A switching job on real ranks: its sync and server phases in turn.
#pragma once

#include "mpi/job.h"
#include "mpi/server.h"

namespace gbasim::mpi {

// A switching job (training.switching): rank 0 the server and the holder of the rule in
// force through every phase, ranks 1..N the workers of every pool; sync phases exchange
// gradients between all ranks, server phases talk to rank 0.
RuleMetrics run_switching(Job& job, Holder* holder, WorkerRecord& me, ServerRecord& server);

}  // namespace gbasim::mpi
