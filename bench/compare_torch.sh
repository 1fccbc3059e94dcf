#!/usr/bin/env bash
# Times one training step of every model in gbasim (Google Benchmark) and in PyTorch
# (bench/torch_peer.py) in one run, one thread each, and prints the side-by-side table
# of bench/README.md. Needs Debian's python3-torch and an optimised BLAS behind it
# (apt-get install python3-torch libopenblas0-pthread): Debian's torch calls libblas.so.3,
# which without OpenBLAS is the reference BLAS, 5x slower on DeepFM's MLP (a weak peer).
# Outputs: out/bench/gbasim.json, out/bench/torch.json, out/bench/probe-*.json (the builds'
# DeepFM probes).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
if ! /usr/bin/python3 -c 'import torch' 2>/dev/null; then
  echo "compare_torch.sh: Debian's python3-torch is missing (apt-get install python3-torch)" >&2
  exit 1
fi
blas=$(readlink -f /usr/lib/x86_64-linux-gnu/libblas.so.3 || true)
case $blas in
  *openblas*|*blis*|*mkl*) ;;
  *)
    echo "compare_torch.sh: libblas.so.3 is ${blas:-missing}, the reference BLAS that PyTorch would" \
      "run its matrix products on; install an optimised one (apt-get install libopenblas0-pthread)" >&2
    exit 1 ;;
esac
# Speed is measured on the faster of gbasim's two builds on this CPU: the default one
# (build/, -march=x86-64-v3, which every result reproduces on) and build-native/
# (-march=native). Neither is faster everywhere: on an AVX-512 Xeon the default build halves
# the matrix-multiply rate; on an AMD EPYC (Zen 3) the native build was 25% slower (GCC 12's
# -mtune=znver3, which -march=native implies there, slows Eigen's matrix kernel by 30%).
echo "compare_torch.sh: building models_bench in build/ (x86-64-v3) and build-native/ (-march=native)" >&2
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" --target models_bench -- --no-print-directory >/dev/null
cmake -S . -B build-native -DCMAKE_BUILD_TYPE=Release -DGBASIM_ARCH=native >/dev/null
cmake --build build-native -j"$(nproc)" --target models_bench -- --no-print-directory >/dev/null
mkdir -p out/bench
# DeepFM's step at b = 256 in each build, alternately, twice: the build with the higher best.
for round in 1 2; do
  for b in build build-native; do
    ./$b/bench/models_bench --benchmark_filter='TrainStep/deepfm/256$' --benchmark_min_time=1 \
      --benchmark_format=json 2>/dev/null >out/bench/probe-$b-$round.json
  done
done
read -r fastest probe <<<"$(/usr/bin/python3 - <<'PY'
import json
best = {}
for b in ["build", "build-native"]:
    best[b] = max(json.load(open(f"out/bench/probe-{b}-{r}.json"))["benchmarks"][0]["samples_per_s"]
                  for r in (1, 2))
fastest = max(best, key=best.get)
print(fastest, ";".join(f"{b}={best[b]:.0f}" for b in best))
PY
)"
echo "compare_torch.sh: DeepFM b=256, best of two runs: ${probe//;/, } samples/s; timing $fastest" >&2
echo "compare_torch.sh: timing gbasim ($fastest)" >&2
./$fastest/bench/models_bench --benchmark_min_time=2 --benchmark_format=json --benchmark_out=out/bench/gbasim.json \
  --benchmark_out_format=json >/dev/null
echo "compare_torch.sh: timing PyTorch" >&2
/usr/bin/python3 bench/torch_peer.py --json out/bench/torch.json --min-time 4 >&2
FASTEST=$fastest PROBE=$probe /usr/bin/python3 - <<'PY'
import json
import os
g = json.load(open("out/bench/gbasim.json"))
t = json.load(open("out/bench/torch.json"))
rate = {}
for b in g["benchmarks"]:
    name = b["name"].split("/")
    rate[(name[0], name[1] if len(name) > 2 else "", name[-1])] = b
ctx = g["context"]
blas = os.path.realpath("/usr/lib/x86_64-linux-gnu/libblas.so.3")
arch = {"build": "x86-64-v3", "build-native": "-march=native"}
probe = ", ".join(f"{b} ({arch[b]}) {float(r):,.0f}" for b, r in
                  (item.split("=") for item in os.environ["PROBE"].split(";")))
print(f"Machine: {ctx['num_cpus']} x {ctx['mhz_per_cpu']} MHz, one thread; PyTorch {t['torch_version']}, "
      f"BLAS {blas}")
print(f"gbasim: {os.environ['FASTEST']} ({arch[os.environ['FASTEST']]}), the faster build here "
      f"(DeepFM b=256, best of two runs: {probe} samples/s)\n")
print("| model | batch | gbasim samples/s | PyTorch samples/s | PyTorch's faster variant | ratio |")
print("| --- | --- | --- | --- | --- | --- |")
for model in ["lr", "fm", "deepfm", "widedeep", "dlrm"]:
    for batch in ["256", "4096"]:
        ours = rate[("BM_TrainStep", model, batch)]["samples_per_s"]
        theirs = t["samples_per_s"][model][batch]
        variant = t.get("variant", {}).get(model, {}).get(batch, "per-field tables")
        print(f"| {model} | {batch} | {ours:,.0f} | {theirs:,.0f} | {variant} | {ours / theirs:.1f}x |")
print()
for batch in ["256", "4096"]:
    mlp = rate[("BM_DeepMlpStep", "", batch)]["gflops"]
    ceiling = rate[("BM_MatmulCeiling", "", batch)]["gflops"]
    print(f"b={batch}: DeepFM's MLP layers (forward + backward) {mlp:.1f} GFLOP/s, "
          f"single-core matrix multiply {ceiling:.1f} GFLOP/s: {100 * mlp / ceiling:.0f}% of it")
PY
