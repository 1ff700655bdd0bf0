/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * --replay: read a capture back through the same decoder, rollup and
 * outputs. Needs no privileges. Snapshots follow the recorded clock: one at
 * the end of every --interval that had records, and the final one.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "collector.h"

/* Value of "key=" in the capture's host info, copied into out. */
static const char *info_get(const char *info, const char *key, char *out,
			    size_t len)
{
	size_t kl = strlen(key);
	for (const char *p = info; p && *p;) {
		const char *nl = strchr(p, '\n');
		size_t ll = nl ? (size_t)(nl - p) : strlen(p);
		if (ll > kl && !strncmp(p, key, kl) && p[kl] == '=') {
			snprintf(out, len, "%.*s", (int)(ll - kl - 1), p + kl + 1);
			return out;
		}
		p = nl ? nl + 1 : NULL;
	}
	return NULL;
}

/* A signal that stops the replay came (SIGUSR2 only makes the next
 * line full). */
static bool signalled(struct tsc *c, int sigfd)
{
	struct pollfd pf = { .fd = sigfd, .events = POLLIN };
	struct signalfd_siginfo si;

	while (poll(&pf, 1, 0) > 0) {
		if (read(sigfd, &si, sizeof(si)) != sizeof(si) ||
		    si.ssi_signo != SIGUSR2)
			return true;
		tsc_stream_full_next(&c->io.stream);
	}
	return false;
}

static void account(struct tsc *c, const struct cap_exit *ex,
		    const struct cgs_record *rec, const char *path)
{
	struct tsc_shard *s = &c->src.shards[0];

	if (!*path)
		path = CGS_UNKNOWN_CGROUP;
	CGS_OPTS(cgs_add_opts, ao, .path = path);
	cgs_rollup_add(c->src.rollup, 0, rec, &ao, NULL);
	if (c->o->events) {
		tsc_shard_event(c, s, rec, path, "capture", ex->recv_ns,
				ex->shard);
		tsc_shard_flush_locked(c, s, false);
	}
}

int tsc_replay(struct tsc *c, int sigfd)
{
	static char hier[64];
	const unsigned flags = c->o->no_tgid ? CGS_NO_TGID : 0;
	char err[512];
	int status = 0, r;

	if (tsc_shards_init(c, 1)) {
		tsc_err("%s\n", strerror(ENOMEM));
		return TSC_EXIT_ERROR;
	}
	if (!c->o->hierarchy &&
	    info_get(cap_hostinfo(c->src.replay), "hierarchy", hier, sizeof(hier)))
		c->src.hierarchy = hier;
	/* Without --interval, snapshot at the recorded run's interval. */
	char ivs[32];
	unsigned long long riv;
	if (!c->o->interval_set &&
	    info_get(cap_hostinfo(c->src.replay), "interval_ns", ivs, sizeof(ivs)) &&
	    tsc_parse_uint(ivs, 10000000ull, 1000000000ull * 1000000000ull,
			   &riv) == 0)
		c->o->interval_ns = riv;
	if (tsc_write_prologue(c, NULL) < 0)
		return tsc_stop_status(c, TSC_EXIT_ERROR);
	if (c->srv.prom_on) {
		tsc_snapshot(c, cap_created_ns(c->src.replay), false);
		if (c->net.listen_fd >= 0 &&
		    tsc_export->http_start(c, err, sizeof(err))) {
			tsc_err("--listen: %s\n", err);
			return TSC_EXIT_ERROR;
		}
	}

	const uint64_t iv = c->o->interval_ns;
	uint64_t next_snap = 0, last_ns = cap_created_ns(c->src.replay);
	CGS_OPTS(cgs_decode_stats, st);
	CGS_OPTS(cgs_record, task);
	CGS_OPTS(cgs_record, group);
	struct cap_exit ex;
	struct cap_counters ctr;
	bool stopped = false;

	for (uint64_t n = 0;; n++) {
		if ((n & 1023) == 0 && signalled(c, sigfd)) {
			stopped = true;
			break;
		}
		r = cap_next(c->src.replay, &ex, &ctr, err, sizeof(err));
		if (r == 0)
			break;
		if (r < 0) {
			tsc_err("--replay: %s: %s\n",
				c->o->replay, err);
			status = 1;
			break;
		}
		if (r == CAP_REC_COUNTERS) {
			c->src.rec_ctr = ctr;
			continue;
		}
		if (!next_snap)
			next_snap = ex.recv_ns + iv;
		if (ex.recv_ns >= next_snap) {
			c->io.seq++;
			tsc_snapshot(c, next_snap, false);
			/* skip intervals without records */
			uint64_t behind = (ex.recv_ns - next_snap) / iv;
			next_snap += (behind + 1) * iv;
		}
		last_ns = ex.recv_ns;
		r = cgs_decode_msg(ex.raw, ex.raw_len, flags | CGS_DECODE_REUSE,
				   &task, &group, &st);
		if (r < 0) {
			c->src.replay_malformed++;
			continue;
		}
		if (r & 1)
			account(c, &ex, &task, ex.task_path);
		if (r & 2)
			account(c, &ex, &group,
				*ex.group_path ? ex.group_path : ex.task_path);
		if (tsc_output_error(c))
			break;
	}
	c->io.seq++;
	r = tsc_snapshot(c, last_ns, true);
	if (r < 0) {
		tsc_err("final snapshot: %s\n", cgs_strerror(r));
		status = 1;
	}
	if (cap_skipped(c->src.replay))
		tsc_warn("--replay: skipped %llu records of "
			"unknown types\n",
			(unsigned long long)cap_skipped(c->src.replay));
	/* With --listen, keep serving the result until told to stop. */
	if (c->net.http && !stopped && !status) {
		struct pollfd pf = { .fd = sigfd, .events = POLLIN };
		uint64_t d = c->o->duration_ns / 1000000u;
		int ms = !c->o->duration_ns ? -1 : d > INT_MAX ? INT_MAX : (int)d;
		while (poll(&pf, 1, ms) < 0 && errno == EINTR)
			;
	}
	return tsc_stop_status(c, status);
}
