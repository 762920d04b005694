#!/bin/sh
# Build the libFuzzer harnesses with clang and run each for a fixed time.
#   scripts/fuzz.sh [--seconds N] [--ci] [HARNESS...]
# --ci runs every harness for 30 s (unless --seconds says otherwise) and fails on any finding.
# Crashes and hangs land in build-fuzz/artifacts/<harness>/; minimise them with
#   build-fuzz/tests/fuzz/fuzz_<h> -minimize_crash=1 -runs=100000 <file>
# and keep the result under tests/fuzz/regress/<h>/, which ctest replays.
set -eu
cd "$(dirname "$0")/.."

seconds=60
[ "${1:-}" = "--ci" ] && { seconds=30; shift; }
if [ "${1:-}" = "--seconds" ]; then seconds=$2; shift 2; fi

SUDO=
[ "$(id -u)" = 0 ] || SUDO=sudo
for p in clang libclang-rt-dev; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || \
    { $SUDO apt-get update -qq; DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq clang libclang-rt-dev; break; }
done

CC=clang cmake -S . -B build-fuzz -DNOPLAB_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build-fuzz -j"$(nproc)" >/dev/null

bin=build-fuzz/tests/fuzz
harnesses=${*:-$(cd "$bin" && ls fuzz_* | sed 's/^fuzz_//')}
sh tests/fuzz/make-seeds.sh build-fuzz/seeds >/dev/null

status=0
printf '%-12s %12s %10s %8s  %s\n' HARNESS EXECS EXECS/S CORPUS RESULT
for h in $harnesses; do
  corpus=build-fuzz/corpus/$h
  mkdir -p "$corpus" "build-fuzz/artifacts/$h"
  [ -d "build-fuzz/seeds/$h" ] && cp -n build-fuzz/seeds/"$h"/* "$corpus"/ 2>/dev/null || true
  log=build-fuzz/fuzz-$h.log
  if "$bin/fuzz_$h" -max_total_time="$seconds" -print_final_stats=1 -timeout=10 \
       -rss_limit_mb=2048 -artifact_prefix="build-fuzz/artifacts/$h/" \
       "$corpus" "tests/fuzz/regress/$h" >"$log" 2>&1; then
    result=ok
  else
    result="FINDING (see $log and build-fuzz/artifacts/$h/)"
    status=1
  fi
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  units=$(ls "$corpus" | wc -l)
  printf '%-12s %12s %10s %8s  %s\n' "$h" "${execs:-?}" "${rate:-?}" "$units" "$result"
done
exit $status
