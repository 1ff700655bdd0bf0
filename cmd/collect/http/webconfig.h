/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* --web-config FILE: HTTPS and basic authentication for --listen, in the
 * format of the Prometheus exporter toolkit's web configuration (a YAML
 * subset: tls_server_config's cert_file, key_file, client_ca_file,
 * client_auth_type and min_version; basic_auth_users). */
#ifndef TSC_WEBCONFIG_H
#define TSC_WEBCONFIG_H

#include <gnutls/gnutls.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tsc_webuser {
	char *name;
	char *hash;     /* crypt(3) hash: bcrypt ($2y$, $2b$, $2a$) */
	char *verified; /* the last password that matched, or NULL */
};

/* client_auth_type, the exporter toolkit's (Go crypto/tls) names */
enum tsc_client_auth {
	TSC_CLIENT_NONE = 0,        /* NoClientCert (the default) */
	TSC_CLIENT_REQUEST,         /* RequestClientCert: asked, not checked */
	TSC_CLIENT_REQUIRE_ANY,     /* RequireAnyClientCert: any certificate */
	TSC_CLIENT_VERIFY_IF_GIVEN, /* VerifyClientCertIfGiven */
	TSC_CLIENT_REQUIRE_VERIFY,  /* RequireAndVerifyClientCert */
};

struct tsc_webcfg {
	bool tls;
	char *cert_pem, *key_pem; /* contents of cert_file, key_file */
	char *files[3];           /* cert_file, key_file, client_ca_file
				   * resolved (NULL: not given), for
				   * tsc_webcfg_stamp */
	enum tsc_client_auth client_auth;
	unsigned min_version;     /* min_version: 10..13 (TLS1.x); 12 */
	unsigned nca;             /* certificates in client_ca_file */
	/* built at load: the key pair, client_ca_file as trust list, the
	 * priority string of min_version; each TLS connection gets them
	 * (tsc_webcfg_session), so a reload applies to new connections */
	gnutls_certificate_credentials_t cred;
	gnutls_priority_t prio;
	unsigned nusers;
	struct tsc_webuser *users;
	pthread_mutex_t lock; /* verified */
	unsigned refs;        /* atomic: tsc_webcfg_ref/_free */
};

/**
 * tsc_webcfg_load() - read and check a web configuration file
 * @path: the file
 * @out: where to put the new configuration (free with tsc_webcfg_free)
 * @err: a message naming what is wrong, on failure
 * @errlen: its size
 *
 * Reads the certificate and key files too (relative paths are taken from
 * the directory of @path), so that it can run before privileges are
 * dropped. Unknown keys are refused, like the exporter toolkit does.
 *
 * Return: 0 or a negative errno.
 */
int tsc_webcfg_load(const char *path, struct tsc_webcfg **out, char *err,
		    size_t errlen);

/**
 * tsc_webcfg_check() - whether @user with @pass may be served
 * @w: the configuration
 * @user: the user name of a basic authentication header
 * @pass: its password
 *
 * Verifies the password against the user's bcrypt hash (crypt_r(3)),
 * once: a password that matched is remembered, as bcrypt costs tens of
 * milliseconds per check and scrapers send the same one every time.
 *
 * Return: true if the user exists and the password matches.
 */
bool tsc_webcfg_check(struct tsc_webcfg *w, const char *user,
		      const char *pass);

/* References: load gives one; each holder (the run, every TLS
 * connection served with it) takes its own; the last free frees. */
struct tsc_webcfg *tsc_webcfg_ref(struct tsc_webcfg *w);
void tsc_webcfg_free(struct tsc_webcfg *w);

/**
 * tsc_webcfg_session() - make a new TLS session use @w
 * @w: the configuration (TLS)
 * @s: a server session before its handshake
 *
 * Sets @w's certificate and key, its client CA as the trust list, the
 * client certificate request of client_auth_type (with verification by
 * GnuTLS during the handshake for the Verify types) and min_version's
 * priorities. Return: 0 or a GnuTLS error (negative).
 */
int tsc_webcfg_session(struct tsc_webcfg *w, gnutls_session_t s);

/**
 * tsc_webcfg_peer_ok() - whether the client of @s meets client_auth_type
 * @w: the configuration the session was set up with
 * @s: the session, after its handshake
 *
 * A second line of defence behind the handshake's own check: a client
 * certificate present where required, valid against client_ca_file
 * where a Verify type asks.
 */
bool tsc_webcfg_peer_ok(const struct tsc_webcfg *w, gnutls_session_t s);

/* A number that changes when the file at @path or one @w names is
 * replaced or modified (st_dev, st_ino, size, mtime; a missing file
 * counts as such): what the collector polls to reload. */
uint64_t tsc_webcfg_stamp(const char *path, const struct tsc_webcfg *w);

/* One line saying what w does ("TLS1.2+, client certificates:
 * RequireAndVerifyClientCert (1 CA), 2 basic auth users"), for --check
 * and the reload message. */
void tsc_webcfg_describe(const struct tsc_webcfg *w, char *out,
			 size_t outlen);

#endif
