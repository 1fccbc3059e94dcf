#!/usr/bin/env bash
# A one-node Slurm on this machine for tests: munged, slurmctld and slurmd on localhost, with a
# private configuration, state and socket in DIR, nothing outside it touched.
#
#   tests/slurm/cluster.sh start DIR   starts them; prints "export SLURM_CONF=DIR/slurm.conf";
#                                       exits 77 (with why) where Slurm cannot be started here
#   tests/slurm/cluster.sh stop DIR    stops them
set -uo pipefail
what=${1:-} dir=${2:-}
if [ -z "$what" ] || [ -z "$dir" ]; then
  echo "usage: tests/slurm/cluster.sh start|stop DIR" >&2
  exit 2
fi
skip() { echo "slurm cluster: $*" >&2; exit 77; }

stop() {
  for name in slurmd slurmctld munged; do
    [ -f "$dir/$name.pid" ] || continue
    pid=$(cat "$dir/$name.pid" 2>/dev/null)
    [ -n "$pid" ] && kill "$pid" 2>/dev/null
  done
  for name in slurmd slurmctld munged; do
    [ -f "$dir/$name.pid" ] || continue
    pid=$(cat "$dir/$name.pid" 2>/dev/null)
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null
    rm -f "$dir/$name.pid"
  done
}

if [ "$what" = stop ]; then
  stop
  exit 0
fi
[ "$what" = start ] || { echo "tests/slurm/cluster.sh: unknown action '$what'" >&2; exit 2; }

for tool in munged mungekey slurmctld slurmd sbatch squeue scancel; do
  command -v "$tool" >/dev/null || [ -x "/usr/sbin/$tool" ] || skip "$tool is not installed (Debian: slurm-wlm, munge)"
done
PATH=$PATH:/usr/sbin
[ "$(id -u)" = 0 ] || skip "needs root: slurmd runs jobs as their user, and a private slurmd must be root to do so"

mkdir -p "$dir"/{state,spool,log,munge}
chmod 700 "$dir" "$dir/munge"
host=$(hostname -s)
cpus=$(nproc)
memory=$(awk '/MemTotal/ {print int($2 / 1024 * 0.8)}' /proc/meminfo)
# Ports of their own, so that no other Slurm on the machine is disturbed.
port=$((20000 + $$ % 20000))

mungekey --create --keyfile "$dir/munge/munge.key" >/dev/null 2>&1 ||
  dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 2>/dev/null
chmod 600 "$dir/munge/munge.key"
munged --force --key-file "$dir/munge/munge.key" --socket "$dir/munge/munge.socket" \
  --pid-file "$dir/munged.pid" --log-file "$dir/log/munged.log" --seed-file "$dir/munge/seed" ||
  skip "munged did not start: $(tail -n 3 "$dir/log/munged.log" 2>/dev/null)"

cat > "$dir/slurm.conf" <<CONF
ClusterName=gbasimtest
SlurmctldHost=$host
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
MaxArraySize=100001
KillWait=5
InactiveLimit=0
MinJobAge=300
NodeName=$host CPUs=$cpus RealMemory=$memory State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
CONF
export SLURM_CONF=$dir/slurm.conf
slurmctld -f "$SLURM_CONF" || { stop; skip "slurmctld did not start: $(tail -n 3 "$dir/log/slurmctld.log" 2>/dev/null)"; }
slurmd -f "$SLURM_CONF" || { stop; skip "slurmd did not start: $(tail -n 3 "$dir/log/slurmd.log" 2>/dev/null)"; }
for _ in $(seq 100); do
  state=$(sinfo -h -n "$host" -o %t 2>/dev/null)
  case "$state" in idle*|mix*|alloc*) echo "export SLURM_CONF=$SLURM_CONF"; exit 0 ;; esac
  sleep 0.2
done
stop
skip "the node did not come up (state '$state'): $(tail -n 3 "$dir/log/slurmctld.log" 2>/dev/null)"
