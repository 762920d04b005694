// SPDX-License-Identifier: MIT
/* `noplab scan` on arbitrary bytes: the ELF model, the function list and the census. */
#include <stdint.h>
#include <stdlib.h>

#include "fuzz_elf_scan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* a small cap: an input that inflates past it is the compressed harness's business */
	struct nl_elf_opts eo = { .max_decompressed = 1 << 20 };
	uint8_t *buf = fz_dup(data, size);
	struct nl_elf *elf = NULL;
	struct nl_diag d;

	if (!buf)
		return 0;
	nl_diag_init(&d);
	if (!nl_elf_open_mem("fuzz", buf, size, &eo, &elf, &d)) {
		fz_elf_scan(elf);
		nl_elf_close(elf);
	} else {
		FZ_ASSERT(d.msg[0]);
	}
	free(buf);
	return 0;
}
