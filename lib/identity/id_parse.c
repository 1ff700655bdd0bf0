// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Workload identity: the parsers of the files runtimes and the kubelet
 * write. Bytes in, names out; no file system access (fuzz/fuzz_identity.c
 * feeds them). json-c parses the JSON (strict, UTF-8 validated, depth
 * bounded); every name taken is checked again before it is copied.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include <json-c/json.h>

#include "identity/identity.h"

#define ID_JSON_DEPTH 16 /* config.json nests 6 deep; Labels strings 2 */

static enum cgsi_id_reason parse_json(const char *buf, size_t len,
				      struct json_object **out)
{
	*out = NULL;
	if (len > (size_t)INT32_MAX)
		return CGSI_ID_TOO_BIG;
	struct json_tokener *tok = json_tokener_new_ex(ID_JSON_DEPTH);
	if (!tok)
		return CGSI_ID_IO;
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT |
				    JSON_TOKENER_VALIDATE_UTF8);
	struct json_object *o = json_tokener_parse_ex(tok, buf, (int)len);
	enum json_tokener_error e = json_tokener_get_error(tok);
	/* the whole buffer must be one value (trailing blanks allowed) */
	size_t used = json_tokener_get_parse_end(tok);
	json_tokener_free(tok);
	for (; o && used < len; used++)
		if (buf[used] != ' ' && buf[used] != '\t' &&
		    buf[used] != '\r' && buf[used] != '\n')
			break;
	if (!o || e != json_tokener_success || used < len ||
	    !json_object_is_type(o, json_type_object)) {
		json_object_put(o);
		return CGSI_ID_BAD_JSON;
	}
	*out = o;
	return CGSI_ID_OK;
}

/* A name fit to pass on: printable, no control bytes (UTF-8 is checked by
 * the tokenizer or, for file names, here: bytes >= 0x80 are refused). */
static bool clean(const char *s, size_t n, bool ascii)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c < 0x20 || c == 0x7f || (ascii && c >= 0x80))
			return false;
	}
	return true;
}

/* Copies one value into dst (cap bytes) if dst is still empty. */
static enum cgsi_id_reason put(char *dst, size_t cap, const char *s, size_t n,
			       bool ascii)
{
	if (!s || n == 0 || dst[0])
		return CGSI_ID_OK;
	if (n >= cap || !clean(s, n, ascii))
		return CGSI_ID_BAD_VALUE;
	memcpy(dst, s, n);
	dst[n] = '\0';
	return CGSI_ID_OK;
}

static const char *str_of(struct json_object *o, const char *key, size_t *n)
{
	struct json_object *v;
	if (!o || !json_object_object_get_ex(o, key, &v) ||
	    !json_object_is_type(v, json_type_string))
		return NULL;
	*n = (size_t)json_object_get_string_len(v);
	return json_object_get_string(v);
}

struct id_key {
	const char *key;
	size_t off, cap; /* the member of struct cgs_identity it fills */
};

#define M(member) offsetof(struct cgs_identity, member), \
	sizeof(((struct cgs_identity *)0)->member)

/* The keys, first the more specific; the first non-empty wins. */
static const struct id_key oci_keys[] = {
	/* containerd's CRI plugin (pkg/cri/annotations) */
	{ "io.kubernetes.cri.sandbox-namespace", M(k8s_namespace) },
	{ "io.kubernetes.cri.sandbox-name", M(pod) },
	{ "io.kubernetes.cri.sandbox-uid", M(pod_uid) },
	{ "io.kubernetes.cri.container-name", M(container) },
	{ "io.kubernetes.cri.image-name", M(image) },
	/* CRI-O (pkg/annotations): the pod's names; the container's name is
	 * in its Labels (below), ContainerName is the runtime's k8s_... */
	{ "io.kubernetes.cri-o.Namespace", M(k8s_namespace) },
	{ "io.kubernetes.cri-o.ImageName", M(image) },
	{ "io.kubernetes.cri-o.Image", M(image) },
	/* the kubelet's labels, as some runtimes copy them */
	{ "io.kubernetes.pod.namespace", M(k8s_namespace) },
	{ "io.kubernetes.pod.name", M(pod) },
	{ "io.kubernetes.pod.uid", M(pod_uid) },
	{ "io.kubernetes.container.name", M(container) },
};

/* The kubelet's labels inside an object (CRI-O's Labels, Docker's). */
static const struct id_key label_keys[] = {
	{ "io.kubernetes.pod.namespace", M(k8s_namespace) },
	{ "io.kubernetes.pod.name", M(pod) },
	{ "io.kubernetes.pod.uid", M(pod_uid) },
	{ "io.kubernetes.container.name", M(container) },
	{ "com.docker.compose.project", M(project) },
	{ "com.docker.compose.service", M(service) },
};

static enum cgsi_id_reason take_keys(struct json_object *o,
				     const struct id_key *k, size_t nk,
				     struct cgs_identity *id)
{
	enum cgsi_id_reason r = CGSI_ID_OK;
	for (size_t i = 0; i < nk; i++) {
		size_t n = 0;
		const char *s = str_of(o, k[i].key, &n);
		enum cgsi_id_reason e = put((char *)id + k[i].off, k[i].cap,
					    s, n, false);
		if (e != CGSI_ID_OK)
			r = e;
	}
	return r;
}

static bool is_sandbox(struct json_object *ann)
{
	size_t n = 0;
	const char *t = str_of(ann, "io.kubernetes.cri.container-type", &n);
	if (!t)
		t = str_of(ann, "io.kubernetes.cri-o.ContainerType", &n);
	if (!t)
		t = str_of(ann, "io.kubernetes.docker.type", &n);
	return t && (strcmp(t, "sandbox") == 0 ||
		     strcmp(t, "podsandbox") == 0);
}

static bool named(const struct cgs_identity *id)
{
	return id->k8s_namespace[0] || id->pod[0] || id->container[0] ||
	       id->image[0] || id->project[0] || id->service[0] ||
	       id->sandbox;
}

/* CRI-O's Labels: a JSON object in a string. */
static enum cgsi_id_reason take_crio_labels(struct json_object *ann,
					    struct cgs_identity *id)
{
	size_t n = 0;
	const char *s = str_of(ann, "io.kubernetes.cri-o.Labels", &n);
	if (!s)
		return CGSI_ID_OK;
	struct json_object *lab;
	enum cgsi_id_reason r = parse_json(s, n, &lab);
	if (r != CGSI_ID_OK)
		return r;
	r = take_keys(lab, label_keys, 4, id);
	json_object_put(lab);
	return r;
}

enum cgsi_id_reason cgsi_id_parse_oci(const char *buf, size_t len,
				      struct cgs_identity *id)
{
	struct json_object *root, *ann;
	enum cgsi_id_reason r = parse_json(buf, len, &root);
	if (r != CGSI_ID_OK)
		return r;
	if (!json_object_object_get_ex(root, "annotations", &ann) ||
	    !json_object_is_type(ann, json_type_object)) {
		json_object_put(root);
		return CGSI_ID_NO_NAMES;
	}
	enum cgsi_id_reason r1 = take_crio_labels(ann, id);
	enum cgsi_id_reason r2 = take_keys(ann, oci_keys,
					   sizeof(oci_keys) / sizeof(*oci_keys),
					   id);
	id->sandbox = is_sandbox(ann);
	if (id->sandbox)
		id->container[0] = '\0'; /* the pause container's "POD" */
	json_object_put(root);
	if (r1 == CGSI_ID_BAD_JSON)
		return r1;
	if (r1 != CGSI_ID_OK || r2 != CGSI_ID_OK)
		return CGSI_ID_BAD_VALUE;
	return named(id) ? CGSI_ID_OK : CGSI_ID_NO_NAMES;
}

enum cgsi_id_reason cgsi_id_parse_docker(const char *buf, size_t len,
					 struct cgs_identity *id)
{
	struct json_object *root, *cfg = NULL, *lab = NULL;
	enum cgsi_id_reason r = parse_json(buf, len, &root);
	if (r != CGSI_ID_OK)
		return r;
	if (json_object_object_get_ex(root, "Config", &cfg) &&
	    json_object_is_type(cfg, json_type_object)) {
		if (json_object_object_get_ex(cfg, "Labels", &lab) &&
		    json_object_is_type(lab, json_type_object)) {
			r = take_keys(lab, label_keys,
				      sizeof(label_keys) / sizeof(*label_keys),
				      id);
			id->sandbox = is_sandbox(lab);
		}
		size_t n = 0;
		const char *img = str_of(cfg, "Image", &n);
		if (put(id->image, sizeof(id->image), img, n, false))
			r = CGSI_ID_BAD_VALUE;
	}
	size_t n = 0;
	const char *name = str_of(root, "Name", &n);
	if (name && n && name[0] == '/') { /* "/web-1" */
		name++;
		n--;
	}
	/* a Kubernetes container's Docker name is the runtime's k8s_...;
	 * its label above named it already */
	if (put(id->container, sizeof(id->container), name, n, false))
		r = CGSI_ID_BAD_VALUE;
	if (id->sandbox)
		id->container[0] = '\0';
	json_object_put(root);
	if (r != CGSI_ID_OK)
		return r;
	return named(id) ? CGSI_ID_OK : CGSI_ID_NO_NAMES;
}

/* name[0..n) split at '_' into exactly three non-empty fields. */
static bool split3(const char *s, size_t n, const char *f[3], size_t fl[3])
{
	size_t k = 0, start = 0;
	for (size_t i = 0; i <= n; i++) {
		if (i < n && s[i] != '_')
			continue;
		if (k == 3 || i == start)
			return false;
		f[k] = s + start;
		fl[k++] = i - start;
		start = i + 1;
	}
	return k == 3;
}

enum cgsi_id_reason cgsi_id_parse_log_link(const char *name, const char *cid,
					   struct cgs_identity *id)
{
	size_t n = strlen(name), cl = strlen(cid);
	/* <pod>_<namespace>_<container>-<id>.log */
	if (cl == 0 || n < cl + 6 || strcmp(name + n - 4, ".log") != 0 ||
	    memcmp(name + n - 4 - cl, cid, cl) != 0 ||
	    name[n - 5 - cl] != '-')
		return CGSI_ID_ABSENT;
	const char *f[3];
	size_t fl[3];
	if (!split3(name, n - 5 - cl, f, fl))
		return CGSI_ID_NO_NAMES;
	enum cgsi_id_reason r = CGSI_ID_OK;
	if (put(id->pod, sizeof(id->pod), f[0], fl[0], true) ||
	    put(id->k8s_namespace, sizeof(id->k8s_namespace), f[1], fl[1],
		true) ||
	    put(id->container, sizeof(id->container), f[2], fl[2], true))
		r = CGSI_ID_BAD_VALUE;
	return r;
}

enum cgsi_id_reason cgsi_id_parse_pod_dir(const char *name, const char *uid,
					  struct cgs_identity *id)
{
	size_t n = strlen(name), ul = strlen(uid);
	/* <namespace>_<pod>_<uid> */
	if (ul == 0 || n < ul + 4 || strcmp(name + n - ul, uid) != 0 ||
	    name[n - ul - 1] != '_')
		return CGSI_ID_ABSENT;
	const char *f[3];
	size_t fl[3];
	if (!split3(name, n, f, fl))
		return CGSI_ID_NO_NAMES;
	if (put(id->k8s_namespace, sizeof(id->k8s_namespace), f[0], fl[0],
		true) ||
	    put(id->pod, sizeof(id->pod), f[1], fl[1], true))
		return CGSI_ID_BAD_VALUE;
	return CGSI_ID_OK;
}

const char *cgsi_id_reason_name(enum cgsi_id_reason r)
{
	static const char *const names[CGSI_ID__REASONS] = {
		"ok", "absent", "too_big", "not_regular", "loop", "io_error",
		"bad_json", "bad_value", "no_names",
	};
	return (unsigned)r < CGSI_ID__REASONS ? names[r] : "?";
}
