// SPDX-License-Identifier: MIT
/* The table recognizer and the padding splitter on arbitrary bytes, both modes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "noplab/nops.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* copy so ASan sees the exact end of the buffer */
	uint8_t *buf = malloc(size ? size : 1);
	struct nl_pad_piece pieces[8];
	struct nl_pad_split split;

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	for (size_t off = 0; off < size; off++) {
		struct nl_nop_id id;

		nl_nop_recognize(buf + off, size - off, NL_MODE_64, &id);
		if (id.len > size - off)
			abort();
		nl_nop_recognize(buf + off, size - off, NL_MODE_32, &id);
		if (id.len > size - off)
			abort();
	}
	nl_pad_split(buf, size, NL_MODE_64, pieces, 8, &split);
	if (split.nop_bytes + split.int3_bytes + split.jmp_bytes + split.zero_bytes +
	    split.code_bytes != size)
		abort();
	if (size)
		nl_nop_compose((enum nl_nop_family)(buf[0] % NL_NR_FAMILIES), NL_MODE_64, size, buf, size);
	free(buf);
	return 0;
}
