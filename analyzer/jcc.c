// SPDX-License-Identifier: MIT
/*
 * Branch alignment audit (JCC erratum condition) over decoded text.
 *
 * Speed matters: a vmlinux has ~15 MB of text and the target is 4x faster
 * than objdump -d.  So: Capstone without detail (insn.h), runs of int3 and
 * 0x90 fill skipped by a byte scan (at an instruction start each of those
 * bytes is a one-byte instruction, so skipping them is the same as decoding
 * them), and the text split between threads at cuts, where the decode
 * restarts anyway.  The only state that crosses a cut is "the previous
 * instruction was fusible and ended here"; the merge step repairs the one
 * pair that a split can separate.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "noplab/jcc.h"

#define DEFAULT_BOUNDARY 32
#define DEFAULT_THREADS 2
#define MAX_THREADS 64

static const char *const kind_names[NL_JCC_NR_KINDS] = {
	[NL_JCC_JMP] = "jmp",
	[NL_JCC_JMP_INDIRECT] = "jmp_indirect",
	[NL_JCC_JCC] = "jcc",
	[NL_JCC_FUSED] = "fused",
	[NL_JCC_CALL] = "call",
	[NL_JCC_CALL_INDIRECT] = "call_indirect",
	[NL_JCC_RET] = "ret",
};

const char *nl_jcc_kind_name(enum nl_jcc_kind k)
{
	return (unsigned)k < NL_JCC_NR_KINDS ? kind_names[k] : "?";
}

void nl_jcc_counts_add(struct nl_jcc_counts *to, const struct nl_jcc_counts *from)
{
	to->units += from->units;
	to->fused += from->fused;
	to->affected += from->affected;
	for (int k = 0; k < NL_JCC_NR_KINDS; k++) {
		to->kind_units[k] += from->kind_units[k];
		to->kind_affected[k] += from->kind_affected[k];
	}
}

bool nl_jcc_crosses(uint64_t addr, unsigned len, unsigned boundary)
{
	/* "ends on" counts: the next instruction starts in the next chunk */
	return addr / boundary != (addr + len) / boundary;
}

bool nl_jcc_fuses(const struct nl_insn *first, const struct nl_insn *jcc)
{
	int cc = jcc->cond;

	if (jcc->cls != NL_INSN_JUMP_COND || cc < 0)
		return false;
	switch (first->fuse) {
	case NL_FUSE_TEST_AND:
		return true;
	case NL_FUSE_CMP_ADD_SUB:
		/* carry/zero/sign-compare conditions; not o/no, s/ns, p/np */
		return (cc >= 0x2 && cc <= 0x7) || cc >= 0xc;
	case NL_FUSE_INC_DEC:
		/* inc/dec leave CF alone: only e/ne, l/ge, le/g */
		return cc == 0x4 || cc == 0x5 || cc >= 0xc;
	}
	return false;
}

/* Number of cuts <= addr: the bin of addr. */
static size_t bin_of(const uint64_t *cuts, size_t nr, uint64_t addr)
{
	size_t lo = 0, hi = nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cuts[mid] <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

struct unit_list {
	struct nl_jcc_unit *v;
	size_t nr, cap;
};

static int list_push(struct unit_list *l, const struct nl_jcc_unit *u)
{
	if (l->nr == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 1024;
		struct nl_jcc_unit *v = realloc(l->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		l->v = v;
		l->cap = cap;
	}
	l->v[l->nr++] = *u;
	return 0;
}

/*
 * A split between two threads can land anywhere: at a cut (where the decode
 * restarts anyway) or, in a stripped file, in the middle of an instruction.
 * The thread after the split records, for the first WINDOW bytes, where its
 * instructions start and which units it counted; after the join the main
 * thread continues the stream of the thread before the split until it meets
 * one of those starts (x86 resynchronises within a few instructions) and
 * swaps the units in between.  The result is the single-threaded one.
 */
#define WINDOW 4096u

struct win_unit {
	struct nl_jcc_unit u;
	size_t bin;
	bool affected;
	struct nl_insn branch;	/* the branch instruction (a pair's jcc) */
};

/* Counters before the instruction starting at a window offset. */
struct win_stat {
	uint64_t insns, bytes, fill, errors;
};

struct chunk {
	/* input: [t0:a0, t1:a1) */
	size_t t0, t1;
	uint64_t a0, a1;
	const struct nl_jcc_text *texts;
	const struct nl_jcc_opts *o;
	struct nl_decoder *dec;
	bool has_window;	/* a split inside a text precedes it */
	bool mid_split;		/* ... and not at a cut: the streams meet a little later */

	/* output */
	struct nl_jcc_counts total;
	struct nl_jcc_counts *bins;	/* local: bins[b - bin_lo] */
	size_t bin_lo, nr_bins;
	struct unit_list list;
	uint64_t insns, bytes, fill, errors;
	int err;

	/* the window after a0 */
	uint64_t win_bits[WINDOW / 64];
	struct win_stat *win_stat;	/* WINDOW entries */
	struct win_unit *wu;
	size_t nr_wu, cap_wu;

	/* where the decode stopped: the stream continues from here */
	uint64_t exit_pos;
	size_t exit_ci;
	struct nl_insn exit_prev;
	bool exit_prev_valid;
};

static enum nl_jcc_kind kind_of(enum nl_insn_class cls, bool *is_unit)
{
	*is_unit = true;
	switch (cls) {
	case NL_INSN_JUMP: return NL_JCC_JMP;
	case NL_INSN_JUMP_INDIRECT: return NL_JCC_JMP_INDIRECT;
	case NL_INSN_JUMP_COND: return NL_JCC_JCC;
	case NL_INSN_CALL: return NL_JCC_CALL;
	case NL_INSN_CALL_INDIRECT: return NL_JCC_CALL_INDIRECT;
	case NL_INSN_RET: return NL_JCC_RET;
	default:
		*is_unit = false;
		return NL_JCC_JMP;
	}
}

/* The unit a branch makes, fused with prev when they fuse. */
static void make_unit(const struct nl_insn *insn, const struct nl_insn *prev, bool prev_valid,
		      unsigned boundary, struct nl_jcc_unit *u, bool *affected)
{
	enum nl_jcc_kind kind;
	bool is_unit;

	kind = kind_of(insn->cls, &is_unit);
	u->addr = insn->addr;
	u->len = insn->len;
	u->branch_off = 0;
	if (kind == NL_JCC_JCC && prev_valid && prev->addr + prev->len == insn->addr &&
	    nl_jcc_fuses(prev, insn)) {
		u->addr = prev->addr;
		u->len = (uint8_t)(prev->len + insn->len);
		u->branch_off = prev->len;
		kind = NL_JCC_FUSED;
	}
	u->kind = (uint8_t)kind;
	*affected = nl_jcc_crosses(u->addr, u->len, boundary);
	u->ends_on_boundary = *affected && (u->addr + u->len) % boundary == 0;
}

static void counts_unit(struct nl_jcc_counts *c, enum nl_jcc_kind kind, bool affected, int sign)
{
	c->units += (uint64_t)sign;
	c->kind_units[kind] += (uint64_t)sign;
	if (kind == NL_JCC_FUSED)
		c->fused += (uint64_t)sign;
	if (affected) {
		c->affected += (uint64_t)sign;
		c->kind_affected[kind] += (uint64_t)sign;
	}
}

static int win_push(struct chunk *c, const struct win_unit *w)
{
	if (c->nr_wu == c->cap_wu) {
		size_t cap = c->cap_wu ? c->cap_wu * 2 : 256;
		struct win_unit *v = realloc(c->wu, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		c->wu = v;
		c->cap_wu = cap;
	}
	c->wu[c->nr_wu++] = *w;
	return 0;
}

/* Mark an instruction start in the window, with the counters before it. */
static inline void win_mark(struct chunk *c, uint64_t pos)
{
	uint64_t off = pos - c->a0;

	if (off >= WINDOW)
		return;
	c->win_bits[off / 64] |= 1ull << (off % 64);
	c->win_stat[off] = (struct win_stat){ c->insns, c->bytes, c->fill, c->errors };
}

static bool win_has(const struct chunk *c, uint64_t pos)
{
	uint64_t off = pos - c->a0;

	return pos >= c->a0 && off < WINDOW && (c->win_bits[off / 64] >> (off % 64) & 1);
}

static int run_text(struct chunk *c, const struct nl_jcc_text *t, uint64_t lo, uint64_t hi)
{
	const struct nl_jcc_opts *o = c->o;
	const uint64_t *cuts = o->cuts;
	const size_t nr_cuts = o->nr_cuts;
	const unsigned boundary = o->boundary;
	const uint64_t text_end = t->addr + t->size;
	const bool window = c->has_window && t == &c->texts[c->t0];
	size_t ci = bin_of(cuts, nr_cuts, lo);	/* first cut > pos */
	struct nl_insn prev, insn;
	bool prev_valid = false;
	uint64_t pos = lo;

	for (;;) {
		/* a cut at or before pos, inside this chunk (the next chunk owns hi) */
		if (ci < nr_cuts && cuts[ci] <= pos && cuts[ci] < hi) {
			/* an instruction ran over a cut: restart there, as objdump does */
			if (cuts[ci] < pos) {
				pos = cuts[ci];
				prev_valid = false;
			}
			while (ci < nr_cuts && cuts[ci] <= pos)
				ci++;
		}
		if (pos >= hi)
			break;
		const uint8_t *p = t->data + (pos - t->addr);
		uint8_t b = *p;

		if (b == 0xcc || b == 0x90) {
			uint64_t stop = hi, n = 1;

			if (ci < nr_cuts && cuts[ci] < stop)
				stop = cuts[ci];
			while (pos + n < stop && p[n] == b)
				n++;
			if (window && pos - c->a0 < WINDOW)
				for (uint64_t k = 0; k < n; k++) {
					win_mark(c, pos + k);
					c->fill++;
				}
			else
				c->fill += n;
			pos += n;
			prev_valid = false;
			continue;
		}
		if (window)
			win_mark(c, pos);
		int n = nl_decode(c->dec, p, text_end - pos, pos, &insn);

		if (n < 0) {
			c->errors++;
			pos++;
			prev_valid = false;
			continue;
		}
		c->insns++;
		c->bytes += (uint64_t)n;

		bool is_unit;

		kind_of(insn.cls, &is_unit);
		if (is_unit) {
			struct win_unit w;

			make_unit(&insn, &prev, prev_valid, boundary, &w.u, &w.affected);
			/* a pair's cmp may sit before the cut that starts this bin */
			w.bin = ci > 0 && w.u.addr < cuts[ci - 1] ? bin_of(cuts, nr_cuts, w.u.addr) : ci;
			counts_unit(&c->bins[w.bin - c->bin_lo], w.u.kind, w.affected, 1);
			counts_unit(&c->total, w.u.kind, w.affected, 1);
			if (w.affected && o->list && list_push(&c->list, &w.u))
				return -ENOMEM;
			if (window && pos - c->a0 < WINDOW) {
				w.branch = insn;
				if (win_push(c, &w))
					return -ENOMEM;
			}
		}
		prev = insn;
		prev_valid = insn.fuse != NL_FUSE_NONE;
		pos += (uint64_t)n;
	}
	if (hi == c->a1) {
		c->exit_pos = pos;
		c->exit_ci = ci;
		c->exit_prev = prev;
		c->exit_prev_valid = prev_valid;
	}
	return 0;
}

static void *run_chunk(void *arg)
{
	struct chunk *c = arg;

	for (size_t t = c->t0; t <= c->t1 && !c->err; t++) {
		const struct nl_jcc_text *tx = &c->texts[t];
		uint64_t lo = t == c->t0 ? c->a0 : tx->addr;
		uint64_t hi = t == c->t1 ? c->a1 : tx->addr + tx->size;

		if (lo < hi && tx->data)
			c->err = run_text(c, tx, lo, hi);
	}
	return NULL;
}

/* Position `off` bytes into the concatenated texts. */
static void locate(const struct nl_jcc_text *texts, size_t nr, uint64_t off, size_t *t,
		   uint64_t *addr)
{
	for (size_t i = 0; i < nr; i++) {
		if (off < texts[i].size) {
			*t = i;
			*addr = texts[i].addr + off;
			return;
		}
		off -= texts[i].size;
	}
	*t = nr - 1;
	*addr = texts[nr - 1].addr + texts[nr - 1].size;
}

/*
 * Split points: for each thread boundary the even share, moved to the next
 * cut when there is one in the same text (the streams meet there at once).
 * A split inside a text needs room for its window.  Returns the chunk count.
 */
static size_t plan_chunks(const struct nl_jcc_text *texts, size_t nr,
			  const struct nl_jcc_opts *o, unsigned threads, struct chunk *ch)
{
	uint64_t total = 0;
	size_t n = 0;

	for (size_t i = 0; i < nr; i++)
		total += texts[i].size;
	ch[0].t0 = 0;
	ch[0].a0 = texts[0].addr;
	for (unsigned k = 1; k < threads; k++) {
		size_t t;
		uint64_t a, end;

		locate(texts, nr, total / threads * k, &t, &a);
		end = texts[t].addr + texts[t].size;
		size_t ci = bin_of(o->cuts, o->nr_cuts, a ? a - 1 : 0);

		bool at_cut = ci < o->nr_cuts && o->cuts[ci] < end;

		if (at_cut)
			a = o->cuts[ci];
		else if (end - a < 2 * WINDOW && t + 1 < nr)
			a = texts[++t].addr;
		if (a == texts[t].addr)
			at_cut = true;	/* a text start: nothing to join */
		/* strictly after the previous split */
		if (t < ch[n].t0 || (t == ch[n].t0 && a <= ch[n].a0))
			continue;
		/*
		 * Mid-instruction splits need their window inside their own chunk:
		 * room after this one, and after the previous one if it was such.
		 */
		if (!at_cut && texts[t].addr + texts[t].size - a < 2 * WINDOW)
			continue;
		if (ch[n].mid_split && t == ch[n].t0 && a - ch[n].a0 < 2 * WINDOW)
			continue;
		if (a == texts[t].addr && t > 0) {
			ch[n].t1 = t - 1;
			ch[n].a1 = texts[t - 1].addr + texts[t - 1].size;
		} else {
			ch[n].t1 = t;
			ch[n].a1 = a;
			ch[n + 1].has_window = true;
			ch[n + 1].mid_split = !at_cut;
		}
		n++;
		ch[n].t0 = t;
		ch[n].a0 = a;
	}
	ch[n].t1 = nr - 1;
	ch[n].a1 = texts[nr - 1].addr + texts[nr - 1].size;
	return n + 1;
}

/*
 * Join chunk b onto the stream of chunk a (the one before it in the same
 * text): continue a's decode from where it stopped until it reaches an
 * instruction start b also has; the units b counted before that point are
 * replaced by a's, and a jcc at the meeting point is paired again with the
 * instruction that really precedes it.  Appends b's list to merged.
 */
static int join_chunks(struct nl_jcc_result *r, const struct chunk *a, const struct chunk *b,
		       const struct nl_jcc_opts *o, struct nl_decoder *dec,
		       struct unit_list *merged, struct nl_diag *d)
{
	const struct nl_jcc_text *t = &a->texts[b->t0];
	const uint64_t text_end = t->addr + t->size;
	const uint64_t *cuts = o->cuts;
	const size_t nr_cuts = o->nr_cuts;
	uint64_t pos = a->exit_pos, meet;
	size_t ci = a->exit_ci;
	struct nl_insn prev = a->exit_prev, insn;
	bool pv = a->exit_prev_valid, readd = false;
	struct win_stat own = { 0 };
	struct nl_insn readd_insn;

	if (pos < b->a0) {
		/* a never ran (no bytes): b's stream stands alone */
		pos = b->a0;
		pv = false;
		ci = bin_of(cuts, nr_cuts, pos);
	}
	for (;;) {
		if (ci < nr_cuts && cuts[ci] <= pos) {
			if (cuts[ci] < pos) {
				pos = cuts[ci];
				pv = false;
			}
			while (ci < nr_cuts && cuts[ci] <= pos)
				ci++;
		}
		if (win_has(b, pos) || pos >= text_end)
			break;
		if (pos >= b->a0 + WINDOW || pos >= b->a1) {
			/* data that never resynchronises: b's stream wins from here */
			nl_log(d, NL_LOG_WARN, "jcc: streams did not meet within %u bytes of %#llx",
			       WINDOW, (unsigned long long)b->a0);
			break;
		}
		const uint8_t *p = t->data + (pos - t->addr);

		if (*p == 0xcc || *p == 0x90) {
			own.fill++;
			pos++;
			pv = false;
			continue;
		}
		int n = nl_decode(dec, p, text_end - pos, pos, &insn);

		if (n < 0) {
			own.errors++;
			pos++;
			pv = false;
			continue;
		}
		own.insns++;
		own.bytes += (uint64_t)n;

		bool is_unit;

		kind_of(insn.cls, &is_unit);
		if (is_unit) {
			struct nl_jcc_unit u;
			bool affected;

			make_unit(&insn, &prev, pv, o->boundary, &u, &affected);
			counts_unit(&r->bins[bin_of(cuts, nr_cuts, u.addr)], u.kind, affected, 1);
			counts_unit(&r->total, u.kind, affected, 1);
			if (affected && o->list && list_push(merged, &u))
				return -ENOMEM;
		}
		prev = insn;
		pv = insn.fuse != NL_FUSE_NONE;
		pos += (uint64_t)n;
	}
	meet = pos;
	/* take back what b counted before the meeting point, and a jcc at it */
	for (size_t i = 0; i < b->nr_wu; i++) {
		const struct win_unit *w = &b->wu[i];

		if (w->branch.addr > meet)
			break;
		if (w->branch.addr == meet) {
			if (w->u.kind != NL_JCC_JCC && w->u.kind != NL_JCC_FUSED)
				break;
			readd = true;
			readd_insn = w->branch;
		}
		counts_unit(&r->bins[w->bin], w->u.kind, w->affected, -1);
		counts_unit(&r->total, w->u.kind, w->affected, -1);
	}
	if (readd) {
		struct nl_jcc_unit u;
		bool affected;

		make_unit(&readd_insn, &prev, pv, o->boundary, &u, &affected);
		counts_unit(&r->bins[bin_of(cuts, nr_cuts, u.addr)], u.kind, affected, 1);
		counts_unit(&r->total, u.kind, affected, 1);
		if (affected && o->list && list_push(merged, &u))
			return -ENOMEM;
	}
	/* the instruction counters: a's continuation instead of b's first bytes */
	if (win_has(b, meet)) {
		const struct win_stat *ws = &b->win_stat[meet - b->a0];

		r->insns -= ws->insns;
		r->bytes -= ws->bytes;
		r->fill_skipped -= ws->fill;
		r->decode_errors -= ws->errors;
	}
	r->insns += own.insns;
	r->bytes += own.bytes;
	r->fill_skipped += own.fill;
	r->decode_errors += own.errors;
	for (size_t i = 0; i < b->list.nr; i++) {
		const struct nl_jcc_unit *u = &b->list.v[i];
		uint64_t branch = u->addr + u->branch_off;

		/* b's entries before the meeting point, or the re-paired jcc, are gone */
		if (branch < meet || (readd && branch == meet))
			continue;
		if (list_push(merged, u))
			return -ENOMEM;
	}
	return 0;
}

int nl_jcc_audit(const struct nl_jcc_text *texts, size_t nr, const struct nl_jcc_opts *opts,
		 struct nl_jcc_result *out, struct nl_diag *d)
{
	struct nl_jcc_opts o = *opts;
	struct chunk *ch;
	pthread_t tid[MAX_THREADS];
	bool started[MAX_THREADS] = { false };
	struct unit_list merged = { 0 };
	size_t nch = 0;
	int ret = 0;

	memset(out, 0, sizeof(*out));
	if (!o.boundary)
		o.boundary = DEFAULT_BOUNDARY;
	if (o.boundary & (o.boundary - 1))
		return nl_fail(d, -NL_E_USAGE, "boundary %u is not a power of two", o.boundary);
	if (!o.threads)
		o.threads = DEFAULT_THREADS;
	if (o.threads > MAX_THREADS)
		o.threads = MAX_THREADS;
	for (size_t i = 1; i < o.nr_cuts; i++)
		if (o.cuts[i] <= o.cuts[i - 1])
			return nl_fail(d, -EINVAL, "cuts not sorted at %zu", i);
	for (size_t i = 1; i < nr; i++)
		if (texts[i].addr < texts[i - 1].addr + texts[i - 1].size)
			return nl_fail(d, -EINVAL, "texts overlap or are unsorted at %zu", i);

	out->nr_bins = o.nr_cuts + 1;
	out->bins = calloc(out->nr_bins, sizeof(*out->bins));
	ch = calloc(MAX_THREADS + 1, sizeof(*ch));
	if (!out->bins || !ch) {
		free(ch);
		nl_jcc_result_release(out);
		return nl_fail_errno(d, -ENOMEM, "jcc");
	}
	if (!nr) {
		free(ch);
		return 0;
	}

	nch = plan_chunks(texts, nr, &o, o.threads, ch);
	for (size_t k = 0; k < nch; k++) {
		struct chunk *c = &ch[k];
		uint64_t last = c->a1 > c->a0 ? c->a1 - 1 : c->a0;

		c->texts = texts;
		c->o = &o;
		c->bin_lo = bin_of(o.cuts, o.nr_cuts, c->a0);
		c->nr_bins = bin_of(o.cuts, o.nr_cuts, last) - c->bin_lo + 1;
		c->bins = calloc(c->nr_bins, sizeof(*c->bins));
		if (c->has_window)
			c->win_stat = calloc(WINDOW, sizeof(*c->win_stat));
		if (!c->bins || (c->has_window && !c->win_stat)) {
			ret = nl_fail_errno(d, -ENOMEM, "jcc bins");
			goto out;
		}
		ret = nl_decoder_open(o.mode, NL_DEC_QUICK, &c->dec, d);
		if (ret)
			goto out;
	}
	for (size_t k = 1; k < nch; k++) {
		if (pthread_create(&tid[k], NULL, run_chunk, &ch[k])) {
			/* run it here instead: a missing thread costs time, not results */
			run_chunk(&ch[k]);
			continue;
		}
		started[k] = true;
	}
	run_chunk(&ch[0]);
	for (size_t k = 1; k < nch; k++)
		if (started[k])
			pthread_join(tid[k], NULL);

	out->threads_used = (unsigned)nch;
	for (size_t k = 0; k < nch; k++) {
		struct chunk *c = &ch[k];

		if (c->err) {
			ret = nl_fail_errno(d, c->err, "jcc audit");
			goto out;
		}
		for (size_t b = 0; b < c->nr_bins; b++)
			nl_jcc_counts_add(&out->bins[c->bin_lo + b], &c->bins[b]);
		nl_jcc_counts_add(&out->total, &c->total);
		out->insns += c->insns;
		out->bytes += c->bytes;
		out->fill_skipped += c->fill;
		out->decode_errors += c->errors;
		if (c->has_window) {
			ret = join_chunks(out, &ch[k - 1], c, &o, ch[0].dec, &merged, d);
			if (ret) {
				nl_fail_errno(d, ret, "jcc list");
				goto out;
			}
			continue;
		}
		for (size_t i = 0; i < c->list.nr; i++)
			if (list_push(&merged, &c->list.v[i])) {
				ret = nl_fail_errno(d, -ENOMEM, "jcc list");
				goto out;
			}
	}
	out->affected = merged.v;
	out->nr_affected = merged.nr;
	merged.v = NULL;
out:
	for (size_t k = 0; k < nch; k++) {
		nl_decoder_close(ch[k].dec);
		free(ch[k].bins);
		free(ch[k].list.v);
		free(ch[k].win_stat);
		free(ch[k].wu);
	}
	free(ch);
	free(merged.v);
	if (ret)
		nl_jcc_result_release(out);
	return ret;
}

void nl_jcc_result_release(struct nl_jcc_result *r)
{
	free(r->bins);
	free(r->affected);
	memset(r, 0, sizeof(*r));
}
