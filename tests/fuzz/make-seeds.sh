#!/bin/sh
# Seed corpora for the fuzz harnesses, built from the same kinds of fixtures
# the tests use (compiled here, never committed).
# Usage: make-seeds.sh OUTDIR [NOPLAB]   (NOPLAB: a built noplab, for `stat -o` JSON)
# Every step that needs a tool the machine lacks is skipped: seeds help, they are not required.
set -u
out=$1
noplab=${2:-}
mkdir -p "$out"
out=$(cd "$out" && pwd)
for h in nops elf_scan compressed layout rules symfile perfstat results kcore; do mkdir -p "$out/$h"; done
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT

# nops: catalogue-style padding and the hard cases of the recognizer
printf '\017\037\104\000\000' > "$out/nops/nopl5"
printf '\146\146\056\017\037\204\000\000\000\000\000\017\037\100\000' > "$out/nops/gas15"
printf '\353\003\314\314\314' > "$out/nops/jmp5"
printf '\215\166\000\211\366' > "$out/nops/lea-mov"

# ---- ELF fixtures: every entry style scan classifies, small (-g0, stripped of notes) ----
cat > "$w/fx.c" <<'C'
__attribute__((noinline)) int a(int x) { return x + 1; }
__attribute__((noinline)) int b(int x) { return a(x) * 2; }
extern int c(int);
int d(int x) { return c(x) + b(x); }
__attribute__((weak)) int w(int x) { return x - 3; }
__attribute__((section(".entry.text"), aligned(64))) int e(int x) { return x ^ 5; }
__attribute__((section(".noinstr.text"))) int n(int x) { return x * 7; }
static int s(int x) { return x > 3 ? a(x) : b(x); }
int (*const tab[])(int) = { s, w };
int c(int x) { for (int i = 0; i < x; i++) x ^= i; return x; }
C
cat > "$w/vmlinux.lds" <<'L'
SECTIONS {
  . = 0x1000000;
  .text : {
    _text = .; _stext = .;
    *(.text .text.*)
    . = ALIGN(64);
    __entry_text_start = .;
    *(.entry.text)
    __entry_text_end = .;
    __noinstr_text_start = .;
    *(.noinstr.text)
    __noinstr_text_end = .;
    _etext = .;
  }
  .data : {
    . = ALIGN(8);
    __start_mcount_loc = .; *(__mcount_loc) __stop_mcount_loc = .;
    *(__patchable_function_entries)
    *(.data .data.* .rodata .rodata.*)
  }
  /DISCARD/ : { *(.note.*) *(.eh_frame) *(.comment) }
}
L
cc_o() { # name flags...
  n=$1; shift
  gcc -O2 -g0 -fno-pie -fno-asynchronous-unwind-tables -c "$w/fx.c" -o "$w/$n.o" "$@" 2>/dev/null &&
    objcopy -R .comment -R .note.GNU-stack -R .note.gnu.property "$w/$n.o" 2>/dev/null
}
cc_o fentry -pg -mfentry -mrecord-mcount
cc_o nop5 -pg -mfentry -mrecord-mcount -mnop-mcount
cc_o ibt -pg -mfentry -mrecord-mcount -fcf-protection=full
cc_o patch -fpatchable-function-entry=16,16 -falign-functions=32
cc_o patch-after -fpatchable-function-entry=5,0 -fcf-protection=branch
cc_o plain -falign-functions=64
cc_o m32 -m32 -pg -mfentry 2>/dev/null || cc_o m32 -m32 -pg
for n in fentry nop5 ibt patch patch-after plain m32; do
  [ -f "$w/$n.o" ] && cp "$w/$n.o" "$out/elf_scan/$n.o"
done
# module-like relocatable, vmlinux-like linked image (symbol-delimited regions, mcount range), a .so
printf 'int mod_init(void) { return 0; }\nvoid mod_exit(void) { }\n' > "$w/m2.c"
printf '.text\n.globl __fentry__\n.type __fentry__,@function\n__fentry__: ret\n.size __fentry__,1\n' > "$w/hook.s"
as "$w/hook.s" -o "$w/hook.o" 2>/dev/null
gcc -O2 -g0 -pg -mfentry -mrecord-mcount -c "$w/m2.c" -o "$w/m2.o" 2>/dev/null
[ -f "$w/fentry.o" ] && ld -r "$w/fentry.o" "$w/m2.o" -o "$w/mod.ko" 2>/dev/null && cp "$w/mod.ko" "$out/elf_scan/"
[ -f "$w/ibt.o" ] && ld -static -nostdlib -e d -T "$w/vmlinux.lds" "$w/ibt.o" "$w/hook.o" -o "$w/vmlinux" \
  --no-warn-rwx-segments 2>/dev/null && strip --strip-debug "$w/vmlinux" && cp "$w/vmlinux" "$out/elf_scan/"
[ -f "$w/fentry.o" ] && ld -static -nostdlib -z noseparate-code -e d "$w/fentry.o" "$w/hook.o" -o "$w/exe" 2>/dev/null &&
  cp "$w/exe" "$out/elf_scan/"
gcc -O2 -g0 -fpic -shared -nostdlib -Wl,-z,noseparate-code -pg -mfentry -mrecord-mcount "$w/fx.c" -o "$w/fx.so" 2>/dev/null &&
  strip --strip-debug "$w/fx.so" && cp "$w/fx.so" "$out/elf_scan/"
[ -f "$w/m32.o" ] && ld -m elf_i386 -static -nostdlib -z noseparate-code -e d --defsym __fentry__=a --defsym mcount=a \
  "$w/m32.o" -o "$w/exe32" 2>/dev/null && cp "$w/exe32" "$out/elf_scan/"

# ---- compressed modules: each format, plus a truncated stream ----
for f in mod.ko fentry.o; do
  [ -f "$w/$f" ] || continue
  xz -c --check=crc32 --lzma2=preset=6,dict=64KiB "$w/$f" > "$out/compressed/$f.xz" 2>/dev/null
  zstd -q -c "$w/$f" > "$out/compressed/$f.zst" 2>/dev/null
  gzip -9 -n -c "$w/$f" > "$out/compressed/$f.gz" 2>/dev/null
done
for f in "$out"/compressed/*.xz; do [ -f "$f" ] && head -c 200 "$f" > "$f.trunc"; done
# a small bomb: 512 KiB of zeros after an ELF header (the harness caps at 256 KiB)
[ -f "$w/fentry.o" ] && { head -c 64 "$w/fentry.o"; head -c 524288 /dev/zero; } | gzip -9 -n -c > "$out/compressed/zeros.gz"

# ---- rules: every rule kind, the built-in set's text, and rules + ELF for layout ----
cat > "$out/rules/all" <<'R'
# every rule kind
region entry_text present
region entry_text align 2M
region .entry.text end-align 64
region entry_text max-size 0x1000
region entry_text max-lines 4
region entry_text max-pages 1 2M
region entry_text exclusive-lines
region entry_text exclusive-pages 4K
region entry_text exclusive 64 before
optional region irqentry_text inside entry_text
functions align 16 in entry_text
ftrace-site no-straddle 64
jcc max 0 in noinstr_text
R
cat > "$out/rules/kernel" <<'R'
region entry_text present
region entry_text max-pages 1 2M
region entry_text align 8
optional region irqentry_text inside entry_text
R
printf 'region x align 1G\nregion x max-size 18446744073709551615\njcc max 99999999999999999999\n' > "$out/rules/limits"
for e in vmlinux fentry.o mod.ko exe32; do
  [ -f "$w/$e" ] || [ -f "$out/elf_scan/$e" ] || continue
  src=$w/$e; [ -f "$src" ] || src=$out/elf_scan/$e
  cat "$out/rules/all" "$src" > "$out/layout/all+$e"
  cat "$out/rules/kernel" "$src" > "$out/layout/kernel+$e"
done

# ---- symbol files: nm output of the fixtures, kallsyms with modules ----
for e in vmlinux exe mod.ko; do
  [ -f "$w/$e" ] && nm -n "$w/$e" > "$out/symfile/$e.map" 2>/dev/null
done
cat > "$out/symfile/kallsyms" <<'K'
ffffffff81000000 T _text
ffffffff81000000 T startup_64
ffffffff81001000 T __pfx_do_one_initcall
ffffffff81001010 T do_one_initcall
ffffffff81e00000 T __entry_text_start
ffffffff81e00040 T entry_SYSCALL_64
ffffffff81e00100 T __irqentry_text_start
ffffffff81e00200 T __irqentry_text_end
ffffffff81e01000 T __entry_text_end
ffffffff82000000 T _etext
ffffffff82a00000 D _sdata
ffffffffc0a01000 t ext4_fill_super	[ext4]
ffffffffc0a02000 t ext4_mount	[ext4]
K
sed 's/^[0-9a-f]*/0000000000000000/' "$out/symfile/kallsyms" > "$out/symfile/kallsyms-noroot"

# ---- kcore: a small kallsyms, then an ELF64 core whose PT_LOAD holds that text ----
python3 - "$out/kcore" "$w/fentry.o" <<'PY'
import os, struct, sys
out, obj = sys.argv[1], sys.argv[2]
base = 0xffffffff81000000
# text: the fixture's .text when there is one, else ftrace-like entries by hand
code = b""
try:
    d = open(obj, "rb").read()
    shoff, shentsize, shnum, shstrndx = struct.unpack_from("<Q", d, 40)[0], *struct.unpack_from("<HHH", d, 58)
    strtab = struct.unpack_from("<IIQQQQIIQQ", d, shoff + shstrndx * shentsize)
    for i in range(shnum):
        sh = struct.unpack_from("<IIQQQQIIQQ", d, shoff + i * shentsize)
        name = d[strtab[4] + sh[0]:].split(b"\0")[0]
        if name == b".text":
            code = d[sh[4]:sh[4] + sh[5]]
except Exception:
    pass
if not code:
    code = (b"\xf3\x0f\x1e\xfa\x0f\x1f\x44\x00\x00\x31\xc0\xc3" + b"\xcc" * 4) * 16
code = code.ljust(0x400, b"\xcc")[:0x400]
syms = ["%016x T _text" % base, "%016x T _stext" % base]
for k in range(0, 0x400, 0x40):
    syms.append("%016x T f%d" % (base + k, k // 0x40))
syms += ["%016x T __entry_text_start" % (base + 0x200), "%016x T __entry_text_end" % (base + 0x280),
         "%016x T _etext" % (base + 0x400), "%016x t mod_fn\t[mod]" % (0xffffffffc0000000)]
text = ("\n".join(syms) + "\n").encode()
ident = b"\x7fELF" + bytes([2, 1, 1, 0]) + bytes(8)
eh = struct.pack("<16sHHIQQQIHHHHHH", ident, 4, 62, 1, 0, 64, 0, 0, 64, 56, 2, 0, 0, 0)
note = struct.pack("<IIQQQQQQ", 4, 0, 0, 0, 0, 0, 0, 4)
load = struct.pack("<IIQQQQQQ", 1, 5, 64 + 2 * 56, base, 0, len(code), len(code), 4096)
open(os.path.join(out, "kallsyms+kcore"), "wb").write(text + eh + note + load + code)
open(os.path.join(out, "kallsyms-no-core"), "wb").write(text)
PY

# ---- perf stat output: today's text and CSV from this machine, 2.6.3x by hand ----
if command -v perf >/dev/null 2>&1; then
  perf stat -r 3 -- true 2> "$out/perfstat/text" >/dev/null || rm -f "$out/perfstat/text"
  perf stat -x, -r 3 -- true 2> "$out/perfstat/csv" >/dev/null || rm -f "$out/perfstat/csv"
  perf stat -x';' -e task-clock,page-faults -- true 2> "$out/perfstat/csv-semicolon" >/dev/null ||
    rm -f "$out/perfstat/csv-semicolon"
fi
cat > "$out/perfstat/text-2.6" <<'P'

 Performance counter stats for 'make -j4' (5 runs):

   47379.574510  task-clock-msecs         #      3.540 CPUs    ( +-   0.027% )
          38085  context-switches         #      0.001 M/sec   ( +-   0.413% )
           1024  CPU-migrations           #      0.000 M/sec   ( +-   2.156% )
        3012345  page-faults              #      0.064 M/sec   ( +-   0.001% )
   120,000,000,000  cycles                   #   2533.000 M/sec   ( +-   0.250% )  (scaled from 81.00%)
    <not counted>  cache-misses

   13.384107447  seconds time elapsed   ( +-   0.211% )

P
cat > "$out/perfstat/text-multiplexed" <<'P'
 Performance counter stats for './hackbench 10' (3 runs):

          2,742.31 msec task-clock                #    7.307 CPUs utilized            ( +-  0.34% )
     1,234,567,890      cycles                    #    0.450 GHz                      ( +-  1.20% )  (83.33%)
     2,345,678,901      instructions              #    1.90  insn per cycle           ( +-  0.80% )  (66.67%)
   <not supported>      L1-icache-load-misses

          0.375291 +- 0.000892 seconds time elapsed  ( +-  0.24% )
P
cp "$out/perfstat/text-multiplexed" "$out/results/perf-text"
[ -f "$out/perfstat/csv" ] && cp "$out/perfstat/csv" "$out/results/perf-csv"

# ---- noplab JSON: a real `noplab stat -o`, and a minimal bench document ----
if [ -n "$noplab" ] && [ -x "$noplab" ]; then
  "$noplab" stat -r 3 -o "$out/results/stat.json" -- true >/dev/null 2>&1 || rm -f "$out/results/stat.json"
  "$noplab" stat -r 2 --dry-run -e task-clock,page-faults -o "$out/results/stat2.json" -- true \
    >/dev/null 2>&1 || rm -f "$out/results/stat2.json"
fi
cat > "$out/results/bench.json" <<'J'
{"tool":"noplab","version":"0.1.0","command":"bench","options":{"runs":5},
 "workloads":[{"name":"calls","variants":[{"name":"p6:5","figures":{
   "cycles_per_call":{"mean":4.5,"sem_pct":0.3,"n":5,"runs":[4.4,4.5,4.6,4.5,4.5],"unit":"cycles","source":"tsc"},
   "l1i_misses":null,"ns":{"mean":1.25,"sem_pct":1.5,"n":5}}}]}]}
J
cat > "$out/results/stat-min.json" <<'J'
{"tool":"noplab","version":"0.1.0","command":"stat","measured":{"cmdline":"true"},"options":{"runs":3},
 "events":[{"name":"task-clock","unit":"msec","source":"sw","runs":[1.5,1.6,1.4]},
           {"name":"cycles","mean":null},{"name":"page-faults","mean":49,"sem_pct":1.2,"n":3}],
 "not_measured":[{"name":"instructions"}],"elapsed":{"mean":0.003,"sem_pct":4.9,"unit":"seconds"}}
J
exit 0
