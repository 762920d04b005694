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
#include <stdbool.h>
#include <stdio.h>
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

/*
 * Bounds on the output.  Without an explicit cap: 1 GiB, and beyond 64 MiB no
 * more than 64 times the compressed size.  Real modules compress 3-5x (xz,
 * zstd -19) and vmlinux images about 4x, so 64x is an order of magnitude of
 * headroom, while a bomb (zeros inflate 1000x under gzip, 30000x under xz)
 * is refused after at most 64 MiB or 64x its own size of work, not a
 * gigabyte; the 64 MiB floor keeps small, padding-heavy objects legal.  An
 * explicit cap (--max-decompressed) is the caller's decision and replaces
 * both: it is how an odd but genuine input gets through.
 */
#define RATIO_MAX 64
#define RATIO_FLOOR (64ull << 20)
/*
 * xz's decoder memory is allocated from the stream header, before any output:
 * a header asking for a 1.5 GiB dictionary must not be honoured.  xz -9e needs
 * 65 MiB; nothing a kernel build or a distribution writes needs more.
 */
#define XZ_MEMLIMIT (256ull << 20)
/* an xz index is a few records per stream; one that needs more is not believed */
#define XZ_INDEX_MEMLIMIT (16ull << 20)

/* An output buffer that doubles up to the limit, starting from a declared size when known. */
struct outbuf {
	uint8_t *p;
	size_t len, cap, limit;
	size_t hint;		/* the declared size, 0 when unknown */
	size_t in_size;		/* compressed bytes, for the ratio message */
	bool by_ratio;		/* limit comes from the ratio bound, not a cap */
};

static void set_limit(struct outbuf *o, uint64_t cap, size_t in_size)
{
	uint64_t lim = cap ? cap : NL_LOAD_DEFAULT_CAP;

	o->in_size = in_size;
	if (!cap) {
		uint64_t r = in_size > RATIO_FLOOR / RATIO_MAX ? (uint64_t)in_size * RATIO_MAX
							       : RATIO_FLOOR;

		if (r < lim) {
			lim = r;
			o->by_ratio = true;
		}
	}
	o->limit = lim > SIZE_MAX ? SIZE_MAX : (size_t)lim;
}

/* "64 MiB", "1.5 KiB", "1000 bytes" */
static const char *human(uint64_t v, char *buf, size_t size)
{
	double x = (double)v / (v >= (1ull << 20) ? 1 << 20 : 1024);
	int n;

	if (v < 1024) {
		snprintf(buf, size, "%llu bytes", (unsigned long long)v);
		return buf;
	}
	n = snprintf(buf, size, "%.1f", x);
	if (n >= 2 && (size_t)n < size && !strcmp(buf + n - 2, ".0"))
		buf[n - 2] = '\0';
	snprintf(buf + strlen(buf), size - strlen(buf), " %s", v >= (1ull << 20) ? "MiB" : "KiB");
	return buf;
}

/* The refusal, with what set the limit; declared_by names a size field read up front. */
static int refuse(const struct outbuf *o, struct nl_diag *d, const char *what,
		  const char *declared_by, uint64_t declared)
{
	char lim[32], in[32], dec[64] = "";

	if (declared_by) {
		char n[32];

		snprintf(dec, sizeof(dec), "%s declares %s; ", declared_by,
			 human(declared, n, sizeof(n)));
	}
	if (o->by_ratio)
		return nl_fail(d, -NL_E_LIMIT,
			       "%s: %sdecompressed size exceeds the %s cap for a %s input (over %llu MiB and %d times the compressed size: a decompression bomb?)",
			       what, dec, human(o->limit, lim, sizeof(lim)),
			       human(o->in_size, in, sizeof(in)), RATIO_FLOOR >> 20, RATIO_MAX);
	return nl_fail(d, -NL_E_LIMIT, "%s: %sdecompressed size exceeds the %s cap", what, dec,
		       human(o->limit, lim, sizeof(lim)));
}

/* A size read from the stream's own headers: refuse at once when it is already too much. */
static int check_declared(struct outbuf *o, uint64_t declared, const char *declared_by,
			  struct nl_diag *d, const char *what)
{
	if (declared > o->limit)
		return refuse(o, d, what, declared_by, declared);
	o->hint = (size_t)declared;
	return 0;
}

static int outbuf_grow(struct outbuf *o, struct nl_diag *d, const char *what)
{
	size_t want;
	uint8_t *np;

	if (o->cap >= o->limit)
		return refuse(o, d, what, NULL, 0);
	/* the declared size first: one allocation, no copies, no 1.5x peak */
	want = o->cap ? o->cap * 2 : o->hint > (1u << 16) ? o->hint : 1 << 16;
	if (want > o->limit || want < o->cap)
		want = o->limit;
	np = realloc(o->p, want);
	if (!np)
		return nl_fail_errno(d, -ENOMEM, "%s: decompression buffer", what);
	o->p = np;
	o->cap = want;
	return 0;
}

static uint64_t add_sat(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/*
 * The uncompressed size the xz indexes record, read from the end: each
 * stream's footer gives the size of its index, the index the sizes of its
 * blocks.  A lower bound where a stream cannot be read this way (the
 * decoder then finds the problem); the decoder also checks every index
 * against the blocks, so a lie here only changes which error is reported.
 */
static uint64_t xz_declared(const uint8_t *in, size_t size)
{
	static const uint8_t pad[4];
	uint64_t total = 0;
	size_t end = size;

	for (unsigned n = 0; n < 64; n++) {
		lzma_stream_flags f;
		lzma_index *idx = NULL;
		uint64_t memlimit = XZ_INDEX_MEMLIMIT;
		size_t pos;
		lzma_vli stream;

		while (end >= 4 && !memcmp(in + end - 4, pad, 4))
			end -= 4;	/* stream padding */
		if (end < 2 * LZMA_STREAM_HEADER_SIZE ||
		    lzma_stream_footer_decode(&f, in + end - LZMA_STREAM_HEADER_SIZE) != LZMA_OK ||
		    f.backward_size > end - 2 * LZMA_STREAM_HEADER_SIZE)
			break;
		pos = end - LZMA_STREAM_HEADER_SIZE - (size_t)f.backward_size;
		if (lzma_index_buffer_decode(&idx, &memlimit, NULL, in, &pos,
					     end - LZMA_STREAM_HEADER_SIZE) != LZMA_OK)
			break;
		/* the index must fill exactly the room the footer gives it */
		if (pos != end - LZMA_STREAM_HEADER_SIZE) {
			lzma_index_end(idx, NULL);
			break;
		}
		total = add_sat(total, lzma_index_uncompressed_size(idx));
		stream = lzma_index_stream_size(idx);
		lzma_index_end(idx, NULL);
		if (stream >= end)
			break;
		end -= (size_t)stream;
	}
	return total;
}

/* The content sizes zstd frames carry (the zstd tool writes them); unknown ones count 0. */
static uint64_t zstd_declared(const uint8_t *in, size_t size)
{
	uint64_t total = 0;
	size_t pos = 0;

	while (pos < size) {
		unsigned long long n = ZSTD_getFrameContentSize(in + pos, size - pos);
		size_t flen = ZSTD_findFrameCompressedSize(in + pos, size - pos);

		if (n == ZSTD_CONTENTSIZE_ERROR || ZSTD_isError(flen) || !flen)
			break;
		if (n != ZSTD_CONTENTSIZE_UNKNOWN)
			total = add_sat(total, n);
		pos += flen;
	}
	return total;
}

/*
 * gzip's ISIZE trailer is the size mod 2^32 of the last member, and the last
 * four bytes of a file with trailing data are not a trailer at all: a hint
 * for the first allocation, never a reason to refuse.  Deflate cannot expand
 * more than 1032 times, so a larger figure is not believed either.
 */
static size_t gzip_hint(const uint8_t *in, size_t size, size_t limit)
{
	uint64_t isize;

	if (size < 18)
		return 0;
	isize = (uint64_t)in[size - 4] | (uint64_t)in[size - 3] << 8 |
		(uint64_t)in[size - 2] << 16 | (uint64_t)in[size - 1] << 24;
	if (isize / 1032 > size)
		return 0;
	return isize > limit ? limit : (size_t)isize;
}

static int inflate_xz(const uint8_t *in, size_t size, struct outbuf *o, struct nl_diag *d)
{
	lzma_stream s = LZMA_STREAM_INIT;
	lzma_ret r;
	int err = check_declared(o, xz_declared(in, size), "the index", d, "xz");

	if (err)
		return err;
	r = lzma_stream_decoder(&s, XZ_MEMLIMIT, LZMA_CONCATENATED);
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
		if (r == LZMA_MEMLIMIT_ERROR) {
			char need[32], lim[32];

			err = nl_fail(d, -NL_E_LIMIT,
				      "xz: the stream asks for %s of decoder memory, over the %s cap",
				      human(lzma_memusage(&s), need, sizeof(need)),
				      human(XZ_MEMLIMIT, lim, sizeof(lim)));
			break;
		}
		err = nl_fail(d, r == LZMA_MEM_ERROR ? -NL_E_LIMIT : -NL_E_FORMAT,
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
	int err = check_declared(o, zstd_declared(in, size), "the frame header", d, "zstd");

	if (err || !z) {
		ZSTD_freeDStream(z);
		return err ? err : nl_fail_errno(d, -ENOMEM, "zstd: decoder");
	}
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
	o->hint = gzip_hint(in, size, o->limit);
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
	struct outbuf o;
	enum nl_compression c = nl_compression_of(buf, size);
	int err;

	memset(b, 0, sizeof(*b));
	b->comp = c;
	if (c == NL_COMP_NONE) {
		b->data = buf;
		b->size = size;
		return 0;
	}
	memset(&o, 0, sizeof(o));
	set_limit(&o, cap, size);
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
	/* a doubled buffer, or a hint that was too large: give the tail back */
	if (o.cap - o.len > (o.len >> 3) + (1u << 16)) {
		uint8_t *np = realloc(o.p, o.len);

		if (np)
			o.p = np;
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

#define THP_SIZE (2u << 20)

void nl_prefault(void *p, size_t size)
{
	long page = sysconf(_SC_PAGESIZE);
	uintptr_t lo, hi;

	if (!p || size < (1u << 18) || page <= 0)
		return;
	lo = ((uintptr_t)p + (uintptr_t)page - 1) & ~((uintptr_t)page - 1);
	hi = ((uintptr_t)p + size) & ~((uintptr_t)page - 1);
	if (hi <= lo)
		return;
	/*
	 * Where the kernel hands out transparent huge pages on request, the
	 * 2 MiB-aligned middle of a large array becomes a few huge pages instead
	 * of hundreds of faults (in a VM each one costs several microseconds).
	 */
	uintptr_t lo2 = (lo + THP_SIZE - 1) & ~(uintptr_t)(THP_SIZE - 1), hi2 = hi & ~(uintptr_t)(THP_SIZE - 1);

	if (hi2 > lo2)
		madvise((void *)lo2, hi2 - lo2, MADV_HUGEPAGE);
#ifdef MADV_POPULATE_WRITE
	madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE);
#endif
}
