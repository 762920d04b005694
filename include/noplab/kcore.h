/* SPDX-License-Identifier: MIT */
#ifndef NOPLAB_KCORE_H
#define NOPLAB_KCORE_H

/*
 * The running kernel's memory through /proc/kcore, an ELF core file whose
 * PT_LOAD segments map kernel virtual addresses to file offsets.  layout
 * --live and scan read the text as it runs: with the ftrace NOPs patched in
 * at boot instead of the call __fentry__ on disk.
 */

#include <stddef.h>
#include <stdint.h>

#include "noplab/diag.h"

struct nl_kcore;

/* -EACCES / -ENOENT when not readable, -NL_E_FORMAT when not an ELF64 core. */
int nl_kcore_open(const char *path, struct nl_kcore **out, struct nl_diag *d);
/*
 * Copy [addr, addr + len) into buf.  -EFAULT when a byte of it lies in no
 * PT_LOAD segment; -errno when the read fails (the kernel refuses some ranges).
 */
int nl_kcore_read(struct nl_kcore *kc, uint64_t addr, void *buf, size_t len, struct nl_diag *d);
/* 0 when PT_LOAD segments cover [addr, addr + len), else -EFAULT naming the first hole. */
int nl_kcore_covers(const struct nl_kcore *kc, uint64_t addr, uint64_t len, struct nl_diag *d);
/* Number of PT_LOAD segments. */
size_t nl_kcore_segments(const struct nl_kcore *kc);
void nl_kcore_close(struct nl_kcore *kc);

#endif
