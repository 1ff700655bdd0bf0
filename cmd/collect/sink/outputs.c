/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Where formatted output goes. Event lines and capture records are built
 * in per-shard buffers by the listener threads and written in big chunks
 * under a writer mutex; snapshots are built and written by the main thread
 * after flushing those buffers (snapshot.c), so a snapshot line follows
 * the events it counts. A failing output is counted and retried, never
 * fatal but for EPIPE on the main output; SIGHUP reopens by name.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "collector.h"
#include "output.h"
#include "sink.h"
#include "stream.h"

/* Wake the main loop (its poll on wake_fd). A failed write is EAGAIN: the
 * counter is full, the loop is awake anyway. */
static void wake_main(struct tsc *c)
{
	uint64_t one = 1;
	if (c->src.wake_fd >= 0 &&
	    write(c->src.wake_fd, &one, sizeof(one)) < 0) {
		/* the loop also checks the error slot on its ticks */
	}
}

void tsc_note_error(struct tsc *c, int *slot, int err)
{
	int zero = 0;
	if (__atomic_compare_exchange_n(slot, &zero, err, false,
					__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		wake_main(c);
}

int tsc_output_error(struct tsc *c)
{
	return __atomic_load_n(&c->io.out_err, __ATOMIC_ACQUIRE);
}

int tsc_shards_init(struct tsc *c, unsigned n)
{
	c->src.shards = calloc(n ? n : 1, sizeof(*c->src.shards));
	if (!c->src.shards)
		return -ENOMEM;
	c->src.nshards = n;
	for (unsigned i = 0; i < n; i++) {
		pthread_mutex_init(&c->src.shards[i].lock, NULL);
		buf_init(&c->src.shards[i].ev);
		buf_init(&c->src.shards[i].cap);
		buf_init(&c->src.shards[i].path);
		tsc_hold_init(&c->src.shards[i].hold, 0, 0);
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
	struct tsc_ostate *st = &c->io.ost[k];
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
void tsc_out_failed(struct tsc *c, enum tsc_out k, int err)
{
	struct tsc_ostate *st = &c->io.ost[k];

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

void tsc_out_recovered(struct tsc *c, enum tsc_out k)
{
	struct tsc_ostate *st = &c->io.ost[k];

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
void tsc_out_write(struct tsc *c, enum tsc_out k, const void *p,
		   size_t n, bool oom)
{
	struct tsc_ostate *st = &c->io.ost[k];
	int fd = k == TSC_OUT_OUTPUT ? c->io.out_fd : c->io.cap_fd;
	int r = 0;

	if (st->failing && st->seekable &&
	    (ftruncate(fd, st->good) < 0 || lseek(fd, st->good, SEEK_SET) < 0))
		r = -errno;
	if (!r && st->need_header) {
		struct buf h;
		buf_init(&h);
		cap_encode_header(&h, tsc_real_ns(), c->src.nshards, c->src.hostinfo);
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
		tsc_note_error(c, &c->io.out_err, r);
		return;
	}
	if (st->seekable) {
		off_t at = lseek(fd, 0, SEEK_CUR);
		if (!r || oom)
			st->good = at >= 0 ? at : st->good;
	}
	if (r < 0)
		tsc_out_failed(c, k, r);
	else
		tsc_out_recovered(c, k);
}

/* b to output k; b kept as it is. */
void tsc_out_write_kept(struct tsc *c, enum tsc_out k, const struct buf *b)
{
	pthread_mutex_t *m = k == TSC_OUT_OUTPUT ? &c->io.out_lock : &c->io.cap_lock;

	if (!b->len)
		return;
	pthread_mutex_lock(m);
	if (!__atomic_load_n(&c->io.out_err, __ATOMIC_ACQUIRE))
		tsc_out_write(c, k, b->p, b->len, b->oom);
	pthread_mutex_unlock(m);
}

void tsc_out_write_locked(struct tsc *c, enum tsc_out k, struct buf *b)
{
	tsc_out_write_kept(c, k, b);
	buf_reset(b);
}

void tsc_event_out(struct tsc *c, struct tsc_shard *s,
		   const struct cgs_record *r, const char *cgroup,
		   const char *source, uint64_t recv_ns, unsigned shard,
		   const struct cgs_identity *id)
{
	/* the executable: a look-up in the map scans fill, no file read */
	char exe[4096];
	bool known = c->names.exe && r->kind != CGS_KIND_TGID &&
		     (r->fields & CGS_HAS_TGID) &&
		     exe_cache_get(c->names.exe, r->exe_dev, r->exe_inode, exe,
				   sizeof(exe));
	c->io.out->event(&s->ev, r, cgroup, source, recv_ns, shard, id,
		      known ? exe : NULL);
}

void tsc_shard_event(struct tsc *c, struct tsc_shard *s,
		     const struct cgs_record *r, const char *cgroup,
		     const char *source, uint64_t recv_ns, unsigned shard)
{
	/* the names the resolver found when the cgroup appeared: a look-up
	 * in this shard's own table, no file read, no wait; a look-up still
	 * to come holds the record (hold.c) */
	struct cgs_identity id = { .sz = sizeof(id) };
	int n = c->names.ident && cgroup ?
		cgs_identity_src_peek(c->names.ident, shard, cgroup, &id) : -ENOENT;
	if (n == -EAGAIN || s->hold.n) {
		uint64_t now = tsc_mono_ns();
		if (tsc_hold_due(&s->hold, now))
			tsc_hold_shard(c, s, shard, now, false);
		if (n == -EAGAIN &&
		    tsc_hold_push(&s->hold, r, cgroup, source, recv_ns,
				  now) == 0)
			return;
	}
	tsc_event_out(c, s, r, cgroup, source, recv_ns, shard,
		      n == 0 ? &id : NULL);
}

void tsc_shard_flush_locked(struct tsc *c, struct tsc_shard *s, bool force)
{
	if (s->ev.len && (force || s->ev.len >= TSC_FLUSH_BYTES))
		tsc_out_write_locked(c, TSC_OUT_OUTPUT, &s->ev);
	if (c->io.cap_fd >= 0 && s->cap.len &&
	    (force || s->cap.len >= TSC_FLUSH_BYTES))
		tsc_out_write_locked(c, TSC_OUT_RECORD, &s->cap);
}

void tsc_events_pending(struct tsc *c)
{
	/* a read first: the flag is written twice per flush, not per line */
	if (!__atomic_load_n(&c->io.ev_pending, __ATOMIC_RELAXED) &&
	    !__atomic_exchange_n(&c->io.ev_pending, 1, __ATOMIC_ACQ_REL))
		wake_main(c);
}

void tsc_flush_all(struct tsc *c)
{
	for (unsigned i = 0; i < c->src.nshards; i++) {
		struct tsc_shard *s = &c->src.shards[i];
		pthread_mutex_lock(&s->lock);
		if (s->hold.n) /* held exits answered meanwhile go too */
			tsc_hold_shard(c, s, i, tsc_mono_ns(), false);
		tsc_shard_flush_locked(c, s, true);
		pthread_mutex_unlock(&s->lock);
	}
}

/* Temp file in the same directory, then rename(): node_exporter never
 * sees a half-written file. */
int tsc_textfile_write(const char *path, const struct buf *b)
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

int tsc_write_prologue(struct tsc *c, const char *hostinfo)
{
	struct buf b;

	buf_init(&b);
	if (c->io.out->prologue) {
		c->io.out->prologue(&b, c->io.stream.on,
				   c->o->exes || c->o->events);
		tsc_out_write_locked(c, TSC_OUT_OUTPUT, &b);
	}
	buf_free(&b);
	if (c->io.cap_fd >= 0) {
		free(c->src.hostinfo);
		c->src.hostinfo = hostinfo ? strdup(hostinfo) : NULL;
		pthread_mutex_lock(&c->io.cap_lock);
		tsc_out_write(c, TSC_OUT_RECORD, NULL, 0, false);
		pthread_mutex_unlock(&c->io.cap_lock);
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
	pthread_mutex_t *m = k == TSC_OUT_OUTPUT ? &c->io.out_lock : &c->io.cap_lock;
	int *fdp = k == TSC_OUT_OUTPUT ? &c->io.out_fd : &c->io.cap_fd;
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
	struct tsc_ostate *st = &c->io.ost[k];
	if (st->failing && st->seekable &&
	    ftruncate(*fdp, st->good) < 0) {
		/* the old file keeps what it has */
	}
	close(*fdp);
	*fdp = fd;
	tsc_ostate_init(c, k, fd);
	if (k == TSC_OUT_RECORD) {
		tsc_out_write(c, k, NULL, 0, false);
	} else if (c->io.out->prologue && S_ISREG(nw.st_mode) && !nw.st_size) {
		struct buf b;
		buf_init(&b);
		c->io.out->prologue(&b, c->io.stream.on,
				   c->o->exes || c->o->events);
		tsc_out_write(c, k, b.p, b.len, b.oom);
		buf_free(&b);
	}
	pthread_mutex_unlock(m);
	if (k == TSC_OUT_OUTPUT) /* a new file starts with a full line */
		tsc_stream_full_next(&c->io.stream);
	tsc_info("%s: reopened %s\n", out_opt[k], path);
}

void tsc_reopen(struct tsc *c)
{
	tsc_flush_all(c); /* what was counted goes to the old files */
	if (c->o->output)
		reopen_one(c, TSC_OUT_OUTPUT);
	if (c->io.cap_fd >= 0)
		reopen_one(c, TSC_OUT_RECORD);
	/* --textfile: every write resolves the name again */
}

int tsc_outputs_finish(struct tsc *c)
{
	int status = 0;

	for (int k = 0; k < TSC_NOUT; k++) {
		struct tsc_ostate *st = &c->io.ost[k];
		int fd = k == TSC_OUT_OUTPUT ? c->io.out_fd :
			 k == TSC_OUT_RECORD ? c->io.cap_fd : -1;
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
