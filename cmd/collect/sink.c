/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Where formatted output goes. Event lines and capture records are built
 * in per-shard buffers by the listener threads and written in big chunks
 * under a writer mutex; snapshots are built and written by the main thread
 * after flushing those buffers, so a snapshot line follows the events it
 * counts.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "collector.h"
#include "delayacct.h"
#include "filter.h"
#include "memtrim.h"
#include "output.h"
#include "promproto.h"
#include "workloads.h"

uint64_t tsc_mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t tsc_real_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void tsc_note_error(struct tsc *c, int *slot, int err)
{
	int zero = 0;
	if (__atomic_compare_exchange_n(slot, &zero, err, false,
					__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE) &&
	    c->wake_fd >= 0) {
		uint64_t one = 1;
		if (write(c->wake_fd, &one, sizeof(one)) < 0) {
			/* the main loop also checks the slot on its ticks */
		}
	}
}

int tsc_output_error(struct tsc *c)
{
	return __atomic_load_n(&c->out_err, __ATOMIC_ACQUIRE);
}

int tsc_shards_init(struct tsc *c, unsigned n)
{
	c->shards = calloc(n ? n : 1, sizeof(*c->shards));
	if (!c->shards)
		return -ENOMEM;
	c->nshards = n;
	for (unsigned i = 0; i < n; i++) {
		pthread_mutex_init(&c->shards[i].lock, NULL);
		buf_init(&c->shards[i].ev);
		buf_init(&c->shards[i].cap);
		buf_init(&c->shards[i].path);
	}
	return 0;
}

static const char *const out_opt[TSC_NOUT] = {
	[TSC_OUT_OUTPUT] = "--output", [TSC_OUT_RECORD] = "--record",
	[TSC_OUT_TEXTFILE] = "--textfile",
};

static const char *out_path(const struct tsc *c, enum tsc_out k)
{
	switch (k) {
	case TSC_OUT_OUTPUT: return c->o->output ? c->o->output : "stdout";
	case TSC_OUT_RECORD: return c->o->record;
	default: return c->o->textfile;
	}
}

void tsc_ostate_init(struct tsc *c, enum tsc_out k, int fd)
{
	struct tsc_ostate *st = &c->ost[k];
	struct stat sb;
	off_t at = -1;

	st->on = true;
	st->failing = false;
	st->seekable = fd >= 0 && fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) &&
		       (at = lseek(fd, 0, SEEK_CUR)) >= 0;
	st->good = st->seekable ? at : 0;
	st->need_header = k == TSC_OUT_RECORD && (!st->seekable || at == 0);
}

/* At most one message per output every 10 s: a full disk that frees a few
 * bytes now and then would make it flap. The final tally is exact. */
static bool say_now(struct tsc_ostate *st)
{
	uint64_t now = tsc_mono_ns();

	if (st->said_ns && now - st->said_ns < 10000000000ull)
		return false;
	st->said_ns = now;
	return true;
}

/* A write of output k failed with err: count it; say so when it starts
 * failing (the next write retries from the last complete one). */
static void out_failed(struct tsc *c, enum tsc_out k, int err)
{
	struct tsc_ostate *st = &c->ost[k];

	__atomic_add_fetch(&st->errors, 1, __ATOMIC_RELAXED);
	if (!st->first_err)
		st->first_err = err;
	if (st->failing)
		return;
	st->failing = true;
	if (!say_now(st))
		return;
	if (st->seekable)
		tsc_warn("%s: %s: write failed: %s; retrying "
			"from byte %lld, the end of the last complete %s\n",
			out_opt[k], out_path(c, k), strerror(-err), st->good,
			k == TSC_OUT_RECORD ? "record" : "line");
	else
		tsc_warn("%s: %s: write failed: %s; retrying\n",
			out_opt[k], out_path(c, k), strerror(-err));
}

static void out_recovered(struct tsc *c, enum tsc_out k)
{
	struct tsc_ostate *st = &c->ost[k];

	if (!st->failing)
		return;
	st->failing = false;
	if (!say_now(st))
		return;
	tsc_info("%s: %s: writing again (%llu failed writes "
		"so far)\n", out_opt[k], out_path(c, k),
		(unsigned long long)__atomic_load_n(&st->errors,
						    __ATOMIC_RELAXED));
}

/* Write b to output k (--output or --record) under its lock. After a
 * failure the file is first cut back to its last complete write, so that
 * it never holds half a line or half a record; a capture without its
 * header gets one first. EPIPE on the main output stops the run (its
 * reader went away); any other error loses this write only. */
static void write_out(struct tsc *c, enum tsc_out k, const void *p,
		      size_t n, bool oom)
{
	struct tsc_ostate *st = &c->ost[k];
	int fd = k == TSC_OUT_OUTPUT ? c->out_fd : c->cap_fd;
	int r = 0;

	if (st->failing && st->seekable &&
	    (ftruncate(fd, st->good) < 0 || lseek(fd, st->good, SEEK_SET) < 0))
		r = -errno;
	if (!r && st->need_header) {
		struct buf h;
		buf_init(&h);
		cap_encode_header(&h, tsc_real_ns(), c->nshards, c->hostinfo);
		r = h.oom ? -ENOMEM : write_all(fd, h.p, h.len);
		buf_free(&h);
		if (!r && st->seekable)
			st->good += (long long)h.len;
		if (!r)
			st->need_header = false;
	}
	if (!r && n)
		r = write_all(fd, p, n);
	if (!r && oom)
		r = -ENOMEM; /* what fit in memory went out: still complete */
	if (r == -EPIPE && k == TSC_OUT_OUTPUT) {
		tsc_note_error(c, &c->out_err, r);
		return;
	}
	if (st->seekable) {
		off_t at = lseek(fd, 0, SEEK_CUR);
		if (!r || oom)
			st->good = at >= 0 ? at : st->good;
	}
	if (r < 0)
		out_failed(c, k, r);
	else
		out_recovered(c, k);
}

/* b to output k; b kept as it is. */
static void write_kept(struct tsc *c, enum tsc_out k, const struct buf *b)
{
	pthread_mutex_t *m = k == TSC_OUT_OUTPUT ? &c->out_lock : &c->cap_lock;

	if (!b->len)
		return;
	pthread_mutex_lock(m);
	if (!__atomic_load_n(&c->out_err, __ATOMIC_ACQUIRE))
		write_out(c, k, b->p, b->len, b->oom);
	pthread_mutex_unlock(m);
}

static void write_locked(struct tsc *c, enum tsc_out k, struct buf *b)
{
	write_kept(c, k, b);
	buf_reset(b);
}

void tsc_shard_event(struct tsc *c, struct tsc_shard *s,
		     const struct cgs_record *r, const char *cgroup,
		     const char *source, uint64_t recv_ns, unsigned shard)
{
	/* the names the resolver found when the cgroup appeared: a look-up
	 * in this shard's own table, no file read, no wait */
	struct cgs_identity id = { .sz = sizeof(id) };
	bool named = c->ident && cgroup &&
		     cgs_identity_src_peek(c->ident, shard, cgroup, &id) == 0;
	c->out->event(&s->ev, r, cgroup, source, recv_ns, shard,
		      named ? &id : NULL);
}

void tsc_shard_flush_locked(struct tsc *c, struct tsc_shard *s, bool force)
{
	if (s->ev.len && (force || s->ev.len >= TSC_FLUSH_BYTES))
		write_locked(c, TSC_OUT_OUTPUT, &s->ev);
	if (c->cap_fd >= 0 && s->cap.len &&
	    (force || s->cap.len >= TSC_FLUSH_BYTES))
		write_locked(c, TSC_OUT_RECORD, &s->cap);
}

void tsc_flush_all(struct tsc *c)
{
	for (unsigned i = 0; i < c->nshards; i++) {
		struct tsc_shard *s = &c->shards[i];
		pthread_mutex_lock(&s->lock);
		tsc_shard_flush_locked(c, s, true);
		pthread_mutex_unlock(&s->lock);
	}
}

/*
 * The texts of the kept snapshot, made when first asked for (a scrape,
 * /snapshot, --textfile) and kept until the next snapshot: two scrapes of
 * one snapshot format it once, a snapshot nobody fetches formats nothing.
 * Under prom_lock.
 */
static void prom_make_locked(struct tsc *c)
{
	if (c->prom_made || !c->kept)
		return;
	buf_reset(&c->prom);
	size_t cut = out_prom(&c->prom, c->kept_in, c->kept);
	tsc_workloads_prom(&c->prom, c);
	buf_fit(&c->prom);
	c->prom_made = true;
	if (cut && !c->prom_cut_said) {
		tsc_warn("--prom-max-series %llu: %zu of %zu cgroups left out "
			"of the Prometheus text (the fewest task exits first), "
			"counted in taskstat_collector_cgroups_not_exported\n",
			(unsigned long long)c->kept_in->prom_max_series, cut,
			snap_shown(c->kept_in, c->kept));
		c->prom_cut_said = true;
	}
}

/* The native histograms of the kept snapshot (protobuf), made when a
 * scraper first asks for them, as the text. Under prom_lock. */
static void pb_make_locked(struct tsc *c)
{
	if (c->pb_made || !c->kept)
		return;
	buf_reset(&c->pb);
	out_promproto(&c->pb, c->kept_in, c->kept);
	buf_fit(&c->pb);
	c->pb_made = !c->pb.oom;
}

/* /snapshot's line is full, whatever --stream (it says "full" with
 * --stream changes, as the main output's full lines do). */
static void json_make_locked(struct tsc *c)
{
	if (c->json_made || !c->kept)
		return;
	struct snap_info in = *c->kept_in;
	in.stream = c->stream.on ? TSC_STREAM_FULL : TSC_STREAM_NONE;
	buf_reset(&c->json);
	out_jsonl_ops.snapshot(&c->json, &in, c->kept);
	buf_fit(&c->json);
	c->json_made = true;
}

/* The kept snapshot and its texts go (before the next one is made: the
 * library's pool reuses its memory). */
static void kept_free_locked(struct tsc *c)
{
	cgs_snapshot_free(c->kept);
	c->kept = NULL;
	free(c->kept_idx);
	c->kept_idx = NULL;
	c->prom_made = c->json_made = c->pb_made = false;
	buf_free(&c->prom);
	buf_free(&c->json);
	buf_free(&c->pb);
}

void tsc_sink_free(struct tsc *c)
{
	pthread_mutex_lock(&c->prom_lock);
	kept_free_locked(c);
	pthread_mutex_unlock(&c->prom_lock);
	free(c->kept_in);
	c->kept_in = NULL;
	tsc_stream_free(&c->stream);
}

static char *copy_locked(struct tsc *c, bool json, size_t *len)
{
	char *p = NULL;
	pthread_mutex_lock(&c->prom_lock);
	if (json)
		json_make_locked(c);
	else
		prom_make_locked(c);
	const struct buf *b = json ? &c->json : &c->prom;
	*len = b->len;
	p = malloc(b->len + 1);
	if (p) {
		memcpy(p, b->p ? b->p : "", b->len);
		p[b->len] = '\0';
		c->served_gen = c->text_gen;
	}
	pthread_mutex_unlock(&c->prom_lock);
	return p;
}

char *tsc_prom_copy(struct tsc *c, size_t *len)
{
	atomic_store(&c->prom_served, true); /* see tsc_workloads_update() */
	return copy_locked(c, false, len);
}

/* The text and the native histograms of one kept snapshot (one lock). */
char *tsc_prom_copy_pb(struct tsc *c, size_t *len, char **pb, size_t *pblen)
{
	atomic_store(&c->prom_served, true);
	*pb = NULL;
	*pblen = 0;
	pthread_mutex_lock(&c->prom_lock);
	prom_make_locked(c);
	pb_make_locked(c);
	char *t = malloc(c->prom.len + 1);
	if (t) {
		memcpy(t, c->prom.p ? c->prom.p : "", c->prom.len);
		t[c->prom.len] = '\0';
		*len = c->prom.len;
		c->served_gen = c->text_gen;
		if (c->pb_made && (*pb = malloc(c->pb.len ? c->pb.len : 1))) {
			memcpy(*pb, c->pb.p, c->pb.len);
			*pblen = c->pb.len;
		}
	}
	pthread_mutex_unlock(&c->prom_lock);
	return t;
}

char *tsc_json_copy(struct tsc *c, size_t *len)
{
	return copy_locked(c, true, len);
}

/* Temp file in the same directory, then rename(): node_exporter never
 * sees a half-written file. */
static int write_textfile(const char *path, const struct buf *b)
{
	size_t n = strlen(path);
	char *tmp = malloc(n + 32);
	if (!tmp)
		return -ENOMEM;
	char *dup = strdup(path);
	if (!dup) {
		free(tmp);
		return -ENOMEM;
	}
	char *dir = dirname(dup);
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	snprintf(tmp, n + 32, "%s/.%s.%ld.tmp", dir, base, (long)getpid());
	free(dup);
	int r = 0;
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		r = -errno;
		free(tmp);
		return r;
	}
	r = write_all(fd, b->p ? b->p : "", b->len);
	if (!r && fchmod(fd, 0644) < 0)
		r = -errno;
	if (close(fd) < 0 && !r)
		r = -errno;
	if (!r && rename(tmp, path) < 0)
		r = -errno;
	if (r)
		unlink(tmp);
	free(tmp);
	return r;
}

static void fill_info(struct tsc *c, struct snap_info *in,
		      const struct cgs_snapshot *s, uint64_t time_ns, bool final)
{
	const struct cgs_rollup_totals *t = cgs_snapshot_get_totals(s);

	memset(in, 0, sizeof(*in));
	in->time_ns = time_ns;
	in->seq = c->seq;
	in->final = final;
	in->replay = c->replay != NULL;
	in->hierarchy = c->hierarchy;
	in->interval_ns = c->o->interval_ns;
	in->top = c->o->top;
	in->workload_labels = c->o->prom_workload_labels;
	in->prom_lean = !c->o->prom_full;
	in->prom_parents = c->o->prom_parents;
	in->start_ns = c->start_ns;
	in->snapshot_gen = t ? t->snapshot_gen : 0;
	in->retired_unserved = c->retired_unserved;
	in->retired_forced = c->retired_forced;
	in->removed_waiting = c->removed_waiting;
	for (int k = 0; k < TSC_NOUT; k++)
		in->output_errors[k] = !c->ost[k].on ? -1 : (int64_t)
			__atomic_load_n(&c->ost[k].errors, __ATOMIC_RELAXED);
	in->records = t ? t->records : 0;
	in->unattributed = t ? t->unattributed : 0;
	in->refused = t ? t->refused : 0;
	if (t) {
		in->via_cache = t->via_cache;
		in->via_proc = t->via_proc;
		in->via_parent = t->via_parent;
		in->via_ancestor = t->via_ancestor;
		in->via_fork_parent = t->via_fork_parent;
		in->fork_tracking = t->fork_tracking;
		in->fork_drops = t->fork_drops;
		in->via_kernel = t->via_kernel;
		in->kernel_unmatched = t->kernel_unmatched;
		in->kernel_lost = t->kernel_lost;
		in->kernel_expired = t->kernel_expired;
		in->kernel_waits = t->kernel_waits;
		in->inferred = t->inferred;
		in->kernel_ringbuf = t->kernel_ringbuf;
		in->kernel_cgroup_ids = t->kernel_cgroup_ids;
		in->kernel_on = !c->replay &&
				t->attribution == CGS_ATTRIBUTION_KERNEL;
		if (in->kernel_on)
			in->ktot = *t;
		in->histograms = t->histograms;
		/* a replay's records come without the kernel's word on OOM
		 * kills, and this host's cgroups are not the recording's */
		if (!c->replay && t->oom_source == CGS_OOM_KERNEL)
			in->oom_source = "kernel";
		else if (!c->replay && t->oom_source == CGS_OOM_CGROUP)
			in->oom_source = "cgroup";
	}
	in->comms = c->o->comms;
	in->prom_comms = c->o->prom_comms;
	if (!c->replay)
		in->attribution = t && t->attribution == CGS_ATTRIBUTION_KERNEL
					  ? "kernel" : "proc";
	in->shards = c->nshards;
	in->delayacct = -1;
	if (!c->replay) {
		/* Re-read each time: someone may switch it during the run. */
		int d = tsc_delayacct_read();
		in->delayacct = d < 0 ? -1 : d;
	}
	if (c->l) {
		CGS_OPTS(cgs_loss, loss);
		if (cgs_listener_get_loss(c->l, CGS_ALL_SHARDS, &loss) == 0) {
			in->dropped = loss.dropped;
			/* A truncated message can't be decoded: malformed. */
			in->malformed = loss.malformed + loss.truncated;
			in->enobufs = loss.enobufs;
		}
		for (unsigned i = 0; i < c->nshards; i++)
			c->rcvbuf[i] = cgs_listener_shard_rcvbuf(c->l, i);
		in->rcvbuf = c->rcvbuf;
		in->shard_cpus = c->shard_cpus;
	} else {
		in->dropped = c->rec_ctr.dropped;
		in->malformed = c->rec_ctr.malformed + c->rec_ctr.truncated +
				c->replay_malformed;
		in->enobufs = c->rec_ctr.enobufs;
	}
}

/*
 * A retired cgroup's memory goes back to the listener threads' malloc
 * arenas, where glibc keeps it as free heap between the cgroups still
 * tracked: under steady churn the RSS crept up with that fragmentation
 * (~27 MiB over 60,000 cgroups at 1,000/s). Give the free pages back once
 * TSC_TRIM_RETIRED cgroups went since the last time, at most every
 * MEMTRIM_EVERY_NS; and (retired 0: a snapshot that retired nothing)
 * the TSC_TRIM_RETIRED_TAIL or more that went since the last trim, once
 * MEMTRIM_EVERY_NS passed: the end of a burst is not left untrimmed.
 */
static void trim_after_retiring(struct tsc *c, uint64_t retired)
{
	uint64_t now = tsc_mono_ns();

	c->retired_untrimmed += retired;
	if (c->retired_untrimmed <
		    (retired ? TSC_TRIM_RETIRED : TSC_TRIM_RETIRED_TAIL) ||
	    now - c->trim_ns < MEMTRIM_EVERY_NS)
		return;
	malloc_trim(0);
	c->retired_untrimmed = 0;
	c->trim_ns = now;
}

/*
 * Bound memory on hosts with cgroup churn: forget removed cgroups once
 * their final counts reached every output. The snapshot lines and the
 * textfile were written with the snapshots; with --listen, a consumer
 * (a scrape, /snapshot: taskstat-top --connect) must have fetched a
 * snapshot that showed them, or they wait --retire-after and at most
 * --retire-max of them wait (the rest, removed first, go), and then are
 * retired all the same, counted: no consumer can pin memory. Retiring
 * before a snapshot takes only cgroups without an exit since the last
 * one. Not in replay: the recorded host's directories need not exist
 * here.
 */
static void retire_removed(struct tsc *c)
{
	struct cgs_retire_opts o = { .sz = sizeof(o), .served = UINT64_MAX };
	struct cgs_retire_result res = { .sz = sizeof(res) };

	if (c->listen_fd >= 0 || c->http) {
		pthread_mutex_lock(&c->prom_lock);
		o.served = c->served_gen;
		pthread_mutex_unlock(&c->prom_lock);
		o.wait_ms = c->o->retire_after_ns / 1000000u;
		o.max_waiting = c->o->retire_max;
	}
	if (cgs_rollup_retire(c->rollup, &o, &res) < 0)
		return; /* out of memory: the next snapshot tries again */
	c->retired_unserved += res.unserved;
	c->retired_forced += res.forced;
	c->removed_waiting = res.waiting;
	trim_after_retiring(c, res.retired);
	if (res.unserved && !c->unserved_said) {
		tsc_warn("%s: %llu removed cgroups retired before a scrape "
			"fetched their final counts, counted in "
			"taskstat_collector_retired_unserved_total (said "
			"once)\n", res.forced ? "--retire-max" :
			"--retire-after", (unsigned long long)res.unserved);
		c->unserved_said = true;
	}
}

/* A capture's counters record after a snapshot line. */
static void write_capture_counters(struct tsc *c, const struct snap_info *in,
				   uint64_t time_ns)
{
	struct cap_counters ctr = {
		.time_ns = time_ns, .dropped = in->dropped,
		.malformed = in->malformed, .enobufs = in->enobufs,
	};
	struct buf b;

	buf_init(&b);
	cap_encode_counters(&b, &ctr);
	write_locked(c, TSC_OUT_RECORD, &b);
	buf_free(&b);
}

/* The snapshot s replaces the kept one (whose memory the library took
 * back first); under prom_lock, so that a scrape sees either. */
static int keep_snapshot(struct tsc *c, const struct cgs_snapshot_opts *so,
			 uint64_t time_ns, bool final)
{
	struct cgs_snapshot *s = NULL;
	struct tsc_view view;
	int r;

	if (!c->kept_in && !(c->kept_in = calloc(1, sizeof(*c->kept_in))))
		return -ENOMEM;
	pthread_mutex_lock(&c->prom_lock);
	kept_free_locked(c);
	r = cgs_rollup_snapshot(c->rollup, so, &s);
	if (r < 0) {
		pthread_mutex_unlock(&c->prom_lock);
		return r;
	}
	tsc_workloads_update(c, s);
	c->kept_removed = false;
	for (size_t i = cgs_snapshot_count(s); i-- > 0 && !c->kept_removed;)
		c->kept_removed = cgs_snapshot_get_cgroup(s, i)->removed;
	struct snap_info *in = c->kept_in;
	fill_info(c, in, s, time_ns, final);
	in->workloads = c->wl;
	if (tsc_view_make(c->o, s, &view) < 0)
		tsc_warn("--cgroup: out of memory: this snapshot shows every "
			"cgroup\n");
	in->shown = view.idx;
	in->nshown = view.n;
	in->cgroups_filtered = view.filtered;
	in->prom_max_series = c->o->prom_max_series;
	c->kept = s;
	c->kept_idx = view.idx;
	c->text_gen = in->snapshot_gen;
	pthread_mutex_unlock(&c->prom_lock);
	return 0;
}

/* The main output's line of the kept snapshot: with --stream changes the
 * cgroups changed since the last line (stream.c). A full JSON line is
 * /snapshot's, kept for it instead of made again. */
static void write_main(struct tsc *c, uint64_t time_ns)
{
	struct snap_info in = *c->kept_in;
	const struct cgs_snapshot *s = c->kept;

	tsc_flush_all(c); /* events before the snapshot that counts them */
	tsc_stream_plan(&c->stream, &in, s,
			__atomic_load_n(&c->ost[TSC_OUT_OUTPUT].errors,
					__ATOMIC_RELAXED));
	buf_reset(&c->snap);
	c->out->snapshot(&c->snap, &in, s);
	write_kept(c, TSC_OUT_OUTPUT, &c->snap);
	if (c->json_on && c->out == &out_jsonl_ops &&
	    in.stream != TSC_STREAM_CHANGES) {
		buf_fit(&c->snap);
		pthread_mutex_lock(&c->prom_lock);
		if (!c->json_made) {
			struct buf t = c->json;
			c->json = c->snap;
			c->snap = t;
			c->json_made = true;
		}
		pthread_mutex_unlock(&c->prom_lock);
	}
	if (c->snap.cap > TSC_FLUSH_BYTES)
		buf_free(&c->snap); /* a full line's room: not kept */
	if (c->cap_fd >= 0)
		write_capture_counters(c, &in, time_ns);
}

/* Also used before the first interval (seq 0) to fill /metrics. */
int tsc_snapshot(struct tsc *c, uint64_t time_ns, bool final)
{
	struct cgs_snapshot_opts so;
	int r;

	/* Only a cgroup a snapshot showed removed can be retired (the
	 * snapshot flags what the retirement would: superseded, rmdir
	 * events, its stat()s, every cgroup of a small shard): without one,
	 * no pass over every cgroup. With --depth a removed cgroup may be
	 * folded into a live row: every snapshot then. */
	if (c->retire_due && (c->kept_removed || c->o->depth)) {
		retire_removed(c);
		c->retire_due = false;
	} else if (c->retired_untrimmed) {
		/* the last retirements came within MEMTRIM_EVERY_NS of a
		 * trim: give their memory back now that none follow */
		trim_after_retiring(c, 0);
	}
	memset(&so, 0, sizeof(so));
	so.sz = sizeof(so);
	so.fold_depth = c->o->depth;
	so.no_delta = c->seq == 0;
	so.comms = c->o->comms;
	r = keep_snapshot(c, &so, time_ns, final);
	if (r < 0)
		return r;
	if (c->seq > 0 && c->out) /* no main output: taskstat-top */
		write_main(c, time_ns);
	if (c->o->textfile) {
		/* a failure leaves the last complete version */
		pthread_mutex_lock(&c->prom_lock);
		prom_make_locked(c);
		r = write_textfile(c->o->textfile, &c->prom);
		pthread_mutex_unlock(&c->prom_lock);
		if (r < 0)
			out_failed(c, TSC_OUT_TEXTFILE, r);
		else
			out_recovered(c, TSC_OUT_TEXTFILE);
	}
	__atomic_store_n(&c->last_snap_mono_ns, tsc_mono_ns(), __ATOMIC_RELAXED);
	if (c->seq > 0 && !final && !c->replay)
		c->retire_due = true;
	return 0;
}

int tsc_write_prologue(struct tsc *c, const char *hostinfo)
{
	struct buf b;

	buf_init(&b);
	if (c->out->prologue) {
		c->out->prologue(&b, c->stream.on);
		write_locked(c, TSC_OUT_OUTPUT, &b);
	}
	buf_free(&b);
	if (c->cap_fd >= 0) {
		free(c->hostinfo);
		c->hostinfo = hostinfo ? strdup(hostinfo) : NULL;
		pthread_mutex_lock(&c->cap_lock);
		write_out(c, TSC_OUT_RECORD, NULL, 0, false);
		pthread_mutex_unlock(&c->cap_lock);
	}
	return tsc_output_error(c);
}

/*
 * Reopen output k by its name, logrotate's way: the old file was renamed
 * (or removed), so the name gives a new one. The same file still there is
 * kept as it is. A new --output file is appended to (its prologue first
 * when empty); a new capture must be empty (it gets a header: a capture
 * holds one). Runs as whoever the collector is now (--user): a file it
 * cannot open is reported and the old one kept.
 */
static void reopen_one(struct tsc *c, enum tsc_out k)
{
	const char *path = out_path(c, k);
	pthread_mutex_t *m = k == TSC_OUT_OUTPUT ? &c->out_lock : &c->cap_lock;
	int *fdp = k == TSC_OUT_OUTPUT ? &c->out_fd : &c->cap_fd;
	struct stat old, nw;
	int fd;

	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0) {
		tsc_err("%s: cannot reopen %s: %s; keeping the "
			"old file\n", out_opt[k], path, strerror(errno));
		return;
	}
	if (fstat(fd, &nw) == 0 && fstat(*fdp, &old) == 0 &&
	    nw.st_dev == old.st_dev && nw.st_ino == old.st_ino) {
		close(fd); /* not rotated: go on where we are */
		return;
	}
	if (k == TSC_OUT_RECORD && S_ISREG(nw.st_mode) && nw.st_size > 0) {
		tsc_err("--record: cannot reopen %s: it is "
			"not empty (a capture has one header); keeping the "
			"old file\n", path);
		close(fd);
		return;
	}
	if (S_ISREG(nw.st_mode))
		lseek(fd, 0, SEEK_END);
	pthread_mutex_lock(m);
	struct tsc_ostate *st = &c->ost[k];
	if (st->failing && st->seekable &&
	    ftruncate(*fdp, st->good) < 0) {
		/* the old file keeps what it has */
	}
	close(*fdp);
	*fdp = fd;
	tsc_ostate_init(c, k, fd);
	if (k == TSC_OUT_RECORD) {
		write_out(c, k, NULL, 0, false);
	} else if (c->out->prologue && S_ISREG(nw.st_mode) && !nw.st_size) {
		struct buf b;
		buf_init(&b);
		c->out->prologue(&b, c->stream.on);
		write_out(c, k, b.p, b.len, b.oom);
		buf_free(&b);
	}
	pthread_mutex_unlock(m);
	if (k == TSC_OUT_OUTPUT) /* a new file starts with a full line */
		tsc_stream_full_next(&c->stream);
	tsc_info("%s: reopened %s\n", out_opt[k], path);
}

void tsc_reopen(struct tsc *c)
{
	tsc_flush_all(c); /* what was counted goes to the old files */
	if (c->o->output)
		reopen_one(c, TSC_OUT_OUTPUT);
	if (c->cap_fd >= 0)
		reopen_one(c, TSC_OUT_RECORD);
	/* --textfile: every write resolves the name again */
}

int tsc_outputs_finish(struct tsc *c)
{
	int status = 0;

	for (int k = 0; k < TSC_NOUT; k++) {
		struct tsc_ostate *st = &c->ost[k];
		int fd = k == TSC_OUT_OUTPUT ? c->out_fd :
			 k == TSC_OUT_RECORD ? c->cap_fd : -1;
		uint64_t n = __atomic_load_n(&st->errors, __ATOMIC_RELAXED);

		if (!st->on || !n)
			continue;
		if (st->failing && st->seekable && fd >= 0 &&
		    ftruncate(fd, st->good) < 0) {
			/* reported below all the same */
		}
		tsc_err("%s: %s: %llu writes failed (first: "
			"%s)%s\n", out_opt[k], out_path(c, k),
			(unsigned long long)n, strerror(-st->first_err),
			k == TSC_OUT_TEXTFILE ? "; the file holds the last "
			"complete version" : st->seekable ? "; what the file "
			"holds ends with a complete write" : "");
		status = TSC_EXIT_OUTPUT;
	}
	return status;
}

const struct tsc_kmiss tsc_kmiss[TSC_KMISS_N] = {
#define K(f) { #f, offsetof(struct cgs_rollup_totals, kmiss_##f) }
	K(lost), K(expired), K(mismatch), K(timeout), K(no_entry),
	K(before_attach),
	K(cgroup_gone), K(cgroup_unwalked), K(cgroup_purged), K(group),
	K(other),
#undef K
};
