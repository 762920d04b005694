#!/bin/sh
# The branch alignment audit against objdump, on one large file, in one go.
#
#   tests/perf/layout_jcc_vs_objdump.sh [FILE]
#
# FILE defaults to gcc's cc1 (about 20 MB of .text, on every machine that has
# build-essential); a vmlinux is the real target.  NOPLAB picks the binary
# (default build/cli/noplab: a release build, not the ASan one), RUNS the
# number of alternating runs (default 3); the best of each is compared.
# The target in issue 4 is a ratio of at least 4.
set -eu
cd "$(dirname "$0")/../.."

NOPLAB=${NOPLAB:-build/cli/noplab}
RUNS=${RUNS:-3}
FILE=${1:-}
if [ -z "$FILE" ]; then
  FILE=$(ls /usr/lib/gcc/x86_64-linux-gnu/*/cc1 2>/dev/null | sort -V | tail -1)
fi
[ -x "$NOPLAB" ] || { echo "no $NOPLAB: build it first (scripts/setup.sh)" >&2; exit 2; }
[ -n "$FILE" ] && [ -r "$FILE" ] || { echo "usage: $0 [FILE] (no cc1 found)" >&2; exit 2; }

now() { date +%s.%N; }
text=0
for size in $(LC_ALL=C readelf -SW "$FILE" | sed -n 's/^ *\[ *[0-9]*\] *[^ ]* *[A-Z_]* *[0-9a-f]* [0-9a-f]* \([0-9a-f]*\) [0-9a-f]* *AX.*/\1/p'); do
  text=$((text + 0x$size))
done

results=
for i in $(seq "$RUNS"); do
  t0=$(now)
  objdump -d --no-show-raw-insn "$FILE" >/dev/null
  t1=$(now)
  "$NOPLAB" layout --jcc "$FILE" >/dev/null
  t2=$(now)
  line=$(awk -v a="$t0" -v b="$t1" -v c="$t2" 'BEGIN { printf "%.3f %.3f", b - a, c - b }')
  echo "run $i: objdump $(echo "$line" | cut -d' ' -f1) s, noplab layout --jcc $(echo "$line" | cut -d' ' -f2) s"
  results="$results$line
"
done

echo "file: $FILE ($text bytes in executable sections)"
echo "machine: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%s' "$results" | awk -v runs="$RUNS" '
  NF == 2 { if (!o || $1 < o) o = $1; if (!n || $2 < n) n = $2 }
  END {
    printf "best of %d: objdump -d --no-show-raw-insn %.3f s, noplab layout --jcc %.3f s\n", runs, o, n
    printf "ratio: %.1fx (target >= 4x)\n", o / n
  }'
"$NOPLAB" layout --jcc "$FILE" | sed -n '/^  decoded/p'
