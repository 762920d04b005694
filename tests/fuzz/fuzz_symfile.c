// SPDX-License-Identifier: MIT
/*
 * Symbol files (System.map, /proc/kallsyms, nm output) as `scan --symbols`
 * and `layout --kallsyms FILE` read them: the parser, then the layout
 * adapter and the region analysis over the symbols alone (no bytes).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "noplab/layout.h"
#include "noplab/symfile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = (char *)fz_dup(data, size);
	struct nl_symfile *sf = NULL;
	struct nl_layout_input in;
	struct nl_layout *lay = NULL;
	struct nl_layout_opts lo = { .jcc = true, .threads = 1 };
	struct nl_diag d;

	if (!text)
		return 0;
	nl_diag_init(&d);
	if (nl_symfile_parse(text, size, &sf, &d)) {
		free(text);
		return 0;
	}
	free(text);	/* the parsed file owns copies of the names */
	for (size_t i = 1; i < sf->nr; i++)
		FZ_ASSERT(sf->entries[i - 1].addr <= sf->entries[i].addr);
	if (sf->nr)
		FZ_ASSERT(nl_symfile_find(sf, sf->entries[sf->nr - 1].name) != NULL);
	nl_symfile_find(sf, "_text");

	if (!nl_layout_input_from_symfile(sf, "fuzz", &in, &d) &&
	    !nl_layout_analyze(&in, &lo, &lay, &d)) {
		uint64_t *sites = NULL;
		size_t nr = 0;

		nl_layout_find_region(lay, "entry_text");
		if (!nl_layout_ftrace_sites(lay, &sites, &nr, &d))
			free(sites);
		nl_layout_free(lay);
	}
	nl_layout_input_release(&in);
	nl_symfile_free(sf);
	return 0;
}
