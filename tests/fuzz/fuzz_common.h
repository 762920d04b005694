/* SPDX-License-Identifier: MIT */
#ifndef NOPLAB_FUZZ_COMMON_H
#define NOPLAB_FUZZ_COMMON_H

/*
 * Shared bits of the harnesses.  libFuzzer's buffer may be followed by
 * readable bytes, so every harness works on a malloc'd copy of exactly the
 * input's size: ASan then catches a read one byte past its end.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static inline uint8_t *fz_dup(const uint8_t *data, size_t size)
{
	uint8_t *p = malloc(size ? size : 1);

	if (p && size)
		memcpy(p, data, size);
	return p;
}

/* Where needle first occurs in hay, or NULL. */
static inline const uint8_t *fz_find(const uint8_t *hay, size_t n, const void *needle, size_t k)
{
	if (!k || n < k)
		return NULL;
	for (size_t i = 0; i + k <= n; i++)
		if (!memcmp(hay + i, needle, k))
			return hay + i;
	return NULL;
}

/* A harness found a broken invariant: crash so libFuzzer keeps the input. */
#define FZ_ASSERT(c) do { if (!(c)) abort(); } while (0)

#endif
