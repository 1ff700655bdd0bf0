/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libmicrohttpd's error log, as the collector prints it: each message as
 * "taskstat-collect: --listen: ...", at most as ratelimit.h allows, with a
 * summary of what was left out, written without ever waiting for
 * stderr's reader (nbwrite.h). The messages come from the thread that
 * serves every connection; a slow-client attack makes thousands a second.
 */
#ifndef TSC_HTTPLOG_H
#define TSC_HTTPLOG_H

#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>

#include "nbwrite.h"
#include "ratelimit.h"

struct httplog {
	pthread_mutex_t lock;
	struct ratelimit rl;
	struct nbwrite out;
	uint64_t blocked; /* lines (and summaries) stderr had no room for */
};

/* On stderr. */
void httplog_init(struct httplog *hl);
void httplog_free(struct httplog *hl);
/* MHD_OPTION_EXTERNAL_LOGGER's callback; cls: the struct httplog. */
void httplog_cb(void *cls, const char *fmt, va_list ap);
/* Prints the summary if one is due (the watchdog's tick). */
void httplog_tick(struct httplog *hl, uint64_t now_ns);
/* Lines not printed: refused by the rate limit, and for want of room. */
void httplog_counts(struct httplog *hl, uint64_t *rate, uint64_t *blocked);

#endif
