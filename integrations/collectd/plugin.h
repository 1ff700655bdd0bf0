/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The collectd plugin "taskstat": what its parts share. config.c fills
 * struct tscd_conf from <Plugin taskstat>, taskstat.c opens the listener
 * and the rollup at init and closes them at shutdown, dispatch.c turns a
 * snapshot into value lists at each read.
 */
#ifndef TSCD_PLUGIN_H
#define TSCD_PLUGIN_H

#include <stdbool.h>

#include <cgstats.h>

#include "select.h"

#define TSCD_PLUGIN "taskstat"

struct tscd_conf {
	char *hierarchy;                /* NULL: the library's default */
	unsigned depth;                 /* fold_depth; 0: none */
	enum cgs_attribution attribution;
	bool fork_tracking;             /* CGS_ROLLUP_TRACK_FORKS */
	bool delays;                    /* dispatch taskstat_delay */
	struct tscd_select select;
	/* Identity true: namespace/pod/container/image as meta data of a
	 * container's value lists; the runtimes' roots (NULL: defaults) */
	bool identity;
	char *containerd_state, *crio_storage, *docker_root, *kubelet_logs;
};

struct tscd_state {
	struct tscd_conf conf;
	struct cgs_listener *l;
	struct cgs_rollup *rollup;
	bool running;                   /* the listener's runner */
	struct cgs_identity_src *ident; /* Identity true */
};

extern struct tscd_state tscd;

/* The collectd callbacks (config.c, dispatch.c) */
struct oconfig_item_s;
int tscd_config(struct oconfig_item_s *ci);
void tscd_conf_defaults(struct tscd_conf *c);
void tscd_conf_free(struct tscd_conf *c);
int tscd_read(void);
/* Identity true: the resolver, hooked to the rollup's cgroup events
 * (taskstat.c); 0 or -errno. */
int tscd_identity_open(void);

#endif
