// SPDX-License-Identifier: MIT
/*
 * File bytes for the ELF model.  Plain files are mmap'd so a 600 MB vmlinux
 * costs only the pages the scan touches; compressed modules (.ko.xz, .ko.zst,
 * .ko.gz as distributions ship them) are decompressed in memory with the real
 * libraries, never by running a tool, and never past a size cap, so a
 * decompression bomb is an error and not an out-of-memory kill.
 */
#include <errno.h>
#include <fcntl.h>
#include <lzma.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "load.h"

enum nl_compression nl_compression_of(const uint8_t *p, size_t size)
{
	static const uint8_t xz[6] = { 0xfd, '7', 'z', 'X', 'Z', 0x00 };
	static const uint8_t zst[4] = { 0x28, 0xb5, 0x2f, 0xfd };

	if (size >= sizeof(xz) && !memcmp(p, xz, sizeof(xz)))
		return NL_COMP_XZ;
	if (size >= sizeof(zst) && !memcmp(p, zst, sizeof(zst)))
		return NL_COMP_ZSTD;
	if (size >= 3 && p[0] == 0x1f && p[1] == 0x8b && p[2] == 8)
		return NL_COMP_GZIP;
	return NL_COMP_NONE;
}

const char *nl_compression_name(enum nl_compression c)
{
	switch (c) {
	case NL_COMP_XZ: return "xz";
	case NL_COMP_ZSTD: return "zstd";
	case NL_COMP_GZIP: return "gzip";
	default: return "none";
	}
}

/* An output buffer that doubles up to the cap. */
struct outbuf {
	uint8_t *p;
	size_t len, cap, limit;
};

static int outbuf_grow(struct outbuf *o, struct nl_diag *d, const char *what)
{
	size_t want;
	uint8_t *np;

	if (o->cap >= o->limit)
		return nl_fail(d, -NL_E_LIMIT, "%s: decompressed size exceeds the %zu MiB cap", what,
			       o->limit >> 20);
	want = o->cap ? o->cap * 2 : 1 << 16;
	if (want > o->limit || want < o->cap)
		want = o->limit;
	np = realloc(o->p, want);
	if (!np)
		return nl_fail_errno(d, -ENOMEM, "%s: decompression buffer", what);
	o->p = np;
	o->cap = want;
	return 0;
}

static int inflate_xz(const uint8_t *in, size_t size, struct outbuf *o, struct nl_diag *d)
{
	lzma_stream s = LZMA_STREAM_INIT;
	lzma_ret r = lzma_stream_decoder(&s, 1ull << 30, LZMA_CONCATENATED);
	int err = 0;

	if (r != LZMA_OK)
		return nl_fail(d, r == LZMA_MEM_ERROR ? -ENOMEM : -NL_E_FORMAT,
			       "xz: decoder init failed (%d)", (int)r);
	s.next_in = in;
	s.avail_in = size;
	for (;;) {
		if (o->len == o->cap && (err = outbuf_grow(o, d, "xz")))
			break;
		s.next_out = o->p + o->len;
		s.avail_out = o->cap - o->len;
		r = lzma_code(&s, LZMA_FINISH);
		o->len = o->cap - s.avail_out;
		if (r == LZMA_STREAM_END)
			break;
		/* liblzma answers LZMA_BUF_ERROR on a second call that cannot progress */
		if (r == LZMA_OK || (r == LZMA_BUF_ERROR && s.avail_out == 0))
			continue;
		if (r == LZMA_BUF_ERROR) {
			err = nl_fail(d, -NL_E_FORMAT, "xz: truncated stream");
			break;
		}
		err = nl_fail(d, r == LZMA_MEM_ERROR || r == LZMA_MEMLIMIT_ERROR ? -NL_E_LIMIT
										 : -NL_E_FORMAT,
			      "xz: corrupt stream (lzma error %d)", (int)r);
		break;
	}
	lzma_end(&s);
	return err;
}

static int inflate_zstd(const uint8_t *in, size_t size, struct outbuf *o, struct nl_diag *d)
{
	ZSTD_DStream *z = ZSTD_createDStream();
	ZSTD_inBuffer ib = { in, size, 0 };
	size_t r = 1;
	int err = 0;

	if (!z)
		return nl_fail_errno(d, -ENOMEM, "zstd: decoder");
	ZSTD_initDStream(z);
	/* r == 0 after a frame ends; more input means a concatenated frame */
	while (ib.pos < ib.size || r != 0) {
		if (o->len == o->cap && (err = outbuf_grow(o, d, "zstd")))
			break;
		ZSTD_outBuffer ob = { o->p, o->cap, o->len };
		size_t before = ib.pos;

		r = ZSTD_decompressStream(z, &ob, &ib);
		o->len = ob.pos;
		if (ZSTD_isError(r)) {
			err = nl_fail(d, -NL_E_FORMAT, "zstd: %s", ZSTD_getErrorName(r));
			break;
		}
		if (r != 0 && ib.pos == ib.size && ob.pos < ob.size && before == ib.pos) {
			err = nl_fail(d, -NL_E_FORMAT, "zstd: truncated stream");
			break;
		}
	}
	ZSTD_freeDStream(z);
	return err;
}

static int inflate_gzip(const uint8_t *in, size_t size, struct outbuf *o, struct nl_diag *d)
{
	z_stream z;
	int r, err = 0;
	size_t pos = 0;

	memset(&z, 0, sizeof(z));
	if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK)
		return nl_fail_errno(d, -ENOMEM, "gzip: decoder");
	for (;;) {
		if (o->len == o->cap && (err = outbuf_grow(o, d, "gzip")))
			break;
		/* zlib counts in uInt: feed large inputs in pieces */
		if (!z.avail_in && pos < size) {
			size_t n = size - pos > (1u << 30) ? (1u << 30) : size - pos;

			z.next_in = (Bytef *)(uintptr_t)(in + pos);
			z.avail_in = (uInt)n;
			pos += n;
		}
		size_t room = o->cap - o->len > (1u << 30) ? (1u << 30) : o->cap - o->len;

		z.next_out = o->p + o->len;
		z.avail_out = (uInt)room;
		r = inflate(&z, Z_NO_FLUSH);
		o->len += room - z.avail_out;
		if (r == Z_STREAM_END) {
			/* a multi-member gzip file continues with another header */
			if (z.avail_in >= 2 && z.next_in[0] == 0x1f && z.next_in[1] == 0x8b) {
				inflateReset(&z);
				continue;
			}
			break;
		}
		if (r == Z_OK)
			continue;
		if (r == Z_BUF_ERROR && z.avail_out == 0)
			continue;
		if (r == Z_BUF_ERROR)
			err = nl_fail(d, -NL_E_FORMAT, "gzip: truncated stream");
		else
			err = nl_fail(d, r == Z_MEM_ERROR ? -ENOMEM : -NL_E_FORMAT, "gzip: %s",
				      z.msg ? z.msg : "corrupt stream");
		break;
	}
	inflateEnd(&z);
	return err;
}

int nl_load_mem(const uint8_t *buf, size_t size, uint64_t cap, struct nl_blob *b,
		struct nl_diag *d)
{
	struct outbuf o = { NULL, 0, 0, 0 };
	enum nl_compression c = nl_compression_of(buf, size);
	int err;

	memset(b, 0, sizeof(*b));
	b->comp = c;
	if (c == NL_COMP_NONE) {
		b->data = buf;
		b->size = size;
		return 0;
	}
	if (!cap)
		cap = NL_LOAD_DEFAULT_CAP;
	o.limit = cap > SIZE_MAX ? SIZE_MAX : (size_t)cap;
	switch (c) {
	case NL_COMP_XZ: err = inflate_xz(buf, size, &o, d); break;
	case NL_COMP_ZSTD: err = inflate_zstd(buf, size, &o, d); break;
	default: err = inflate_gzip(buf, size, &o, d); break;
	}
	if (!err && !o.len)
		err = nl_fail(d, -NL_E_FORMAT, "%s: empty stream", nl_compression_name(c));
	if (err) {
		free(o.p);
		return err;
	}
	b->heap = o.p;
	b->data = o.p;
	b->size = o.len;
	return 0;
}

int nl_load_file(const char *path, uint64_t cap, struct nl_blob *b, struct nl_diag *d)
{
	struct stat st;
	void *map;
	int fd, err;

	memset(b, 0, sizeof(*b));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return nl_fail_errno(d, -errno, "cannot open");
	if (fstat(fd, &st)) {
		err = nl_fail_errno(d, -errno, "cannot stat");
		close(fd);
		return err;
	}
	if (S_ISDIR(st.st_mode)) {
		close(fd);
		return nl_fail(d, -EISDIR, "is a directory");
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return nl_fail(d, -NL_E_FORMAT, "not a regular file");
	}
	if (st.st_size == 0) {
		close(fd);
		return nl_fail(d, -NL_E_FORMAT, "empty file");
	}
	if ((uint64_t)st.st_size > SIZE_MAX) {
		close(fd);
		return nl_fail(d, -NL_E_LIMIT, "file too large to map");
	}
	/*
	 * Private and writable so a library that converts data in place could
	 * never reach the file; nothing writes in practice, so no page is copied.
	 */
	map = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	err = map == MAP_FAILED ? -errno : 0;
	close(fd);
	if (err)
		return nl_fail_errno(d, err, "cannot map");

	err = nl_load_mem(map, (size_t)st.st_size, cap, b, d);
	if (err || b->heap) {
		munmap(map, (size_t)st.st_size);
		return err;
	}
	b->map = map;
	b->map_size = (size_t)st.st_size;
	return 0;
}

void nl_blob_release(struct nl_blob *b)
{
	if (!b)
		return;
	if (b->map)
		munmap(b->map, b->map_size);
	free(b->heap);
	memset(b, 0, sizeof(*b));
}

void nl_prefault(void *p, size_t size)
{
	long page = sysconf(_SC_PAGESIZE);
	uintptr_t lo, hi;

	if (!p || size < (1u << 18) || page <= 0)
		return;
	lo = ((uintptr_t)p + (uintptr_t)page - 1) & ~((uintptr_t)page - 1);
	hi = ((uintptr_t)p + size) & ~((uintptr_t)page - 1);
#ifdef MADV_POPULATE_WRITE
	if (hi > lo)
		madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE);
#endif
}
