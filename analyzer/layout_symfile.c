// SPDX-License-Identifier: MIT
/*
 * Layout input from a symbol file (/proc/kallsyms, System.map): no section
 * table, so the kernel text becomes pseudo-sections bounded by _text/_etext
 * and _sinittext/_einittext, and every text symbol a code label whose size
 * is inferred.  With /proc/kcore the pseudo-sections get their bytes.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "noplab/kcore.h"
#include "noplab/layout.h"
#include "noplab/symfile.h"

/* Reading more than this from kcore is a sign of a wrong _text/_etext pair. */
#define KCORE_TEXT_MAX (256ull << 20)

static bool is_text_type(char t)
{
	return t == 't' || t == 'T' || t == 'w' || t == 'W';
}

static const struct nl_symfile_entry *find_kernel(const struct nl_symfile *sf, const char *name)
{
	for (size_t i = 0; i < sf->nr; i++)
		if (!sf->entries[i].module && !strcmp(sf->entries[i].name, name))
			return &sf->entries[i];
	return NULL;
}

static int add_pseudo(struct nl_layout_input *in, const char *name, uint64_t lo, uint64_t hi)
{
	struct nl_layout_sec s = { .name = name, .addr = lo, .size = hi - lo, .exec = true };

	return nl_layout_add_sec(in, &s) < 0 ? -ENOMEM : 0;
}

int nl_layout_input_from_symfile(const struct nl_symfile *sf, const char *path,
				 struct nl_layout_input *in, struct nl_diag *d)
{
	const struct nl_symfile_entry *text, *etext, *sinit, *einit;
	uint64_t lo = UINT64_MAX, hi = 0;
	int ret;

	nl_layout_input_init(in, path, NL_MODE_64);
	in->from_symfile = true;
	if (sf->all_zero)
		return nl_fail(d, -EACCES, "every address reads 0: kernel addresses need root "
			       "(or kernel.kptr_restrict=0)");
	for (size_t i = 0; i < sf->nr; i++) {
		const struct nl_symfile_entry *e = &sf->entries[i];

		if (e->module || !is_text_type(e->type))
			continue;
		if (e->addr < lo)
			lo = e->addr;
		if (e->addr > hi)
			hi = e->addr;
	}
	if (lo > hi)
		return nl_fail(d, -NL_E_FORMAT, "no kernel text symbols");
	in->mode = hi > UINT32_MAX ? NL_MODE_64 : NL_MODE_32;
	text = find_kernel(sf, "_text");
	if (!text)
		text = find_kernel(sf, "_stext");
	etext = find_kernel(sf, "_etext");
	if (text) {
		in->has_text_base = true;
		in->text_base = text->addr;
	}
	/* without the image bounds, the text symbols' span is the best guess */
	ret = add_pseudo(in, ".text", text ? text->addr : lo,
			 etext && (!text || etext->addr >= text->addr) ? etext->addr : hi + 1);
	sinit = find_kernel(sf, "_sinittext");
	einit = find_kernel(sf, "_einittext");
	if (!ret && sinit && einit && einit->addr > sinit->addr)
		ret = add_pseudo(in, ".init.text", sinit->addr, einit->addr);
	for (size_t i = 0; i < sf->nr && !ret; i++) {
		const struct nl_symfile_entry *e = &sf->entries[i];
		struct nl_layout_sym s = { .name = e->name, .addr = e->addr, .sec = -1 };

		if (e->module)
			continue;
		s.kind = is_text_type(e->type) ? NL_LSYM_CODE : NL_LSYM_OTHER;
		s.global = isupper((unsigned char)e->type);
		if (nl_layout_add_sym(in, &s) < 0)
			ret = -ENOMEM;
	}
	if (ret)
		return nl_fail_errno(d, ret, "layout input");
	return nl_layout_prepare(in, d);
}

int nl_layout_input_read_kcore(struct nl_layout_input *in, struct nl_kcore *kc,
			       struct nl_diag *d)
{
	for (size_t i = 0; i < in->nr_secs; i++) {
		struct nl_layout_sec *s = &in->secs[i];
		uint8_t *buf;
		int ret;

		if (!s->exec || s->data || !s->size)
			continue;
		if (s->size > KCORE_TEXT_MAX)
			return nl_fail(d, -NL_E_LIMIT, "%s is %" PRIu64 " bytes: not reading that from kcore",
				       s->name, s->size);
		/* a hole is found before the buffer (up to KCORE_TEXT_MAX) is allocated */
		buf = NULL;
		ret = nl_kcore_covers(kc, s->addr, s->size, d);
		if (!ret && !(buf = malloc(s->size)))
			return nl_fail_errno(d, -ENOMEM, "%s", s->name);
		if (!ret)
			ret = nl_kcore_read(kc, s->addr, buf, s->size, d);
		if (ret) {
			free(buf);
			/* init text is freed after boot: losing it costs less than the audit */
			if (strcmp(s->name, ".text"))
				nl_log(d, NL_LOG_WARN, "%s: %s; left without bytes", s->name, d->msg);
			else
				return ret;
			d->msg[0] = '\0';
			continue;
		}
		if (nl_layout_input_own(in, buf))
			return nl_fail_errno(d, -ENOMEM, "%s", s->name);
		s->data = buf;
	}
	in->bytes_live = true;
	return 0;
}
