/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stddef.h>

#include "support/kmiss.h"

static const struct {
	const char *name;
	size_t off;
} kmiss[CGT_KMISS_N] = {
#define K(f) { #f, offsetof(struct cgs_rollup_totals, kmiss_##f) }
	K(lost), K(expired), K(mismatch), K(timeout), K(no_entry),
	K(before_attach),
	K(cgroup_gone), K(cgroup_unwalked), K(cgroup_purged), K(group),
	K(other),
#undef K
};

const char *cgt_kmiss_name(unsigned i)
{
	return kmiss[i].name;
}

uint64_t *cgt_kmiss_at(struct cgs_rollup_totals *t, unsigned i)
{
	return (uint64_t *)((char *)t + kmiss[i].off);
}

uint64_t cgt_kmiss_sum(const struct cgs_rollup_totals *t)
{
	uint64_t n = 0;
	for (unsigned i = 0; i < CGT_KMISS_N; i++)
		n += *cgt_kmiss_at((struct cgs_rollup_totals *)t, i);
	return n;
}

void cgt_kmiss_sub(struct cgs_rollup_totals *t,
		   const struct cgs_rollup_totals *t0)
{
	for (unsigned i = 0; i < CGT_KMISS_N; i++)
		*cgt_kmiss_at(t, i) -=
			*cgt_kmiss_at((struct cgs_rollup_totals *)t0, i);
	t->records -= t0->records;
	t->via_kernel -= t0->via_kernel;
	t->kernel_unmatched -= t0->kernel_unmatched;
	t->kernel_lost -= t0->kernel_lost;
	t->kernel_expired -= t0->kernel_expired;
	t->kernel_waits -= t0->kernel_waits;
	t->inferred -= t0->inferred;
}

void cgt_kmiss_print(FILE *f, const struct cgs_rollup_totals *t)
{
	for (unsigned i = 0; i < CGT_KMISS_N; i++)
		fprintf(f, "%s%s %llu", i ? " " : "", kmiss[i].name,
			(unsigned long long)*cgt_kmiss_at(
				(struct cgs_rollup_totals *)t, i));
	fputc('\n', f);
}
