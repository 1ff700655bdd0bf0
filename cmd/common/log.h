/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The collector's messages, every one through tsc_log() with a level
 * (syslog's numbers, what sd-daemon(3) prefixes carry): -q, -v and
 * --log-level choose which are printed. When stderr is the journal
 * (JOURNAL_STREAM="DEV:INO" names stderr's fstat(2) st_dev:st_ino, as
 * systemd sets it for StandardError=journal) each line starts with its
 * priority, "<3>" to "<7>", so journald files it at that priority.
 */
#ifndef TSC_LOG_H
#define TSC_LOG_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

enum tsc_log_level {
	TSC_LOG_ERROR = 3,   /* a failure: something is not done */
	TSC_LOG_WARNING = 4, /* done, but worse than asked, or lost data */
	TSC_LOG_INFO = 6,    /* what the collector does (the default) */
	TSC_LOG_DEBUG = 7,   /* per snapshot, per reload detail */
};

/* The most verbose level printed (default TSC_LOG_INFO). */
extern int tsc_log_max;

/* Whether a message at level would be printed: to skip costly formats. */
static inline bool tsc_log_on(int level)
{
	return level <= __atomic_load_n(&tsc_log_max, __ATOMIC_RELAXED);
}

/*
 * tsc_log() - print "[<N>]PROG: message" on stderr if level is on
 * @level: enum tsc_log_level
 * @fmt: printf format; the message ends with a newline (added if not);
 *       each of its lines gets the journal prefix
 *
 * One write(2) per message, so that threads' lines do not interleave.
 */
void tsc_log(int level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void tsc_vlog(int level, const char *fmt, va_list ap);
/* tsc_err() (usage.h) is tsc_log(TSC_LOG_ERROR, ...). */
#define tsc_warn(fmt, ...) tsc_log(TSC_LOG_WARNING, fmt, ##__VA_ARGS__)
#define tsc_info(fmt, ...) tsc_log(TSC_LOG_INFO, fmt, ##__VA_ARGS__)
#define tsc_debug(fmt, ...) tsc_log(TSC_LOG_DEBUG, fmt, ##__VA_ARGS__)

/*
 * tsc_log_format() - the line tsc_log() would print, into buf
 * (for writers that must not block: httplog.c). Returns its length, cut
 * to len - 1, or 0 when level is off.
 */
size_t tsc_log_format(int level, char *buf, size_t len, const char *fmt,
		      va_list ap);
/* The same for a message already formatted (msg, mlen bytes). */
size_t tsc_log_line(int level, char *buf, size_t len, const char *msg,
		    size_t mlen);

/* Whether stderr is the journal (JOURNAL_STREAM), decided at the first
 * message; tsc_log_redetect() decides again (tests, after dup2). */
bool tsc_log_journal(void);
void tsc_log_redetect(void);

/* "error", "warning", "info", "debug": the level, or -1. */
int tsc_log_level_parse(const char *name);
const char *tsc_log_level_name(int level);

#endif
