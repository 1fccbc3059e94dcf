#!/usr/bin/env bash
# Fuzzes the spec, trace and Criteo readers for SECONDS each (scripts/fuzz.sh: clang,
# libFuzzer, AddressSanitizer and UndefinedBehaviorSanitizer); fails on any crash, sanitizer
# report, timeout or memory blow-up. Skips (CTest code 77) where clang is missing.
# Usage: fuzz_test.sh REPOSITORY_ROOT SECONDS
set -uo pipefail
root=$1 seconds=$2
if ! command -v clang++ >/dev/null 2>&1 || ! ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1; then
  echo "skipped: fuzzing needs clang and libFuzzer (Debian's clang and libclang-rt-dev; scripts/setup.sh installs them)"
  exit 77
fi
GBASIM_FUZZ_NO_SETUP=1 bash "$root/scripts/fuzz.sh" "$seconds"
