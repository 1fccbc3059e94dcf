#!/usr/bin/env bash
# Times one training step of every model in gbasim (Google Benchmark) and in PyTorch
# (bench/torch_peer.py) in one run, one thread each, and prints the side-by-side table
# of bench/README.md. Needs Debian's python3-torch and an optimised BLAS behind it
# (apt-get install python3-torch libopenblas0-pthread): Debian's torch calls libblas.so.3,
# which without OpenBLAS is the reference BLAS, 5x slower on DeepFM's MLP (a weak peer).
# Outputs: out/bench/gbasim.json, out/bench/torch.json.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# Speed is measured on this machine's own instruction set (build-native/, -march=native):
# the default build targets x86-64-v3 so that results reproduce across machines, which on
# an AVX-512 machine halves the matrix-multiply rate the benchmark is about.
echo "compare_torch.sh: building models_bench in build-native/ (-march=native)" >&2
cmake -S . -B build-native -DCMAKE_BUILD_TYPE=Release -DGBASIM_ARCH=native >/dev/null
cmake --build build-native -j"$(nproc)" --target models_bench -- --no-print-directory >/dev/null
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
mkdir -p out/bench
echo "compare_torch.sh: timing gbasim" >&2
./build-native/bench/models_bench --benchmark_min_time=2 --benchmark_format=json --benchmark_out=out/bench/gbasim.json \
  --benchmark_out_format=json >/dev/null
echo "compare_torch.sh: timing PyTorch" >&2
/usr/bin/python3 bench/torch_peer.py --json out/bench/torch.json --min-time 4 >&2
/usr/bin/python3 - <<'PY'
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
print(f"Machine: {ctx['num_cpus']} x {ctx['mhz_per_cpu']} MHz, one thread; PyTorch {t['torch_version']}, "
      f"BLAS {blas}\n")
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
