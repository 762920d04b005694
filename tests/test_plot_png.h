/* SPDX-License-Identifier: MIT */
#ifndef NOPLAB_TEST_PLOT_PNG_H
#define NOPLAB_TEST_PLOT_PNG_H

/*
 * Just enough PNG for the picture tests (zlib inflates, nothing else): the
 * IHDR, and the pixels of 8-bit RGB/RGBA non-interlaced images, which is
 * what cairo and Chromium write.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tpng {
	uint32_t width, height;
	uint8_t depth, color;	/* IHDR bit depth and colour type */
	uint8_t *rgb;		/* width * height * 3, NULL when only the IHDR was read */
};

/* 0, or -1 with why filled in. pixels: also decode the image. */
int tpng_read(const char *path, bool pixels, struct tpng *p, char *why, size_t size);
void tpng_free(struct tpng *p);

/* Pixels in [x0,x1) x [y0,y1) for which match(r, g, b) holds. */
size_t tpng_count(const struct tpng *p, uint32_t x0, uint32_t y0, uint32_t x1, uint32_t y1,
		 bool (*match)(uint8_t r, uint8_t g, uint8_t b));

bool px_not_white(uint8_t r, uint8_t g, uint8_t b);
bool px_orange(uint8_t r, uint8_t g, uint8_t b);	/* the "slower" bars */
bool px_blue(uint8_t r, uint8_t g, uint8_t b);		/* the "no difference" bars */

#endif
