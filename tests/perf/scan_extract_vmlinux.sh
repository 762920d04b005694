#!/bin/sh
# SPDX-License-Identifier: MIT
# Extract the ELF vmlinux from a bzImage (vmlinuz), like the kernel's
# scripts/extract-vmlinux: find each compression magic, decompress from there,
# keep the first result that is an ELF file.  The result is stripped: pair it
# with the System.map of the same build (noplab scan --symbols).
# Usage: scan_extract_vmlinux.sh VMLINUZ OUT
set -u
in=$1; out=$2
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

try() {	# try MAGIC(printf escapes) DECOMPRESSOR...
	magic=$1; shift
	command -v "$1" >/dev/null 2>&1 || return 1
	for pos in $(LC_ALL=C grep -oba "$(printf "$magic")" "$in" 2>/dev/null | cut -d: -f1); do
		tail -c +$((pos + 1)) "$in" | "$@" > "$tmp/vmlinux" 2>/dev/null
		if [ "$(head -c 4 "$tmp/vmlinux" | od -An -tx1 | tr -d ' ')" = 7f454c46 ]; then
			mv "$tmp/vmlinux" "$out"
			return 0
		fi
	done
	return 1
}

try '\037\213\010' gunzip -c && exit 0
try '\375\067\172\130\132\000' xz -dc && exit 0
try '\050\265\057\375' zstd -dc && exit 0
try '\002\041\114\030' lz4 -dc && exit 0
try '\135\000\000' xz -dc --format=lzma && exit 0
try 'BZh' bunzip2 -c && exit 0
try '\211\114\132' lzop -dc && exit 0
echo "scan_extract_vmlinux: no known compressed ELF image in $in" >&2
exit 1
