#!/usr/bin/env bash
# Installs what is missing, then configures and builds gbasim in build/ (Release).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
echo "build.sh: configuring and building in build/ (Release; compiler errors show below)" >&2
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" -- --no-print-directory >/dev/null
