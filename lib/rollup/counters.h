/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* struct cgs_counters arithmetic: sums everywhere except the two peaks. */
#ifndef CGS_ROLLUP_COUNTERS_H
#define CGS_ROLLUP_COUNTERS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "cgstats.h"
#include "rollup/wstatus.h"

/*
 * Two adjacent sums at once: word pairs of struct cgs_counters that start
 * 16 bytes into it are added with one 16-byte vector add (SSE2 paddq on
 * x86_64, NEON on arm64; GCC and Clang lower the vector type to two adds
 * elsewhere). The destination is a node's cum, aligned to CGSI_CUM_ALIGN
 * (cgtable.h): 16 where malloc() promises it (every 64-bit ABI), so that
 * the add reads it in place; the record's pair is loaded unaligned.
 * memcpy: no aliasing of the u64 words through another type.
 */
#define CGSI_CUM_ALIGN (_Alignof(max_align_t) >= 16 ? 16 : 8)

typedef uint64_t cgsi_u64x2 __attribute__((vector_size(16)));

static inline void cgsi_add2(uint64_t *d, const uint64_t *s)
{
	void *ad = __builtin_assume_aligned(d, CGSI_CUM_ALIGN);
	cgsi_u64x2 a, b;
	memcpy(&a, ad, sizeof(a));
	memcpy(&b, s, sizeof(b));
	a += b;
	memcpy(ad, &a, sizeof(a));
}

/* Whether c's cf, cg and r's rf, rg are a pair the vector add takes:
 * aligned in c, adjacent in both. True on every 64-bit ABI; where u64
 * is 4-aligned in structs (i386) some are not, and those take two adds.
 * A constant: the compiler keeps one branch. */
#define CGSI_PAIR(cf, cg, rf, rg)                                             \
	(offsetof(struct cgs_counters, cf) % 16 == 0 &&                       \
	 offsetof(struct cgs_counters, cg) ==                                 \
		 offsetof(struct cgs_counters, cf) + 8 &&                     \
	 offsetof(struct cgs_record, rg) == offsetof(struct cgs_record, rf) + 8)

/* c's pair from field cf += r's pair from field rf. */
#define CGSI_ADD2(c, cf, cg, r, rf, rg)                                       \
	do {                                                                  \
		if (CGSI_PAIR(cf, cg, rf, rg)) {                              \
			cgsi_add2(&(c)->cf, &(r)->rf);                        \
		} else {                                                      \
			(c)->cf += (r)->rf;                                   \
			(c)->cg += (r)->rg;                                   \
		}                                                             \
	} while (0)
#define CGSI_ADD2S(c, r, f, g) CGSI_ADD2(c, f, g, r, f, g)

/* every delay class's count and total: a pair (16-byte classes) */
#define CGSI_DELAY_PAIRS                                                      \
	(CGSI_PAIR(delay[0].count, delay[0].total_ns, delay[0].count,         \
		   delay[0].total_ns) &&                                      \
	 sizeof(struct cgs_delay_sum) == 16)

#if UINTPTR_MAX > 0xffffffffu
/* on 64-bit ABIs the layout is what the vector adds were written for */
_Static_assert(CGSI_PAIR(utime_us, stime_us, utime_us, stime_us) &&
		       CGSI_DELAY_PAIRS,
	       "struct cgs_counters' pairs are 16-byte aligned");
#endif

/* Add one task record (thread or process kind). Hot path: inline, the
 * delay classes unrolled (CGS_DELAY__COUNT is a constant). */
static inline __attribute__((always_inline)) void
cgsi_counters_account(struct cgs_counters *c, const struct cgs_record *r)
{
	c->tasks++; /* processes: below, with the other process counts */
	CGSI_ADD2S(c, r, utime_us, stime_us);
	CGSI_ADD2S(c, r, cpu_run_real_ns, cpu_run_virtual_ns);
	if (CGSI_DELAY_PAIRS) {
#pragma GCC unroll 16
		for (int i = 0; i < CGS_DELAY__COUNT; i++)
			cgsi_add2(&c->delay[i].count, &r->delay[i].count);
	} else {
		for (int i = 0; i < CGS_DELAY__COUNT; i++) {
			c->delay[i].count += r->delay[i].count;
			c->delay[i].total_ns += r->delay[i].total_ns;
		}
	}
	CGSI_ADD2S(c, r, minflt, majflt);
	CGSI_ADD2S(c, r, read_char, write_char);
	CGSI_ADD2S(c, r, read_syscalls, write_syscalls);
	CGSI_ADD2S(c, r, read_bytes, write_bytes);
	CGSI_ADD2S(c, r, cancelled_write_bytes, nvcsw);
	/* the record has nivcsw and coremem_mbus apart: single words */
	c->nivcsw += r->nivcsw;
	c->coremem_mbus += r->coremem_mbus;
	c->virtmem_mbus += r->virtmem_mbus;
	if (r->hiwater_rss_kb > c->hiwater_rss_kb_max)
		c->hiwater_rss_kb_max = r->hiwater_rss_kb;
	if (r->hiwater_vm_kb > c->hiwater_vm_kb_max)
		c->hiwater_vm_kb_max = r->hiwater_vm_kb;
	if (r->kind == CGS_KIND_PROCESS) {
		c->processes++;
		unsigned sig;
		enum cgs_exit_outcome o = cgsi_wstatus(r->exit_status, &sig);
		c->exit_clean += o == CGS_EXIT_CLEAN;
		c->exit_nonzero += o == CGS_EXIT_NONZERO;
		c->exit_signaled += o >= CGS_EXIT_SIGNALED; /* core dumps too */
		c->exit_core_dumped += o == CGS_EXIT_CORE_DUMPED;
	}
}

/* dst += src (peaks: max). */
void cgsi_counters_add(struct cgs_counters *dst,
		       const struct cgs_counters *src);
/* dst = a - b for the sums; peaks copied from a. */
void cgsi_counters_sub(struct cgs_counters *dst, const struct cgs_counters *a,
		       const struct cgs_counters *b);

#endif
