#!/usr/bin/env bash
# End-to-end checks of the gbasim command line: help, errors, atomic output, determinism.
# Usage: cli_test.sh PATH/TO/gbasim
set -uo pipefail
gbasim=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# Small and fast: a few thousand synthetic samples.
small=(--train-samples 3000 --test-samples 1000 --batch-size 100 -q)

# Whole outputs are captured before grep reads them: grep -q on a pipe would stop early
# and fail the writer with SIGPIPE under pipefail.
help=$("$gbasim" --help) || fail "gbasim --help must succeed"
grep -q 'train' <<<"$help" || fail "gbasim --help lists no commands"
help=$("$gbasim" train --help) || fail "gbasim train --help must succeed"
grep -q -- '--model' <<<"$help" || fail "train --help lists no --model"

"$gbasim" nonsense >/dev/null 2>&1; [ $? -eq 2 ] || fail "an unknown command must exit 2"
msg=$("$gbasim" train --model resnet "${small[@]}" --out "$work/x.json" 2>&1); rc=$?
[ $rc -eq 2 ] || fail "an unknown model must exit 2 (got $rc)"
grep -qF -- "--model must be \"lr\", \"fm\", \"deepfm\", \"widedeep\" or \"dlrm\", not 'resnet'" <<<"$msg" || fail "unknown model message: $msg"
msg=$("$gbasim" train --mlp 128,x "${small[@]}" --out "$work/x.json" 2>&1)
grep -q -- "--mlp must be a comma-separated list" <<<"$msg" || fail "bad --mlp message: $msg"
msg=$("$gbasim" train --ctr 2 "${small[@]}" --out "$work/x.json" 2>&1)
grep -q "'data.target_ctr'" <<<"$msg" || fail "bad --ctr message: $msg"
[ ! -e "$work/x.json" ] || fail "a failed run must write nothing"

# A malformed Criteo file: the error names file and line; an earlier result survives.
printf '1\t5\n' >"$work/bad.tsv"
echo '{"kept": true}' >"$work/kept.json"
msg=$("$gbasim" train --data "$work/bad.tsv" --out "$work/kept.json" -q 2>&1); rc=$?
[ $rc -ne 0 ] || fail "a malformed data file must fail"
grep -q "$work/bad.tsv:1: expected 40 tab-separated columns, found 2" <<<"$msg" || fail "malformed file message: $msg"
grep -q '"kept"' "$work/kept.json" || fail "a failed run must leave the earlier result intact"

# Same options, same bytes; another seed, other bytes.
"$gbasim" train --model dlrm "${small[@]}" --out "$work/a.json" || fail "train run a"
"$gbasim" train --model dlrm "${small[@]}" --out "$work/b.json" || fail "train run b"
"$gbasim" train --model dlrm "${small[@]}" --seed 2 --out "$work/c.json" || fail "train run c"
cmp -s "$work/a.json" "$work/b.json" || fail "the same options must give byte-identical results"
cmp -s "$work/a.json" "$work/c.json" && fail "another seed must give another result"
for key in final_auc final_logloss bayes_auc curve; do
  grep -q "\"$key\"" "$work/a.json" || fail "result lacks $key"
done
ls "$work" | grep -q '\.tmp\.' && fail "temporary files were left behind"

# A Criteo file trains end to end.
for i in $(seq 1 200); do
  label=$((i % 3 == 0 ? 1 : 0))
  printf '%d\t%d\t\t3%s\t%x\t%x%s\n' "$label" "$i" "$(printf '\t1%.0s' {1..10})" $((i % 7)) $((label * 5 + i % 2)) \
    "$(printf '\tab%.0s' {1..24})"
done >"$work/tiny.tsv"
"$gbasim" train --model fm --data "$work/tiny.tsv" --batch-size 20 --epochs 3 -q --out "$work/criteo.json" \
  || fail "training on a Criteo file"
grep -q '"source": "criteo"' "$work/criteo.json" || fail "criteo result lacks its source"

described=$("$gbasim" data --train-samples 2000 --test-samples 500) || fail "gbasim data must succeed"
grep -q '"bayes_auc"' <<<"$described" || fail "gbasim data prints no Bayes AUC"

# gbasim run: a tiny spec, determinism, and errors that name the key and write nothing.
cat >"$work/tiny.json" <<'JSON'
{"data": {"train_samples": 4000, "test_samples": 500}, "model": {"name": "fm", "embedding_dim": 4},
 "training": {"workers": 3, "local_batch": 50}, "evaluation": {"interval_s": 0.01}}
JSON
for mode in sync gba; do
  "$gbasim" run --spec "$work/tiny.json" --set training.mode=$mode -q --out "$work/run-$mode-a.json" >/dev/null \
    || fail "gbasim run $mode"
  "$gbasim" run --spec "$work/tiny.json" --set training.mode=$mode -q --out "$work/run-$mode-b.json" >/dev/null \
    || fail "gbasim run $mode again"
  cmp -s "$work/run-$mode-a.json" "$work/run-$mode-b.json" || fail "gbasim run $mode is not byte-identical twice"
done
cmp -s "$work/run-sync-a.json" "$work/run-gba-a.json" && fail "sync and gba gave the same result"
summary=$("$gbasim" run --spec "$work/tiny.json" -q --out "$work/run-c.json") || fail "gbasim run summary"
grep -q '^mode .*time-to-AUC' <<<"$summary" || fail "the summary table has no header: $summary"
# Progress lines (a timing-only run has no evaluation lines): there, and the result the same.
"$gbasim" run --spec "$work/tiny.json" --set training.mode=gba --set simulation.timing_only=true \
  --set budget.max_samples=200000 -q --out "$work/quiet.json" >/dev/null || fail "a quiet timing-only run"
progress=$("$gbasim" run --spec "$work/tiny.json" --set training.mode=gba --set simulation.timing_only=true \
  --set budget.max_samples=200000 --progress-every 0.0001 --out "$work/progress.json" 2>&1 >/dev/null) \
  || fail "a timing-only run with progress lines"
[ "$(grep -cE '^  gba +t= *[0-9.]+ s +step +[0-9]+ +samples +[0-9]+ +worker steps [0-9]+ +messages [0-9]+' <<<"$progress")" -ge 2 ] \
  || fail "a timing-only run printed fewer than 2 progress lines: $progress"
cmp -s "$work/quiet.json" "$work/progress.json" || fail "progress lines changed the result"
msg=$("$gbasim" run --spec "$work/tiny.json" --progress-every 0 --out "$work/bad-out.json" 2>&1); rc=$?
[ $rc -eq 2 ] && grep -q -- "--progress-every must be a positive number" <<<"$msg" || fail "--progress-every 0: rc $rc, $msg"
check_spec_error() {  # spec text, expected message
  printf '%s' "$1" >"$work/bad.json"
  msg=$("$gbasim" run --spec "$work/bad.json" -q --out "$work/bad-out.json" 2>&1); rc=$?
  [ $rc -eq 2 ] || fail "bad spec $1 must exit 2 (got $rc)"
  grep -qF "$2" <<<"$msg" || fail "bad spec $1: expected '$2', got: $msg"
  [ ! -e "$work/bad-out.json" ] || fail "bad spec $1 wrote a result"
}
check_spec_error '{"trainng": {}}' "bad.json: unknown key 'trainng'"
check_spec_error '{"training": {"workers": "4"}}' "'training.workers' must be an integer"
check_spec_error '{"training": {"mode": "hogwild"}}' "'training.mode' must be \"sync\", \"async\", \"gba\", \"ssp\" or \"backup\", not 'hogwild'"
check_spec_error '{"cluster": {"nic_bandwidth": -1}}' "'cluster.nic_bandwidth' must be positive"
check_spec_error '{"cluster": {"server_model": "one_queue", "ps_shards": 2}}' "'cluster.server_model' one_queue needs cluster.ps_shards = 1"
check_spec_error '{"cluster": {"server_model": "two_queues"}}' "'cluster.server_model' must be \"sharded\" or \"one_queue\", not 'two_queues'"
check_spec_error '{"cluster": {"ps_one_queue": true}}' "'cluster.ps_one_queue' is now 'cluster.server_model'"
check_spec_error '{"cluster": {"nic_latency": 1e300}}' "'cluster.nic_latency' must lie in [0, 1], not 1e+300"
check_spec_error '{"cluster": {"nic_bandwidth": 1e400}}' "bad.json: not valid JSON"
check_spec_error '{"cluster": {"ps_shards": 100000}}' "'cluster.ps_shards' must lie in [1, 4096]"
check_spec_error '{"evaluation": {"interval_s": 1e-9}}' "'evaluation.interval_s' must lie in [1e-06, 1e+09]"
check_spec_error '{"simulation": {"max_simulated_s": -1}}' "'simulation.max_simulated_s' must not be negative"
check_spec_error '{"evaluation": {"target_auc": 3}}' "'evaluation.target_auc' must lie in [0, 1], not 3"
check_spec_error '{"stragglers": {"trace": {"path": "x.csv"}}}' "'stragglers.trace.format' must say what kind of trace"
check_spec_error '{"cluster": {"time_slice_s": 0.004}}' "'cluster.time_slice_s' needs cluster.shared_cores"
check_spec_error '{"cluster": {"ps_service_seed": 3}}' "'cluster.ps_service_seed' needs cluster.server_model \"one_queue\""
check_spec_error '{"cluster": {"time_slice_s": -1, "shared_cores": 2}}' "'cluster.time_slice_s' must not be negative"
check_spec_error '{"training": {"gba": {"gamma": 2}}}' "'training.gba.gamma' must lie in (0, 1]"
check_spec_error '{"training": ' "bad.json: not valid JSON"
check_spec_error '{"cluster": {"gpus_per_node": 3}}' "'cluster.gpus_per_node' must divide training.workers"
check_spec_error '{"cluster": {"fat_tree": {"nodes_per_switch": 8, "oversubscription": 3}}}' "'cluster.fat_tree.oversubscription' must be a positive divisor"
check_spec_error '{"cluster": {"topology": "hypercube"}}' "'cluster.topology' must be \"star\", \"fat_tree\", \"torus\" or \"dragonfly\", not 'hypercube'"
check_spec_error '{"cluster": {"topology": "torus", "torus": {"dimensions": [2, 2]}}}' "'cluster.torus.dimensions' make 4 points, and the cluster has"
check_spec_error '{"cluster": {"topology": "torus", "torus": {"dimensions": [4, 0]}}}' "'cluster.torus.dimensions[1]' must lie in [1, 4096]"
check_spec_error '{"cluster": {"topology": "dragonfly", "dragonfly": {"routers": [2]}}}' "'cluster.dragonfly.routers' must be [count, links]"
check_spec_error '{"cluster": {"topology": "dragonfly", "dragonfly": {"nodes_per_router": 1, "groups": [1, 1]}}}' "'cluster.dragonfly' makes 4 leaves (groups x chassis x routers x nodes_per_router), and the cluster has"
check_spec_error '{"cluster": {"pools": [{"workers": 4}]}}' "'cluster.pools' take training only by a scheduled switch"
check_spec_error '{"cluster": {"pools": [{"workers": 4, "speed": 1}]}}' "unknown key 'cluster.pools[0].speed'"
check_spec_error '{"cluster": {"pools": [{"workers": 0}]}, "training": {"switching": {"at_steps": [[5, "gba@1"]]}}}' "'cluster.pools[0].workers' must lie in [1, 4096]"
check_spec_error '{"cluster": {"pools": [{"workers": 4, "local_batch": 64}]}, "training": {"switching": {"at_steps": [[5, "sync@1"]]}}}' "runs sync on pool 1, whose workers x local batch (4 x 64) is not the global batch"
check_spec_error '{"cluster": {"pools": [{"workers": 4}]}, "training": {"switching": {"at_steps": [[5, "gba@2"]]}}}' "names pool 2, and there are 2"
check_spec_error '{"training": {"switching": {"at_steps": [[5, "gba@x"]]}}}' "'training.switching.at_steps[0]' the pool after '@' must be a pool number, not 'x'"
check_spec_error '{"cluster": {"embedding_exchange": "scatter"}}' "'cluster.embedding_exchange' must be \"all_gather\", \"all_to_all\" or \"hybrid\", not 'scatter'"
check_spec_error '{"cluster": {"allreduce": "butterfly"}}' "'cluster.allreduce' must be \"ring\", \"hierarchical\", \"tree\" or \"nccl\", not 'butterfly'"
check_spec_error '{"cluster": {"tree_chunk_bytes": 0}}' "'cluster.tree_chunk_bytes' must lie in [1, 1e+12]"
check_spec_error '{"cluster": {"gpus_per_node": 2}, "stragglers": {"network_rate_per_s": 1}}' "'stragglers.network_rate_per_s' slows a worker's own NIC"
check_spec_error '{"cluster": {"roles": {"workers": ["a"]}}}' "'cluster.roles' names hosts of cluster.platform_xml, which is not given"
check_spec_error '{"training": {"workers": 2}, "cluster": {"platform_xml": "p.xml", "ps_shards": 1, "roles": {"workers": ["a"], "servers": ["s"]}}}' "'cluster.roles.workers' must name one host a worker"
check_spec_error '{"training": {"workers": 2}, "cluster": {"platform_xml": "p.xml", "ps_shards": 1, "roles": {"workers": ["a", "b"], "servers": ["s"]}}}' "'stragglers.transient_rate_per_s' changes a host's speed"
# An XML platform: a file SimGrid cannot read, and a role naming a host the file lacks.
xml_spec='{"training": {"workers": 2}, "stragglers": {"transient_rate_per_s": 0}, "cluster": {"platform_xml": "p.xml", "ps_shards": 1, "roles": {"workers": ["host-0", "HOST"], "servers": ["host-8"]}}}'
echo "<platform version='4.1'><cluster id=" >"$work/p.xml"
check_spec_error "$xml_spec" "p.xml: not a SimGrid platform SimGrid can read"
cp "$(dirname "$0")/../platforms/star-9.xml" "$work/p.xml"
check_spec_error "$xml_spec" "p.xml: 'cluster.roles.workers[1]' names host 'HOST', which the file lacks"
msg=$("$gbasim" run --spec "$work/tiny.json" --set training.workers=x -q --out "$work/bad-out.json" 2>&1)
grep -qF "'training.workers' must be an integer" <<<"$msg" || fail "--set with a bad value: $msg"

# Arguments that are not what they seem: each an error that says so, and nothing written.
check_arguments_error() {  # expected message, then the command's arguments
  local expected=$1; shift
  msg=$("$gbasim" "$@" 2>&1); rc=$?
  [ $rc -eq 2 ] || fail "'$*' must exit 2 (got $rc): $msg"
  grep -qF -- "$expected" <<<"$msg" || fail "'$*': expected '$expected', got: $msg"
}
mkdir -p "$work/a-folder"
check_arguments_error "a-folder: is a folder, not a spec or platform file" run --spec "$work/a-folder" -q --out "$work/never.json"
echo '[1, 2]' >"$work/list.json"
check_arguments_error "list.json: the spec must be a JSON object" run --spec "$work/list.json" --set training.workers=2 -q --out "$work/never.json"
check_arguments_error "unexpected argument 'stray'" run --spec "$work/tiny.json" stray -q --out "$work/never.json"
check_arguments_error "--seed must not be negative, got '-1'" train --seed -1 "${small[@]}" --out "$work/never.json"
check_arguments_error "--data-seed must not be negative" data --data-seed -5
check_arguments_error "SimGrid refused its arguments (--cfg=, --log=): Bad config key: nonsense" run --spec "$work/tiny.json" --cfg=nonsense:1 -q --out "$work/never.json"
check_arguments_error "'nonsense' is not a SimGrid log setting" run --spec "$work/tiny.json" --log=nonsense -q --out "$work/never.json"
# SimGrid ends the process on these instead of refusing them: gbasim refuses them first.
check_arguments_error "--cfg=network/optim:Bogus: 'Bogus' is not a network/optim that gbasim runs on (Lazy or Full)" run --spec "$work/tiny.json" --cfg=network/optim:Bogus -q --out "$work/never.json"
check_arguments_error "'ptask_L07' is not a host/model that gbasim runs on" run --spec "$work/tiny.json" "--cfg=network/crosstraffic:0 host/model:ptask_L07" -q --out "$work/never.json"
check_arguments_error "'Constant' is not a network/model that gbasim runs on" collective --spec "$work/tiny.json" --cfg=network/model:Constant --out "$work/never.json"
check_arguments_error "--cfg=network/maxmin-selective-update:0: SimGrid's lazy updates (network/optim:Lazy, its default) need selective updates" run --spec "$work/tiny.json" --cfg=network/maxmin-selective-update:0 -q --out "$work/never.json"
check_arguments_error "--cfg=cpu/maxmin-selective-update:no: SimGrid's lazy updates" run --spec "$work/tiny.json" --cfg=cpu/optim:Full --cfg=cpu/optim:Lazy --cfg=cpu/maxmin-selective-update:no -q --out "$work/never.json"
"$gbasim" run --spec "$work/tiny.json" --cfg=network/optim:Full --cfg=network/maxmin-selective-update:0 -q --out "$work/full.json" >/dev/null 2>"$work/full.err" \
  || fail "Full updates without selective ones must run: $(head -3 "$work/full.err")"
"$gbasim" run --spec "$work/tiny.json" -q --out "$work/lazy.json" >/dev/null 2>&1 || fail "the tiny spec must run"
/usr/bin/python3 -c "
import json, sys
full, lazy = (json.load(open(f))['summary'] for f in sys.argv[1:])
assert full['status'] == 'completed', full['status']
for key in ('samples', 'global_steps'):
    assert full[key] == lazy[key], (key, full[key], lazy[key])
assert abs(full['simulated_time'] - lazy['simulated_time']) <= 0.01 * lazy['simulated_time'], \
    (full['simulated_time'], lazy['simulated_time'])
" "$work/full.json" "$work/lazy.json" || fail "Full updates must train the run that Lazy ones do"
# Every mode runs on GPU nodes (on each topology) and with each embedding exchange.
for topology in star fat_tree torus dragonfly; do
  for mode in sync gba; do
    "$gbasim" run --spec "$work/tiny.json" --set training.mode=$mode --set training.workers=4 \
      --set cluster.gpus_per_node=2 --set cluster.topology=$topology --set cluster.allreduce=hierarchical \
      -q --out "$work/nodes.json" >/dev/null 2>"$work/nodes.err" \
      || fail "$mode on GPU nodes ($topology): $(head -3 "$work/nodes.err")"
  done
done
for exchange in all_to_all hybrid; do
  "$gbasim" run --spec "$work/tiny.json" --set training.mode=sync --set cluster.embedding_exchange=$exchange \
    -q --out "$work/exchange.json" >/dev/null 2>"$work/exchange.err" \
    || fail "sync with embedding_exchange $exchange: $(head -3 "$work/exchange.err")"
done
help=$("$gbasim" collective --help) || fail "gbasim collective --help must succeed"
grep -q -- '--sizes' <<<"$help" || fail "collective --help lists no --sizes"
grep -q 'contexts/factory' <<<"$help" && fail "collective --help prints SimGrid's configuration keys"
help=$("$gbasim" run --help) || fail "gbasim run --help must succeed"
grep -q 'contexts/factory' <<<"$help" && fail "run --help prints SimGrid's configuration keys"
check_arguments_error "--sizes: '12Q' is not a whole number of bytes" collective --spec "$work/tiny.json" --sizes 1M,12Q --out "$work/never.json"
check_arguments_error "--op must be \"allreduce\", \"allgather\", \"alltoall\" or \"reducescatter\", not 'bcast'" collective --spec "$work/tiny.json" --op bcast --out "$work/never.json"
# --out /dev/stdout: standard output holds the JSON alone, the table goes to standard error.
for cmd in "run --spec $work/tiny.json -q" "collective --spec $work/tiny.json --sizes 1M"; do
  # shellcheck disable=SC2086  # the command's words
  "$gbasim" $cmd --out /dev/stdout >"$work/stdout.json" 2>"$work/stdout.err" \
    || fail "$cmd --out /dev/stdout must succeed"
  /usr/bin/python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$work/stdout.json" \
    || fail "$cmd --out /dev/stdout: standard output is not JSON alone: $(head -c 300 "$work/stdout.json")"
  grep -q "time" "$work/stdout.err" || fail "$cmd --out /dev/stdout: no table on standard error"
done
# gbasim workload: every preset, its numbers, and a run of each mode timing it.
presets=$("$gbasim" workload --list | awk '{print $1}') || fail "gbasim workload --list must succeed"
[ "$(wc -w <<<"$presets")" -ge 2 ] || fail "gbasim workload --list names fewer than two presets: $presets"
for preset in $presets; do
  "$gbasim" workload --preset "$preset" --spec "$work/tiny.json" --out "$work/wl.json" >"$work/wl.txt" 2>&1 \
    || fail "gbasim workload --preset $preset: $(head -3 "$work/wl.txt")"
  grep -q "bytes a worker step" "$work/wl.txt" || fail "workload --preset $preset prints no bytes"
  /usr/bin/python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
assert d['flops_per_sample'] > 0 and d['dense_params'] > 0, d
assert d['time_s']['sync_step'] > d['time_s']['compute'] > 0, d['time_s']
assert d['time_s']['ps_step_alone'] > d['time_s']['compute'], d['time_s']
" "$work/wl.json" || fail "workload --preset $preset: implausible numbers in its JSON"
  for mode in sync gba; do
    "$gbasim" run --spec "$work/tiny.json" --set training.mode=$mode --set workload.preset="$preset" \
      --set simulation.timing_only=true --out "$work/wl-run.json" >/dev/null 2>"$work/wl-run.err" \
      || fail "$mode timing the $preset workload: $(head -3 "$work/wl-run.err")"
    grep -q "timing the workload $preset" "$work/wl-run.err" || fail "run does not say it times $preset"
  done
  # The round's bounds hold for the GBA run just made: K global steps of N gradients each took
  # at least N K pulls out of and pushes into every shard, and K of each through the busiest
  # worker's link.
  /usr/bin/python3 -c "
import json, sys
bound = json.load(open(sys.argv[1]))['time_s']
run = json.load(open(sys.argv[2]))['summary']
k, t = run['global_steps'], run['simulated_time']
assert k > 0, run
for key in ('ps_round_shard_links', 'ps_round_node_links'):
    assert t >= k * bound[key] > 0, (key, t, k, bound[key])
assert bound['ps_round_shard_links_serial'] >= bound['ps_round_shard_links'], bound
assert bound['ps_round_node_links_serial'] >= bound['ps_round_node_links'], bound
" "$work/wl.json" "$work/wl-run.json" || fail "GBA timing $preset beat the round's bounds of gbasim workload"
done
"$gbasim" run --spec "$work/tiny.json" --out "$work/proxy-run.json" >/dev/null 2>"$work/proxy-run.err"
grep -q "timing the proxy model's own batch" "$work/proxy-run.err" \
  || fail "a run without a workload does not say it times the proxy's batch"
check_arguments_error "unknown workload preset 'dlrm'" workload --preset dlrm
check_arguments_error "give --preset NAME, or a --spec with a workload section" workload --spec "$work/tiny.json"
check_arguments_error "--list prints the presets and takes no other option" workload --list --out "$work/never.json"
check_arguments_error "give the preset once: --preset dlrm-dcnv2, and the --set names preset 'wide-deep-outbrain'" \
  workload --preset dlrm-dcnv2 --set workload.preset=wide-deep-outbrain
check_arguments_error "give the preset once" \
  workload --preset dlrm-dcnv2 --set 'workload={"preset": "wide-deep-outbrain"}'
[ ! -e "$work/never.json" ] || fail "a refused command wrote a result"

# A cluster file under the spec's own cluster keys.
mkdir -p "$work/platforms" "$work/specs"
echo '{"nic_bandwidth": 1e9, "ps_shards": 3}' >"$work/platforms/p.json"
cat >"$work/specs/with-platform.json" <<'JSON'
{"data": {"train_samples": 3000, "test_samples": 500}, "model": {"name": "lr"},
 "training": {"workers": 2, "local_batch": 50}, "cluster": {"platform": "../platforms/p.json", "ps_shards": 1}}
JSON
"$gbasim" run --spec "$work/specs/with-platform.json" -q --out "$work/platform.json" >/dev/null || fail "run with a platform"
/usr/bin/python3 -c "
import json, sys
c = json.load(open(sys.argv[1]))['spec']['cluster']
sys.exit(0 if c['nic_bandwidth'] == 1e9 and c['ps_shards'] == 1 else 1)" "$work/platform.json" \
  || fail "the platform's keys must apply under the spec's own"
sed -i 's|p.json|missing.json|' "$work/specs/with-platform.json"
msg=$("$gbasim" run --spec "$work/specs/with-platform.json" -q --out "$work/platform2.json" 2>&1)
grep -q "missing.json: cannot open" <<<"$msg" || fail "a missing platform file: $msg"

# The plot scripts draw these results.
scripts=$(cd "$(dirname "$0")/../scripts" && pwd)
/usr/bin/python3 "$scripts/plot_convergence.py" "$work/plots/convergence" "$work/run-sync-a.json" "$work/run-gba-a.json" \
  || fail "plot_convergence.py"
/usr/bin/python3 "$scripts/plot_training.py" "$work/plots/training" "$work/a.json" "$work/c.json" || fail "plot_training.py"
for f in convergence.png convergence.pdf training.png training.pdf; do
  [ -s "$work/plots/$f" ] || fail "plot $f is missing or empty"
done

# The real PAI traces, where ../shared has them.
pai=$(cd "$(dirname "$0")/../.." && pwd)/shared/traces/alibaba-pai-minibatch
if [ -f "$pai/job_1_norm.csv" ]; then
  stats=$("$gbasim" trace-stats "$pai/job_1_norm.csv" --json "$work/job_1.json") || fail "trace-stats on job_1"
  grep -q "10 workers" <<<"$stats" || fail "trace-stats job_1: $stats"
  /usr/bin/python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
peak = max(e['peak'] for e in d['episodes'] if e['worker'] == 6)
sys.exit(0 if abs(peak - 2.35) < 0.01 else 1)" "$work/job_1.json" \
    || fail "trace-stats must find job_1's straggler (worker 6, about 2.35x)"
  /usr/bin/python3 "$(dirname "$0")/../scripts/plot_trace.py" "$work/plots/job_1" "$work/job_1.json" \
    || fail "plot_trace.py"
  [ -s "$work/plots/job_1.png" ] || fail "plot_trace.py wrote no PNG"
  "$gbasim" run --spec "$work/tiny.json" --set stragglers.trace.format=pai --set "stragglers.trace.path=$pai/job_3_norm.csv" \
    -q --out "$work/replay.json" >/dev/null || fail "a run replaying job_3"
  # The simulated compute times follow job_2 from iteration 101, as trace_check.py reads it.
  "$gbasim" run --spec "$work/tiny.json" --set training.mode=async --set training.workers=12 \
    --set simulation.timing_only=true --set cost.flops_scale=1e5 --set stragglers.persistent_fraction=0 --set stragglers.noise_cv=0 \
    --set stragglers.transient_rate_per_s=0 --set stragglers.trace.format=pai \
    --set "stragglers.trace.path=$pai/job_2_norm.csv" --set stragglers.trace.offset=100 \
    -q --out "$work/check.json" >/dev/null 2>&1 || fail "a timing-only run replaying job_2"
  check=$(/usr/bin/python3 "$scripts/trace_check.py" "$pai/job_2_norm.csv" "$work/check.json" 100) \
    || fail "simulated step times do not follow job_2: $check"
else
  echo "skipped: the PAI trace checks need ../shared/traces/alibaba-pai-minibatch beside the clone"
fi
msg=$("$gbasim" trace-stats "$work/tiny.json" 2>&1)
grep -q "give --format alibaba-v2018" <<<"$msg" || fail "trace-stats on a non-trace: $msg"
msg=$("$gbasim" trace-stats --format pai "$work/tiny.json" 2>&1)
grep -q "no 'worker' column in the header" <<<"$msg" || fail "trace-stats --format pai on a non-trace: $msg"

# A machine-usage trace (Alibaba 2018 layout, no header): three machines every 10 s.
/usr/bin/python3 - "$work/usage.csv" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    for t in range(0, 400, 10):
        for m, cpu in (("m_1", 20), ("m_2", 50 if 100 <= t < 200 else 20), ("m_3", 101)):
            f.write(f"{m},{t},{cpu},80,,,{30 if m == 'm_2' else 10},5,3\n")
PY
stats=$("$gbasim" trace-stats --format alibaba-v2018 "$work/usage.csv" --threshold 1.9 --json "$work/usage-stats.json") \
  || fail "trace-stats on a usage trace"
grep -q "3 machines" <<<"$stats" || fail "trace-stats usage: $stats"
grep -q "slow episodes (slowdown >= 1.90): 1" <<<"$stats" || fail "trace-stats must find m_2's episode: $stats"
/usr/bin/python3 "$scripts/plot_trace.py" "$work/plots/usage" "$work/usage-stats.json" || fail "plot_trace.py on a usage trace"
[ -s "$work/plots/usage.pdf" ] || fail "plot_trace.py wrote no PDF for a usage trace"
"$gbasim" run --spec "$work/tiny.json" --set stragglers.trace.format=alibaba-v2018 --set "stragglers.trace.path=$work/usage.csv" \
  --set stragglers.trace.time_scale=100 --set stragglers.trace.mapping=explicit --set 'stragglers.trace.machines=["m_2","m_1"]' \
  -q --out "$work/usage-run.json" >/dev/null 2>&1 || fail "a run replaying a usage trace"
/usr/bin/python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if d['trace']['assignment'][:2] == ['m_2', 'm_1'] else 1)" "$work/usage-run.json" \
  || fail "the usage replay's assignment must follow the explicit mapping"
msg=$("$gbasim" run --spec "$work/tiny.json" --set stragglers.trace.format=alibaba-v2018 --set "stragglers.trace.path=$work/usage.csv" \
  --set stragglers.trace.mapping=explicit --set 'stragglers.trace.machines=["m_9"]' -q --out "$work/bad-usage.json" 2>&1)
[ $? -ne 0 ] && grep -qF "'stragglers.trace.machines[0]' no 'm_9' among the trace's workers or machines" <<<"$msg" || fail "an unknown machine must be an error: $msg"
[ ! -e "$work/bad-usage.json" ] || fail "a failed usage replay must write nothing"
printf 'm_1,0,20,80,,,10,5,3\nm_1,10,20,80,,,10\n' >"$work/short.csv"
msg=$("$gbasim" run --spec "$work/tiny.json" --set stragglers.trace.format=alibaba-v2018 --set "stragglers.trace.path=$work/short.csv" \
  -q --out "$work/bad-usage.json" 2>&1)
grep -q "short.csv:2: expected 9 columns, found 7" <<<"$msg" || fail "a short usage row must name file and line: $msg"
[ ! -e "$work/bad-usage.json" ] || fail "a failed usage replay must write nothing"

# calibrate refuses a fit on no runs before measuring anything, and writes nothing.
echo '{"training": {"workers": 2}}' >"$work/calib.json"
msg=$("$gbasim" calibrate --spec "$work/calib.json" --fit-runs 0 --out "$work/calibrated.json" 2>&1); rc=$?
[ $rc -eq 2 ] && grep -qF -- "--fit-runs must lie in [1, 1000]" <<<"$msg" || fail "calibrate --fit-runs 0: $rc $msg"
[ ! -e "$work/calibrated.json" ] || fail "a refused calibration must write no platform"
msg=$("$gbasim" calibrate --spec "$work/calib.json" --real-sync-s 1.2 1.3 --out "$work/calibrated.json" 2>&1); rc=$?
[ $rc -eq 2 ] && grep -q -- "--real-sync-s and --real-async-s go together" <<<"$msg" \
  || fail "calibrate --real-sync-s alone: $rc $msg"
msg=$("$gbasim" calibrate --spec "$work/calib.json" --real-sync-s 1 --real-async-s -1 --out "$work/calibrated.json" 2>&1); rc=$?
[ $rc -eq 2 ] && grep -q -- "--real-async-s: run times must be positive" <<<"$msg" \
  || fail "calibrate --real-async-s -1: $rc $msg"
[ ! -e "$work/calibrated.json" ] || fail "a refused calibration must write no platform"

# scripts/sim_vs_real.sh refuses bad arguments before it builds or runs anything.
svr=$(dirname "$0")/../scripts/sim_vs_real.sh
help=$(bash "$svr" --help) || fail "sim_vs_real.sh --help must succeed"
grep -q 'Usage: scripts/sim_vs_real.sh \[OUT_DIR\] \[ROUNDS\]' <<<"$help" || fail "sim_vs_real.sh --help: $help"
for rounds in 0 3x -2; do
  msg=$(bash "$svr" "$work/svr" "$rounds" 2>&1); rc=$?
  [ $rc -eq 2 ] && grep -q "ROUNDS must be a whole number of rounds, 1 or more; got '$rounds'" <<<"$msg" \
    || fail "sim_vs_real.sh ROUNDS $rounds: $rc $msg"
done
msg=$(bash "$svr" "$work/svr" 3 extra 2>&1); rc=$?
[ $rc -eq 2 ] && grep -q "at most two arguments, OUT_DIR and ROUNDS" <<<"$msg" \
  || fail "sim_vs_real.sh with three arguments: $rc $msg"
[ ! -e "$work/svr" ] || fail "a refused sim_vs_real.sh must create no OUT_DIR"

if [ $failures -gt 0 ]; then
  echo "$failures check(s) failed"
  exit 1
fi
echo "all command-line checks passed"
