// SPDX-License-Identifier: MIT
/*
 * noplab report RESULTS.json... -o report.html: bench and stat results as one
 * self-contained page (cli/report_html.c), with `noplab diff` of each later
 * result against the first.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "plot.h"

static void report_usage(FILE *f)
{
	fprintf(f,
		"usage: noplab report [options] RESULTS.json... -o report.html\n\n"
		"One self-contained HTML page (inline style, charts as data: URIs, nothing fetched)\n"
		"of noplab bench and noplab stat results (-o FILE.json): the environment, a table\n"
		"per workload and variant (mean, +- SEM%%, 95%% CI, source, unit, the verdict\n"
		"against the baseline), every figure, and for bench the charts of noplab plot.\n"
		"With two or more results, each later one is compared with the first as noplab\n"
		"diff does (Welch's t-test per series, a verdict, warnings).\n\n"
		"  -o, --output FILE    the page; - for stdout (required)\n"
		"      --title TEXT     the page's title (default \"noplab report\")\n"
		"      --threshold PCT  diff's practical threshold (default 0.5)\n\n"
		"Exit status: 0 written; 2 usage error; 3 an input is missing, not JSON, or not\n"
		"a bench or stat result.\n");
}

int cmd_report(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "title", required_argument, NULL, 't' },
		{ "threshold", required_argument, NULL, 'T' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct cli_report_opts o = { .threshold_pct = 0.5 };
	struct cli_report_input *in;
	const char *out = NULL;
	struct nl_diag diag;
	size_t n = 0;
	char *end, why[200];
	int c, err = 0, status = NL_EXIT_OK;
	FILE *f;

	optind = 1;
	while ((c = getopt_long(argc, argv, "o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
		case 't': o.title = optarg; break;
		case 'T':
			o.threshold_pct = strtod(optarg, &end);
			if (*end == '%')
				end++;
			if (end == optarg || *end || !(o.threshold_pct >= 0 && o.threshold_pct < 1e6))
				return cli_usage_error("report", "--threshold needs a percentage, not '%s'",
						       optarg);
			break;
		case 'h': report_usage(stdout); return NL_EXIT_OK;
		default: report_usage(stderr); return NL_EXIT_USAGE;
		}
	}
	if (optind == argc)
		return cli_usage_error("report", "needs at least one result (RESULTS.json)");
	if (!out)
		return cli_usage_error("report", "needs -o report.html (or -o - for stdout)");
	in = calloc((size_t)(argc - optind), sizeof(*in));
	if (!in)
		return cli_error("report", NULL, -ENOMEM, NULL);
	cli_diag_init(&diag, "report", false);
	for (int i = optind; i < argc; i++) {
		in[n].path = argv[i];
		err = cli_load_json(argv[i], &in[n].doc, &diag);
		if (err) {
			status = cli_error("report", argv[i], err, &diag);
			goto out;
		}
		n++;
		if (!cli_report_kind(in[n - 1].doc, why, sizeof(why))) {
			fprintf(stderr, "noplab report: %s: %s\n", argv[i], why);
			status = NL_EXIT_INPUT;
			goto out;
		}
	}
	f = strcmp(out, "-") ? fopen(out, "w") : stdout;
	if (!f) {
		status = cli_error("report", out, nl_fail_errno(&diag, -errno, "cannot write"), &diag);
		goto out;
	}
	err = cli_report_html(f, in, n, &o, &diag);
	if (f != stdout) {
		if (fclose(f) && !err)
			err = nl_fail_errno(&diag, -errno, "cannot write");
		if (err)
			unlink(out);
	} else if (fflush(stdout) && !err) {
		err = nl_fail_errno(&diag, -errno, "cannot write");
	}
	if (err)
		status = cli_error("report", out, err, &diag);
out:
	for (size_t i = 0; i < n; i++)
		json_decref(in[i].doc);
	free(in);
	return status;
}
