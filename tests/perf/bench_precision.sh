#!/bin/bash
# Precision, time and reproducibility of `noplab bench`'s default experiment,
# against the targets of issue 5: SEM <= 0.5% of the mean for every variant,
# <= 10 s in all, and the same verdicts when run twice.  A benchmark script,
# not a unit test: it prints the figures and exits 1 when a target is missed.
#
#   tests/perf/bench_precision.sh [noplab binary] [extra bench options...]
#
# Use a Release build (scripts/setup.sh builds build/cli/noplab): the
# sanitizer build is several times slower and measures ASan, not the method.
# MAX_SEM and MAX_SECONDS override the targets.
set -eu

BIN=${1:-${NOPLAB:-./build/cli/noplab}}
[ $# -gt 0 ] && shift
MAX_SEM=${MAX_SEM:-0.5}
MAX_SECONDS=${MAX_SECONDS:-10}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/noplab-precision-XXXXXX")
trap 'rm -rf "$tmp"' EXIT

echo "conditions: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg) before"
for i in 1 2; do
	t0=$(date +%s.%N)
	"$BIN" bench "$@" > "$tmp/run$i.txt"
	t1=$(date +%s.%N)
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f\n", b - a }' > "$tmp/wall$i"
done
echo "conditions: load average $(cut -d' ' -f1-3 /proc/loadavg) after"
grep '^Environment:' "$tmp/run1.txt" | fold -s -w 100 | sed 's/^/  /'

# workload variant mean sem verdict, from the text report
extract() {
	awk '
	/^[a-z]+-[0-9A-Za-z]+: / { wl = $1; sub(":", "", wl); cmp = 0; next }
	/^  Compared with / { cmp = 1; next }
	cmp == 0 && /\( \+- [0-9.]+% \)/ {
		mean = ""; sem = ""
		for (i = 2; i <= NF; i++) if ($i == "(") { mean = $(i - 1); sem = $(i + 2); break }
		sub("%", "", sem)
		key = wl " " $1; order[++n] = key; m[key] = mean; s[key] = sem; v[key] = "baseline"
		next
	}
	cmp == 1 && /^  [^ ]/ && !/^  (Reading|Note):/ {
		key = wl " " $1
		if ($0 ~ / slower than /) v[key] = "slower"
		else if ($0 ~ / faster than /) v[key] = "faster"
		else v[key] = "same"
	}
	END { for (i = 1; i <= n; i++) print order[i], m[order[i]], s[order[i]], v[order[i]] }
	' "$1"
}
extract "$tmp/run1.txt" > "$tmp/a"
extract "$tmp/run2.txt" > "$tmp/b"

echo
awk 'NR == FNR { m[$1 " " $2] = $3; s[$1 " " $2] = $4; v[$1 " " $2] = $5; next }
     FNR == 1 { printf "%-12s %-12s %10s %7s %10s %7s  %-8s %-8s\n", "workload", "variant",
		"mean 1", "sem% 1", "mean 2", "sem% 2", "verdict1", "verdict2" }
     { k = $1 " " $2; printf "%-12s %-12s %10s %7s %10s %7s  %-8s %-8s%s\n", $1, $2, m[k], s[k],
       $3, $4, v[k], $5, v[k] == $5 ? "" : "  <- differs" }' "$tmp/a" "$tmp/b"

w1=$(cat "$tmp/wall1")
w2=$(cat "$tmp/wall2")
worst=$(awk '{ print $4 }' "$tmp/a" "$tmp/b" | sort -g | tail -1)
total=$(wc -l < "$tmp/a")
agree=$(awk 'NR == FNR { v[$1 " " $2] = $5; next } v[$1 " " $2] == $5 { n++ } END { print n + 0 }' \
	"$tmp/a" "$tmp/b")

status=0
echo
if awk -v w="$worst" -v m="$MAX_SEM" 'BEGIN { exit !(w <= m) }'; then r=PASS; else r=FAIL; status=1; fi
echo "precision: largest SEM ${worst}% of the mean, over both runs (target <= ${MAX_SEM}%): $r"
if awk -v a="$w1" -v b="$w2" -v m="$MAX_SECONDS" 'BEGIN { exit !(a <= m && b <= m) }'; then
	r=PASS; else r=FAIL; status=1; fi
echo "time: ${w1} s and ${w2} s per run, wall clock (target <= ${MAX_SECONDS} s): $r"
if [ "$agree" -eq "$total" ]; then r=PASS; else r=FAIL; status=1; fi
echo "reproducibility: the verdicts agree for ${agree} of ${total} variants: $r"
exit $status
