#!/bin/sh
# Build the libFuzzer harnesses with clang and run each for a fixed time.
#   scripts/fuzz.sh [--ci] [--seconds N] [HARNESS...]
# --ci runs every harness for 30 s (unless --seconds says otherwise) and fails on any finding.
# Crashes, leaks, timeouts and out-of-memory inputs land in build-fuzz/artifacts/<harness>/;
# minimise one with
#   build-fuzz/tests/fuzz/fuzz_<h> -minimize_crash=1 -runs=100000 <file>
# and keep the result under tests/fuzz/regress/<h>/, which ctest replays.
# Every run appends "date harness seconds execs result" to build-fuzz/fuzz-history.tsv
# (the README's reliability figures add these up).
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

mkdir -p build-fuzz
# quiet unless the build fails: the report below is what CI logs should show
if ! { CC=clang cmake -S . -B build-fuzz -DNOPLAB_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo &&
       cmake --build build-fuzz -j"$(nproc)"; } >build-fuzz/build.log 2>&1; then
  tail -n 40 build-fuzz/build.log >&2
  echo "fuzz build failed (build-fuzz/build.log)" >&2
  exit 2
fi

bin=build-fuzz/tests/fuzz
harnesses=${*:-$(cd "$bin" && ls fuzz_* | sed 's/^fuzz_//')}
# seeds from fixtures compiled now; the fuzz build's noplab writes the `stat -o` JSON seeds
sh tests/fuzz/make-seeds.sh build-fuzz/seeds build-fuzz/cli/noplab >/dev/null 2>&1

status=0
printf '%-12s %12s %10s %8s  %s\n' HARNESS EXECS EXECS/S CORPUS RESULT
for h in $harnesses; do
  [ -x "$bin/fuzz_$h" ] || { echo "no harness fuzz_$h" >&2; exit 2; }
  corpus=build-fuzz/corpus/$h
  mkdir -p "$corpus" "build-fuzz/artifacts/$h"
  [ -d "build-fuzz/seeds/$h" ] && cp -n build-fuzz/seeds/"$h"/* "$corpus"/ 2>/dev/null || true
  regress=
  [ -d "tests/fuzz/regress/$h" ] && regress=tests/fuzz/regress/$h
  log=build-fuzz/fuzz-$h.log
  # -timeout: one input may take at most 10 s (a hang is a finding); -rss_limit_mb also caps
  # single allocations (malloc_limit_mb defaults to it), so unbounded memory is a finding too
  if "$bin/fuzz_$h" -max_total_time="$seconds" -print_final_stats=1 -timeout=10 \
       -rss_limit_mb=2048 -artifact_prefix="build-fuzz/artifacts/$h/" \
       "$corpus" $regress >"$log" 2>&1; then
    result=ok
  else
    result="FINDING (see $log and build-fuzz/artifacts/$h/)"
    status=1
  fi
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  units=$(ls "$corpus" | wc -l)
  printf '%-12s %12s %10s %8s  %s\n' "$h" "${execs:-?}" "${rate:-?}" "$units" "$result"
  printf '%s\t%s\t%s\t%s\t%s\n' "$(date -u +%FT%TZ)" "$h" "$seconds" "${execs:-0}" \
    "${result%% *}" >> build-fuzz/fuzz-history.tsv
done
exit $status
