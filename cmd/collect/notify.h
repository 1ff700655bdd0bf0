/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The service manager's notification protocol (sd_notify(3), written out:
 * a datagram of "KEY=value" lines to $NOTIFY_SOCKET), so that a
 * Type=notify unit is "started" only once exit events are known to arrive,
 * and WatchdogSec= restarts a collector whose main loop stopped.
 */
#ifndef TSC_NOTIFY_H
#define TSC_NOTIFY_H

#include <stdint.h>

struct tsc_notify {
	int fd;              /* connected datagram socket, -1: not asked */
	uint64_t watchdog_ns; /* WATCHDOG_USEC for this process, 0: none */
	uint64_t next_ping_ns; /* monotonic time of the next WATCHDOG=1 */
	uint64_t failed;     /* messages the manager did not take */
};

/*
 * Read NOTIFY_SOCKET, WATCHDOG_USEC and WATCHDOG_PID (then unset them, so
 * that no child sends in our name) and connect to the socket. Run before
 * privileges are dropped: the socket stays usable whatever the new user
 * may open. Without NOTIFY_SOCKET, n->fd is -1 and every call below does
 * nothing. Returns 0, or -errno when the socket named cannot be used
 * (then n->fd is -1 too; the caller says so and runs on).
 */
int tsc_notify_open(struct tsc_notify *n);

/* Send one message ("READY=1\nSTATUS=..."); errors are counted only. */
void tsc_notify_send(struct tsc_notify *n, const char *msg);

/* WATCHDOG=1 if half the watchdog period has passed since the last one;
 * now is CLOCK_MONOTONIC. */
void tsc_notify_watchdog(struct tsc_notify *n, uint64_t now_ns);

/* The monotonic time by which tsc_notify_watchdog() must run again,
 * UINT64_MAX without a watchdog. */
uint64_t tsc_notify_deadline(const struct tsc_notify *n);

void tsc_notify_close(struct tsc_notify *n);

#endif
