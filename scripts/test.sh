#!/usr/bin/env bash
# The whole test suite from nothing: installs, builds, runs every test with CTest.
#
# Usage: scripts/test.sh [--sanitize]
#   --sanitize  instead: a build with AddressSanitizer and UndefinedBehaviorSanitizer in
#               build-sanitize/ (SimGrid's actors on threads, which ASan follows), running the
#               unit tests and the hostile-input corpus (CTest labels "unit" and "corpus"),
#               but for the one test that trains five models for an epoch of the default data
#               (Trainer.OneEpochOfTheDefaultData..., far beyond an hour under the sanitizers);
#               any sanitizer report fails its test
set -euo pipefail
cd "$(dirname "$0")/.."
case ${1:-} in
  '') ;;
  --sanitize)
    bash scripts/setup.sh
    echo "test.sh: configuring and building in build-sanitize/ (ASan, UBSan; compiler errors show below)" >&2
    cmake -S . -B build-sanitize -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGBASIM_SANITIZE=ON \
      -DGBASIM_BUILD_BENCH=OFF >/dev/null
    cmake --build build-sanitize -j"$(nproc)" -- --no-print-directory >/dev/null
    cd build-sanitize
    # Leaks are reported too; halt_on_error makes every report a failure.
    export ASAN_OPTIONS=halt_on_error=1:detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
    ctest --output-on-failure -j"$(nproc)" -L 'unit|corpus' -E 'OneEpochOfTheDefaultData'
    exit 0 ;;
  *) echo "usage: scripts/test.sh [--sanitize]" >&2; exit 2 ;;
esac
bash scripts/build.sh
cd build
ctest --output-on-failure -j"$(nproc)"
