// SPDX-License-Identifier: MIT
/* The layout rules parser (`--rules FILE`) and the size parser it uses. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "noplab/rules.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = (char *)fz_dup(data, size);
	struct nl_rules rules;
	struct nl_diag d;
	char word[64];
	size_t n = 0;
	uint64_t v;

	if (!text)
		return 0;
	nl_diag_init(&d);
	if (!nl_rules_parse(text, size, "fuzz", &rules, &d)) {
		for (size_t i = 0; i < rules.nr; i++) {
			/* the fixed-size fields must stay terminated whatever the line held */
			FZ_ASSERT(memchr(rules.v[i].text, 0, sizeof(rules.v[i].text)));
			FZ_ASSERT(memchr(rules.v[i].region, 0, sizeof(rules.v[i].region)));
			FZ_ASSERT(memchr(rules.v[i].other, 0, sizeof(rules.v[i].other)));
		}
		nl_rules_need_jcc(&rules);
		nl_rules_release(&rules);
	} else {
		FZ_ASSERT(d.msg[0]);
	}
	/* the first word alone through the size parser */
	while (n < size && n < sizeof(word) - 1 && text[n] && text[n] != ' ' && text[n] != '\n') {
		word[n] = text[n];
		n++;
	}
	word[n] = '\0';
	nl_parse_size(word, &v);
	free(text);
	return 0;
}
