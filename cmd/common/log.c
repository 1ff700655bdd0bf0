/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* log.h: leveled messages on stderr, journald priority prefixes. */
#include "log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "termwidth.h"
#include "usage.h"

#define LOG_LINE 1024 /* longer messages go through the heap */

int tsc_log_max = TSC_LOG_INFO;
static int journal = -1; /* -1: not decided yet */

static bool detect(void)
{
	const char *e = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;
	char end;

	if (!e || sscanf(e, "%llu:%llu%c", &dev, &ino, &end) != 2)
		return false;
	if (fstat(STDERR_FILENO, &st) < 0)
		return false;
	return (unsigned long long)st.st_dev == dev &&
	       (unsigned long long)st.st_ino == ino;
}

bool tsc_log_journal(void)
{
	int j = __atomic_load_n(&journal, __ATOMIC_RELAXED);
	if (j < 0) { /* racing threads decide the same */
		j = detect();
		__atomic_store_n(&journal, j, __ATOMIC_RELAXED);
	}
	return j;
}

void tsc_log_redetect(void)
{
	__atomic_store_n(&journal, -1, __ATOMIC_RELAXED);
}

static const char *const names[8] = {
	[TSC_LOG_ERROR] = "error", [TSC_LOG_WARNING] = "warning",
	[TSC_LOG_INFO] = "info", [TSC_LOG_DEBUG] = "debug",
};

int tsc_log_level_parse(const char *name)
{
	for (int i = 0; i < 8; i++)
		if (names[i] && !strcmp(names[i], name))
			return i;
	return -1;
}

const char *tsc_log_level_name(int level)
{
	return level >= 0 && level < 8 && names[level] ? names[level] : "?";
}

/* msg (len bytes) as lines "<N>PROG: ..." (no <N> off the journal) into
 * out (size outlen), each ending with '\n'. Returns the length written. */
/* One line of a message at out + *n: the prefix, then p[0..m) (cont: a
 * continuation, indented). false when out is full (*n: what it holds). */
static bool one_line(int level, bool j, const char *p, size_t m,
		     bool cont, char *out, size_t *n, size_t outlen)
{
	int k = j ? snprintf(out + *n, outlen - *n, "<%d>%s: %s", level,
			     tsc_prog, cont ? "  " : "")
		  : snprintf(out + *n, outlen - *n, "%s: %s", tsc_prog,
			     cont ? "  " : "");
	if (k < 0 || (size_t)k >= outlen - *n)
		return false;
	*n += (size_t)k;
	if (m > outlen - *n - 1)
		m = outlen - *n - 1;
	memcpy(out + *n, p, m);
	*n += m;
	out[(*n)++] = '\n';
	return *n < outlen - 1;
}

/* Columns a message line may take on a terminal (stderr one, not the
 * journal), so that it is not wrapped by it (issue 38); 0: no limit. */
static size_t tty_width(bool j)
{
	return !j && isatty(STDERR_FILENO) ? tsc_term_width(STDERR_FILENO)
					   : 0;
}

static size_t lines(int level, const char *msg, size_t len, char *out,
		    size_t outlen)
{
	bool j = tsc_log_journal();
	size_t n = 0, w = tty_width(j), lead = strlen(tsc_prog) + 2;
	const char *p = msg, *end = msg + len;

	while (len && end[-1] == '\n') { /* the last newline is ours */
		end--;
		len--;
	}
	do {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		bool cont = false;
		/* too long for the terminal: broken before a word */
		while (w > lead + 20 && lead + (cont ? 2 : 0) +
		       tsc_text_cols(p, (size_t)(le - p)) > w) {
			size_t room = w - lead - (cont ? 2 : 0), cut = 0;
			for (size_t i = 0, c = 0; p + i < le && c <= room; i++) {
				if (p[i] == ' ')
					cut = i;
				c += ((unsigned char)p[i] & 0xc0) != 0x80;
			}
			if (!cut)
				break;
			if (!one_line(level, j, p, cut, cont, out, &n, outlen))
				return n;
			p += cut + 1;
			cont = true;
		}
		if (!one_line(level, j, p, (size_t)(le - p), cont, out, &n,
			      outlen))
			return n;
		p = nl ? nl + 1 : end;
	} while (p < end);
	return n;
}

size_t tsc_log_line(int level, char *buf, size_t len, const char *msg,
		    size_t mlen)
{
	if (!tsc_log_on(level) || len < 2)
		return 0;
	return lines(level, msg, mlen, buf, len);
}

size_t tsc_log_format(int level, char *buf, size_t len, const char *fmt,
		      va_list ap)
{
	char msg[LOG_LINE];

	if (!tsc_log_on(level) || len < 2)
		return 0;
	int k = vsnprintf(msg, sizeof(msg), fmt, ap);
	if (k < 0)
		return 0;
	return lines(level, msg, (size_t)k < sizeof(msg) ? (size_t)k
							 : sizeof(msg) - 1,
		     buf, len);
}

void tsc_vlog(int level, const char *fmt, va_list ap)
{
	char msg[LOG_LINE], *big = NULL, *out;
	const char *m = msg;
	va_list aq;
	int saved = errno;

	if (!tsc_log_on(level))
		return;
	va_copy(aq, ap);
	int k = vsnprintf(msg, sizeof(msg), fmt, ap);
	if (k >= (int)sizeof(msg) && (big = malloc((size_t)k + 1))) {
		vsnprintf(big, (size_t)k + 1, fmt, aq);
		m = big;
	} else if (k >= (int)sizeof(msg)) {
		k = sizeof(msg) - 1;
	}
	va_end(aq);
	if (k < 0)
		goto out;
	/* each line grows by the prefix: "<N>" and the name */
	size_t nl = 1;
	for (const char *p = m; (p = strchr(p, '\n')); p++)
		nl++;
	size_t outlen = (size_t)k + nl * (strlen(tsc_prog) + 8) + 2;
	out = malloc(outlen);
	if (out) {
		size_t n = lines(level, m, (size_t)k, out, outlen);
		for (size_t w = 0; w < n;) {
			ssize_t r = write(STDERR_FILENO, out + w, n - w);
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0)
				break;
			w += (size_t)r;
		}
		free(out);
	} else { /* no memory: the message as it is */
		if (write(STDERR_FILENO, m, (size_t)k) < 0) {
			/* nowhere left to say it */
		}
	}
out:
	free(big);
	errno = saved;
}

void tsc_log(int level, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	tsc_vlog(level, fmt, ap);
	va_end(ap);
}
