/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Up-front checks for the places where registering "works" but no event can
 * ever arrive (foreign network namespace) or the kernel refuses (foreign pid
 * or user namespace, no CAP_NET_ADMIN). pid 1 may not be an init system and
 * its ns links may be unreadable, so we compare against kthreadd (pid 2),
 * which always lives in the initial namespaces, and only when /proc/2 really
 * is kthreadd. When we cannot tell, we say nothing: the self-test catches it.
 */
#include <linux/capability.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "receive/listener_int.h"

static int same_ns(const char *name)
{
	char a[64], b[64];
	struct stat sa, sb;
	snprintf(a, sizeof(a), "/proc/self/ns/%s", name);
	snprintf(b, sizeof(b), "/proc/2/ns/%s", name);
	if (stat(a, &sa) < 0 || stat(b, &sb) < 0)
		return -1; /* unknown */
	return sa.st_ino == sb.st_ino && sa.st_dev == sb.st_dev;
}

static int kthreadd_visible(void)
{
	char comm[32];
	if (cgsi_read_file("/proc/2/comm", comm, sizeof(comm)) < 0)
		return 0;
	return strcmp(comm, "kthreadd\n") == 0;
}

/* NSpid lists one id per pid namespace level: one entry = initial ns. */
static int in_initial_pidns(void)
{
	char buf[4096];
	if (cgsi_read_file("/proc/self/status", buf, sizeof(buf)) < 0)
		return -1;
	char *p = strstr(buf, "\nNSpid:");
	if (!p)
		return -1;
	p += 7;
	int fields = 0;
	bool in = false;
	for (; *p && *p != '\n'; p++) {
		bool digit = *p >= '0' && *p <= '9';
		if (digit && !in)
			fields++;
		in = digit;
	}
	return fields == 1;
}

static int in_initial_userns(void)
{
	char buf[256];
	unsigned a, b, c;
	if (cgsi_read_file("/proc/self/uid_map", buf, sizeof(buf)) < 0)
		return -1;
	/* the initial namespace maps everything; a child may map nothing */
	if (sscanf(buf, "%u %u %u", &a, &b, &c) != 3)
		return 0;
	return a == 0 && b == 0 && c == 4294967295u;
}

int cgsi_check_namespaces(void)
{
	if (in_initial_pidns() == 0)
		return -CGS_ERR_PIDNS;
	if (in_initial_userns() == 0)
		return -CGS_ERR_PERM;
	if (kthreadd_visible()) {
		if (same_ns("pid") == 0)
			return -CGS_ERR_PIDNS;
		if (same_ns("user") == 0)
			return -CGS_ERR_PERM;
		if (same_ns("net") == 0)
			return -CGS_ERR_NETNS;
	}
	return 0;
}

int cgsi_have_net_admin(void)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
	struct __user_cap_data_struct d[2];
	if (syscall(SYS_capget, &h, d) < 0)
		return -1;
	return (d[CAP_NET_ADMIN / 32].effective >> (CAP_NET_ADMIN % 32)) & 1;
}
