#!/bin/sh
# SPDX-License-Identifier: MIT
# noplab scan against the obvious alternative, objdump -d FILE | grep -c
# '<__fentry__>', on one input, in one go: both wall times (best of RUNS),
# the ratio, noplab's peak RSS (/usr/bin/time -v) and both call counts.
#
# Usage: scan_vs_objdump.sh [VMLINUX [SYSTEM_MAP]]
#   Without VMLINUX a synthetic vmlinux-sized input is assembled: NFUNCS
#   functions (default 46000, as many as a Debian 6.1 vmlinux) of about BODY
#   (default 50) instructions, with __fentry__ calls and __mcount_loc.
#   With SYSTEM_MAP (for a stripped vmlinux) noplab gets --symbols.
# Environment: NOPLAB (default build/cli/noplab: use a release build),
#   RUNS (default 3), NFUNCS, WORK (scratch directory, default a mktemp).
# Target (issue 3): >= 40x faster than the pipeline, RSS < 100 MB on a
# vmlinux-sized input.
set -eu
here=$(cd "$(dirname "$0")/../.." && pwd)
noplab=${NOPLAB:-$here/build/cli/noplab}
runs=${RUNS:-3}
nfuncs=${NFUNCS:-46000}
body=${BODY:-50}
[ -x "$noplab" ] || { echo "no noplab binary at $noplab (set NOPLAB)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (Debian package: time)" >&2; exit 2; }

work=${WORK:-$(mktemp -d)}
mkdir -p "$work"
input=${1:-}
map=${2:-}

if [ -z "$input" ]; then
	# A vmlinux-sized text made by the assembler (gcc would take minutes for
	# as many functions): kernel-like functions of ~230 bytes (the Debian 6.1
	# vmlinux average), each with call __fentry__ and a __mcount_loc entry,
	# some with ENDBR, some without a site, padded to 16 bytes.
	echo "building a synthetic input with $nfuncs functions in $work" >&2
	awk -v n="$nfuncs" -v body="$body" 'BEGIN {
		split("mov %rdi,%rax|add $0x1234,%eax|lea 0x8(%rdi,%rsi,4),%rcx|imul %esi,%eax|" \
		      "xor %edx,%edx|mov 0x10(%rdi),%rdx|mov %rax,0x18(%rdi)|shl $3,%rcx|" \
		      "cmp %rcx,%rdx|movzbl (%rsi),%eax|sub $0x40,%rsp|add $0x40,%rsp|call sink|" \
		      "movabs $0x123456789abcdef0,%r8|and $0xff,%r9d|test %eax,%eax", t, "|");
		print "\t.text\n\t.globl _start, __fentry__, sink";
		print "_start:\n\tret\n__fentry__:\n\tret\nsink:\n\tret";
		for (i = 0; i < n; i++) {
			print (i % 5 == 4) ? "\t.p2align 4, 0xcc" : "\t.p2align 4";
			printf "\t.globl f%d\n\t.type f%d, @function\nf%d:\n", i, i, i;
			if (i % 16 == 3) print "\tendbr64";
			if (i % 8 != 7) print "1:\tcall __fentry__\n\t.pushsection __mcount_loc, \"a\"\n\t.quad 1b\n\t.popsection";
			m = body / 2 + (i * 7) % body;
			for (j = 0; j < m; j++) {
				if (j == int(m / 2)) print "\tjne 2f";
				print "\t" t[(i * 7 + j * 13) % 16 + 1];
			}
			printf "2:\tret\n\t.size f%d, .-f%d\n", i, i;
		}
	}' > "$work/synth.s"
	as --64 -o "$work/synth.o" "$work/synth.s"
	ld -o "$work/synth.elf" -e _start "$work/synth.o"
	input=$work/synth.elf
fi

sym=
[ -n "$map" ] && sym="--symbols $map"

now() { date +%s%N; }

# warm the page cache so both tools read from memory
cat "$input" > /dev/null
[ -n "$map" ] && cat "$map" > /dev/null

best_n= best_o= rss= ncalls= ocalls=
i=0
while [ "$i" -lt "$runs" ]; do
	i=$((i + 1))
	t0=$(now)
	# shellcheck disable=SC2086
	/usr/bin/time -v -o "$work/time.txt" "$noplab" scan --json $sym "$input" > "$work/scan.json"
	t1=$(now)
	ocalls=$(objdump -d "$input" | grep -c '<__fentry__>' || true)
	t2=$(now)
	n=$((t1 - t0)); o=$((t2 - t1))
	[ -z "$best_n" ] || [ "$n" -lt "$best_n" ] && best_n=$n
	[ -z "$best_o" ] || [ "$o" -lt "$best_o" ] && best_o=$o
	r=$(awk -F': ' '/Maximum resident set size/ { print $2 }' "$work/time.txt")
	[ -z "$rss" ] || [ "$r" -gt "$rss" ] && rss=$r
	printf 'run %d: noplab %.3f s, objdump pipeline %.3f s\n' "$i" \
		"$(echo "$n" | awk '{ print $1 / 1e9 }')" "$(echo "$o" | awk '{ print $1 / 1e9 }')"
done
ncalls=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["summary"]["ftrace_sites"]["calls"])' \
	"$work/scan.json" 2>/dev/null || echo "?")

echo "input:            $input ($(stat -c %s "$input") bytes)${map:+, symbols from $map}"
echo "noplab:           $noplab"
echo "cpus:             $(nproc), load average $(cut -d' ' -f1-3 /proc/loadavg)"
awk -v n="$best_n" -v o="$best_o" -v rss="$rss" -v nc="$ncalls" -v oc="$ocalls" 'BEGIN {
	printf "noplab scan:      %.3f s (best of runs), peak RSS %.1f MB\n", n / 1e9, rss / 1024;
	printf "objdump | grep:   %.3f s (best of runs)\n", o / 1e9;
	printf "ratio:            %.1fx (target >= 40x)\n", o / n;
	printf "calls to __fentry__: noplab %s, objdump lines %s (one of them is the label)\n", nc, oc;
}'
[ -n "${WORK:-}" ] || rm -rf "$work"
