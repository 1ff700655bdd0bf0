/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* --web-config FILE: HTTPS and basic authentication for --listen, in the
 * format of the Prometheus exporter toolkit's web configuration (a YAML
 * subset: tls_server_config.cert_file/key_file, basic_auth_users). */
#ifndef TSC_WEBCONFIG_H
#define TSC_WEBCONFIG_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

struct tsc_webuser {
	char *name;
	char *hash;     /* crypt(3) hash: bcrypt ($2y$, $2b$, $2a$) */
	char *verified; /* the last password that matched, or NULL */
};

struct tsc_webcfg {
	bool tls;
	char *cert_pem, *key_pem; /* contents of cert_file, key_file */
	unsigned nusers;
	struct tsc_webuser *users;
	pthread_mutex_t lock; /* verified */
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

void tsc_webcfg_free(struct tsc_webcfg *w);

/* One line saying what w does ("TLS, 2 basic auth users"), for --check
 * and the reload message. */
void tsc_webcfg_describe(const struct tsc_webcfg *w, char *out,
			 size_t outlen);

#endif
