/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * collectd plugin "taskstat": per-cgroup totals of exited tasks from
 * libcgstats. module_register() hooks config, init, read and shutdown.
 * init wires the library as taskstat-collect does (cmd/collect/run/live_open.c): a
 * listener, a rollup with one writer per listener shard (the kernel
 * source gets each shard's CPUs), a self-test, then the listener's runner
 * whose threads account every exit record under their own shard.
 */
#include "collectd/core/daemon/collectd.h"
#include "collectd/core/daemon/plugin.h"

#include "plugin.h"

struct tscd_state tscd;

static void on_log(enum cgs_log_level level, const char *msg, void *ctx)
{
	plugin_log((int)level, TSCD_PLUGIN " plugin: %s", msg);
}

static int open_listener(void)
{
	CGS_OPTS(cgs_listener_opts, lo, .log = on_log);
	int r = cgs_listener_open(&tscd.l, &lo);

	if (r < 0)
		ERROR(TSCD_PLUGIN " plugin: cannot listen to exit events: %s",
		      cgs_strerror(r));
	return r;
}

static int open_rollup(void)
{
	unsigned n = cgs_listener_shards(tscd.l);
	const char **cpus = calloc(n, sizeof(*cpus));
	char why[320] = "";
	int r;

	if (!cpus)
		return -ENOMEM;
	for (unsigned i = 0; i < n; i++)
		cpus[i] = cgs_listener_shard_cpus(tscd.l, i);
	CGS_OPTS(cgs_rollup_opts, ro, .shards = n,
		 .hierarchy = tscd.conf.hierarchy,
		 .attribution = tscd.conf.attribution,
		 .shard_cpus = cpus, .errbuf = why,
		 .errbuf_len = sizeof(why));
	if (tscd.conf.fork_tracking)
		ro.flags |= CGS_ROLLUP_TRACK_FORKS;
	r = cgs_rollup_new(&tscd.rollup, &ro);
	free(cpus);
	if (r < 0) {
		ERROR(TSCD_PLUGIN " plugin: %s: %s",
		      tscd.conf.attribution == CGS_ATTRIBUTION_KERNEL ?
		      "Attribution kernel" : "rollup",
		      why[0] ? why : cgs_strerror(r));
		return r;
	}
	if (cgs_rollup_attribution(tscd.rollup) == CGS_ATTRIBUTION_KERNEL)
		INFO(TSCD_PLUGIN " plugin: attribution: kernel (hierarchy %s)",
		     cgs_rollup_hierarchy(tscd.rollup));
	else
		INFO(TSCD_PLUGIN " plugin: attribution: /proc%s%s "
		     "(hierarchy %s)",
		     cgs_rollup_kernel_error(tscd.rollup) ? ": " : "",
		     cgs_rollup_kernel_error(tscd.rollup) ?
		     cgs_rollup_kernel_error(tscd.rollup) : "",
		     cgs_rollup_hierarchy(tscd.rollup));
	return 0;
}

/* Identity true: names looked up when a cgroup appears (the kernel
 * source's mkdir events), else at the first read that shows it. */
int tscd_identity_open(void)
{
	if (!tscd.conf.identity)
		return 0;
	CGS_OPTS(cgs_identity_opts, io,
		 .containerd_state = tscd.conf.containerd_state,
		 .crio_storage = tscd.conf.crio_storage,
		 .docker_root = tscd.conf.docker_root,
		 .kubelet_logs = tscd.conf.kubelet_logs);
	int r = cgs_identity_src_new(&tscd.ident, &io);
	if (r < 0) {
		ERROR(TSCD_PLUGIN " plugin: Identity: %s", cgs_strerror(r));
		return r;
	}
	r = cgs_rollup_set_identity(tscd.rollup, tscd.ident);
	if (r == -CGS_ERR_NO_KSRC)
		INFO(TSCD_PLUGIN " plugin: Identity: no kernel source, "
		     "containers are named at the first read that shows them");
	else if (r < 0)
		WARNING(TSCD_PLUGIN " plugin: Identity at cgroup creation: %s "
			"(named at the first read instead)", cgs_strerror(r));
	return 0;
}

static int start(void)
{
	int r = cgs_listener_selftest(tscd.l, 1000, cgs_rollup_account_exit,
				      tscd.rollup);

	if (r < 0) {
		ERROR(TSCD_PLUGIN " plugin: self-test: %s%s", cgs_strerror(r),
		      r == -ETIMEDOUT ? " (exit events reach listeners in "
		      "the initial network namespace only)" : "");
		return r;
	}
	r = cgs_listener_run(tscd.l, cgs_rollup_account_exit, tscd.rollup,
			     NULL);
	if (r < 0) {
		ERROR(TSCD_PLUGIN " plugin: cannot start the listener "
		      "threads: %s", cgs_strerror(r));
		return r;
	}
	tscd.running = true;
	return 0;
}

/* Stop the runner (it drains what is queued), then close everything. */
static void close_all(void)
{
	if (tscd.running)
		cgs_listener_stop(tscd.l);
	tscd.running = false;
	cgs_listener_close(tscd.l);
	tscd.l = NULL;
	if (tscd.rollup) /* its hook borrows tscd.ident */
		cgs_rollup_set_identity(tscd.rollup, NULL);
	cgs_rollup_free(tscd.rollup);
	tscd.rollup = NULL;
	cgs_identity_src_free(tscd.ident);
	tscd.ident = NULL;
}

static int tscd_shutdown(void)
{
	close_all();
	tscd_conf_free(&tscd.conf);
	return 0;
}

static int tscd_init(void)
{
	int r = open_listener();

	if (!r)
		r = open_rollup();
	if (!r)
		r = tscd_identity_open();
	if (!r)
		r = start();
	if (r)
		close_all();
	return r ? -1 : 0;
}

/* The one symbol collectd looks up (everything else is hidden). */
__attribute__((visibility("default"))) void module_register(void);
void module_register(void)
{
	tscd_conf_defaults(&tscd.conf);
	plugin_register_complex_config(TSCD_PLUGIN, tscd_config);
	plugin_register_init(TSCD_PLUGIN, tscd_init);
	plugin_register_read(TSCD_PLUGIN, tscd_read);
	plugin_register_shutdown(TSCD_PLUGIN, tscd_shutdown);
}
