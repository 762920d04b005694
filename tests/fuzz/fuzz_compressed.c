// SPDX-License-Identifier: MIT
/*
 * Compressed kernel modules (.ko.xz, .ko.zst, .ko.gz): streams that are
 * truncated, corrupt, concatenated, or inflate past the cap, then the scan
 * of whatever came out.  Inputs without a compression magic are skipped, so
 * the time goes to the loader; the seeds are real compressed fixtures.
 */
#include <stdint.h>
#include <stdlib.h>

#include "fuzz_elf_scan.h"

/* Small enough that a bomb costs under a millisecond, big enough for the fixtures (a few KiB). */
#define FZ_CAP (256u << 10)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t xz[] = { 0xfd, '7', 'z', 'X', 'Z', 0 }, zst[] = { 0x28, 0xb5, 0x2f, 0xfd };

	if ((size >= 6 && !memcmp(data, xz, 6)) || (size >= 4 && !memcmp(data, zst, 4)) ||
	    (size >= 3 && data[0] == 0x1f && data[1] == 0x8b && data[2] == 8))
		fz_open_and_scan("fuzz.ko", data, size, FZ_CAP, true);
	return 0;
}
