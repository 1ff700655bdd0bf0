/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* State of one taskstat-collect run, shared by setup, live, replay, sink. */
#ifndef TSC_COLLECTOR_H
#define TSC_COLLECTOR_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "buf.h"
#include "capture.h"
#include "clock.h"
#include "exe_cache.h"
#include "cgstats.h"
#include "options.h"
#include "notify.h"
#include "hold.h"
#include "privdrop.h"
#include "stream.h"

/*
 * Errors in cmd/, one convention:
 *  - A function that does something returns 0 (or a count, where its
 *    comment says so) or a negative errno; libcgstats' codes are negative
 *    errnos too. Stored errors (out_err, cap_err) are negative as well.
 *  - Only the functions that decide how the process ends return an exit
 *    status, and say so: 0, TSC_EXIT_ERROR or TSC_EXIT_USAGE (options.h).
 *    They are tsc_parse_options (also TSC_PARSE_DONE), tsc_usage_error and
 *    the option checks that return it, tsc_setup, tsc_live, tsc_replay and
 *    tsc_stop_status.
 *  - A positive errno exists only inside priv_run_as, as a child's exit
 *    code. cap_next returns a record type (positive), 0 at the end, or a
 *    negative errno, like read().
 * Whoever returns the error prints it, once; the caller only maps it.
 */

#define TSC_FLUSH_BYTES (64u * 1024u) /* per-shard buffer flush threshold */
/* an exit line (or capture record) waits at most this long in a shard's
 * buffer after the first one since the last flush, plus the receive wait */
#define TSC_EV_PROMPT_NS (50u * 1000u * 1000u)
#define TSC_FALLBACK_BATCH_MS 1u /* the listener's batch wait, /proc fallback */
#define TSC_TRIM_RETIRED 1000u /* retired cgroups between heap trims */
#define TSC_TRIM_RETIRED_TAIL 100u /* ... at the end of a burst */

/* Written by one listener thread; the main thread takes `lock` only to
 * flush, so the lock is uncontended on the hot path. */
struct tsc_shard {
	pthread_mutex_t lock;
	struct buf ev;  /* formatted event lines not yet written */
	struct buf cap; /* capture records not yet written */
	struct buf path; /* copy of the task's cgroup path */
	uint64_t cap_too_big; /* records not representable in a capture */
	struct tsc_hold hold; /* exits waiting for their names (hold.c) */
} __attribute__((aligned(64)));

struct http;
struct tsc_webcfg;
struct out_ops;

/* The files a run writes, for their error accounting (output errors are
 * not fatal: see sink.c). */
enum tsc_out { TSC_OUT_OUTPUT, TSC_OUT_RECORD, TSC_OUT_TEXTFILE, TSC_NOUT };

/* One output's write state, under its lock (textfile: main thread). */
struct tsc_ostate {
	bool on;
	bool seekable;     /* a regular file: can be cut back to `good` */
	bool failing;      /* the last write failed */
	bool need_header;  /* capture: no header in the file yet */
	long long good;    /* end of the last complete write (seekable) */
	uint64_t errors;   /* failed writes (atomic: read by snapshots) */
	int first_err;     /* -errno of the first failure */
	uint64_t said_ns;  /* last message about it (monotonic), 0: none */
};

/* --web-config's reloads (webreload.c). */
struct tsc_webstate {
	pthread_mutex_t lock;  /* c->net.web: the main thread swaps it, the HTTP
				* thread takes references (tsc_web_get) */
	uint64_t ok, failed;   /* reloads (atomic: read by /metrics) */
	bool last_ok;          /* the last load succeeded (atomic) */
	uint64_t last_ok_s;    /* CLOCK_REALTIME s of it (atomic) */
	uint64_t stamp;        /* tsc_webcfg_stamp of the files loaded */
	uint64_t next_poll_ns; /* monotonic: when to look at them again */
};

/* Where records come from (run/): the rollup, the listener or the
 * replayed file, and the shards the listener threads write into. */
struct tsc_src {
	struct cgs_rollup *rollup;
	struct cgs_listener *l;    /* live only */
	struct cap_reader *replay; /* --replay only */
	const char *hierarchy;
	unsigned nshards;
	struct tsc_shard *shards;
	size_t *rcvbuf;            /* per shard (live) */
	const char **shard_cpus;   /* per shard (live), owned by l */
	/* replay: counters as last recorded, plus what replay itself saw */
	struct cap_counters rec_ctr;
	uint64_t replay_malformed;
	char *hostinfo;            /* capture header text (live), owned */
	int wake_fd;               /* eventfd: a listener thread hit an error */
};

/* What is written (sink/outputs.c, sink/snapshot.c): the main output, the
 * capture, their locks and error state, the snapshot lines' buffers. */
struct tsc_io {
	const struct out_ops *out; /* --format, resolved */
	int out_fd;                /* stdout or --output */
	int cap_fd;                /* --record, else -1 */
	pthread_mutex_t out_lock;  /* writes to out_fd */
	pthread_mutex_t cap_lock;  /* writes to cap_fd */
	int out_err, cap_err;      /* first write error (-errno), 0: none */
	struct tsc_ostate ost[TSC_NOUT];
	uint64_t seq;
	struct buf snap;           /* main thread's formatting buffer: the
				    * main output, the JSON line of json */
	struct buf promw;          /* ... and of the Prometheus text: each
				    * kind keeps a buffer of its size */
	struct tsc_stream stream;  /* --stream changes (main thread) */
	int ev_pending;            /* a shard buffer holds lines: set by a
				    * shard thread (then the main loop is
				    * woken), cleared by the main thread
				    * before its prompt flush */
};

/* The last snapshot, kept (prom_lock) for /metrics, /snapshot and
 * --textfile, whose texts are made from it when first asked for
 * (prom_made, json_made: the texts are this snapshot's) and kept until
 * the next snapshot: no scrape, no text (sink/served.c). */
struct tsc_served {
	pthread_mutex_t prom_lock; /* everything below */
	uint64_t text_gen;         /* the snapshot (its generation) prom and
				    * json hold */
	uint64_t served_gen;       /* the last one a consumer fetched
				    * (/metrics or /snapshot), 0: none */
	struct cgs_snapshot *kept;
	struct snap_info *kept_in; /* its snap_info (and view) */
	size_t *kept_idx;          /* the cgroups shown (its view), owned */
	bool prom_made, json_made;
	struct buf prom;           /* the kept snapshot's Prometheus text */
	/* the kept snapshot's native histograms (protobuf, promproto.h),
	 * made when a scraper first asks for protobuf (pb_made) */
	bool pb_made;
	struct buf pb;
	bool prom_on;
	struct buf json;           /* ... and its JSON line */
	bool json_on;              /* keep it (/snapshot, taskstat-top) */
	bool prom_cut_said;        /* --prom-max-series cut: told once */
	/* CLOCK_MONOTONIC of the last snapshot taken (atomic: /healthz
	 * reads it), 0: none yet */
	uint64_t last_snap_mono_ns;
};

/* Retirement of removed cgroups and the heap trims after it (main
 * thread; sink/retire.c). */
struct tsc_retire {
	bool retire_due;           /* removed cgroups may be retired once the
				    * last snapshot reached every output */
	bool kept_removed;         /* the kept snapshot shows a removed
				    * cgroup (else nothing is to retire) */
	/* removed cgroups retired before any consumer had their final
	 * counts, of those forced out by --retire-max, and those waiting */
	uint64_t retired_unserved, retired_forced, removed_waiting;
	bool unserved_said;        /* the first of them: told once */
	uint64_t retired_untrimmed; /* cgroups retired since the last trim */
	uint64_t trim_ns;          /* malloc_trim() (monotonic), 0: none */
};

/* Names (run/workloads.c, sink/exe_cache.c): the workload view and its
 * resolver, the executables of --events. NULL: off. */
struct tsc_names {
	struct cgs_identity_src *ident;
	struct cgs_workloads *wl;
	struct exe_cache *exe;     /* --events live: by (dev, inode) */
	struct exe_counts exe_n;   /* its counts as of the last snapshot */
	bool wl_err_said;
};

/* The scrape server (http/). */
struct tsc_net {
	int listen_fd;             /* --listen, pre-bound, else -1 */
	struct http *http;
	struct tsc_webcfg *web;    /* --web-config, else NULL (webstate) */
	struct tsc_webstate webstate;
	uint64_t http_start_mono_ns; /* when --listen started serving */
};

/* One taskstat-collect run: its options and one part per job. */
struct tsc {
	struct tsc_opts *o;
	bool drop;                 /* --user */
	struct priv_user user;
	uint64_t start_ns;         /* CLOCK_REALTIME at setup */
	struct tsc_src src;
	struct tsc_io io;
	struct tsc_served srv;
	struct tsc_retire ret;
	struct tsc_names names;
	struct tsc_net net;
	struct tsc_notify notify;  /* the service manager (Type=notify) */
	const char *check_item;    /* --check: the item being tried */
};

/* setup.c: validate every option against the system before registering
 * anything. Returns 0 or an exit status: TSC_EXIT_USAGE for an invalid
 * option, TSC_EXIT_ERROR for a runtime error (printed). */
int tsc_setup(struct tsc *c, struct tsc_opts *o);
void tsc_teardown(struct tsc *c);

/* check.c: --check. tsc_check_ok prints "ok ITEM: what" (c->check_item)
 * on stdout, only with --check; tsc_check_warn "warn ITEM: what" (usable,
 * but worth a look; the exit status stays 0). tsc_check runs after
 * tsc_setup: the rest of what a run would do before collecting; it
 * returns the exit status, 0 or TSC_EXIT_ERROR; tsc_check_failed says
 * FAIL and returns setup's status as the run would exit (2: an invalid
 * option or value, else 1). */
void tsc_check_ok(struct tsc *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void tsc_check_warn(struct tsc *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int tsc_check(struct tsc *c);
int tsc_check_failed(struct tsc *c, int status);

/* the output stage (outputs.c, served.c, snapshot.c; sink.h inside it) */
int tsc_shards_init(struct tsc *c, unsigned n);
/* Under the shard's lock (held by the caller). */
void tsc_shard_event(struct tsc *c, struct tsc_shard *s,
		     const struct cgs_record *r, const char *cgroup,
		     const char *source, uint64_t recv_ns, unsigned shard);
/* One exit line of shard s (its lock held) with its names (id, may be
 * NULL) and its executable from the exe map (--events). */
void tsc_event_out(struct tsc *c, struct tsc_shard *s,
		   const struct cgs_record *r, const char *cgroup,
		   const char *source, uint64_t recv_ns, unsigned shard,
		   const struct cgs_identity *id);
/* Held exits of shard s (its lock held) asked again and written when
 * answered (all: every one, as it is); hold.c. */
void tsc_hold_shard(struct tsc *c, struct tsc_shard *s, unsigned shard,
		    uint64_t now_ns, bool all);
/* Every shard's, until none is held or wait_ns passed (then, with all,
 * the rest as they are); the records held now, summed. */
unsigned tsc_hold_settle(struct tsc *c, uint64_t wait_ns, bool all);
void tsc_shard_flush_locked(struct tsc *c, struct tsc_shard *s, bool force);
/* A shard thread left lines in its buffer: the first time since the main
 * loop's last prompt flush, wake it (it flushes TSC_EV_PROMPT_NS later). */
void tsc_events_pending(struct tsc *c);
void tsc_flush_all(struct tsc *c);
/* Snapshot everything and write it to every output. */
int tsc_snapshot(struct tsc *c, uint64_t time_ns, bool final);
/* The kept snapshot, its texts and the stream state go (teardown). */
void tsc_sink_free(struct tsc *c);
/* Prometheus text for the HTTP handler: malloc'd copy. */
char *tsc_prom_copy(struct tsc *c, size_t *len);
/* The text and (NULL until a snapshot made them, after the first ask) the
 * native histograms of the same snapshot, malloc'ed; the text NULL on
 * ENOMEM. */
char *tsc_prom_copy_pb(struct tsc *c, size_t *len, char **pb, size_t *pblen);
/* The last snapshot as a JSON line (with json_on): malloc'd copy. */
char *tsc_json_copy(struct tsc *c, size_t *len);
int tsc_write_prologue(struct tsc *c, const char *hostinfo);
/* Keep err (-errno) in *slot unless one is there; wake the main loop. */
void tsc_note_error(struct tsc *c, int *slot, int err);
/* 0, or the first fatal output error (-errno): only EPIPE on the main
 * output (its reader went away) stops a run; other write errors are
 * counted per output and retried (tsc_ostate). */
int tsc_output_error(struct tsc *c);
/* Start the write state of an output just opened on fd. */
void tsc_ostate_init(struct tsc *c, enum tsc_out k, int fd);
/* SIGHUP: reopen --output and --record by name (logrotate); prints what
 * it did or why it kept the old file. */
void tsc_reopen(struct tsc *c);
/* Cut failing outputs back to their last complete write, report output
 * errors; TSC_EXIT_OUTPUT if there were any, else 0. */
int tsc_outputs_finish(struct tsc *c);

/* webreload.c: --web-config loaded again, by SIGHUP (tsc_web_reload)
 * or when its files changed (tsc_web_poll, at most once a second, from
 * the main loop, which wakes by tsc_web_deadline); a file that does not
 * load keeps the old configuration, said and counted. */
void tsc_web_loaded(struct tsc *c);
void tsc_web_reload(struct tsc *c, const char *why);
void tsc_web_poll(struct tsc *c, uint64_t now_ns);
uint64_t tsc_web_deadline(const struct tsc *c);
/* A reference to the current configuration (NULL: none), for the HTTP
 * thread; drop it with tsc_webcfg_free. */
struct tsc_webcfg *tsc_web_get(struct tsc *c);
/* The reload series, appended to /metrics; bytes written (< len). */
size_t tsc_web_metrics(struct tsc *c, char *buf, size_t len);

/* live_open.c: listener, rollup, privileges (printed); 0 or -errno. */
int tsc_live_open(struct tsc *c);

/* live.c / replay.c: return the process exit status. tsc_stop_status
 * reports output errors and returns TSC_EXIT_ERROR if there were any,
 * else status. */
int tsc_live(struct tsc *c, int sigfd);
/* For a caller with its own loop (taskstat-top): tsc_live_open, the
 * self-test and the listener threads; 0 or -errno (printed). Stopped by
 * cgs_listener_stop(c->src.l) and tsc_teardown. */
int tsc_live_start(struct tsc *c);
int tsc_replay(struct tsc *c, int sigfd);
int tsc_stop_status(struct tsc *c, int status);

/* http.c (libmicrohttpd) on the pre-bound c->net.listen_fd. */
int tsc_http_start(struct tsc *c, char *err, size_t errlen);
void tsc_http_stop(struct tsc *c);

/*
 * The HTTP export (--listen and --web-config: http.c and webconfig.c,
 * with libmicrohttpd, libyaml and libxcrypt), reached by setup, live and
 * replay through this table only, so that a command without --listen
 * (taskstat-top's standalone mode) links none of it. taskstat-collect's
 * main() sets tsc_export = &tsc_http_export before tsc_setup(); NULL (the
 * default): --listen and --web-config are refused by tsc_setup().
 */
struct tsc_export {
	int (*http_start)(struct tsc *c, char *err, size_t errlen);
	void (*http_stop)(struct tsc *c);
	int (*webcfg_load)(const char *path, struct tsc_webcfg **out,
			   char *err, size_t errlen);
	void (*webcfg_free)(struct tsc_webcfg *w);
	/* webreload.c and the config's one-line description */
	void (*web_loaded)(struct tsc *c);
	void (*web_describe)(const struct tsc_webcfg *w, char *out,
			     size_t outlen);
	void (*web_reload)(struct tsc *c, const char *why);
	void (*web_poll)(struct tsc *c, uint64_t now_ns);
	uint64_t (*web_deadline)(const struct tsc *c);
};
extern const struct tsc_export *tsc_export;
extern const struct tsc_export tsc_http_export; /* export.c */


#endif
