#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Derive broken ELF files from a good fixture.

Usage: mkmalformed.py [--bombs] GOOD OUTDIR

Writes one file per corruption into OUTDIR and OUTDIR/manifest.tsv with
four columns: file name, the exit status noplab must give, a word the
error message must contain (empty when any message will do), and a note
saying why a case expects what it does.  Exit 3 means "bad input file"
(README, Exit status).  Every case is derived from the fixture's real
structure, so the offsets are the structurally interesting ones of that
file, not guesses.  GOOD may be ELF32 or ELF64, ET_REL or linked.

Expectations that are not "exit 3":
- zero-size and overlapping function symbols are valid-but-odd input (assembly
  without .size, aliases, hand-written .size): exit 0; noplab infers the end
  from the next symbol and may say so on stderr;
- in a linked file (ET_EXEC/ET_DYN) the relocation sections are the dynamic
  ones: runtime data for ld.so, whose r_offset is a virtual address, not a
  section offset.  The analysis never applies them (it reads them only to
  name PLT/GOT slots of the ftrace hook), so corrupting them must not crash
  and must not stop the scan: exit 0, a warning allowed.

--bombs adds compressed modules that inflate past noplab's decompression cap
(xz, gzip with an honest and with a lying size trailer, zstd without a declared
size); they do not depend on the fixture, so the runner asks for them once.
"""
import lzma
import os
import struct
import subprocess
import sys
import zlib

SHT_SYMTAB, SHT_STRTAB, SHT_RELA, SHT_REL, SHT_NOBITS = 2, 3, 4, 9, 8
STT_FUNC = 2


class Elf:
    def __init__(self, data):
        self.data = bytearray(data)
        assert data[:4] == b"\x7fELF", "fixture is not ELF"
        self.is64 = data[4] == 2
        e = "<"
        if self.is64:
            self.ehdr_fmt = e + "16sHHIQQQIHHHHHH"
            self.shdr_fmt = e + "IIQQQQIIQQ"
            self.sym_fmt = e + "IBBHQQ"
        else:
            self.ehdr_fmt = e + "16sHHIIIIIHHHHHH"
            self.shdr_fmt = e + "IIIIIIIIII"
            self.sym_fmt = e + "IIIBBH"
        f = struct.unpack_from(self.ehdr_fmt, self.data, 0)
        (_, self.e_type, self.e_machine, _, _, self.e_phoff, self.e_shoff, _, self.e_ehsize,
         _, _, self.e_shentsize, self.e_shnum, self.e_shstrndx) = f
        self.sections = [self.shdr(i) for i in range(self.e_shnum)]

    # field order normalised to: name type flags addr offset size link info addralign entsize
    def shdr(self, i):
        v = struct.unpack_from(self.shdr_fmt, self.data, self.e_shoff + i * self.e_shentsize)
        return list(v)

    def put_shdr(self, data, i, sh):
        struct.pack_into(self.shdr_fmt, data, self.e_shoff + i * self.e_shentsize, *sh)

    def ehdr_field_offset(self, name):
        # offsets of the fields we corrupt
        if self.is64:
            return {"e_shoff": 40, "e_shnum": 60, "e_shstrndx": 62, "e_shentsize": 58}[name]
        return {"e_shoff": 32, "e_shnum": 48, "e_shstrndx": 50, "e_shentsize": 46}[name]

    def section_name(self, i):
        strtab = self.sections[self.e_shstrndx]
        off = strtab[4] + self.sections[i][0]
        end = self.data.index(b"\0", off)
        return self.data[off:end].decode()

    def find(self, sh_type):
        return [i for i, s in enumerate(self.sections) if s[1] == sh_type]

    def symbols(self, symtab_idx):
        sh = self.sections[symtab_idx]
        size = struct.calcsize(self.sym_fmt)
        for k in range(sh[5] // size):
            off = sh[4] + k * size
            v = struct.unpack_from(self.sym_fmt, self.data, off)
            if self.is64:
                name, info, other, shndx, value, sz = v
            else:
                name, value, sz, info, other, shndx = v
            yield k, off, name, info, shndx, value, sz


ET_REL = 1
LINKED_RELOC = "linked file: dynamic relocations are runtime data the analysis does not apply"


def main():
    args = sys.argv[1:]
    bombs = "--bombs" in args
    args = [a for a in args if a != "--bombs"]
    good, out = args[0], args[1]
    os.makedirs(out, exist_ok=True)
    raw = open(good, "rb").read()
    elf = Elf(raw)
    linked = elf.e_type != ET_REL
    cases = []

    def emit(name, data, status=3, word="", note=""):
        with open(os.path.join(out, name), "wb") as f:
            f.write(bytes(data))
        cases.append((name, status, word, note))

    def emit_rel(name, data, word=""):
        # a corrupted relocation table: fatal in a .o/.ko, a warning in a linked file
        if linked:
            emit(name, data, status=0, note=LINKED_RELOC)
        else:
            emit(name, data, word=word)

    def patched(fn):
        d = bytearray(elf.data)
        fn(d)
        return d

    def set_ehdr(d, field, value):
        off = elf.ehdr_field_offset(field)
        if field == "e_shoff":
            struct.pack_into("<Q" if elf.is64 else "<I", d, off, value)
        else:
            struct.pack_into("<H", d, off, value)

    # 1. truncation at every structurally interesting offset
    cuts = {0, 1, 4, 16, elf.e_ehsize - 1, elf.e_ehsize, elf.e_shoff, elf.e_shoff + 1,
            len(raw) - 1}
    for i, s in enumerate(elf.sections):
        cuts.add(elf.e_shoff + i * elf.e_shentsize + elf.e_shentsize // 2)
        if s[1] != SHT_NOBITS and s[5]:
            cuts.add(s[4])
            cuts.add(s[4] + s[5] // 2)
    for c in sorted(x for x in cuts if 0 <= x < len(raw)):
        emit("trunc-%06d" % c, raw[:c])

    # 2. ELF header fields out of range
    emit("shoff-past-eof", patched(lambda d: set_ehdr(d, "e_shoff", len(raw) + 4096)))
    emit("shoff-huge", patched(lambda d: set_ehdr(d, "e_shoff",
                                                  (1 << 64) - 64 if elf.is64 else (1 << 32) - 64)))
    emit("shnum-huge", patched(lambda d: set_ehdr(d, "e_shnum", 0xfeff)))
    emit("shstrndx-out-of-range", patched(lambda d: set_ehdr(d, "e_shstrndx", elf.e_shnum + 5)))
    emit("shentsize-wrong", patched(lambda d: set_ehdr(d, "e_shentsize", elf.e_shentsize - 8)))

    # 3. section offsets and sizes
    text = next(i for i in range(elf.e_shnum) if elf.section_name(i) == ".text" or
                elf.section_name(i).startswith(".text"))

    def sec_patch(i, field, value):
        def fn(d):
            sh = list(elf.sections[i])
            sh[field] = value
            elf.put_shdr(d, i, sh)
        return patched(fn)

    limit = (1 << 64) if elf.is64 else (1 << 32)
    emit("text-offset-past-eof", sec_patch(text, 4, len(raw) + 100))
    emit("text-size-past-eof", sec_patch(text, 5, len(raw) * 4))
    emit("text-offset-overflow", patched(lambda d: (
        elf.put_shdr(d, text, elf.sections[text][:4] + [limit - 16, 64] + elf.sections[text][6:]))))
    emit("shstrtab-size-past-eof", sec_patch(elf.e_shstrndx, 5, len(raw) * 2))
    if linked:  # sh_addr is a real address there, and addr + size must not wrap
        emit("text-addr-wraps", sec_patch(text, 3, limit - 3), word="wraps")
    # gABI: SHF_COMPRESSED (0x800) cannot be applied to SHF_ALLOC sections; the bytes are not code
    emit("text-shf-compressed", sec_patch(text, 2, elf.sections[text][2] | 0x800))

    symtabs = elf.find(SHT_SYMTAB)
    relas = elf.find(SHT_RELA) + elf.find(SHT_REL)
    if symtabs:
        st = symtabs[0]
        emit("symtab-link-missing", sec_patch(st, 6, elf.e_shnum + 20))
        emit("symtab-link-not-strtab", sec_patch(st, 6, text))
        emit("symtab-entsize-zero", sec_patch(st, 9, 0))
        emit("symtab-entsize-wrong", sec_patch(st, 9, 7))
        emit("symtab-size-ragged", sec_patch(st, 5, elf.sections[st][5] + 3))
    if relas:
        r = relas[0]
        emit_rel("rela-info-missing", sec_patch(r, 7, elf.e_shnum + 20))
        # sh_link out of range is caught by the section table check in every file
        emit("rela-link-missing", sec_patch(r, 6, elf.e_shnum + 20))
        emit_rel("rela-entsize-zero", sec_patch(r, 9, 0))
        emit_rel("rela-entsize-wrong", sec_patch(r, 9, 5))

    # 4. names without a terminating NUL
    def unterminated(d):
        sh = elf.sections[elf.e_shstrndx]
        end = sh[4] + sh[5]
        for k in range(sh[4], end):
            if d[k] == 0 and k != sh[4]:
                d[k] = ord("X")
    emit("shstrtab-no-nul", patched(unterminated))
    if symtabs:
        strtab = elf.sections[symtabs[0]][6]

        def sym_unterminated(d):
            sh = elf.sections[strtab]
            for k in range(sh[4] + 1, sh[4] + sh[5]):
                d[k] = ord("Y")
        emit("strtab-no-nul", patched(sym_unterminated))

    # 5. symbols: outside their section, bad section index, overlapping / zero-size functions
    if symtabs:
        funcs = [s for s in elf.symbols(symtabs[0]) if s[3] & 0xf == STT_FUNC and 0 < s[4] < 0xff00]

        def put_sym(d, off, value=None, size=None, shndx=None):
            v = list(struct.unpack_from(elf.sym_fmt, d, off))
            if elf.is64:
                if shndx is not None: v[3] = shndx
                if value is not None: v[4] = value
                if size is not None: v[5] = size
            else:
                if value is not None: v[1] = value
                if size is not None: v[2] = size
                if shndx is not None: v[5] = shndx
            struct.pack_into(elf.sym_fmt, d, off, *v)

        if funcs:
            k, off, name, info, shndx, value, sz = funcs[0]
            secsize = elf.sections[shndx][5]
            emit("sym-outside-section", patched(lambda d: put_sym(d, off, value=secsize + 0x1000)))
            emit("sym-size-past-section", patched(lambda d: put_sym(d, off, size=secsize + 0x1000)))
            emit("sym-shndx-missing", patched(lambda d: put_sym(d, off, shndx=elf.e_shnum + 7)))
            strsize = elf.sections[elf.sections[symtabs[0]][6]][5] if elf.sections[symtabs[0]][6] < elf.e_shnum else 0

            def name_past(d):
                v = list(struct.unpack_from(elf.sym_fmt, d, off))
                v[0] = strsize + 10
                struct.pack_into(elf.sym_fmt, d, off, *v)
            emit("sym-name-past-strtab", patched(name_past))
            # valid but unusual: reported, scanned, exit 0
            emit("sym-zero-size", patched(lambda d: put_sym(d, off, size=0)), status=0,
                 note="valid but odd: size-0 function, end inferred from the next symbol")
        if len(funcs) >= 2:
            a, b = funcs[0], funcs[1]
            if a[4] == b[4]:
                emit("sym-overlap", patched(lambda d: put_sym(d, b[1], value=a[5] + 1, size=a[6])),
                     status=0, note="valid but odd: a function starting inside another one")

    # 6. relocations: offsets outside the target section, unknown types (200: no x86 or
    #    x86-64 type has it; 250/251 are the GNU vtable types), bad symbol index
    if relas:
        r = relas[0]
        rsh = elf.sections[r]
        entsize = rsh[9]
        first = rsh[4]

        def rel_patch(offset=None, info=None):
            def fn(d):
                if elf.is64:
                    o, i = struct.unpack_from("<QQ", d, first)
                    struct.pack_into("<QQ", d, first, o if offset is None else offset,
                                     i if info is None else info)
                else:
                    o, i = struct.unpack_from("<II", d, first)
                    struct.pack_into("<II", d, first, o if offset is None else offset,
                                     i if info is None else info)
            return patched(fn)

        target_size = elf.sections[rsh[7]][5] if rsh[7] < elf.e_shnum else 0
        emit_rel("rela-offset-outside", rel_patch(offset=target_size + 0x100))
        emit_rel("rela-offset-huge", rel_patch(offset=limit - 2))
        if elf.is64:
            o, i = struct.unpack_from("<QQ", elf.data, first)
            emit_rel("rela-type-unknown", rel_patch(info=(i & ~0xffffffff) | 200))
            emit_rel("rela-sym-missing", rel_patch(info=(0xfffff << 32) | (i & 0xffffffff)))
        else:
            o, i = struct.unpack_from("<II", elf.data, first)
            emit_rel("rela-type-unknown", rel_patch(info=(i & ~0xff) | 200))
            emit_rel("rela-sym-missing", rel_patch(info=(0xfffff << 8) | (i & 0xff)))

    # 7. not ELF at all, and compressed modules: broken stream, and a bomb past the cap
    emit("not-elf", b"this is not an ELF file\n" * 4)
    emit("wrong-machine", patched(lambda d: struct.pack_into("<H", d, 18, 183)), word="machine")
    emit("wrong-class", patched(lambda d: d.__setitem__(4, 7)), word="class")
    emit("big-endian", patched(lambda d: d.__setitem__(5, 2)))
    emit("empty", b"")
    xz = lzma.compress(raw, format=lzma.FORMAT_XZ)
    emit("truncated.ko.xz", xz[: len(xz) // 2], word="xz")
    gz = zlib.compressobj(9, zlib.DEFLATED, 31)
    gzdata = gz.compress(raw) + gz.flush()
    emit("truncated.ko.gz", gzdata[: len(gzdata) // 2], word="gzip")
    emit("garbage-after-magic.ko.gz", b"\x1f\x8b\x08\x00" + b"\xff" * 64, word="gzip")
    emit("bad-crc.ko.xz", xz[:-12] + bytes(b ^ 0x55 for b in xz[-12:-8]) + xz[-8:], word="xz")
    emit("zstd-magic-only.ko.zst", b"\x28\xb5\x2f\xfd", word="zstd")
    # a compressed stream of something that is not ELF: the ELF check still runs
    emit("not-elf.ko.xz", lzma.compress(b"not an ELF file\n" * 64, format=lzma.FORMAT_XZ))
    if bombs:
        # 80 MiB of zeros behind a real ELF header, a few KiB compressed: past noplab's cap
        # (1 GiB, and for small inputs 64 MiB / 64x the compressed size).  Exit 3 with "cap"
        # in the message, quickly and in bounded memory, never an out-of-memory kill.
        zeros = b"\0" * (1 << 20)
        note = "80 MiB of zeros in a few KiB: past the decompression cap"
        gz = zlib.compressobj(9, zlib.DEFLATED, 31)
        parts = [gz.compress(raw[:64])] + [gz.compress(zeros) for _ in range(80)] + [gz.flush()]
        bomb = b"".join(parts)
        emit("bomb.ko.gz", bomb, word="cap", note=note)
        # the gzip trailer (ISIZE) lies about the size: the limit must hold while inflating
        emit("bomb-isize-lies.ko.gz", bomb[:-4] + struct.pack("<I", 4096), word="cap",
             note=note + "; the gzip trailer claims 4 KiB")
        xzc = lzma.LZMACompressor(format=lzma.FORMAT_XZ, preset=0)
        parts = [xzc.compress(raw[:64])] + [xzc.compress(zeros) for _ in range(80)] + [xzc.flush()]
        emit("bomb.ko.xz", b"".join(parts), word="cap", note=note)
        # zstd without a declared content size (streamed), when the zstd tool is here
        try:
            zst = subprocess.run(["zstd", "-q", "-c", "--no-content-size"],
                                 input=raw[:64] + zeros * 80, stdout=subprocess.PIPE,
                                 stderr=subprocess.DEVNULL, check=True).stdout
            emit("bomb.ko.zst", zst, word="cap", note=note + "; no declared size")
        except (OSError, subprocess.CalledProcessError):
            pass

    with open(os.path.join(out, "manifest.tsv"), "w") as f:
        for name, status, word, note in cases:
            f.write("%s\t%d\t%s\t%s\n" % (name, status, word, note))
    print("%d malformed inputs in %s" % (len(cases), out))


if __name__ == "__main__":
    main()
