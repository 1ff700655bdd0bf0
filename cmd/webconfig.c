/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * --web-config FILE, the Prometheus exporter toolkit's format, the part
 * that libmicrohttpd can do:
 *
 *   tls_server_config:
 *     cert_file: server.crt
 *     key_file: server.key
 *   basic_auth_users:
 *     alice: $2y$10$...
 *
 * Parsed with libyaml's document loader; passwords checked with
 * libxcrypt's crypt_r(3).
 */
#include <crypt.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

#include "webconfig.h"

#define PEM_MAX (1u << 20)

static int fail(char *err, size_t errlen, int r, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return r;
}

/* A file relative to the directory of the configuration file. */
static char *resolve(const char *cfg, const char *name)
{
	const char *slash = strrchr(cfg, '/');
	char *p;

	if (name[0] == '/' || !slash)
		return strdup(name);
	if (asprintf(&p, "%.*s/%s", (int)(slash - cfg), cfg, name) < 0)
		return NULL;
	return p;
}

static int slurp(const char *path, char **out)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	int r = 0;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		r = -errno;
	} else if (!S_ISREG(st.st_mode)) {
		r = -EINVAL;
	} else if ((size_t)st.st_size > PEM_MAX) {
		r = -EFBIG;
	} else {
		char *b = malloc((size_t)st.st_size + 1);
		size_t n = 0;
		if (!b)
			r = -ENOMEM;
		while (b && n < (size_t)st.st_size) {
			ssize_t k = read(fd, b + n, (size_t)st.st_size - n);
			if (k < 0 && errno == EINTR)
				continue;
			if (k <= 0) {
				r = k < 0 ? -errno : -EIO;
				break;
			}
			n += (size_t)k;
		}
		if (b && !r) {
			b[n] = '\0';
			*out = b;
		} else {
			free(b);
		}
	}
	close(fd);
	return r;
}

static const char *scalar(yaml_document_t *doc, yaml_node_t *n)
{
	(void)doc;
	return n && n->type == YAML_SCALAR_NODE ?
	       (const char *)n->data.scalar.value : NULL;
}

/* Keys of a mapping: each pair's key must be a scalar. */
#define FOR_PAIRS(doc, map, k, v)                                          \
	for (yaml_node_pair_t *p_ = (map)->data.mapping.pairs.start;        \
	     p_ < (map)->data.mapping.pairs.top &&                          \
	     ((k) = scalar(doc, yaml_document_get_node(doc, p_->key)),      \
	      (v) = yaml_document_get_node(doc, p_->value), 1);             \
	     p_++)

static bool is_empty(yaml_node_t *n)
{
	/* "key:" with nothing after it: an empty scalar (null) */
	return n && n->type == YAML_SCALAR_NODE && !n->data.scalar.length;
}

static int load_pem(const char *cfg, const char *key, const char *name,
		    char **out, char *err, size_t errlen)
{
	char *p = resolve(cfg, name);
	if (!p)
		return fail(err, errlen, -ENOMEM, "%s", strerror(ENOMEM));
	int r = slurp(p, out);
	if (r < 0)
		fail(err, errlen, r, "%s: tls_server_config.%s: %s: %s", cfg,
		     key, p, strerror(-r));
	free(p);
	return r;
}

static int parse_tls(struct tsc_webcfg *w, const char *cfg,
		     yaml_document_t *doc, yaml_node_t *m, char *err,
		     size_t errlen)
{
	const char *k, *cert = NULL, *key = NULL;
	yaml_node_t *v;
	int r;

	if (is_empty(m))
		return 0;
	if (m->type != YAML_MAPPING_NODE)
		return fail(err, errlen, -EINVAL, "%s: tls_server_config is "
			    "not a mapping", cfg);
	FOR_PAIRS(doc, m, k, v) {
		const char *s = scalar(doc, v);
		if (!k)
			return fail(err, errlen, -EINVAL, "%s: "
				    "tls_server_config: a key is not a "
				    "string", cfg);
		if (!strcmp(k, "cert_file") && s)
			cert = s;
		else if (!strcmp(k, "key_file") && s)
			key = s;
		else
			return fail(err, errlen, -EINVAL, "%s: "
				    "tls_server_config.%s: %s", cfg, k,
				    strcmp(k, "cert_file") &&
				    strcmp(k, "key_file") ? "not supported "
				    "(cert_file and key_file are)" :
				    "not a string");
	}
	if (!cert || !*cert || !key || !*key)
		return fail(err, errlen, -EINVAL, "%s: tls_server_config "
			    "needs both cert_file and key_file", cfg);
	r = load_pem(cfg, "cert_file", cert, &w->cert_pem, err, errlen);
	if (!r)
		r = load_pem(cfg, "key_file", key, &w->key_pem, err, errlen);
	w->tls = !r;
	return r;
}

static bool is_bcrypt(const char *h)
{
	/* $2a$, $2b$ or $2y$, two cost digits, '$', 53 more characters */
	return strlen(h) == 60 && h[0] == '$' && h[1] == '2' &&
	       strchr("aby", h[2]) && h[3] == '$' && h[6] == '$';
}

static int parse_users(struct tsc_webcfg *w, const char *cfg,
		       yaml_document_t *doc, yaml_node_t *m, char *err,
		       size_t errlen)
{
	const char *k;
	yaml_node_t *v;

	if (is_empty(m))
		return 0;
	if (m->type != YAML_MAPPING_NODE)
		return fail(err, errlen, -EINVAL, "%s: basic_auth_users is "
			    "not a mapping of user names to bcrypt hashes",
			    cfg);
	size_t n = (size_t)(m->data.mapping.pairs.top -
			    m->data.mapping.pairs.start);
	w->users = calloc(n ? n : 1, sizeof(*w->users));
	if (!w->users)
		return fail(err, errlen, -ENOMEM, "%s", strerror(ENOMEM));
	FOR_PAIRS(doc, m, k, v) {
		const char *h = scalar(doc, v);
		if (!k || !*k || strchr(k, ':'))
			return fail(err, errlen, -EINVAL, "%s: "
				    "basic_auth_users: '%s' is not a user "
				    "name", cfg, k ? k : "(not a string)");
		if (!h || !is_bcrypt(h))
			return fail(err, errlen, -EINVAL, "%s: "
				    "basic_auth_users.%s: not a bcrypt hash "
				    "($2y$...)", cfg, k);
		for (unsigned i = 0; i < w->nusers; i++)
			if (!strcmp(w->users[i].name, k))
				return fail(err, errlen, -EINVAL, "%s: "
					    "basic_auth_users.%s: given "
					    "twice", cfg, k);
		struct tsc_webuser *u = &w->users[w->nusers];
		u->name = strdup(k);
		u->hash = strdup(h);
		if (!u->name || !u->hash) {
			free(u->name);
			free(u->hash);
			return fail(err, errlen, -ENOMEM, "%s",
				    strerror(ENOMEM));
		}
		w->nusers++;
	}
	return 0;
}

static int parse(struct tsc_webcfg *w, const char *cfg, yaml_document_t *doc,
		 char *err, size_t errlen)
{
	yaml_node_t *root = yaml_document_get_root_node(doc);
	const char *k;
	yaml_node_t *v;
	int r = 0;

	if (!root || is_empty(root))
		return 0; /* an empty file: plain HTTP, like the toolkit */
	if (root->type != YAML_MAPPING_NODE)
		return fail(err, errlen, -EINVAL, "%s: not a YAML mapping",
			    cfg);
	FOR_PAIRS(doc, root, k, v) {
		if (!k)
			return fail(err, errlen, -EINVAL, "%s: a key is not a "
				    "string", cfg);
		if (!strcmp(k, "tls_server_config"))
			r = parse_tls(w, cfg, doc, v, err, errlen);
		else if (!strcmp(k, "basic_auth_users"))
			r = parse_users(w, cfg, doc, v, err, errlen);
		else
			r = fail(err, errlen, -EINVAL, "%s: %s: not supported "
				 "(tls_server_config and basic_auth_users "
				 "are)", cfg, k);
		if (r < 0)
			return r;
	}
	return 0;
}

int tsc_webcfg_load(const char *path, struct tsc_webcfg **out, char *err,
		    size_t errlen)
{
	struct tsc_webcfg *w;
	yaml_parser_t parser;
	yaml_document_t doc;
	FILE *f;
	int r;

	*out = NULL;
	f = fopen(path, "re");
	if (!f)
		return fail(err, errlen, -errno, "%s: %s", path,
			    strerror(errno));
	w = calloc(1, sizeof(*w));
	if (!w || !yaml_parser_initialize(&parser)) {
		fclose(f);
		free(w);
		return fail(err, errlen, -ENOMEM, "%s", strerror(ENOMEM));
	}
	pthread_mutex_init(&w->lock, NULL);
	yaml_parser_set_input_file(&parser, f);
	if (!yaml_parser_load(&parser, &doc)) {
		r = fail(err, errlen, -EINVAL, "%s:%zu:%zu: %s", path,
			 parser.problem_mark.line + 1,
			 parser.problem_mark.column + 1,
			 parser.problem ? parser.problem : "invalid YAML");
	} else {
		r = parse(w, path, &doc, err, errlen);
		yaml_document_delete(&doc);
	}
	yaml_parser_delete(&parser);
	fclose(f);
	if (r < 0) {
		tsc_webcfg_free(w);
		return r;
	}
	*out = w;
	return 0;
}

/* Equal strings, in a time that depends on the lengths only. */
static bool same(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	unsigned char d = la != lb;

	for (size_t i = 0; i < la && i < lb; i++)
		d |= (unsigned char)(a[i] ^ b[i]);
	return !d;
}

bool tsc_webcfg_check(struct tsc_webcfg *w, const char *user,
		      const char *pass)
{
	struct tsc_webuser *u = NULL;
	bool ok = false;

	for (unsigned i = 0; i < w->nusers && !u; i++)
		if (!strcmp(w->users[i].name, user))
			u = &w->users[i];
	if (!u)
		return false;
	pthread_mutex_lock(&w->lock);
	ok = u->verified && same(u->verified, pass);
	pthread_mutex_unlock(&w->lock);
	if (ok)
		return true;

	struct crypt_data *cd = calloc(1, sizeof(*cd));
	if (!cd)
		return false;
	const char *h = crypt_r(pass, u->hash, cd);
	ok = h && h[0] != '*' && same(h, u->hash);
	free(cd);
	if (ok) {
		char *v = strdup(pass);
		pthread_mutex_lock(&w->lock);
		if (v) {
			free(u->verified);
			u->verified = v;
		}
		pthread_mutex_unlock(&w->lock);
	}
	return ok;
}

void tsc_webcfg_describe(const struct tsc_webcfg *w, char *out,
			 size_t outlen)
{
	snprintf(out, outlen, "%s, %u basic auth user%s",
		 w->tls ? "TLS" : "plain HTTP", w->nusers,
		 w->nusers == 1 ? "" : "s");
}

void tsc_webcfg_free(struct tsc_webcfg *w)
{
	if (!w)
		return;
	for (unsigned i = 0; i < w->nusers; i++) {
		free(w->users[i].name);
		free(w->users[i].hash);
		free(w->users[i].verified);
	}
	free(w->users);
	if (w->key_pem)
		explicit_bzero(w->key_pem, strlen(w->key_pem));
	free(w->key_pem);
	free(w->cert_pem);
	pthread_mutex_destroy(&w->lock);
	free(w);
}
