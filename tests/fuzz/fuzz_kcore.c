// SPDX-License-Identifier: MIT
/*
 * `noplab layout --kallsyms FILE --live=KCORE --jcc`: a symbol file and a
 * kernel core image in one input, split at the first "\x7fELF" (the text
 * before it is the symbol file).  The core goes through a memfd, since the
 * kcore reader takes a path and reads with pread(); then the text bytes it
 * names are read into the layout input and audited.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz_common.h"
#include "noplab/kcore.h"
#include "noplab/layout.h"
#include "noplab/symfile.h"

static void audit(const struct nl_symfile *sf, const char *core)
{
	struct nl_layout_opts lo = { .jcc = true, .threads = 1 };
	struct nl_layout_input in;
	struct nl_layout *lay = NULL;
	struct nl_kcore *kc = NULL;
	struct nl_diag d;

	nl_diag_init(&d);
	if (nl_layout_input_from_symfile(sf, "fuzz", &in, &d))
		goto out;
	if (!nl_kcore_open(core, &kc, &d)) {
		uint8_t probe[16];

		FZ_ASSERT(nl_kcore_segments(kc) > 0);
		nl_kcore_read(kc, in.has_text_base ? in.text_base : 0, probe, sizeof(probe), &d);
		nl_layout_input_read_kcore(&in, kc, &d);
		nl_kcore_close(kc);
	}
	if (!nl_layout_analyze(&in, &lo, &lay, &d)) {
		uint64_t *sites = NULL;
		size_t nr = 0;

		if (!nl_layout_ftrace_sites(lay, &sites, &nr, &d))
			free(sites);
		nl_layout_free(lay);
	}
out:
	nl_layout_input_release(&in);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *img = fz_find(data, size, "\177ELF", 4);
	size_t tlen = img ? (size_t)(img - data) : size, clen = size - tlen;
	struct nl_symfile *sf = NULL;
	struct nl_diag d;
	char path[64];
	int fd;

	nl_diag_init(&d);
	if (nl_symfile_parse((const char *)data, tlen, &sf, &d))
		return 0;
	fd = memfd_create("fuzz-kcore", MFD_CLOEXEC);
	if (fd >= 0) {
		if (!clen || write(fd, img, clen) == (ssize_t)clen) {
			snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
			audit(sf, path);
		}
		close(fd);
	}
	nl_symfile_free(sf);
	return 0;
}
