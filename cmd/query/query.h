/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* taskstat-query: what its files share (options, samples, output). */
#ifndef TSQ_QUERY_H
#define TSQ_QUERY_H

#include <stdbool.h>
#include <stdint.h>

#include "buf.h"
#include "cgstats.h"
#include "optparse.h"

#define TSQ_PROG "taskstat-query"

/* Exit status (taskstat-query(8), EXIT STATUS) */
#define TSQ_EXIT_ERROR 1       /* a runtime error, permission included */
#define TSQ_EXIT_USAGE 2       /* an invalid command line */
#define TSQ_EXIT_NOTASK 3      /* the pid or thread group does not exist */
#define TSQ_EXIT_UNSUPPORTED 4 /* the kernel cannot answer: --cgroup of a
				* cgroup2 directory, no TASKSTATS family */

enum tsq_target { TSQ_PID = 1, TSQ_TGID, TSQ_CGROUP };

struct tsq_opts {
	enum tsq_target target;
	uint32_t id;             /* TSQ_PID, TSQ_TGID */
	const char *cgroup;      /* TSQ_CGROUP */
	bool threads;            /* --threads (TSQ_TGID) */
	bool json;               /* --json */
	bool json_names;         /* --json-names given */
	uint64_t watch_ns;       /* --watch; 0: query once */
	unsigned long long count; /* --count: intervals; 0: until a signal */
};

#define TSQ_PARSE_DONE TSC_PARSE_DONE /* --help or --version answered */

/* Option errors: tsc_usage_error() (usage.h), which prints
 * "taskstat-query: OPT: message" once tsq_parse_options() set tsc_prog. */
/* Parse argv: 0 to go on, TSQ_PARSE_DONE, or TSQ_EXIT_USAGE (said). */
int tsq_parse_options(int argc, char **argv, struct tsq_opts *o);

/* One query's answer and when it came (CLOCK_MONOTONIC, CLOCK_REALTIME). */
struct tsq_sample {
	struct cgs_record rec;
	char comm[CGS_COMM_LEN + 1]; /* the record's, or /proc's for a TGID */
	uint64_t mono_ns;
	uint64_t real_ns;
};

/* Delay classes to show: the library's, at most CGS_DELAY_SLOTS. */
unsigned tsq_delay_classes(void);
/* Whether the record's struct version carried delay class c. */
bool tsq_delay_carried(const struct cgs_record *r, unsigned c);
/* a - b, or 0 when the counter went back (a thread group's CPU times and
 * switches lose those of its exited threads: the kernel keeps only their
 * delays). */
static inline uint64_t tsq_sub(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}
/* 100 * part / whole, 0 for an empty whole. */
static inline double tsq_pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

/* --json-names 1.2: the JSON field names of 1.2 (json.c), for a release */
extern bool tsq_json_names_12;

/*
 * Output of one query (once) or one interval (--watch), as text or as a
 * JSON object on one line. `threads` (n of them) are the per-thread
 * records of --threads, or NULL.
 */
void tsq_text_record(struct buf *b, const struct tsq_sample *s,
		     const struct tsq_sample *threads, unsigned n);
void tsq_json_record(struct buf *b, const struct tsq_sample *s,
		     const struct tsq_sample *threads, unsigned n);
/* header: print the column header first (text). */
void tsq_text_delta(struct buf *b, const struct tsq_sample *prev,
		    const struct tsq_sample *cur, bool header);
void tsq_json_delta(struct buf *b, const struct tsq_sample *prev,
		    const struct tsq_sample *cur, unsigned long long seq);
void tsq_text_cgroup(struct buf *b, const char *dir,
		     const struct cgs_task_states *cs, uint64_t real_ns,
		     bool watch, bool header);
void tsq_json_cgroup(struct buf *b, const char *dir,
		     const struct cgs_task_states *cs, uint64_t real_ns,
		     unsigned long long seq);

#endif
