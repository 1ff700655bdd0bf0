/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * --web-config FILE, the Prometheus exporter toolkit's format, the part
 * that libmicrohttpd with GnuTLS can do:
 *
 *   tls_server_config:
 *     cert_file: server.crt
 *     key_file: server.key
 *     client_ca_file: ca.crt                    # mTLS
 *     client_auth_type: RequireAndVerifyClientCert
 *     min_version: TLS13                        # default TLS12
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

static int load_pem(const char *cfg, const char *key, const char *p,
		    char **out, char *err, size_t errlen)
{
	int r = slurp(p, out);
	if (r < 0)
		fail(err, errlen, r, "%s: tls_server_config.%s: %s: %s", cfg,
		     key, p, strerror(-r));
	return r;
}

static const char *const auth_names[] = {
	[TSC_CLIENT_NONE] = "NoClientCert",
	[TSC_CLIENT_REQUEST] = "RequestClientCert",
	[TSC_CLIENT_REQUIRE_ANY] = "RequireAnyClientCert",
	[TSC_CLIENT_VERIFY_IF_GIVEN] = "VerifyClientCertIfGiven",
	[TSC_CLIENT_REQUIRE_VERIFY] = "RequireAndVerifyClientCert",
};

static int set_auth(struct tsc_webcfg *w, const char *cfg, const char *v,
		    char *err, size_t errlen)
{
	for (unsigned i = 0; i < sizeof(auth_names) / sizeof(*auth_names);
	     i++)
		if (!strcmp(v, auth_names[i])) {
			w->client_auth = i;
			return 0;
		}
	if (!strcmp(v, "RequireClientCert")) { /* the toolkit's old name */
		w->client_auth = TSC_CLIENT_REQUIRE_ANY;
		return 0;
	}
	return fail(err, errlen, -EINVAL, "%s: tls_server_config."
		    "client_auth_type: '%s' is not NoClientCert, "
		    "RequestClientCert, RequireAnyClientCert, "
		    "VerifyClientCertIfGiven or RequireAndVerifyClientCert",
		    cfg, v);
}

static int set_min_version(struct tsc_webcfg *w, const char *cfg,
			   const char *v, char *err, size_t errlen)
{
	if (strlen(v) == 5 && !strncmp(v, "TLS1", 4) && v[4] >= '0' &&
	    v[4] <= '3') {
		w->min_version = 10 + (unsigned)(v[4] - '0');
		return 0;
	}
	return fail(err, errlen, -EINVAL, "%s: tls_server_config.min_version: "
		    "'%s' is not TLS10, TLS11, TLS12 or TLS13", cfg, v);
}

/* The GnuTLS credentials and priorities of a parsed tls_server_config. */
static int build_tls(struct tsc_webcfg *w, const char *cfg, char *err,
		     size_t errlen)
{
	static const char *const prio[] = {
		"NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2:+VERS-TLS1.1:"
		"+VERS-TLS1.0",
		"NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2:+VERS-TLS1.1",
		"NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2",
		"NORMAL:-VERS-ALL:+VERS-TLS1.3",
	};
	gnutls_datum_t c = { (unsigned char *)w->cert_pem,
			     (unsigned)strlen(w->cert_pem) };
	gnutls_datum_t k = { (unsigned char *)w->key_pem,
			     (unsigned)strlen(w->key_pem) };
	int r = gnutls_certificate_allocate_credentials(&w->cred);

	if (r < 0)
		return fail(err, errlen, -ENOMEM, "%s: %s", cfg,
			    gnutls_strerror(r));
	r = gnutls_certificate_set_x509_key_mem(w->cred, &c, &k,
						GNUTLS_X509_FMT_PEM);
	if (r < 0)
		return fail(err, errlen, -EINVAL, "%s: tls_server_config: "
			    "cert_file and key_file: %s", cfg,
			    gnutls_strerror(r));
	r = gnutls_priority_init(&w->prio, prio[w->min_version - 10], NULL);
	if (r < 0)
		return fail(err, errlen, -EINVAL, "%s: min_version: %s", cfg,
			    gnutls_strerror(r));
	return 0;
}

static int load_ca(struct tsc_webcfg *w, const char *cfg, char *err,
		   size_t errlen)
{
	char *pem = NULL;
	int r = slurp(w->files[2], &pem);

	if (r < 0)
		return fail(err, errlen, r, "%s: tls_server_config."
			    "client_ca_file: %s: %s", cfg, w->files[2],
			    strerror(-r));
	gnutls_datum_t d = { (unsigned char *)pem, (unsigned)strlen(pem) };
	r = gnutls_certificate_set_x509_trust_mem(w->cred, &d,
						  GNUTLS_X509_FMT_PEM);
	free(pem);
	if (r <= 0)
		return fail(err, errlen, -EINVAL, "%s: tls_server_config."
			    "client_ca_file: %s: %s", cfg, w->files[2],
			    r < 0 ? gnutls_strerror(r) : "no certificate");
	w->nca = (unsigned)r;
	return 0;
}

/* What parse_tls accepts: the key names and their destinations. */
static const char *const tls_keys[] = {
	"cert_file", "key_file", "client_ca_file", "client_auth_type",
	"min_version",
};

static int tls_checks(struct tsc_webcfg *w, const char *cfg,
		      const char *const val[5], char *err, size_t errlen)
{
	int r = 0;

	if (!val[0] || !*val[0] || !val[1] || !*val[1])
		return fail(err, errlen, -EINVAL, "%s: tls_server_config "
			    "needs both cert_file and key_file", cfg);
	if (val[3])
		r = set_auth(w, cfg, val[3], err, errlen);
	if (!r && val[4])
		r = set_min_version(w, cfg, val[4], err, errlen);
	if (r)
		return r;
	bool verify = w->client_auth == TSC_CLIENT_VERIFY_IF_GIVEN ||
		      w->client_auth == TSC_CLIENT_REQUIRE_VERIFY;
	if (verify && (!val[2] || !*val[2]))
		return fail(err, errlen, -EINVAL, "%s: tls_server_config."
			    "client_auth_type %s needs client_ca_file", cfg,
			    auth_names[w->client_auth]);
	if (val[2] && w->client_auth == TSC_CLIENT_NONE)
		return fail(err, errlen, -EINVAL, "%s: tls_server_config."
			    "client_ca_file without a client_auth_type that "
			    "asks for client certificates", cfg);
	return 0;
}

static int parse_tls(struct tsc_webcfg *w, const char *cfg,
		     yaml_document_t *doc, yaml_node_t *m, char *err,
		     size_t errlen)
{
	const char *k, *val[5] = { NULL };
	yaml_node_t *v;
	int r;

	if (is_empty(m))
		return 0;
	if (m->type != YAML_MAPPING_NODE)
		return fail(err, errlen, -EINVAL, "%s: tls_server_config is "
			    "not a mapping", cfg);
	FOR_PAIRS(doc, m, k, v) {
		const char *s = scalar(doc, v);
		unsigned i = 0;
		if (!k)
			return fail(err, errlen, -EINVAL, "%s: "
				    "tls_server_config: a key is not a "
				    "string", cfg);
		while (i < 5 && strcmp(k, tls_keys[i]))
			i++;
		if (i == 5)
			return fail(err, errlen, -EINVAL, "%s: "
				    "tls_server_config.%s: not supported "
				    "(cert_file, key_file, client_ca_file, "
				    "client_auth_type and min_version are)",
				    cfg, k);
		if (!s)
			return fail(err, errlen, -EINVAL, "%s: "
				    "tls_server_config.%s: not a string",
				    cfg, k);
		val[i] = s;
	}
	r = tls_checks(w, cfg, val, err, errlen);
	for (unsigned i = 0; !r && i < 3; i++)
		if (val[i] && !(w->files[i] = resolve(cfg, val[i])))
			r = fail(err, errlen, -ENOMEM, "%s", strerror(ENOMEM));
	if (!r)
		r = load_pem(cfg, "cert_file", w->files[0], &w->cert_pem, err,
			     errlen);
	if (!r)
		r = load_pem(cfg, "key_file", w->files[1], &w->key_pem, err,
			     errlen);
	if (!r)
		r = build_tls(w, cfg, err, errlen);
	if (!r && w->files[2])
		r = load_ca(w, cfg, err, errlen);
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
	w->min_version = 12; /* the toolkit's default */
	w->refs = 1;
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
	char tls[160] = "plain HTTP";

	if (w->tls)
		snprintf(tls, sizeof(tls), "TLS1.%u or later, client "
			 "certificates: %s (%u CA certificate%s)",
			 w->min_version - 10, auth_names[w->client_auth],
			 w->nca, w->nca == 1 ? "" : "s");
	snprintf(out, outlen, "%s, %u basic auth user%s", tls, w->nusers,
		 w->nusers == 1 ? "" : "s");
}

int tsc_webcfg_session(struct tsc_webcfg *w, gnutls_session_t s)
{
	static const gnutls_certificate_request_t req[] = {
		[TSC_CLIENT_NONE] = GNUTLS_CERT_IGNORE,
		[TSC_CLIENT_REQUEST] = GNUTLS_CERT_REQUEST,
		[TSC_CLIENT_REQUIRE_ANY] = GNUTLS_CERT_REQUIRE,
		[TSC_CLIENT_VERIFY_IF_GIVEN] = GNUTLS_CERT_REQUEST,
		[TSC_CLIENT_REQUIRE_VERIFY] = GNUTLS_CERT_REQUIRE,
	};
	int r = gnutls_credentials_set(s, GNUTLS_CRD_CERTIFICATE, w->cred);

	if (!r)
		r = gnutls_priority_set(s, w->prio);
	if (r < 0)
		return r;
	gnutls_certificate_server_set_request(s, req[w->client_auth]);
	if (w->client_auth == TSC_CLIENT_VERIFY_IF_GIVEN ||
	    w->client_auth == TSC_CLIENT_REQUIRE_VERIFY)
		gnutls_session_set_verify_cert(s, NULL, 0);
	return 0;
}

bool tsc_webcfg_peer_ok(const struct tsc_webcfg *w, gnutls_session_t s)
{
	unsigned n = 0, status = 0;
	bool given = gnutls_certificate_get_peers(s, &n) && n > 0;

	switch (w->client_auth) {
	case TSC_CLIENT_NONE:
	case TSC_CLIENT_REQUEST:
		return true;
	case TSC_CLIENT_REQUIRE_ANY:
		return given;
	case TSC_CLIENT_VERIFY_IF_GIVEN:
		if (!given)
			return true;
		break;
	case TSC_CLIENT_REQUIRE_VERIFY:
		if (!given)
			return false;
		break;
	}
	return gnutls_certificate_verify_peers2(s, &status) == 0 && !status;
}

/* FNV-1a over what identifies a version of a file. */
static uint64_t mix(uint64_t h, const void *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		h = (h ^ ((const unsigned char *)p)[i]) * 1099511628211ull;
	return h;
}

uint64_t tsc_webcfg_stamp(const char *path, const struct tsc_webcfg *w)
{
	uint64_t h = 14695981039346656037ull;
	const char *f[4] = { path, w ? w->files[0] : NULL,
			     w ? w->files[1] : NULL, w ? w->files[2] : NULL };

	for (int i = 0; i < 4; i++) {
		struct stat st;
		long long v[5] = { 0 };
		if (!f[i])
			continue;
		if (stat(f[i], &st) == 0) {
			v[0] = (long long)st.st_dev;
			v[1] = (long long)st.st_ino;
			v[2] = (long long)st.st_size;
			v[3] = (long long)st.st_mtim.tv_sec;
			v[4] = st.st_mtim.tv_nsec;
		} else {
			v[0] = -errno;
		}
		h = mix(h, v, sizeof(v));
	}
	return h;
}

struct tsc_webcfg *tsc_webcfg_ref(struct tsc_webcfg *w)
{
	if (w)
		__atomic_add_fetch(&w->refs, 1, __ATOMIC_RELAXED);
	return w;
}

void tsc_webcfg_free(struct tsc_webcfg *w)
{
	if (!w || __atomic_sub_fetch(&w->refs, 1, __ATOMIC_ACQ_REL))
		return;
	if (w->cred)
		gnutls_certificate_free_credentials(w->cred);
	if (w->prio)
		gnutls_priority_deinit(w->prio);
	for (int i = 0; i < 3; i++)
		free(w->files[i]);
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
