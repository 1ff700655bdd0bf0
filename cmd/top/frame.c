/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A snapshot line (the collector's JSON rollup, docs/collector.md) into a
 * frame of cumulative counters, with json-c. Members the line lacks count
 * as 0 (an older collector, oom_kills null when not counted); a line that
 * is not a rollup object is refused.
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "top.h"

static double num(struct json_object *o, const char *k)
{
	struct json_object *v;
	if (!o || !json_object_object_get_ex(o, k, &v) || !v)
		return 0;
	return json_object_get_double(v);
}

static uint64_t u64(struct json_object *o, const char *k)
{
	struct json_object *v;
	if (!o || !json_object_object_get_ex(o, k, &v) || !v)
		return 0;
	return (uint64_t)json_object_get_uint64(v);
}

static const char *str(struct json_object *o, const char *k)
{
	struct json_object *v;
	if (!json_object_object_get_ex(o, k, &v) ||
	    !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

static void copy(char *dst, size_t n, const char *s)
{
	snprintf(dst, n, "%s", s ? s : "");
}

static int cgroup(struct json_object *g, struct top_cg *cg)
{
	struct json_object *out = NULL;
	const char *path = str(g, "cgroup");

	if (!path)
		return -EBADMSG;
	cg->path = strdup(path);
	if (!cg->path)
		return -ENOMEM;
	cg->depth = (unsigned)u64(g, "depth");
	struct json_object *rm;
	cg->removed = json_object_object_get_ex(g, "removed", &rm) &&
		      json_object_get_boolean(rm);
	json_object_object_get_ex(g, "outcomes", &out);
	const char *ns = str(g, "namespace"), *pod = str(g, "pod"),
		   *ctr = str(g, "container_name");
	if ((ns && pod) || ctr) {
		size_t n = 3 + (ns ? strlen(ns) : 0) + (pod ? strlen(pod) : 0) +
			   (ctr ? strlen(ctr) : 0);
		cg->workload = malloc(n);
		if (!cg->workload) {
			free(cg->path);
			cg->path = NULL;
			return -ENOMEM;
		}
		if (ns && pod)
			snprintf(cg->workload, n, "%s/%s%s%s", ns, pod,
				 ctr ? "/" : "", ctr ? ctr : "");
		else
			snprintf(cg->workload, n, "%s", ctr);
	}
	cg->cum[M_EXITS] = num(g, "tasks");
	cg->cum[M_PROCS] = num(g, "processes");
	cg->cum[M_CPU] = num(g, "utime_s") + num(g, "stime_s");
	cg->cum[M_CPUDLY] = num(g, "delay_cpu_s");
	cg->cum[M_IODLY] = num(g, "delay_blkio_s");
	cg->cum[M_READ] = num(g, "read_bytes");
	cg->cum[M_WRITE] = num(g, "write_bytes");
	cg->cum[M_FAIL] = num(out, "exit_nonzero") + num(out, "signaled");
	cg->cum[M_OOM] = num(out, "oom_kills");
	cg->cum[M_TOTAL] = cg->cum[M_EXITS];
	/* the worst wait of any class (delay_max_s: absent when none) */
	struct json_object *pk;
	if (json_object_object_get_ex(g, "delay_max_s", &pk) &&
	    json_object_is_type(pk, json_type_object)) {
		json_object_object_foreach(pk, cls, val) {
			(void)cls;
			double d = json_object_get_double(val);
			if (d > cg->cum[M_MAXWAIT])
				cg->cum[M_MAXWAIT] = d;
		}
	}
	return 0;
}

static int parse(struct json_object *o, struct top_frame *f, char *err,
		 size_t errlen)
{
	const char *type = str(o, "type");
	struct json_object *cgs, *d;

	if (!type || strcmp(type, "rollup")) {
		snprintf(err, errlen, "not a rollup snapshot");
		return -EBADMSG;
	}
	if (!json_object_object_get_ex(o, "cgroups", &cgs) ||
	    !json_object_is_type(cgs, json_type_array)) {
		snprintf(err, errlen, "no \"cgroups\" array");
		return -EBADMSG;
	}
	f->time = num(o, "time");
	f->seq = u64(o, "seq");
	f->interval_s = num(o, "interval_s");
	f->records = u64(o, "records");
	f->dropped = u64(o, "dropped");
	f->unattributed = u64(o, "unattributed");
	f->malformed = u64(o, "malformed");
	copy(f->attribution, sizeof(f->attribution),
	     str(o, "attribution_source"));
	copy(f->hierarchy, sizeof(f->hierarchy), str(o, "hierarchy"));
	const char *oom = str(o, "oom_source");
	f->oom_counted = oom && strcmp(oom, "none");
	f->delayacct = json_object_object_get_ex(o, "delayacct", &d) ?
			       json_object_get_boolean(d) : -1;
	size_t n = json_object_array_length(cgs);
	f->cg = calloc(n ? n : 1, sizeof(*f->cg));
	if (!f->cg)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		int r = cgroup(json_object_array_get_idx(cgs, i), &f->cg[i]);
		if (r < 0) {
			if (r == -EBADMSG)
				snprintf(err, errlen, "cgroup %zu has no path",
					 i);
			return r;
		}
		f->n = i + 1;
	}
	return 0;
}

int top_frame_parse(const char *json, size_t len, struct top_frame *f,
		    char *err, size_t errlen)
{
	struct json_tokener *tok = json_tokener_new();
	struct json_object *o;
	int r;

	memset(f, 0, sizeof(*f));
	if (!tok)
		return -ENOMEM;
	while (len && (json[len - 1] == '\n' || json[len - 1] == '\r'))
		len--;
	o = json_tokener_parse_ex(tok, json, (int)len);
	if (!o || json_tokener_get_error(tok) != json_tokener_success ||
	    tok->char_offset != (int)len) {
		snprintf(err, errlen, "not one JSON object: %s",
			 o ? "trailing bytes" : json_tokener_error_desc(
						json_tokener_get_error(tok)));
		json_object_put(o);
		json_tokener_free(tok);
		return -EBADMSG;
	}
	json_tokener_free(tok);
	r = json_object_is_type(o, json_type_object) ? parse(o, f, err, errlen)
						     : -EBADMSG;
	if (r == -EBADMSG && !json_object_is_type(o, json_type_object))
		snprintf(err, errlen, "not a JSON object");
	json_object_put(o);
	if (r < 0)
		top_frame_free(f);
	return r;
}

void top_frame_free(struct top_frame *f)
{
	for (size_t i = 0; i < f->n; i++) {
		free(f->cg[i].path);
		free(f->cg[i].workload);
	}
	free(f->cg);
	memset(f, 0, sizeof(*f));
}
