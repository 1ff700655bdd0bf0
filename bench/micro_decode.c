/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * micro_decode: cost of cgs_decode_msg per record.
 *
 *   pid_tgid  v16 exit of a multi-threaded process's last thread: 1172
 *             bytes, AGGR_PID + AGGR_TGID, two records
 *   pid       v16 thread exit, 596 bytes, one record
 *   no_tgid   the 1172-byte message with CGS_NO_TGID (one record,
 *             the TGID nest skipped)
 *   v8        an old kernel's v8 thread exit (364 bytes, one record)
 *   pid_reuse `pid` with CGS_DECODE_REUSE, as the listener decodes: the
 *             delay slots no kernel fills are not cleared again
 *
 * Messages are decoded from a 4-byte (not 8-byte) aligned address, as the
 * payload sits in a real receive buffer. Every case runs once per
 * iteration; ns_per_record divides by the records the case produces.
 *
 * usage: micro_decode [-i ITERS] [-r REPS] [-c pid_tgid,pid,no_tgid,v8,pid_reuse]
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgstats.h"
#include "micro_common.h"

static long iters = 2000000;
static int reps = 7;

struct dcase {
	const char *name;
	unsigned version;
	bool with_tgid;
	unsigned flags;
	int records;
};

static const struct dcase cases[] = {
	{ "pid_tgid", 16, true, 0, 2 },
	{ "pid", 16, false, 0, 1 },
	{ "no_tgid", 16, true, CGS_NO_TGID, 1 },
	{ "v8", 8, false, 0, 1 },
	{ "pid_reuse", 16, false, CGS_DECODE_REUSE, 1 },
};

static int run_case(const struct dcase *c)
{
	static uint64_t store[CGSB_MSG_MAX / 8 + 1];
	uint8_t *msg = (uint8_t *)store + 4; /* 4-byte aligned, as received */
	struct cgsb_msg_spec s = { .version = c->version,
				   .with_tgid = c->with_tgid, .pid = 4321,
				   .tgid = 4320, .ppid = 1,
				   .btime_s = 1790000000, .flag = 0x21 };
	CGS_OPTS(cgs_decode_stats, st);
	CGS_OPTS(cgs_record, task);
	CGS_OPTS(cgs_record, group);
	volatile uint64_t sink = 0;
	double ns[64];
	char extra[256];
	size_t len = cgsb_build_msg(msg, CGSB_MSG_MAX - 4, &s);
	int r;

	if (!len)
		return -EINVAL;
	r = cgs_decode_msg(msg, len, c->flags, &task, &group, &st);
	if (r < 0 || __builtin_popcount((unsigned)r) != c->records) {
		fprintf(stderr, "%s: decode returned %d\n", c->name, r);
		return -EBADMSG;
	}
	for (int rep = 0; rep < reps; rep++) {
		double t0 = cgsb_now();

		for (long i = 0; i < iters; i++) {
			r = cgs_decode_msg(msg, len, c->flags, &task, &group,
					   &st);
			sink += (uint64_t)r + task.utime_us;
		}
		ns[rep] = (cgsb_now() - t0) * 1e9 / ((double)iters * c->records);
	}
	(void)sink;
	snprintf(extra, sizeof(extra),
		 "\"msg_bytes\":%zu,\"records_per_msg\":%d,\"malformed\":%llu",
		 len, c->records, (unsigned long long)st.malformed);
	cgsb_report("micro_decode", c->name, (long)c->version, ns, reps, iters,
		    extra);
	return 0;
}

/* Is name one of the comma-separated words of list? */
static bool listed(const char *list, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = list; p && *p;) {
		const char *comma = strchr(p, ',');

		if (!strncmp(p, name, n) && (p[n] == ',' || p[n] == '\0'))
			return true;
		p = comma ? comma + 1 : NULL;
	}
	return false;
}

int main(int argc, char **argv)
{
	const char *only = NULL;
	int opt, err = 0;

	while ((opt = getopt(argc, argv, "i:r:c:")) != -1) {
		switch (opt) {
		case 'i':
			iters = atol(optarg);
			break;
		case 'r':
			reps = atoi(optarg);
			break;
		case 'c':
			only = optarg;
			break;
		default:
			fprintf(stderr, "usage: %s [-i ITERS] [-r REPS] "
				"[-c pid_tgid,pid,no_tgid,v8,pid_reuse]\n", argv[0]);
			return 2;
		}
	}
	if (iters < 1 || reps < 1 || reps > 64) {
		fprintf(stderr, "bad -i/-r\n");
		return 2;
	}
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (only && !listed(only, cases[i].name))
			continue;
		if (run_case(&cases[i]) < 0)
			err = 1;
	}
	return err;
}
