/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <string.h>

#include "support/nlmsg.h"

void mb_init(struct mb *m, uint16_t type, uint8_t cmd)
{
	memset(m, 0, sizeof(*m));
	memcpy(m->b + 4, &type, 2);
	m->b[16] = cmd;
	m->b[17] = 1;
	m->len = 20;
}

void mb_request(struct mb *m, uint16_t flags, uint32_t seq)
{
	memcpy(m->b + 6, &flags, 2);
	memcpy(m->b + 8, &seq, 4);
}

size_t mb_put(struct mb *m, uint16_t type, const void *d, size_t n)
{
	size_t at = m->len;
	uint16_t l = (uint16_t)(4 + n);

	memcpy(m->b + at, &l, 2);
	memcpy(m->b + at + 2, &type, 2);
	if (n)
		memcpy(m->b + at + 4, d, n);
	m->len = at + ((4 + n + 3) & ~(size_t)3);
	return at;
}

size_t mb_nest(struct mb *m, uint16_t type)
{
	return mb_put(m, type, NULL, 0);
}

void mb_nest_end(struct mb *m, size_t at)
{
	uint16_t l = (uint16_t)(m->len - at);

	memcpy(m->b + at, &l, 2);
}

void mb_finish(struct mb *m)
{
	uint32_t l = (uint32_t)m->len;

	memcpy(m->b, &l, 4);
}

void mb_record(struct mb *m, uint16_t nest, uint16_t idt, uint32_t id,
	       const void *stats, size_t n)
{
	size_t at = mb_nest(m, nest);

	mb_put(m, idt, &id, 4);
	mb_put(m, 3, stats, n);
	mb_nest_end(m, at);
}
