/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Workload names from cgroup paths: the pattern table, for unit tests. */
#ifndef CGS_EXPORT_WORKLOAD_H
#define CGS_EXPORT_WORKLOAD_H

#include <stdbool.h>
#include <stddef.h>

#include "cgstats.h"

/* The groups of struct cgs_workload members a row decides. */
enum cgsi_wl_group {
	CGSI_WL_UNIT,      /* unit */
	CGSI_WL_SLICE,     /* slice */
	CGSI_WL_CONTAINER, /* runtime, container, container_id */
	CGSI_WL_POD,       /* pod_uid, qos_class */
	CGSI_WL__GROUPS
};

/* One cgroup name and its two nearest ancestors' (n == 0: none). */
struct cgsi_wl_name {
	const char *p;
	size_t n;
};
struct cgsi_wl_ctx {
	struct cgsi_wl_name self, parent, grand;
	bool parent_pod_dir; /* the parent is a cgroupfs-driver pod */
};

struct cgsi_wl_rule {
	enum cgsi_wl_group group;
	/* True when the name matches; then it has filled the row's group
	 * of *w (cleared first). */
	bool (*match)(const struct cgsi_wl_rule *r,
		      const struct cgsi_wl_ctx *c, struct cgs_workload *w);
	const char *pre, *post; /* literal text around the variable part */
	const char *arg;        /* the matcher's: parent name, QoS tag */
	const char *value;      /* runtime or QoS class set; NULL: none */
	bool pod_dir;           /* a cgroupfs pod: its children may be
				 * containers of an unknown runtime */
	const char *shape;      /* documentation */
	const char *example;    /* a real path the row decides (tests) */
};

/* The table, in the order rows are tried within a group. */
const struct cgsi_wl_rule *cgsi_wl_rules(size_t *n);

/*
 * cgs_workload_from_path into a full struct *w (sz set by the caller);
 * why[g], if why is not NULL, receives the row that decided group g (NULL:
 * none). Returns the number of non-empty members.
 */
int cgsi_workload_parse(const char *path, struct cgs_workload *w,
			const struct cgsi_wl_rule *why[CGSI_WL__GROUPS]);

#endif
