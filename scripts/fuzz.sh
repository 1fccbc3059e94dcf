#!/usr/bin/env bash
# Fuzzes gbasim's readers with libFuzzer: the spec reader (fuzz/spec_fuzz.cc), the trace readers
# (trace_fuzz.cc), the Criteo reader (criteo_fuzz.cc), the XML platform check
# (platform_xml_fuzz.cc) and the sweep file reader and planner (sweep_fuzz.cc), each for SECONDS
# (default 60), built
# with clang in build-fuzz/ (AddressSanitizer and UndefinedBehaviorSanitizer on). Each starts
# from its seeds in tests/fuzz/<target>/ (and tests/fuzz/<target>.dict, the spec's keys, for the
# spec reader); what it learns goes to
# out/fuzz/<target>/ (not committed). An input that crashes is kept as
# out/fuzz/crash-<target>-*; the script then exits 1: add the input to tests/hostile/ (as a case
# with its expected error) once the defect is fixed.
#
# Usage: scripts/fuzz.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
case $seconds in
  ''|*[!0-9]*|0) echo "fuzz.sh: SECONDS must be a whole number of seconds, 1 or more; got '$seconds'" >&2; exit 2 ;;
esac
[ "${GBASIM_FUZZ_NO_SETUP:-}" = 1 ] || bash scripts/setup.sh
echo "fuzz.sh: building the fuzz targets in build-fuzz/ (clang; compiler errors show below)" >&2
CC=clang CXX=clang++ cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGBASIM_FUZZ=ON \
  -DGBASIM_BUILD_TESTS=OFF -DGBASIM_BUILD_BENCH=OFF >/dev/null
targets=(spec_fuzz trace_fuzz criteo_fuzz platform_xml_fuzz sweep_fuzz)
cmake --build build-fuzz -j"$(nproc)" --target "${targets[@]}" -- --no-print-directory >/dev/null
mkdir -p out/fuzz
failed=0
for target in "${targets[@]}"; do
  learned=out/fuzz/$target
  mkdir -p "$learned"
  log=out/fuzz/$target.log
  dict=()
  [ -f "tests/fuzz/$target.dict" ] && dict=(-dict="tests/fuzz/$target.dict")
  # -rss_limit_mb: an input that makes a reader take more than 2 GB is a defect too.
  if ./build-fuzz/fuzz/"$target" "$learned" "tests/fuzz/$target" "${dict[@]}" -max_total_time="$seconds" \
       -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
       -artifact_prefix="out/fuzz/crash-$target-" >"$log" 2>&1; then
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo '?')
    echo "fuzz.sh: $target: $runs inputs in ${seconds} s, no crash"
  else
    failed=1
    echo "fuzz.sh: $target FAILED (log: $log):" >&2
    grep -E 'ERROR|SUMMARY|runtime error|Test unit written' "$log" | head -5 >&2 || tail -5 "$log" >&2
  fi
done
exit $failed
