/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What a record carries: delay classes by the struct version. */
#include "query.h"

unsigned tsq_delay_classes(void)
{
	unsigned n = cgs_delay_classes();

	return n < CGS_DELAY_SLOTS ? n : CGS_DELAY_SLOTS;
}

bool tsq_delay_carried(const struct cgs_record *r, unsigned c)
{
	/* the field group that brought each class, enum cgs_delay_class */
	static const uint32_t group[] = {
		CGS_HAS_DELAY, CGS_HAS_DELAY, CGS_HAS_DELAY,
		CGS_HAS_FREEPAGES, CGS_HAS_THRASHING, CGS_HAS_COMPACT,
		CGS_HAS_WPCOPY, CGS_HAS_IRQ,
	};

	if (c < sizeof(group) / sizeof(group[0]))
		return r->fields & group[c];
	/* a class newer than this program: shown once it counted */
	return c < CGS_DELAY_SLOTS && r->delay[c].count;
}
