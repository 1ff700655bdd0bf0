/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sd_notify(3) without libsystemd: see notify.h. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "notify.h"

/* WATCHDOG_USEC applies to us only if WATCHDOG_PID is unset or ours. */
static uint64_t watchdog_of_env(void)
{
	const char *pid = getenv("WATCHDOG_PID");
	const char *us = getenv("WATCHDOG_USEC");
	char *end;
	unsigned long long v;

	if (!us || !*us)
		return 0;
	if (pid && *pid && strtol(pid, NULL, 10) != (long)getpid())
		return 0;
	errno = 0;
	v = strtoull(us, &end, 10);
	if (errno || *end || v == 0 || v > UINT64_MAX / 1000u)
		return 0;
	return (uint64_t)v * 1000u;
}

int tsc_notify_open(struct tsc_notify *n)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t len;
	socklen_t salen;
	int r = 0;

	n->fd = -1;
	n->failed = 0;
	n->next_ping_ns = 0;
	n->watchdog_ns = watchdog_of_env();
	if (!path || !*path)
		goto out;
	len = strlen(path);
	/* a path, or "@name" for the abstract namespace */
	if ((path[0] != '/' && path[0] != '@') || len >= sizeof(sa.sun_path)) {
		r = -EINVAL;
		goto out;
	}
	memcpy(sa.sun_path, path, len);
	if (path[0] == '@')
		sa.sun_path[0] = '\0';
	salen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len +
			    (path[0] == '/'));
	n->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (n->fd < 0) {
		r = -errno;
		goto out;
	}
	if (connect(n->fd, (struct sockaddr *)&sa, salen) < 0) {
		r = -errno;
		close(n->fd);
		n->fd = -1;
	}
out:
	unsetenv("NOTIFY_SOCKET");
	unsetenv("WATCHDOG_USEC");
	unsetenv("WATCHDOG_PID");
	if (n->fd < 0)
		n->watchdog_ns = 0;
	return r;
}

void tsc_notify_send(struct tsc_notify *n, const char *msg)
{
	if (n->fd < 0)
		return;
	if (send(n->fd, msg, strlen(msg), MSG_NOSIGNAL) < 0)
		n->failed++;
}

void tsc_notify_watchdog(struct tsc_notify *n, uint64_t now_ns)
{
	if (!n->watchdog_ns || now_ns < n->next_ping_ns)
		return;
	tsc_notify_send(n, "WATCHDOG=1");
	n->next_ping_ns = now_ns + n->watchdog_ns / 2;
}

uint64_t tsc_notify_deadline(const struct tsc_notify *n)
{
	return n->watchdog_ns ? n->next_ping_ns : UINT64_MAX;
}

void tsc_notify_close(struct tsc_notify *n)
{
	if (n->fd >= 0)
		close(n->fd);
	n->fd = -1;
}
