/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* httplog.h: libmicrohttpd's messages, rate-limited, never blocking. */
#include "httplog.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "collector.h"

#define PREFIX_FMT "%s: --listen: "
#define LINE_MAX_BYTES 512 /* <= PIPE_BUF: a pipe takes it whole */

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
	char line[LINE_MAX_BYTES];
	uint64_t n;

	if (!ratelimit_summary(&hl->rl, now_ns, &n))
		return;
	int k = snprintf(line, sizeof(line), PREFIX_FMT "%llu more "
			 "libmicrohttpd messages not printed (at most %u a "
			 "second; taskstat_collector_http_log_suppressed_total)"
			 "\n", tsc_prog, (unsigned long long)n,
			 RATELIMIT_PER_S);
	if (k > 0 && (size_t)k < sizeof(line))
		put(hl, line, (size_t)k);
}

void httplog_cb(void *cls, const char *fmt, va_list ap)
{
	struct httplog *hl = cls;
	char line[LINE_MAX_BYTES];
	uint64_t now = tsc_mono_ns();

	pthread_mutex_lock(&hl->lock);
	summary(hl, now);
	if (!ratelimit_allow(&hl->rl, now)) {
		pthread_mutex_unlock(&hl->lock);
		return;
	}
	pthread_mutex_unlock(&hl->lock);
	/* formatted unlocked: only this thread's buffer */
	int k = snprintf(line, sizeof(line), PREFIX_FMT, tsc_prog);
	if (k < 0 || (size_t)k >= sizeof(line))
		return;
	int m = vsnprintf(line + k, sizeof(line) - (size_t)k, fmt, ap);
	if (m < 0)
		return;
	size_t len = (size_t)k + (size_t)m;
	if (len >= sizeof(line)) /* cut: keep room for the newline */
		len = sizeof(line) - 1;
	while (len > (size_t)k && (line[len - 1] == '\n' ||
				   line[len - 1] == '\0'))
		len--;
	line[len++] = '\n';
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
