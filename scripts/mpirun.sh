#!/usr/bin/env bash
# Starts gbasim-mpi on this machine with P ranks: mpirun with the settings one machine needs
# (ranks may outnumber the cores, shared-memory transport, no core binding so that the
# operating system shares the cores as it would) and, as root, OpenMPI's permission to run
# as root. On a real cluster call mpirun yourself with a host file.
#
# Usage: scripts/mpirun.sh P [gbasim-mpi options...]
set -euo pipefail
if [ $# -lt 1 ] || ! [[ $1 =~ ^[0-9]+$ ]]; then
  echo "usage: scripts/mpirun.sh P --spec FILE [options]  (P: the ranks, see gbasim-mpi --help)" >&2
  exit 2
fi
ranks=$1
shift
root=$(cd "$(dirname "$0")/.." && pwd)
exe=${GBASIM_MPI:-$root/build/bin/gbasim-mpi}
[ -x "$exe" ] || { echo "mpirun.sh: $exe is not built (bash scripts/build.sh)" >&2; exit 2; }
flags=(--oversubscribe --bind-to none --mca btl self,vader --mca btl_vader_single_copy_mechanism none)
if [ "$(id -u)" = 0 ]; then flags+=(--allow-run-as-root); fi
export OMPI_MCA_rmaps_base_oversubscribe=1
exec mpirun "${flags[@]}" -np "$ranks" "$exe" "$@"
