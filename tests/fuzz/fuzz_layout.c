// SPDX-License-Identifier: MIT
/*
 * `noplab layout --rules FILE ELF --jcc`: rules text and an ELF image in one
 * input, split at the first "\x7fELF" (text before it is the rules).  Runs
 * what the command runs: the ELF adapter, scan's ftrace sites, regions, the
 * branch audit and every rule.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "noplab/elf.h"
#include "noplab/layout.h"
#include "noplab/rules.h"
#include "noplab/scan.h"

static void with_sites(const struct nl_elf *elf, struct nl_layout_input *in)
{
	struct nl_scan_opts so = { .threads = 1 };
	struct nl_scan_result *r = NULL;
	struct nl_diag d;

	nl_diag_init(&d);
	if (nl_scan(elf, &so, &r, &d))
		return;
	in->nr_ftrace_sites = 0;
	in->ftrace_known = true;
	for (size_t i = 0; i < r->nr_sites; i++)
		if (r->sites[i].kind == NL_SITE_CALL || r->sites[i].kind == NL_SITE_NOP5)
			if (nl_layout_add_ftrace_site(in, r->sites[i].addr))
				break;
	nl_scan_free(r);
}

static void audit(const struct nl_elf *elf, const struct nl_rules *rules)
{
	struct nl_layout_opts lo = { .jcc = true, .threads = 1 };
	struct nl_layout_input in;
	struct nl_layout *lay = NULL;
	struct nl_rule_result *res = NULL;
	size_t nr = 0;
	struct nl_diag d;

	nl_diag_init(&d);
	if (nl_layout_input_from_elf(elf, &in, &d))
		goto out;
	with_sites(elf, &in);
	if (nl_layout_prepare(&in, &d) || nl_layout_analyze(&in, &lo, &lay, &d))
		goto out;
	for (size_t i = 0; i < lay->nr_regions; i++) {
		const struct nl_region *rg = &lay->regions[i];
		struct nl_jcc_counts c;

		FZ_ASSERT(rg->start <= rg->end);
		FZ_ASSERT(nl_layout_find_region(lay, rg->name) != NULL);
		nl_layout_jcc_in(lay, rg->start, rg->end, &c);
		nl_layout_func_at(lay, rg->start);
		nl_layout_code_at(lay, rg->end);
	}
	if (rules && !nl_rules_eval(rules, lay, &res, &nr, &d))
		nl_rule_results_free(res, nr);
	{
		uint64_t *sites = NULL;
		size_t ns = 0;

		if (!nl_layout_ftrace_sites(lay, &sites, &ns, &d))
			free(sites);
	}
out:
	nl_layout_free(lay);
	nl_layout_input_release(&in);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *img = fz_find(data, size, "\177ELF", 4);
	size_t rlen = img ? (size_t)(img - data) : size;
	char *text = (char *)fz_dup(data, rlen);
	uint8_t *buf = img ? fz_dup(img, size - rlen) : NULL;
	struct nl_elf_opts eo = { .max_decompressed = 1 << 20 };
	struct nl_elf *elf = NULL;
	struct nl_rules rules;
	bool have_rules = false;
	struct nl_diag d;

	nl_diag_init(&d);
	if (text && rlen && !nl_rules_parse(text, rlen, "fuzz", &rules, &d))
		have_rules = true;
	if (buf && !nl_elf_open_mem("fuzz", buf, size - rlen, &eo, &elf, &d)) {
		audit(elf, have_rules ? &rules : NULL);
		nl_elf_close(elf);
	}
	if (have_rules)
		nl_rules_release(&rules);
	free(buf);
	free(text);
	return 0;
}
