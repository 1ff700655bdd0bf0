/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The columns and their units: what a person reads at a glance. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "top.h"

const struct top_metric_def top_metrics[M__COUNT] = {
	[M_EXITS] = { "EXITS/s", 'E', TU_COUNT, true, 0,
		      "task (thread and process) exits per second" },
	[M_PROCS] = { "PROCS/s", 'P', TU_COUNT, true, 6,
		      "process exits per second" },
	[M_CPU] = { "CPU/s", 'C', TU_SECONDS, true, 1,
		    "user+system CPU of the exited tasks, per second" },
	[M_CPUDLY] = { "CPUDLY/s", 'Y', TU_SECONDS, true, 3,
		       "time they waited for a CPU, per second" },
	[M_IODLY] = { "IODLY/s", 'B', TU_SECONDS, true, 7,
		      "time they waited for block I/O, per second" },
	[M_READ] = { "READ/s", 'R', TU_BYTES, true, 4,
		     "storage bytes they read, per second" },
	[M_WRITE] = { "WRITE/s", 'W', TU_BYTES, true, 5,
		      "storage bytes they wrote, per second" },
	[M_FAIL] = { "FAIL/s", 'F', TU_COUNT, true, 2,
		     "process exits with a non-zero code or a signal, per "
		     "second" },
	[M_OOM] = { "OOM/s", 'O', TU_COUNT, true, 8,
		    "OOM kills per second" },
	[M_TOTAL] = { "EXITS", 'T', TU_COUNT, false, 9,
		      "task exits since the collector started" },
	[M_MAXWAIT] = { "MAXWAIT", 'X', TU_SECONDS, false, 10,
			"worst wait: an exited task's longest delay",
			true },
};

static const char *const byte_units[] = { "B", "KiB", "MiB", "GiB", "TiB",
					  "PiB" };

/* One decimal below 10 (none on a whole number), else none: "1.2 s",
 * "12 ms", "3 B"; counts without the space ("1.2k"). */
static void num(char *out, size_t n, double v, const char *unit)
{
	/* a count's suffix (k, M, G) sticks to the number */
	const char *sp = *unit && !(unit[1] == 0 && strchr("kMG", unit[0]))
			 ? " " : "";
	if (v < 9.95 && fabs(v - round(v)) >= 0.05)
		snprintf(out, n, "%.1f%s%s", v, sp, unit);
	else
		snprintf(out, n, "%.0f%s%s", v, sp, unit);
	if (strlen(out) > 8) /* beyond the largest unit: "1e+13 h" */
		snprintf(out, n, "%.0e%s%s", v, sp, unit);
}

void top_human(char *out, size_t n, double v, enum top_unit u)
{
	if (!(v > 0) || !isfinite(v)) {
		snprintf(out, n, "0");
		return;
	}
	switch (u) {
	case TU_SECONDS:
		if (v < 0.5e-6)
			snprintf(out, n, "<1 us");
		else if (v < 1e-3)
			num(out, n, v * 1e6, "us");
		else if (v < 1)
			num(out, n, v * 1e3, "ms");
		else if (v < 1e5)
			num(out, n, v, "s");
		else
			num(out, n, v / 3600, "h");
		return;
	case TU_BYTES: {
		unsigned i = 0;
		while (v >= 1024 && i + 1 < sizeof(byte_units) /
						 sizeof(byte_units[0])) {
			v /= 1024;
			i++;
		}
		if (i == 0)
			v = round(v);
		num(out, n, v, byte_units[i]);
		return;
	}
	default:
		if (v < 0.05)
			snprintf(out, n, "<0.1");
		else if (v < 1000)
			num(out, n, v, "");
		else if (v < 1e6)
			num(out, n, v / 1e3, "k");
		else if (v < 1e9)
			num(out, n, v / 1e6, "M");
		else
			num(out, n, v / 1e9, "G");
		return;
	}
}
