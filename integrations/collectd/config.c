/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * <Plugin taskstat> ... </Plugin>: every option is checked here, so that
 * a typo stops collectd at start-up instead of being ignored. The options
 * are documented in docs/collectd.md.
 */
#include "collectd/core/daemon/collectd.h"
#include "collectd/core/daemon/plugin.h"

#include "plugin.h"

void tscd_conf_defaults(struct tscd_conf *c)
{
	memset(c, 0, sizeof(*c));
	c->attribution = CGS_ATTRIBUTION_AUTO;
	c->fork_tracking = true;
	c->delays = true;
}

void tscd_conf_free(struct tscd_conf *c)
{
	free(c->hierarchy);
	free(c->containerd_state);
	free(c->crio_storage);
	free(c->docker_root);
	free(c->kubelet_logs);
	tscd_select_clear(&c->select);
	tscd_conf_defaults(c);
}

static int get_attribution(oconfig_item_t *ci, enum cgs_attribution *out)
{
	char v[16];

	if (cf_util_get_string_buffer(ci, v, sizeof(v)) != 0)
		return -1;
	if (!strcasecmp(v, "auto"))
		*out = CGS_ATTRIBUTION_AUTO;
	else if (!strcasecmp(v, "kernel"))
		*out = CGS_ATTRIBUTION_KERNEL;
	else if (!strcasecmp(v, "proc"))
		*out = CGS_ATTRIBUTION_PROC;
	else {
		ERROR(TSCD_PLUGIN " plugin: Attribution \"%s\": expected "
		      "auto, kernel or proc", v);
		return -1;
	}
	return 0;
}

static int get_depth(oconfig_item_t *ci, unsigned *out)
{
	int v;

	if (cf_util_get_int(ci, &v) != 0)
		return -1;
	if (v < 0 || v > 1000) {
		ERROR(TSCD_PLUGIN " plugin: Depth %d: expected 0 (no folding) "
		      "to 1000", v);
		return -1;
	}
	*out = (unsigned)v;
	return 0;
}

static int get_glob(oconfig_item_t *ci, struct tscd_select *s)
{
	char *g = NULL;
	int r;

	if (cf_util_get_string(ci, &g) != 0)
		return -1;
	r = tscd_select_add(s, g);
	if (r < 0)
		ERROR(TSCD_PLUGIN " plugin: Cgroup \"%s\": %s", g,
		      r == -EINVAL ? "empty glob" : strerror(-r));
	free(g);
	return r < 0 ? -1 : 0;
}

static int option(oconfig_item_t *o, struct tscd_conf *c)
{
	if (!strcasecmp(o->key, "Hierarchy")) {
		free(c->hierarchy);
		c->hierarchy = NULL;
		return cf_util_get_string(o, &c->hierarchy);
	}
	if (!strcasecmp(o->key, "Depth"))
		return get_depth(o, &c->depth);
	if (!strcasecmp(o->key, "Cgroup"))
		return get_glob(o, &c->select);
	if (!strcasecmp(o->key, "IgnoreSelected"))
		return cf_util_get_boolean(o, &c->select.invert);
	if (!strcasecmp(o->key, "Attribution"))
		return get_attribution(o, &c->attribution);
	if (!strcasecmp(o->key, "ForkTracking"))
		return cf_util_get_boolean(o, &c->fork_tracking);
	if (!strcasecmp(o->key, "Delays"))
		return cf_util_get_boolean(o, &c->delays);
	if (!strcasecmp(o->key, "Identity"))
		return cf_util_get_boolean(o, &c->identity);
	struct { const char *k; char **v; } roots[] = {
		{ "ContainerdState", &c->containerd_state },
		{ "CrioStorage", &c->crio_storage },
		{ "DockerRoot", &c->docker_root },
		{ "KubeletLogs", &c->kubelet_logs },
	};
	for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++)
		if (!strcasecmp(o->key, roots[i].k)) {
			free(*roots[i].v);
			*roots[i].v = NULL;
			return cf_util_get_string(o, roots[i].v);
		}
	ERROR(TSCD_PLUGIN " plugin: unknown option \"%s\"", o->key);
	return -1;
}

int tscd_config(oconfig_item_t *ci)
{
	for (int i = 0; i < ci->children_num; i++)
		if (option(&ci->children[i], &tscd.conf) != 0)
			return -1;
	return 0;
}
