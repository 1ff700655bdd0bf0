/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The listener's log: its callback, else warnings and errors on stderr. */
#include <stdarg.h>
#include <stdio.h>

#include "receive/listener_int.h"

void cgsi_log(struct cgs_listener *l, enum cgs_log_level lvl,
	      const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (l && l->log)
		l->log(lvl, msg, l->log_ctx);
	else if (lvl <= CGS_LOG_WARNING)
		fprintf(stderr, "libcgstats: %s\n", msg);
}
