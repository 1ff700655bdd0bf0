/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>
#include <stdlib.h>

#include "attribute/deaths.h"
#include "util/common.h"

#define PID_MAX_LIMIT (4u * 1024 * 1024)

int cgsi_deaths_init(struct cgsi_deaths *d, const char *proc_root,
		     uint32_t max_slots)
{
	char fn[512], buf[32];
	unsigned long pid_max = PID_MAX_LIMIT;
	snprintf(fn, sizeof(fn), "%s/sys/kernel/pid_max", proc_root);
	if (cgsi_read_file(fn, buf, sizeof(buf)) > 0) {
		unsigned long v = strtoul(buf, NULL, 10);
		if (v >= 2 && v <= PID_MAX_LIMIT)
			pid_max = v;
	}
	uint32_t n = 1024;
	while (n < pid_max && n < max_slots)
		n <<= 1;
	d->slot = calloc(n, sizeof(*d->slot));
	if (!d->slot)
		return -ENOMEM;
	d->mask = n - 1;
	return 0;
}

void cgsi_deaths_fini(struct cgsi_deaths *d)
{
	free(d->slot);
	d->slot = NULL;
}
