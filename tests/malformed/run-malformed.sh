#!/bin/sh
# Feed every malformed ELF derived from real fixtures to a noplab command and
# check: the documented exit status, exactly one line on stderr naming the
# file (exit 3), no sanitizer report, and a bounded run time.
# Usage: run-malformed.sh NOPLAB WORKDIR CMD...   e.g. run-malformed.sh build/cli/noplab /tmp/m scan
# MALFORMED_BOMBS=1 adds the decompression bomb (slow under ASan), once, for the first fixture.
# Fixtures: gcc -O2 -pg -mfentry objects (64-bit, and 32-bit where gcc -m32 works), a
# module-like `ld -r` link, and linked executables.
set -u
noplab=$1; work=$2; shift 2
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work"; mkdir -p "$work"
tab=$(printf '\t')

cat > "$work/fx.c" <<'C'
int a(int x) { return x + 1; }
int b(int x) { return a(x) * 2; }
extern int c(int);
int d(int x) { return c(x) + b(x); }
__attribute__((section(".entry.text"))) int e(int x) { return x ^ 5; }
C
printf 'int c(int x){return x;}\nint main(void){return 0;}\n' > "$work/main.c"
printf '.text\n.globl __fentry__\n.type __fentry__,@function\n__fentry__: ret\n.size __fentry__,1\n.globl mcount\nmcount: ret\n.globl _start\n_start: ret\n' > "$work/hook.s"
flags="-O2 -fno-pie -pg -mfentry -mrecord-mcount"
gcc $flags -fcf-protection=full -c "$work/fx.c" -o "$work/fx.o" || exit 1
gcc $flags -c "$work/main.c" -o "$work/main.o" || exit 1
gcc $flags -no-pie "$work/fx.c" "$work/main.c" -o "$work/fx.exe" || exit 1
ld -r "$work/fx.o" "$work/main.o" -o "$work/fx.ko" || exit 1
fixtures="fx.o fx.ko fx.exe"
# 32-bit: objects from gcc -m32, linked without a libc (ld -m elf_i386), when the toolchain can
if gcc -m32 -O2 -fno-pie -pg -c "$work/fx.c" -o "$work/fx32.o" 2>/dev/null &&
   gcc -m32 -O2 -fno-pie -c "$work/main.c" -o "$work/main32.o" 2>/dev/null &&
   as --32 "$work/hook.s" -o "$work/hook32.o" 2>/dev/null &&
   ld -m elf_i386 -nostdlib -e _start "$work/fx32.o" "$work/main32.o" "$work/hook32.o" \
      -o "$work/fx32.exe" 2>/dev/null; then
  fixtures="$fixtures fx32.o fx32.exe"
else
  echo "note: no 32-bit toolchain (gcc -m32, as --32, ld -m elf_i386): 32-bit fixtures skipped"
fi

# one case: exit status, stderr lines, sanitizer reports; writes $work/res/N (empty = pass)
check() { # n fixture name status word note CMD...
  n=$1 fixture=$2 name=$3 status=$4 word=$5 note=$6
  shift 6
  out="$work/mal-$fixture" err="$work/res/$n.err" res="$work/res/$n"
  timeout 300 "$noplab" "$@" "$out/$name" >/dev/null 2>"$err" </dev/null
  got=$?
  lines=$(wc -l < "$err")
  problem=
  [ "$got" = "$status" ] || problem="exit $got, want $status"
  [ "$got" = 124 ] && problem="$problem (timed out)"
  if grep -q -e 'Sanitizer' -e 'runtime error:' "$err"; then problem="$problem; sanitizer report"; fi
  if [ "$status" = 3 ]; then
    [ "$lines" = 1 ] || problem="$problem; $lines lines on stderr, want 1"
    grep -qF "$name" "$err" || problem="$problem; message does not name the file"
    [ -z "$word" ] || grep -qi "$word" "$err" || problem="$problem; message lacks '$word'"
  elif grep -qv '^noplab ' "$err"; then
    problem="$problem; stray output on stderr"
  fi
  : > "$res"
  if [ -n "$problem" ]; then
    echo "FAIL $fixture/$name: $problem${note:+ [$note]}" > "$res"
    sed 's/^/    /' "$err" | head -5 >> "$res"
  fi
}

bombs=${MALFORMED_BOMBS:-0}
: > "$work/cases.tsv"
for fixture in $fixtures; do
  out="$work/mal-$fixture"
  opt=
  [ "$bombs" = 1 ] && opt=--bombs && bombs=0
  python3 "$here/mkmalformed.py" $opt "$work/$fixture" "$out" >/dev/null || exit 1
  sed "s/^/$fixture$tab/" "$out/manifest.tsv" >> "$work/cases.tsv"
done
mkdir -p "$work/res"
# two cases at a time per core: each is mostly ASan start-up
jobs=$(( $(nproc) * 2 )); n=0
while IFS="$tab" read -r fixture name status word note; do
  n=$((n + 1))
  check "$n" "$fixture" "$name" "$status" "$word" "$note" "$@" &
  [ $((n % jobs)) = 0 ] && wait
done < "$work/cases.tsv"
wait
total=$n; fail=0
i=1
while [ "$i" -le "$total" ]; do
  if [ -s "$work/res/$i" ]; then cat "$work/res/$i"; fail=$((fail + 1)); fi
  i=$((i + 1))
done
echo "$total malformed inputs, $fail failures (noplab $*)"
[ "$fail" = 0 ]
