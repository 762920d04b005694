// SPDX-License-Identifier: MIT
/* noplab nops: the catalogue as a table, and its check against Capstone. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "noplab/insn.h"
#include "noplab/nopcheck.h"
#include "noplab/nops.h"

struct nops_opts {
	int family;		/* -1: all */
	unsigned length;	/* 0: all */
	int mode;		/* 0: both */
	bool json, verify;
	const char *output;
};

static void nops_usage(FILE *f)
{
	fprintf(f,
		"usage: noplab nops [--family F] [--length N] [--mode 32|64] [--verify] [--json] [-o FILE]\n\n"
		"Print the x86 NOP catalogue: bytes, instructions, prefixes, whether each entry\n"
		"is a NOP in 64-bit and 32-bit mode, and where it comes from.\n\n"
		"  --family F   only family F (p6 k8 k7 generic x86_nops sdm gas llvm single jmp\n"
		"               int3 ibt_poison)\n"
		"  --length N   only entries of N bytes\n"
		"  --mode M     only entries that execute as NOPs in M-bit mode; --verify checks\n"
		"               only that mode (default: both)\n"
		"  --verify     decode every entry with Capstone and report disagreements with\n"
		"               the documented validity; exit 1 if any\n"
		"  --json       JSON instead of the table;  -o FILE  write it to FILE\n");
}

static bool selected(const struct nops_opts *o, const struct nl_nop *e)
{
	if (o->family >= 0 && (int)e->family != o->family)
		return false;
	if (o->length && e->len != o->length)
		return false;
	if (o->mode == 64 && !e->nop64 && !(e->flags & NL_NOPF_FILL))
		return false;
	if (o->mode == 32 && !e->nop32 && !(e->flags & NL_NOPF_FILL))
		return false;
	return true;
}

static json_t *flags_json(unsigned flags)
{
	json_t *a = json_array();

	if (flags & NL_NOPF_ATOMIC)
		json_array_append_new(a, json_string("atomic"));
	if (flags & NL_NOPF_COMPOSED)
		json_array_append_new(a, json_string("composed"));
	if (flags & NL_NOPF_JUMP)
		json_array_append_new(a, json_string("jump"));
	if (flags & NL_NOPF_FILL)
		json_array_append_new(a, json_string("fill"));
	if (flags & NL_NOPF_TABLE32)
		json_array_append_new(a, json_string("table32"));
	return a;
}

static const char *validity(const struct nl_nop *e, bool nop)
{
	if (e->flags & NL_NOPF_FILL)
		return "trap";
	return nop ? "yes" : "NO";
}

struct verify_totals {
	unsigned checked, disagree;
};

static int verify_entry(struct nl_decoder *dec[2], const struct nops_opts *o,
			const struct nl_nop *e, json_t *jentry, struct verify_totals *t)
{
	static const enum nl_mode modes[2] = { NL_MODE_64, NL_MODE_32 };
	json_t *jv = json_object();

	for (int m = 0; m < 2; m++) {
		struct nl_nop_verdict v;

		if (o->mode && o->mode != (int)modes[m])
			continue;
		nl_nop_verify(dec[m], e, modes[m], &v);
		t->checked++;
		if (!v.agrees) {
			t->disagree++;
			if (!o->json)
				printf("DISAGREE %-16s %d-bit: %s  [capstone: %s]\n", e->name, modes[m],
				       v.problem, v.text);
		}
		json_object_set_new(jv, modes[m] == NL_MODE_64 ? "mode64" : "mode32",
				    json_pack("{s:b, s:i, s:i, s:b, s:s, s:s}", "agrees", v.agrees,
					      "insns", v.decoded_insns, "length", v.decoded_len, "nop",
					      v.decoded_nop, "capstone", v.text, "problem", v.problem));
	}
	if (jentry)
		json_object_set_new(jentry, "verify", jv);
	else
		json_decref(jv);
	return 0;
}

int cmd_nops(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "family", required_argument, NULL, 'f' }, { "length", required_argument, NULL, 'l' },
		{ "mode", required_argument, NULL, 'm' },   { "verify", no_argument, NULL, 'v' },
		{ "json", no_argument, NULL, 'j' },	    { "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },	    { NULL, 0, NULL, 0 }
	};
	struct nops_opts o = { .family = -1 };
	struct nl_decoder *dec[2] = { NULL, NULL };
	struct verify_totals totals = { 0, 0 };
	struct nl_diag diag;
	int c, ret = NL_EXIT_OK;

	optind = 1;
	while ((c = getopt_long(argc, argv, "f:l:m:vjo:h", longopts, NULL)) != -1) {
		char *end;

		switch (c) {
		case 'f':
			o.family = nl_nop_family_by_name(optarg);
			if (o.family < 0)
				return cli_usage_error("nops", "unknown family '%s'", optarg);
			break;
		case 'l':
			o.length = (unsigned)strtoul(optarg, &end, 10);
			if (*end || !o.length || o.length > NL_NOP_MAX_BYTES + 1)
				return cli_usage_error("nops", "bad --length '%s' (1..%d)", optarg,
						       NL_NOP_MAX_BYTES + 1);
			break;
		case 'm':
			o.mode = atoi(optarg);
			if (o.mode != 32 && o.mode != 64)
				return cli_usage_error("nops", "--mode must be 32 or 64");
			break;
		case 'v': o.verify = true; break;
		case 'j': o.json = true; break;
		case 'o': o.output = optarg; o.json = true; break;
		case 'h': nops_usage(stdout); return NL_EXIT_OK;
		default: nops_usage(stderr); return NL_EXIT_USAGE;
		}
	}
	if (optind < argc)
		return cli_usage_error("nops", "unexpected argument '%s'", argv[optind]);

	cli_diag_init(&diag, "nops", false);
	if (o.verify) {
		int err = nl_decoder_open(NL_MODE_64, NL_DEC_TEXT, &dec[0], &diag);

		if (!err)
			err = nl_decoder_open(NL_MODE_32, NL_DEC_TEXT, &dec[1], &diag);
		if (err) {
			nl_decoder_close(dec[0]);
			return cli_error("nops", "decoder", err, &diag);
		}
	}

	size_t nr;
	const struct nl_nop *cat = nl_nop_catalogue(&nr);
	json_t *doc = o.json ? cli_json_doc("nops") : NULL;
	json_t *entries = o.json ? json_array() : NULL;
	unsigned shown = 0;

	if (!o.json)
		printf("%-16s %-10s %3s %5s %3s %-4s %-4s %-47s %-16s %s\n", "NAME", "FAMILY", "LEN",
		       "INSNS", "PFX", "64", "32", "BYTES", "CANONICAL", "SOURCE");
	for (size_t i = 0; i < nr; i++) {
		const struct nl_nop *e = &cat[i];
		char hex[64];
		json_t *je = NULL;

		if (!selected(&o, e))
			continue;
		shown++;
		cli_hex(e->bytes, e->len, hex, sizeof(hex));
		if (o.json) {
			je = json_pack("{s:s, s:s, s:i, s:s, s:s, s:i, s:i, s:b, s:b, s:o, s:s}", "name",
				       e->name, "family", nl_nop_family_name(e->family), "length",
				       e->len, "bytes", hex, "canonical", e->canonical, "insns",
				       e->nr_insns, "max_prefixes", e->max_prefixes, "nop64", e->nop64,
				       "nop32", e->nop32, "flags", flags_json(e->flags), "source",
				       e->source);
			json_array_append_new(entries, je);
		} else {
			printf("%-16s %-10s %3u %5u %3u %-4s %-4s %-47s %-16s %s\n", e->name,
			       nl_nop_family_name(e->family), e->len, e->nr_insns, e->max_prefixes,
			       validity(e, e->nop64), validity(e, e->nop32), hex, e->canonical,
			       e->source);
		}
		if (o.verify)
			verify_entry(dec, &o, e, je, &totals);
	}
	if (o.verify) {
		if (!o.json)
			printf("\nverify: %u entries, %u checks against %s, %u disagreement%s\n", shown,
			       totals.checked, nl_decoder_version((char[32]){ 0 }, 32), totals.disagree,
			       totals.disagree == 1 ? "" : "s");
		if (totals.disagree)
			ret = NL_EXIT_FINDINGS;
		nl_decoder_close(dec[0]);
		nl_decoder_close(dec[1]);
	}
	if (o.json) {
		json_object_set_new(doc, "entries", entries);
		if (o.verify)
			json_object_set_new(doc, "verify",
					    json_pack("{s:i, s:i, s:i}", "entries", shown, "checks",
						      totals.checked, "disagreements", totals.disagree));
		int w = cli_json_write(doc, o.output, "nops");

		if (w)
			ret = w;
	}
	return ret;
}
