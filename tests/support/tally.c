/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>
#include <string.h>

#include "support/add.h"
#include "support/tally.h"

int cgt_tally_account(struct cgt_tally *t, struct cgs_rollup *r,
		      unsigned shard, const struct cgs_record *rec,
		      const char *want)
{
	const char *path = NULL;
	int rc = cgt_add(r, shard, rec, &path, NULL);
	if (rc < 0) {
		atomic_fetch_add(&t->errors, 1);
		return rc;
	}
	atomic_fetch_add(&t->seen, 1);
	if (path && !strcmp(path, want)) {
		atomic_fetch_add(&t->ok, 1);
		return 0;
	}
	if (path && !strcmp(path, CGS_UNKNOWN_CGROUP))
		atomic_fetch_add(&t->unknown, 1);
	pthread_mutex_lock(&t->lock);
	if (t->nnotes < CGT_TALLY_NOTES)
		snprintf(t->notes[t->nnotes++], sizeof(t->notes[0]),
			 "%s pid %u tgid %u ppid %u -> %s", rec->comm, rec->pid,
			 rec->tgid, rec->ppid, path ? path : "(null)");
	pthread_mutex_unlock(&t->lock);
	return 0;
}

double cgt_tally_rate(struct cgt_tally *t)
{
	uint64_t n = atomic_load(&t->seen), good = atomic_load(&t->ok);
	return n ? 100.0 * (double)good / (double)n : 0;
}

int cgt_tally_report(struct cgt_tally *t, uint64_t dropped,
		     uint64_t expected)
{
	for (int i = 0; i < t->nnotes; i++)
		printf("misattributed: %s\n", t->notes[i]);
	if (dropped || atomic_load(&t->errors) ||
	    atomic_load(&t->seen) < expected * 99 / 100) {
		fprintf(stderr, "FAIL: records lost or refused\n");
		return 1;
	}
	return 0;
}
