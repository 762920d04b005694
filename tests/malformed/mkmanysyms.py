#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Write a module-like ELF64 relocatable with N tiny functions, for resource tests.

Usage: mkmanysyms.py N KIND OUT
KIND:
  funcs   N sized STT_FUNC symbols of 16 bytes each: call __fentry__ (a relocation),
          ret, a 10-byte NOP; __mcount_loc lists every call (through .rela__mcount_loc)
  aliases the same code, but all N symbols name the first function (alias folding)
  labels  the same code, with N size-0 STT_NOTYPE symbols (sizes inferred from the next)
  overlap N functions, each from its own start to the end of .text (nested extents)
Written directly (not by gcc/as) so that 10^5..10^6 symbols take a second, not minutes.
"""
import struct
import sys

SHT_PROGBITS, SHT_SYMTAB, SHT_STRTAB, SHT_RELA = 1, 2, 3, 4
SHF_ALLOC, SHF_EXECINSTR, SHF_INFO_LINK = 0x2, 0x4, 0x40
R_X86_64_64, R_X86_64_PLT32 = 1, 4
STB_LOCAL, STB_GLOBAL = 0, 1
STT_NOTYPE, STT_FUNC, STT_SECTION = 0, 2, 3
FUNC = b"\xe8\0\0\0\0" + b"\xc3" + b"\x66\x0f\x1f\x84\0\0\0\0\0\x90"   # 16 bytes


def main():
    n, kind, out = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    assert kind in ("funcs", "aliases", "labels", "overlap")
    text = FUNC * n
    mcount = bytes(8 * n)

    strtab = bytearray(b"\0")
    def name(s):
        off = len(strtab)
        strtab.extend(s.encode() + b"\0")
        return off

    # symbols: null, section symbol of .text (index 1), then globals
    syms = [struct.pack("<IBBHQQ", 0, 0, 0, 0, 0, 0),
            struct.pack("<IBBHQQ", 0, (STB_LOCAL << 4) | STT_SECTION, 0, 1, 0, 0)]
    first_global = len(syms)
    fentry = len(syms)
    syms.append(struct.pack("<IBBHQQ", name("__fentry__"), (STB_GLOBAL << 4) | STT_NOTYPE, 0, 0, 0, 0))
    for i in range(n):
        if kind == "funcs":
            info, value, size = (STB_GLOBAL << 4) | STT_FUNC, 16 * i, 16
        elif kind == "aliases":
            info, value, size = (STB_GLOBAL << 4) | STT_FUNC, 0, 16
        elif kind == "labels":
            info, value, size = (STB_GLOBAL << 4) | STT_NOTYPE, 16 * i, 0
        else:
            info, value, size = (STB_GLOBAL << 4) | STT_FUNC, 16 * i, 16 * (n - i)
        syms.append(struct.pack("<IBBHQQ", name("f%d" % i), info, 0, 1, value, size))
    symtab = b"".join(syms)

    rela_text = b"".join(struct.pack("<QQq", 16 * i + 1, (fentry << 32) | R_X86_64_PLT32, -4)
                         for i in range(n))
    rela_mcount = b"".join(struct.pack("<QQq", 8 * i, (1 << 32) | R_X86_64_64, 16 * i)
                           for i in range(n))

    shstr = bytearray(b"\0")
    def shname(s):
        off = len(shstr)
        shstr.extend(s.encode() + b"\0")
        return off

    # (name, type, flags, data, link, info, align, entsize)
    secs = [
        (".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, text, 0, 0, 16, 0),          # 1
        ("__mcount_loc", SHT_PROGBITS, SHF_ALLOC, mcount, 0, 0, 8, 0),                 # 2
        (".rela.text", SHT_RELA, SHF_INFO_LINK, rela_text, 4, 1, 8, 24),               # 3
        (".symtab", SHT_SYMTAB, 0, symtab, 6, first_global, 8, 24),                    # 4
        (".rela__mcount_loc", SHT_RELA, SHF_INFO_LINK, rela_mcount, 4, 2, 8, 24),      # 5
        (".strtab", SHT_STRTAB, 0, bytes(strtab), 0, 0, 1, 0),                         # 6
        (".shstrtab", SHT_STRTAB, 0, None, 0, 0, 1, 0),                                # 7
    ]
    names = [shname(s[0]) for s in secs]
    shstrtab = bytes(shstr)
    body = bytearray()
    offsets = []
    pos = 64
    for s in secs:
        data = shstrtab if s[3] is None else s[3]
        pad = (-pos) % 16
        body.extend(b"\0" * pad)
        pos += pad
        offsets.append((pos, len(data)))
        body.extend(data)
        pos += len(data)
    pad = (-pos) % 8
    body.extend(b"\0" * pad)
    shoff = pos + pad
    shdrs = [bytes(64)]
    for i, s in enumerate(secs):
        off, size = offsets[i]
        shdrs.append(struct.pack("<IIQQQQIIQQ", names[i], s[1], s[2], 0, off, size, s[4], s[5],
                                 s[6], s[7]))
    ident = b"\x7fELF" + bytes([2, 1, 1, 0]) + bytes(8)
    ehdr = struct.pack("<16sHHIQQQIHHHHHH", ident, 1, 62, 1, 0, 0, shoff, 0, 64, 0, 0, 64,
                       len(secs) + 1, len(secs))
    with open(out, "wb") as f:
        f.write(ehdr + bytes(body) + b"".join(shdrs))


if __name__ == "__main__":
    main()
