#!/usr/bin/env bash
# The whole test suite from nothing: installs, builds, runs every test with CTest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
cd build
ctest --output-on-failure -j"$(nproc)"
