// SPDX-License-Identifier: MIT
/* `noplab scan` on arbitrary bytes: the ELF model, the function list and the census. */
#include <stdint.h>
#include <stdlib.h>

#include "fuzz_elf_scan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* a small cap: an input that inflates past it is the compressed harness's business */
	fz_open_and_scan("fuzz", data, size, 1 << 20, false);
	return 0;
}
