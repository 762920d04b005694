// SPDX-License-Identifier: MIT
/*
 * --sim cachegrind: L1i misses from valgrind's cache simulator, for machines
 * without a PMU.  The image becomes a stand-alone static executable (no libc,
 * no sanitizer runtime: valgrind cannot run an ASan binary) whose _start
 * calls the driver n times and exits 0 when the checksum is right.
 * Cachegrind runs it twice, with n and 2n iterations, and the difference is
 * the per-iteration figure: start-up, the first cold pass and _start itself
 * cancel, as in the timed method.
 */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "noplab/bench.h"

/* Where the stand-alone image lives: low, 2 MiB-aligned, clear of valgrind's own load address. */
#define SIM_BASE UINT64_C(0x40000000)
#define PAGE 4096u

extern char **environ;

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) / a * a;
}

/* Build the executable for iters iterations at path. */
static int write_exe(const struct nl_image *src, uint64_t iters, const char *path,
		     struct nl_diag *d)
{
	struct nl_image img = *src;
	struct nl_elf_part part = { .img = &img, .addr = SIM_BASE, .section = ".text" };
	struct nl_elf_emit em = { .parts = &part, .nr = 1 };
	uint64_t *table = NULL;
	uint64_t data_addr;
	int start, err;

	/* a private copy: _start is appended to it */
	img.code = malloc(src->cap ? src->cap : src->size);
	img.syms = malloc((src->cap_syms ? src->cap_syms : 1) * sizeof(*img.syms));
	img.table = NULL;
	img.nr_table = 0;
	if (!img.code || !img.syms) {
		free(img.code);
		free(img.syms);
		return -ENOMEM;
	}
	memcpy(img.code, src->code, src->size);
	memcpy(img.syms, src->syms, src->nr_syms * sizeof(*img.syms));
	/* the table goes on the page after the code and _start (which is < 128 bytes) */
	data_addr = SIM_BASE + align_up(src->size + 256, PAGE);
	start = nl_image_add_start(&img, iters, src->nr_table ? data_addr : 0, d);
	if (start < 0) {
		err = start;
		goto out;
	}
	if (src->nr_table) {
		table = calloc(src->nr_table, sizeof(*table));
		if (!table) {
			err = -ENOMEM;
			goto out;
		}
		for (size_t i = 0; i < src->nr_table; i++)
			table[i] = SIM_BASE + src->table[i];
		em.data = table;
		em.data_size = src->nr_table * sizeof(*table);
		em.data_addr = data_addr;
	}
	em.entry = SIM_BASE + (uint64_t)start;
	err = nl_emit_elf(path, &em, d);
out:
	free(table);
	free(img.code);
	free(img.syms);
	return err;
}

/* "summary: 1 2 3" under "events: Ir I1mr ...": the values of Ir and I1mr. */
static int parse_out(const char *path, uint64_t *ir, uint64_t *i1mr, char *desc, size_t dsize,
		     struct nl_diag *d)
{
	FILE *f = fopen(path, "re");
	char line[1024], events[512] = "";
	int col_ir = -1, col_i1 = -1;
	bool got = false;

	if (!f)
		return nl_fail_errno(d, -errno, "cachegrind output %s", path);
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (!strncmp(line, "desc: I1 cache:", 15))
			snprintf(desc, dsize, "%s", line + 15 + strspn(line + 15, " "));
		if (!strncmp(line, "events:", 7)) {
			char *save = NULL;
			int col = 0;

			snprintf(events, sizeof(events), "%s", line + 7);
			for (char *t = strtok_r(events, " ", &save); t; t = strtok_r(NULL, " ", &save), col++) {
				if (!strcmp(t, "Ir"))
					col_ir = col;
				if (!strcmp(t, "I1mr"))
					col_i1 = col;
			}
		}
		if (!strncmp(line, "summary:", 8) && col_ir >= 0 && col_i1 >= 0) {
			char *p = line + 8, *end;

			for (int col = 0; col <= (col_ir > col_i1 ? col_ir : col_i1); col++) {
				unsigned long long v = strtoull(p, &end, 10);

				if (end == p)
					break;
				if (col == col_ir)
					*ir = v;
				if (col == col_i1) {
					*i1mr = v;
					got = true;
				}
				p = end;
			}
		}
	}
	fclose(f);
	if (!got)
		return nl_fail(d, -NL_E_FORMAT, "%s: no Ir/I1mr summary (was the cache simulation on?)",
			       path);
	return 0;
}

static int run_valgrind(const char *valgrind, const char *exe, const char *out, const char *log,
			const struct nl_sim_opts *o, struct nl_diag *d)
{
	char i1[64], outarg[600], logarg[600];
	char *argv[] = { (char *)valgrind, "--tool=cachegrind", "--cache-sim=yes", i1,
			 "--branch-sim=no", outarg, logarg, (char *)exe, NULL };
	posix_spawn_file_actions_t fa;
	pid_t pid;
	int status, err;

	snprintf(i1, sizeof(i1), "--I1=%u,%u,%u", o->l1i_size, o->l1i_ways, o->l1i_line);
	snprintf(outarg, sizeof(outarg), "--cachegrind-out-file=%s", out);
	snprintf(logarg, sizeof(logarg), "--log-file=%s", log);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	err = posix_spawnp(&pid, valgrind, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (err) {
		if (err == ENOENT)
			return nl_fail(d, -ENOENT, "%s not found: --sim cachegrind needs valgrind "
				       "(apt-get install valgrind)", valgrind);
		return nl_fail_errno(d, -err, "starting %s", valgrind);
	}
	if (waitpid(pid, &status, 0) != pid)
		return nl_fail_errno(d, -errno, "waiting for %s", valgrind);
	if (!WIFEXITED(status))
		return nl_fail(d, -EIO, "valgrind died (signal %d); see %s", WTERMSIG(status), log);
	if (WEXITSTATUS(status) == 1)
		return nl_fail(d, -EIO, "the generated code returned a wrong checksum under valgrind");
	if (WEXITSTATUS(status))
		return nl_fail(d, -EIO, "valgrind exited with %d; see %s", WEXITSTATUS(status), log);
	return 0;
}

int nl_sim_cachegrind(const struct nl_image *img, const struct nl_sim_opts *o,
		      struct nl_sim_result *r, struct nl_diag *d)
{
	const char *base = o->tmpdir ? o->tmpdir : getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	const char *valgrind = o->valgrind ? o->valgrind : "valgrind";
	uint64_t n = o->iters ? o->iters : 10;
	char dir[512], exe[600], out[600], log[600];
	int err = 0;

	memset(r, 0, sizeof(*r));
	if (!o->l1i_size || !o->l1i_ways || !o->l1i_line)
		return nl_fail(d, -NL_E_USAGE, "the L1i geometry is unknown: cachegrind needs size, "
			       "ways and line");
	snprintf(dir, sizeof(dir), "%s/noplab-sim-XXXXXX", base);
	if (!mkdtemp(dir))
		return nl_fail_errno(d, -errno, "creating a directory under %s", base);
	for (int k = 0; k < 2 && !err; k++) {
		uint64_t iters = n << k;

		snprintf(exe, sizeof(exe), "%s/workload-%llu", dir, (unsigned long long)iters);
		snprintf(out, sizeof(out), "%s/cachegrind.out.%llu", dir, (unsigned long long)iters);
		snprintf(log, sizeof(log), "%s/valgrind.log.%llu", dir, (unsigned long long)iters);
		err = write_exe(img, iters, exe, d);
		if (!err)
			err = run_valgrind(valgrind, exe, out, log, o, d);
		if (!err)
			err = parse_out(out, &r->insns[k], &r->i1_misses[k], r->i1_desc,
					sizeof(r->i1_desc), d);
		if (!err) {
			unlink(exe);
			unlink(out);
			unlink(log);
		}
	}
	if (!err) {
		rmdir(dir);
		r->i1_misses_per_iter = ((double)r->i1_misses[1] - (double)r->i1_misses[0]) / (double)n;
		r->insns_per_iter = ((double)r->insns[1] - (double)r->insns[0]) / (double)n;
	}
	return err;
}
