/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Live mode before any thread exists: register the listener and the real
 * rollup (fork tracking, the kernel source), say which attribution is in
 * use, then shed privileges. What is acquired here is kept in struct tsc
 * and released by tsc_teardown().
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "collector.h"
#include "delayacct.h"
#include "workloads.h"

static int open_listener(struct tsc *c)
{
	struct cgs_listener_opts lo;
	int r;

	memset(&lo, 0, sizeof(lo));
	lo.sz = sizeof(lo);
	lo.cpus = c->o->cpus;
	lo.shards = c->o->shards;
	lo.rcvbuf = c->o->rcvbuf;
	lo.flags = c->o->no_tgid ? CGS_NO_TGID : 0;
	c->check_item = "listener";
	r = cgs_listener_open(&c->src.l, &lo);
	if (r < 0) {
		tsc_err("%s\n", cgs_strerror(r));
		return r;
	}
	c->src.nshards = cgs_listener_shards(c->src.l);
	tsc_check_ok(c, "%u socket%s registered", c->src.nshards,
		     c->src.nshards == 1 ? "" : "s");
	c->src.rcvbuf = calloc(c->src.nshards, sizeof(*c->src.rcvbuf));
	c->src.shard_cpus = calloc(c->src.nshards, sizeof(*c->src.shard_cpus));
	if (!c->src.rcvbuf || !c->src.shard_cpus || tsc_shards_init(c, c->src.nshards)) {
		tsc_err("%s\n", strerror(ENOMEM));
		return -ENOMEM;
	}
	for (unsigned i = 0; i < c->src.nshards; i++) {
		c->src.shard_cpus[i] = cgs_listener_shard_cpus(c->src.l, i);
		c->src.rcvbuf[i] = cgs_listener_shard_rcvbuf(c->src.l, i);
	}
	return 0;
}

static enum cgs_attribution attribution_of(enum tsc_attr a)
{
	switch (a) {
	case TSC_ATTR_KERNEL: return CGS_ATTRIBUTION_KERNEL;
	case TSC_ATTR_AUTO: return CGS_ATTRIBUTION_AUTO;
	default: return CGS_ATTRIBUTION_PROC;
	}
}

/* One line on stderr: which source attributes records, and why. */
static void say_attribution(struct tsc *c, enum cgs_attribution asked)
{
	struct cgs_rollup_totals t = { .sz = sizeof(t) };

	cgs_rollup_get_totals(c->src.rollup, &t);
	if (t.attribution == CGS_ATTRIBUTION_KERNEL)
		tsc_check_ok(c, "kernel (BPF program loaded)");
	else if (asked == CGS_ATTRIBUTION_AUTO)
		tsc_check_ok(c, "exact (/proc fallback: %s)",
			     cgs_rollup_kernel_error(c->src.rollup));
	else
		tsc_check_ok(c, "%s (/proc)", c->o->fast_attribution ?
			     "fast" : "exact");
	if (t.attribution == CGS_ATTRIBUTION_KERNEL)
		tsc_info("attribution: kernel (each task's "
			"cgroup at exit, from BPF; rings of %llu KiB per "
			"shard)\n", (unsigned long long)t.kernel_ringbuf / 1024);
	else if (asked == CGS_ATTRIBUTION_AUTO)
		tsc_info("attribution: exact (/proc fallback: "
			"%s)\n", cgs_rollup_kernel_error(c->src.rollup));
	else
		tsc_info("attribution: %s (/proc)\n",
			c->o->fast_attribution ? "fast" : "exact");
	if (!c->o->no_fork_events &&
	    cgs_rollup_attribution(c->src.rollup) == CGS_ATTRIBUTION_PROC) {
		struct cgs_rollup_totals ft = { .sz = sizeof(ft) };
		if (cgs_rollup_get_totals(c->src.rollup, &ft) == 0 && !ft.fork_tracking)
			tsc_warn("warning: cannot track forks "
				"(proc connector unavailable); exits whose "
				"parent is gone too will be unattributed\n");
	}
}

/* The real rollup, one writer per listener shard; replaces setup's probe. */
static int open_rollup(struct tsc *c)
{
	struct cgs_rollup_opts ro;
	char why[320] = "";
	int r;

	memset(&ro, 0, sizeof(ro));
	ro.sz = sizeof(ro);
	ro.shards = c->src.nshards;
	ro.hierarchy = c->o->hierarchy;
	ro.flags = c->o->no_tgid ? CGS_NO_TGID : 0;
	ro.attribution = attribution_of(c->o->attribution);
	ro.kernel_ringbuf = c->o->kernel_buffer;
	ro.shard_cpus = c->src.shard_cpus;
	/* Fork tracking opens the proc connector: before --user drops the
	 * privilege it needs. */
	if (!c->o->no_fork_events)
		ro.flags |= CGS_ROLLUP_TRACK_FORKS;
	if (c->o->fast_attribution)
		ro.flags |= CGS_ROLLUP_FAST_ATTRIBUTION;
	if (!c->o->no_histograms)
		ro.flags |= CGS_ROLLUP_HISTOGRAMS;
	if (c->o->no_delay_peaks)
		ro.flags |= CGS_ROLLUP_NO_DELAY_PEAKS;
	ro.comms = c->o->comms ? TSC_COMMS_SUMMARY(c->o->comms) : 0;
	ro.exes = c->o->exes ? TSC_COMMS_SUMMARY(c->o->exes) : 0;
	/* --events, --exes: each exit's executable (exe_cache.h); with the
	 * kernel source, learnt at exec. The first scan of /proc/<pid>/exe is
	 * cgs_rollup_new()'s, before the capabilities go */
	ro.exe_paths = c->o->events || c->o->exes ? TSC_EXE_PATHS : 0;
	ro.errbuf = why;
	ro.errbuf_len = sizeof(why);
	c->check_item = "attribution";
	cgs_rollup_free(c->src.rollup);
	c->src.rollup = NULL;
	r = cgs_rollup_new(&c->src.rollup, &ro);
	if (r < 0) {
		if (ro.attribution == CGS_ATTRIBUTION_KERNEL && why[0])
			tsc_err("--attribution kernel: %s\n",
				why);
		else
			tsc_err("rollup: %s\n", cgs_strerror(r));
		return r;
	}
	say_attribution(c, ro.attribution);
	c->src.hierarchy = cgs_rollup_hierarchy(c->src.rollup);
	return 0;
}

/*
 * kernel.task_delayacct, before anything is registered: --enable-delayacct
 * writes it now, the only moment the collector may (CAP_SYS_ADMIN goes
 * with the other capabilities below, and nothing puts the old value back
 * at exit: that is the service manager's job, see taskstat-collect(8)).
 * Off, delay counts of tasks that started before it was switched on stay
 * zero, so that is said once, here.
 */
static int check_delayacct(struct tsc *c)
{
	int r, on = tsc_delayacct_read();

	c->check_item = "delayacct";
	if (c->o->check) { /* nothing written */
		if (c->o->enable_delayacct && on != 1 &&
		    access("/proc/sys/kernel/task_delayacct", W_OK) < 0) {
			tsc_err("--enable-delayacct: cannot write "
				"kernel.task_delayacct: %m\n");
			return -EACCES;
		}
		if (on == 1 || (on == 0 && c->o->enable_delayacct))
			tsc_check_ok(c, "kernel.task_delayacct is %d%s", on,
				     on ? "" : " (--enable-delayacct would "
				     "set it to 1)");
		else if (on == 0)
			tsc_check_warn(c, "kernel.task_delayacct is 0: no delay "
				       "counts (--enable-delayacct sets it)");
		else if (on == -ENOENT)
			tsc_check_ok(c, "no kernel.task_delayacct (before "
				     "Linux 5.14: on unless booted with "
				     "nodelayacct)");
		else
			tsc_check_warn(c, "kernel.task_delayacct: %s",
				       strerror(-on));
		return 0;
	}
	if (c->o->enable_delayacct && on != 1) {
		r = tsc_delayacct_enable();
		if (r < 0) {
			tsc_err("--enable-delayacct: cannot "
				"write kernel.task_delayacct: %s\n",
				strerror(-r));
			return r;
		}
		tsc_info("--enable-delayacct: set "
			"kernel.task_delayacct=1 (it stays on after exit)\n");
		on = tsc_delayacct_read();
	}
	if (on == 0)
		tsc_warn("warning: kernel.task_delayacct is 0: "
			"delays are counted only for tasks started after it "
			"is enabled (--enable-delayacct)\n");
	else if (on < 0 && on != -ENOENT)
		tsc_warn("warning: kernel.task_delayacct: %s\n",
			strerror(-on));
	return 0;
}

/* Type=notify: the manager's socket is connected while we may still open
 * it; a socket that cannot be used is said, and the run goes on. */
static void open_notify(struct tsc *c)
{
	int r = tsc_notify_open(&c->notify);

	if (r < 0)
		tsc_warn("NOTIFY_SOCKET: %s; the service manager will not "
			"be told that the collector is ready\n",
			strerror(-r));
}

/* Registered: now shed privileges, before any thread exists. Even without
 * --user nothing needs a capability from here on (closing copes with a
 * refused deregistration). */
static int shed_privileges(struct tsc *c)
{
	char err[256];
	int r;

	/* --events, --exes: the executables (exe_cache.h), as the rollup
	 * learnt them (its first scan ran while /proc/<pid>/exe of root's
	 * processes still may be read); without memory the events and the
	 * rankings name none */
	if ((c->o->events || c->o->exes) && !c->names.exe)
		c->names.exe = exe_cache_new(c->src.rollup);

	c->check_item = "privileges";
	if (c->drop) {
		r = priv_drop(&c->user, err, sizeof(err));
		if (r < 0)
			tsc_err("--user %s: %s\n", c->o->user,
				err);
		else
			tsc_check_ok(c, "became %s, every capability "
				     "dropped", c->o->user);
		return r;
	}
	bool kept = false;
	/* the workload names read the runtimes' state (root's, 0700): a
	 * granted CAP_DAC_READ_SEARCH stays, but for uid 0, the owner */
	r = priv_shed_caps(c->names.ident != NULL && geteuid() != 0, &kept, err,
			   sizeof(err));
	if (r < 0)
		tsc_err("%s\n", err);
	else if (kept)
		tsc_check_ok(c, "capabilities shed but CAP_DAC_READ_SEARCH, "
			     "granted for the runtimes' state (workload "
			     "names)");
	else
		tsc_check_ok(c, "capabilities shed");
	if (kept)
		tsc_info("kept CAP_DAC_READ_SEARCH (granted) to read the "
			 "container runtimes' state for workload names; "
			 "--no-identity sheds it too\n");
	return r;
}

int tsc_live_open(struct tsc *c)
{
	int r;

	r = check_delayacct(c);
	if (!r)
		r = open_listener(c);
	if (!r)
		r = open_rollup(c);
	if (!r && !c->o->check) /* --check: no READY=1 */
		open_notify(c);
	if (!r)
		r = shed_privileges(c);
	if (r)
		return r;
	tsc_workloads_watch(c); /* its thread has the shed credentials */
	c->src.wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (c->src.wake_fd < 0) {
		r = -errno;
		tsc_err("eventfd: %s\n", strerror(-r));
		return r;
	}
	return 0;
}
