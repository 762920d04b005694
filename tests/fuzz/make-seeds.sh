#!/bin/sh
# Seed corpora for the fuzz harnesses, built from the same kinds of fixtures
# the tests use (compiled here, never committed).  Usage: make-seeds.sh OUTDIR
set -eu
out=$1
mkdir -p "$out"

# nops: catalogue-style padding and the hard cases of the recognizer
mkdir -p "$out/nops"
printf '\017\037\104\000\000' > "$out/nops/nopl5"
printf '\146\146\056\017\037\204\000\000\000\000\000\017\037\100\000' > "$out/nops/gas15"
printf '\353\003\314\314\314' > "$out/nops/jmp5"
printf '\215\166\000\211\366' > "$out/nops/lea-mov"
