// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cairo_mem.h"

cairo_status_t cli_membuf_write(void *ctx, const unsigned char *data, unsigned int len)
{
	struct cli_membuf *m = ctx;

	if (m->len + len + 1 > m->cap) {
		size_t cap = (m->cap ? m->cap * 2 : 65536) + len;
		char *p = realloc(m->p, cap);

		if (!p) {
			m->err = -ENOMEM;
			return CAIRO_STATUS_NO_MEMORY;
		}
		m->p = p;
		m->cap = cap;
	}
	memcpy(m->p + m->len, data, len);
	m->len += len;
	m->p[m->len] = '\0';
	return CAIRO_STATUS_SUCCESS;
}
