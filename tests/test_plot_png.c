// SPDX-License-Identifier: MIT
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "test_plot_png.h"

static uint32_t be32(const uint8_t *b)
{
	return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

static int paeth(int a, int b, int c)
{
	int p = a + b - c, pa = abs(p - a), pb = abs(p - b), pc = abs(p - c);

	return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

static int fail(char *why, size_t size, const char *msg)
{
	snprintf(why, size, "%s", msg);
	return -1;
}

int tpng_read(const char *path, bool pixels, struct tpng *p, char *why, size_t size)
{
	static const uint8_t sig[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };
	uint8_t *file = NULL, *idat = NULL, *raw = NULL;
	size_t len = 0, nidat = 0, bpp, stride;
	uLongf rawlen;
	FILE *f = fopen(path, "rb");
	int ret = -1;

	memset(p, 0, sizeof(*p));
	if (!f)
		return fail(why, size, "cannot open");
	fseek(f, 0, SEEK_END);
	len = (size_t)ftell(f);
	rewind(f);
	file = malloc(len ? len : 1);
	if (!file || fread(file, 1, len, f) != len) {
		fclose(f);
		free(file);
		return fail(why, size, "cannot read");
	}
	fclose(f);
	if (len < 33 || memcmp(file, sig, 8) || memcmp(file + 12, "IHDR", 4)) {
		fail(why, size, "not a PNG (signature or IHDR)");
		goto out;
	}
	p->width = be32(file + 16);
	p->height = be32(file + 20);
	p->depth = file[24];
	p->color = file[25];
	if (!pixels) {
		ret = 0;
		goto out;
	}
	if (p->depth != 8 || (p->color != 2 && p->color != 6) || file[28] != 0) {
		fail(why, size, "only 8-bit RGB/RGBA non-interlaced PNGs are decoded here");
		goto out;
	}
	idat = malloc(len);
	for (size_t o = 8; idat && o + 12 <= len;) {
		uint32_t n = be32(file + o);

		if (o + 12 + n > len)
			break;
		if (!memcmp(file + o + 4, "IDAT", 4)) {
			memcpy(idat + nidat, file + o + 8, n);
			nidat += n;
		}
		o += 12 + n;
	}
	bpp = p->color == 6 ? 4 : 3;
	stride = (size_t)p->width * bpp;
	rawlen = (uLongf)((stride + 1) * p->height);
	raw = malloc(rawlen);
	p->rgb = malloc((size_t)p->width * p->height * 3 + 1);
	if (!idat || !raw || !p->rgb || uncompress(raw, &rawlen, idat, nidat) != Z_OK ||
	    rawlen != (uLongf)((stride + 1) * p->height)) {
		fail(why, size, "IDAT does not inflate to the image size");
		goto out;
	}
	for (uint32_t y = 0; y < p->height; y++) {
		uint8_t *row = raw + y * (stride + 1), ft = row[0], *cur = row + 1;
		const uint8_t *prev = y ? raw + (y - 1) * (stride + 1) + 1 : NULL;

		for (size_t i = 0; i < stride; i++) {
			int a = i >= bpp ? cur[i - bpp] : 0, b = prev ? prev[i] : 0;
			int c = prev && i >= bpp ? prev[i - bpp] : 0;

			switch (ft) {
			case 0: break;
			case 1: cur[i] = (uint8_t)(cur[i] + a); break;
			case 2: cur[i] = (uint8_t)(cur[i] + b); break;
			case 3: cur[i] = (uint8_t)(cur[i] + (a + b) / 2); break;
			case 4: cur[i] = (uint8_t)(cur[i] + paeth(a, b, c)); break;
			default: fail(why, size, "bad filter type"); goto out;
			}
		}
		for (uint32_t x = 0; x < p->width; x++)
			memcpy(p->rgb + ((size_t)y * p->width + x) * 3, cur + x * bpp, 3);
	}
	ret = 0;
out:
	if (ret) {
		free(p->rgb);
		p->rgb = NULL;
	}
	free(file);
	free(idat);
	free(raw);
	return ret;
}

void tpng_free(struct tpng *p)
{
	free(p->rgb);
	p->rgb = NULL;
}

size_t tpng_count(const struct tpng *p, uint32_t x0, uint32_t y0, uint32_t x1, uint32_t y1,
		 bool (*match)(uint8_t r, uint8_t g, uint8_t b))
{
	size_t n = 0;

	for (uint32_t y = y0; y < y1 && y < p->height; y++)
		for (uint32_t x = x0; x < x1 && x < p->width; x++) {
			const uint8_t *c = p->rgb + ((size_t)y * p->width + x) * 3;

			n += match(c[0], c[1], c[2]);
		}
	return n;
}

bool px_not_white(uint8_t r, uint8_t g, uint8_t b)
{
	return r < 245 || g < 245 || b < 245;
}

bool px_orange(uint8_t r, uint8_t g, uint8_t b)
{
	return r > 190 && g > 70 && g < 140 && b < 70;
}

bool px_blue(uint8_t r, uint8_t g, uint8_t b)
{
	return b > 180 && r < 140 && g > 120 && g < 190;
}
