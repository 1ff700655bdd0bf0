/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* httplog.h: libmicrohttpd's messages, rate-limited, never blocking, at
 * warning level (log.h formats them: "<4>" on the journal). */
#include "httplog.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "collector.h"

#define LINE_MAX_BYTES 512 /* <= PIPE_BUF: a pipe takes it whole */
#define LEVEL TSC_LOG_WARNING /* a refused or broken connection */

void httplog_init(struct httplog *hl)
{
	memset(hl, 0, sizeof(*hl));
	pthread_mutex_init(&hl->lock, NULL);
	nbwrite_open(&hl->out, STDERR_FILENO);
}

void httplog_free(struct httplog *hl)
{
	nbwrite_close(&hl->out);
	pthread_mutex_destroy(&hl->lock);
}

/* Under hl->lock. */
static void put(struct httplog *hl, const char *line, size_t len)
{
	if (nbwrite(&hl->out, line, len) < 0)
		hl->blocked++;
}

/* Under hl->lock. */
static void summary(struct httplog *hl, uint64_t now_ns)
{
	char msg[LINE_MAX_BYTES], line[LINE_MAX_BYTES];
	uint64_t n;

	if (!ratelimit_summary(&hl->rl, now_ns, &n))
		return;
	int k = snprintf(msg, sizeof(msg), "--listen: %llu more "
			 "libmicrohttpd messages not printed (at most %u a "
			 "second; taskstat_collector_http_log_suppressed_total)",
			 (unsigned long long)n, RATELIMIT_PER_S);
	size_t len = k > 0 && (size_t)k < sizeof(msg) ?
		     tsc_log_line(LEVEL, line, sizeof(line), msg, (size_t)k) : 0;
	if (len)
		put(hl, line, len);
}

void httplog_cb(void *cls, const char *fmt, va_list ap)
{
	struct httplog *hl = cls;
	char msg[LINE_MAX_BYTES - 64], line[LINE_MAX_BYTES];
	uint64_t now = tsc_mono_ns();

	if (!tsc_log_on(LEVEL)) /* --log-level error: not counted either */
		return;
	pthread_mutex_lock(&hl->lock);
	summary(hl, now);
	if (!ratelimit_allow(&hl->rl, now)) {
		pthread_mutex_unlock(&hl->lock);
		return;
	}
	pthread_mutex_unlock(&hl->lock);
	/* formatted unlocked: only this thread's buffer */
	int k = snprintf(msg, sizeof(msg), "--listen: ");
	int m = vsnprintf(msg + k, sizeof(msg) - (size_t)k, fmt, ap);
	if (m < 0)
		return;
	size_t mlen = (size_t)k + (size_t)m;
	if (mlen >= sizeof(msg)) /* cut */
		mlen = sizeof(msg) - 1;
	while (mlen > (size_t)k && (msg[mlen - 1] == '\n' ||
				    msg[mlen - 1] == '\0'))
		mlen--;
	/* one line: the journal takes a line per message */
	for (size_t i = (size_t)k; i < mlen; i++)
		if (msg[i] == '\n')
			msg[i] = ' ';
	size_t len = tsc_log_line(LEVEL, line, sizeof(line), msg, mlen);
	if (!len)
		return;
	pthread_mutex_lock(&hl->lock);
	put(hl, line, len);
	pthread_mutex_unlock(&hl->lock);
}

void httplog_tick(struct httplog *hl, uint64_t now_ns)
{
	pthread_mutex_lock(&hl->lock);
	summary(hl, now_ns);
	pthread_mutex_unlock(&hl->lock);
}

void httplog_counts(struct httplog *hl, uint64_t *rate, uint64_t *blocked)
{
	pthread_mutex_lock(&hl->lock);
	*rate = hl->rl.refused;
	*blocked = hl->blocked;
	pthread_mutex_unlock(&hl->lock);
}
