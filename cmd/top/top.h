/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * taskstat-top: a live terminal view of the collector's per-cgroup rollup.
 *
 * One path for both sources: a snapshot arrives as the collector's JSON
 * rollup line (its own listener and rollup through tsc_core, or GET
 * /snapshot of a running collector), frame.c parses it into a frame of
 * cumulative counters, view.c turns two frames into per-second rates and
 * ordered rows, render.c lays them out as text lines for a width, and
 * screen.c (ncurses) or plain.c shows them.
 */
#ifndef TOP_H
#define TOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "options.h"

#define TOP_PROG "taskstat-top"

/* The columns, in display order. */
enum top_metric {
	M_EXITS,   /* task exits */
	M_PROCS,   /* process exits */
	M_CPU,     /* user + system CPU of exited tasks */
	M_CPUDLY,  /* time they waited for a CPU */
	M_IODLY,   /* time they waited for block I/O */
	M_READ,    /* storage bytes read */
	M_WRITE,   /* storage bytes written */
	M_FAIL,    /* process exits with a non-zero code or by a signal */
	M_OOM,     /* OOM kills */
	M_TOTAL,   /* task exits since the collector started (not a rate) */
	M_MAXWAIT, /* the longest single delay of an exited task, any class
		    * (a peak: not a rate, a subtree's is its largest) */
	M__COUNT
};

enum top_unit { TU_COUNT, TU_SECONDS, TU_BYTES };

struct top_metric_def {
	const char *head;  /* column header */
	char key;          /* sort key */
	enum top_unit unit;
	bool rate;         /* per second (else the cumulative value) */
	unsigned prio;     /* 0 first: columns shown as the width allows */
	const char *help;
	bool peak;         /* a maximum: a subtree's is its largest row's */
};
extern const struct top_metric_def top_metrics[M__COUNT];
#define TOP_SORT_NAME M__COUNT /* sort by name */

/* One cgroup of a snapshot: cumulative counters of the cgroup itself. */
struct top_cg {
	char *path;
	unsigned depth;
	bool removed;
	double cum[M__COUNT];
	/* the runtimes' names of the JSON row (issue 24): "namespace/pod/
	 * container", "namespace/pod" or a Docker name; NULL: none */
	char *workload;
};

/* A snapshot as frame.c parsed it. */
struct top_frame {
	double time;        /* seconds since the epoch */
	uint64_t seq;
	double interval_s;  /* the snapshotting side's interval */
	uint64_t records, dropped, unattributed, malformed;
	char attribution[16]; /* "kernel", "proc" or "" */
	char hierarchy[64];
	bool oom_counted;
	int delayacct;      /* 1, 0, -1 unknown */
	size_t n;
	struct top_cg *cg;
};

/* frame.c: parse one JSON rollup line (json-c). 0, -EBADMSG (err says
 * what), -ENOMEM. */
int top_frame_parse(const char *json, size_t len, struct top_frame *f,
		    char *err, size_t errlen);
void top_frame_free(struct top_frame *f);

/* units.c: a value in at most 8 columns: "1.2k", "870 us", "3.4 MiB". */
void top_human(char *out, size_t n, double v, enum top_unit u);

/* view.c: what is shown, and how. */
struct top_row {
	const char *path;  /* owned by the frame */
	const char *name;  /* last component in tree view, else the path */
	const char *workload; /* owned by the frame, NULL: none */
	unsigned depth;
	int parent;        /* index, -1 for a root */
	bool children;
	double self[M__COUNT], sub[M__COUNT]; /* rates (M_TOTAL: total) */
};

struct top_view {
	/* settings the keys change */
	bool tree;
	int sort;          /* enum top_metric or TOP_SORT_NAME */
	bool reverse;
	unsigned max_depth; /* tree: deepest depth shown, 0: all */
	const char *match; /* only paths containing it (and their ancestors) */
	char **collapsed;  /* paths folded in tree view */
	size_t ncollapsed;
	char *sel;         /* path of the selected row, NULL: the first */
	/* from the frames */
	struct top_frame cur, prev;
	bool have_prev;
	double dt;         /* seconds between prev and cur */
	struct top_row *rows;
	size_t n;
	unsigned deepest;
	/* shown, in order: indexes into rows */
	size_t *vis, nvis;
	size_t cursor;     /* index into vis */
};

void top_view_init(struct top_view *v);
void top_view_free(struct top_view *v);
/* Take a new frame (moved in; *f is emptied). 0 or -ENOMEM. */
int top_view_push(struct top_view *v, struct top_frame *f);
/* Recompute the visible rows after a setting changed. */
void top_view_order(struct top_view *v);
/* Value of a row for column m in the current mode. */
double top_row_value(const struct top_view *v, const struct top_row *r,
		     enum top_metric m);
bool top_view_is_collapsed(const struct top_view *v, const char *path);
/* Fold (1), unfold (0) or toggle (-1) the selected row. */
void top_view_fold(struct top_view *v, int how);
void top_view_move(struct top_view *v, long by);
/* Depth cycle: all, 1, 2, ... deepest, all. */
void top_view_next_depth(struct top_view *v);

/* render.c: the screen as lines of text. */
enum top_attr { TA_NORMAL, TA_TITLE, TA_HEAD, TA_SEL, TA_WARN };
struct top_line {
	enum top_attr attr;
	char text[512];
};
struct top_status {
	const char *source;  /* "live" or "http://HOST:PORT" */
	bool paused;
	double interval_s;
	const char *error;   /* the last fetch error, or NULL */
	unsigned help;       /* 0: the rows; N: page N of the help screen */
};
/* Pages of the help screen on a terminal of `height` lines (1 when it
 * fits, or with no height). */
unsigned top_help_pages(unsigned height);
/* Lay out at most `height` lines (0: every row) of `width` columns (0:
 * every column, the name as wide as needed); returns the number of lines
 * written to *out (allocated, freed by the caller). */
size_t top_render(const struct top_view *v, const struct top_status *st,
		  unsigned width, unsigned height, struct top_line **out);
/* Lines above the rows (for scrolling). */
#define TOP_HEAD_LINES 4

/* Options. */
struct top_opts {
	struct tsc_opts tsc;   /* the collector's options that apply */
	const char *connect;   /* HOST:PORT, else standalone */
	char *connect_host;
	char connect_port[8];
	uint64_t iterations;   /* frames shown, 0: no limit */
	bool batch;            /* plain table even on a terminal */
	bool flat;
	int sort;
	unsigned max_depth;
	const char *match;
	/* the shared options, as the collector's parser is given them */
	char **argv;
	int argc;
	const char *collection; /* one of them, not --interval, or NULL */
};
int top_parse_options(int argc, char **argv, struct top_opts *o);
/* "exits", "cpu", ... "name" -> enum top_metric or TOP_SORT_NAME; -1. */
int top_sort_by_name(const char *s);
void top_opts_free(struct top_opts *o);

/* source.c: where frames come from. */
struct top_source;
/* Start: the listener (standalone) or a first GET (--connect). 0 or an
 * exit status, the error printed. */
int top_source_open(struct top_source **out, struct top_opts *o);
/* The latest snapshot as JSON (malloc'd). 0, or -errno with err set. */
int top_source_fetch(struct top_source *s, char **json, size_t *len,
		     char *err, size_t errlen);
const char *top_source_name(const struct top_source *s);
void top_source_close(struct top_source *s);

/* fetch.c: GET http://host:port/path, body malloc'd; 0 or -errno. */
int top_http_get(const char *host, const char *port, const char *path,
		 int timeout_ms, char **body, size_t *len, char *err,
		 size_t errlen);

/* screen.c / plain.c: run until q, a signal, --duration or -n; exit
 * status. */
int top_screen(struct top_opts *o, struct top_source *src, int sigfd);
int top_plain(struct top_opts *o, struct top_source *src, int sigfd);

/* loop.c: shared by both. Set the view up from the options. */
void top_view_setup(struct top_view *v, const struct top_opts *o);
/* Fetch and push a new frame; 1 when the view changed, 0 if the source
 * had nothing newer (the collector has not snapshotted since), -errno
 * (err set). */
int top_refresh(struct top_view *v, struct top_source *src, char *err,
		size_t errlen);
/* Wait for input, a signal or `until` (CLOCK_MONOTONIC ns): 2 input on
 * fd 0 (if watch_input), 1 a stop signal, 0 timeout; SIGWINCH is
 * reported as *resized. */
int top_wait(int sigfd, bool watch_input, uint64_t until, bool *resized);
/* Refresh interval in ns: --interval, or with --connect and none given
 * the collector's. */
uint64_t top_interval(const struct top_opts *o, const struct top_view *v);

#endif
