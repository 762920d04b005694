// SPDX-License-Identifier: MIT
/*
 * noplab plot RESULTS.json -o FILE: the charts of a saved bench result, the
 * same ones `noplab bench --plot FILE` draws from a fresh run.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "plot.h"

static void plot_usage(FILE *f)
{
	fprintf(f,
		"usage: noplab plot RESULTS.json -o FILE.svg|FILE.png|FILE.pdf [--workload NAME]\n\n"
		"Draw the charts of a noplab bench result (noplab bench -o RESULTS.json):\n"
		"  calls, sled   a bar per variant at its mean with the 95%% confidence interval,\n"
		"                the baseline grey with a dashed line at its mean, and under each\n"
		"                bar its bytes and verdict against the baseline; a panel per\n"
		"                footprint, on one scale\n"
		"  sweep         the figure against the entry offset 0..63, with the offsets where\n"
		"                the entry NOP crosses a 16-, 32- or 64-byte boundary shaded\n"
		"  layout        packed against spread for time and for every miss figure\n"
		"                (icache, iTLB); without them the panel says why\n"
		"The format follows the extension.\n\n"
		"  -o, --output FILE    the picture (required)\n"
		"  -w, --workload NAME  draw only this workload (e.g. calls-256)\n\n"
		"Exit status: 0 drawn; 2 usage error; 3 the input is missing or not a bench result.\n");
}

int cli_load_json(const char *path, json_t **doc, struct nl_diag *d)
{
	json_error_t je;
	FILE *f = fopen(path, "r");

	*doc = NULL;
	if (!f)
		return nl_fail_errno(d, -errno, "cannot open");
	*doc = json_loadf(f, JSON_REJECT_DUPLICATES, &je);
	fclose(f);
	if (!*doc)
		return nl_fail(d, -NL_E_FORMAT, "not JSON (line %d: %s)", je.line, je.text);
	if (!json_is_object(*doc)) {
		json_decref(*doc);
		*doc = NULL;
		return nl_fail(d, -NL_E_FORMAT, "not a noplab JSON document");
	}
	return 0;
}

int cmd_plot(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "workload", required_argument, NULL, 'w' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *out = NULL, *only = NULL;
	struct nl_diag diag;
	json_t *doc;
	int c, err;

	optind = 1;
	while ((c = getopt_long(argc, argv, "o:w:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
		case 'w': only = optarg; break;
		case 'h': plot_usage(stdout); return NL_EXIT_OK;
		default: plot_usage(stderr); return NL_EXIT_USAGE;
		}
	}
	if (argc - optind != 1)
		return cli_usage_error("plot", "needs one bench result (RESULTS.json)");
	if (!out)
		return cli_usage_error("plot", "needs -o FILE.svg, FILE.png or FILE.pdf");
	cli_diag_init(&diag, "plot", false);
	err = cli_load_json(argv[optind], &doc, &diag);
	if (err)
		return cli_error("plot", argv[optind], err, &diag);
	if (only) {
		/* keep the one workload asked for; the page is drawn from what is left */
		json_t *wls = json_object_get(doc, "workloads"), *keep = json_array();
		const char *names = "";
		size_t i;

		for (i = 0; i < json_array_size(wls); i++) {
			json_t *w = json_array_get(wls, i);
			const char *name = json_string_value(json_object_get(w, "name"));

			if (name && !strcmp(name, only))
				json_array_append(keep, w);
		}
		if (!json_array_size(keep) && json_array_size(wls)) {
			names = json_string_value(json_object_get(json_array_get(wls, 0), "name"));
			c = cli_usage_error("plot", "no workload '%s' in %s (the first is '%s')", only,
					    argv[optind], names ? names : "?");
			json_decref(keep);
			json_decref(doc);
			return c;
		}
		json_object_set_new(doc, "workloads", keep);
	}
	err = cli_plot_bench(doc, out, &diag);
	json_decref(doc);
	if (err)
		return cli_error("plot", err == -NL_E_FORMAT ? argv[optind] : NULL, err, &diag);
	return NL_EXIT_OK;
}
