/* SPDX-License-Identifier: MIT */
#ifndef NOPLAB_CLI_CAIRO_MEM_H
#define NOPLAB_CLI_CAIRO_MEM_H

/*
 * A growing, always NUL-terminated buffer that cairo's stream surfaces write
 * into: the SVG is post-processed (title, description) before it reaches a file.
 */
#include <cairo.h>
#include <stddef.h>

struct cli_membuf {
	char *p;	/* malloc'd; the caller frees */
	size_t len, cap;
	int err;	/* -ENOMEM once a write failed */
};

/* cairo_write_func_t over a struct cli_membuf */
cairo_status_t cli_membuf_write(void *ctx, const unsigned char *data, unsigned int len);

#endif
