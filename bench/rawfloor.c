/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rawfloor: the physical floor of a taskstats exit listener, without
 * libcgstats. One libnl generic netlink socket registered for TASKSTATS
 * exit events with the whole CPU mask (all possible CPUs), recvmmsg() 64
 * datagrams at a time into 4 KiB slots, a 20 ms sleep whenever a call
 * returns fewer than 64, no decode: only the netlink headers are walked to
 * count messages. On SIGTERM/SIGINT it drains what is queued and prints one
 * JSON object: messages, the kernel's exact drop counter (SO_MEMINFO
 * sk_drops), its own CPU.
 *
 * usage: rawfloor [--sleep-ms MS] [--rcvbuf BYTES]
 */
#include <errno.h>
#include <getopt.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <linux/taskstats.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>

#ifndef SO_MEMINFO
#define SO_MEMINFO 55
#endif

#define SLOTS 64
#define SLOT_SIZE 4096

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static unsigned long long sock_drops(int fd)
{
	uint32_t mem[SK_MEMINFO_VARS] = { 0 };
	socklen_t len = sizeof(mem);
	if (getsockopt(fd, SOL_SOCKET, SO_MEMINFO, mem, &len) < 0 ||
	    len <= SK_MEMINFO_DROPS * sizeof(uint32_t))
		return 0;
	return mem[SK_MEMINFO_DROPS];
}

static int possible_cpus(char *buf, size_t len)
{
	FILE *f = fopen("/sys/devices/system/cpu/possible", "r");
	if (!f)
		return -errno;
	if (!fgets(buf, (int)len, f)) {
		fclose(f);
		return -EIO;
	}
	fclose(f);
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

static int send_mask(struct nl_sock *sk, int family, int attr,
		     const char *cpus)
{
	struct nl_msg *m = nlmsg_alloc();
	if (!m)
		return -ENOMEM;
	if (!genlmsg_put(m, NL_AUTO_PORT, NL_AUTO_SEQ, family, 0, 0,
			 TASKSTATS_CMD_GET, TASKSTATS_VERSION) ||
	    nla_put_string(m, attr, cpus) < 0) {
		nlmsg_free(m);
		return -ENOMEM;
	}
	int r = nl_send_auto(sk, m);
	nlmsg_free(m);
	return r < 0 ? -EIO : 0;
}

/* messages in one datagram: only the netlink headers are looked at */
static unsigned count_msgs(const unsigned char *buf, int len, int family)
{
	unsigned n = 0;
	for (const struct nlmsghdr *h = (const void *)buf; NLMSG_OK(h, len);
	     h = NLMSG_NEXT(h, len))
		n += h->nlmsg_type == family;
	return n;
}

static unsigned long long drain(int fd, struct mmsghdr *msgs,
				unsigned char *bufs, int family, int *last)
{
	unsigned long long got = 0;
	int n = recvmmsg(fd, msgs, SLOTS, MSG_DONTWAIT, NULL);
	*last = n < 0 ? 0 : n;
	for (int i = 0; i < n; i++)
		got += count_msgs(bufs + (size_t)i * SLOT_SIZE,
				  (int)msgs[i].msg_len, family);
	return got;
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "sleep-ms", required_argument, NULL, 's' },
		{ "rcvbuf", required_argument, NULL, 'r' },
		{ NULL, 0, NULL, 0 },
	};
	long sleep_ms = 20;
	int rcvbuf = 16 << 20, opt;
	while ((opt = getopt_long(argc, argv, "", lopts, NULL)) != -1) {
		if (opt == 's')
			sleep_ms = atol(optarg);
		else if (opt == 'r')
			rcvbuf = atoi(optarg);
		else {
			fprintf(stderr, "usage: rawfloor [--sleep-ms MS] "
					"[--rcvbuf BYTES]\n");
			return 2;
		}
	}
	struct sigaction sa = { .sa_handler = on_signal };
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);

	char cpus[4096];
	struct nl_sock *sk = nl_socket_alloc();
	int family;
	if (!sk || possible_cpus(cpus, sizeof(cpus)) < 0 ||
	    genl_connect(sk) < 0 ||
	    (family = genl_ctrl_resolve(sk, TASKSTATS_GENL_NAME)) < 0) {
		fprintf(stderr, "rawfloor: no taskstats socket\n");
		return 1;
	}
	nl_socket_disable_seq_check(sk);
	int fd = nl_socket_get_fd(sk);
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf,
		       sizeof(rcvbuf)) < 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	if (send_mask(sk, family, TASKSTATS_CMD_ATTR_REGISTER_CPUMASK,
		      cpus) < 0) {
		fprintf(stderr, "rawfloor: register failed\n");
		return 1;
	}
	struct mmsghdr *msgs = calloc(SLOTS, sizeof(*msgs));
	struct iovec *iov = calloc(SLOTS, sizeof(*iov));
	unsigned char *bufs = malloc((size_t)SLOTS * SLOT_SIZE);
	if (!msgs || !iov || !bufs)
		return 1;
	for (int i = 0; i < SLOTS; i++) {
		iov[i].iov_base = bufs + (size_t)i * SLOT_SIZE;
		iov[i].iov_len = SLOT_SIZE;
		msgs[i].msg_hdr.msg_iov = &iov[i];
		msgs[i].msg_hdr.msg_iovlen = 1;
	}
	fprintf(stderr, "rawfloor: ready cpus=%s\n", cpus);

	/* (the registration's ack arrives as an NLMSG_ERROR datagram: not
	 * counted, its type is not the family's) */
	unsigned long long events = 0;
	struct timespec ts = { sleep_ms / 1000, (sleep_ms % 1000) * 1000000 };
	while (!stop) {
		int last;
		events += drain(fd, msgs, bufs, family, &last);
		if (last < SLOTS)
			nanosleep(&ts, NULL);
	}
	for (int last = SLOTS; last == SLOTS;)
		events += drain(fd, msgs, bufs, family, &last);

	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	printf("{\"events\":%llu,\"dropped\":%llu,\"user_s\":%.6f,"
	       "\"sys_s\":%.6f}\n",
	       events, sock_drops(fd),
	       ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6,
	       ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6);
	/* deregister, so a later socket on our port id inherits nothing */
	send_mask(sk, family, TASKSTATS_CMD_ATTR_DEREGISTER_CPUMASK, cpus);
	nl_socket_free(sk);
	return 0;
}
