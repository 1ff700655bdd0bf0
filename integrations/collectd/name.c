/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Cgroup path <-> collectd plugin_instance (see name.h). */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include <cgstats.h>

#include "name.h"

static const char hex_upper[] = "0123456789ABCDEF";

static bool kept(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
	       (c >= '0' && c <= '9') || c == '.' || c == '-';
}

uint64_t tscd_path_hash(const char *path)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
		h ^= *p;
		h *= 0x100000001b3ull;
	}
	return h;
}

int tscd_instance_name(const char *path, char *buf, size_t len)
{
	size_t n = 0, cut = 0;
	bool over = false;

	if (!path || !buf || len < TSCD_NAME_MAX)
		return -EINVAL;
	if (!strcmp(path, CGS_UNKNOWN_CGROUP)) {
		memcpy(buf, TSCD_NAME_UNKNOWN, sizeof(TSCD_NAME_UNKNOWN));
		return (int)strlen(TSCD_NAME_UNKNOWN);
	}
	if (path[0] != '/')
		return -EINVAL;
	for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
		size_t w = (*p == '/' || kept(*p)) ? 1 : 3;
		if (n + w > TSCD_NAME_MAX - 1) {
			over = true;
			break;
		}
		if (n + w <= TSCD_NAME_PREFIX)
			cut = n + w;
		if (*p == '/') {
			buf[n] = '_';
		} else if (w == 1) {
			buf[n] = (char)*p;
		} else {
			buf[n] = '%';
			buf[n + 1] = hex_upper[*p >> 4];
			buf[n + 2] = hex_upper[*p & 15];
		}
		n += w;
	}
	if (!over) {
		buf[n] = '\0';
		return (int)n;
	}
	uint64_t h = tscd_path_hash(path);
	buf[cut] = '~';
	for (int i = 0; i < 16; i++)
		buf[cut + 1 + i] = "0123456789abcdef"[(h >> (60 - 4 * i)) & 15];
	buf[cut + 17] = '\0';
	return -EDOM;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1; /* lower case is never written: one name per path */
}

int tscd_instance_path(const char *name, char *buf, size_t len)
{
	size_t n = 0;

	if (!name || !buf || !len)
		return -EINVAL;
	if (!strcmp(name, TSCD_NAME_UNKNOWN)) {
		if (len < sizeof(CGS_UNKNOWN_CGROUP))
			return -ENAMETOOLONG;
		memcpy(buf, CGS_UNKNOWN_CGROUP, sizeof(CGS_UNKNOWN_CGROUP));
		return (int)strlen(CGS_UNKNOWN_CGROUP);
	}
	if (strchr(name, '~'))
		return -EDOM;
	if (name[0] != '_' || strlen(name) > TSCD_NAME_MAX - 1)
		return -EINVAL;
	for (const char *p = name; *p; p++) {
		unsigned char c;
		if (*p == '_') {
			c = '/';
		} else if (*p == '%') {
			int hi = hexval(p[1]), lo = hi < 0 ? -1 : hexval(p[2]);
			if (hi < 0 || lo < 0)
				return -EINVAL;
			c = (unsigned char)(hi << 4 | lo);
			if (!c || c == '/' || kept(c))
				return -EINVAL; /* never escaped so */
			p += 2;
		} else if (kept((unsigned char)*p)) {
			c = (unsigned char)*p;
		} else {
			return -EINVAL;
		}
		if (n + 1 >= len)
			return -ENAMETOOLONG;
		buf[n++] = (char)c;
	}
	buf[n] = '\0';
	return (int)n;
}
