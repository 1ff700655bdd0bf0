/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The decoder against the running kernel: a TASKSTATS_CMD_GET reply for
 * ourselves and a real exit event of a forked child, both decoded with
 * cgs_decode_msg. Skips (77) without taskstats or CAP_NET_ADMIN.
 *
 * With "--save DIR" it also writes the raw messages as DIR/v16_query.bin
 * and DIR/v16_exit.bin (the seeds in tests/decode/data were made so).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>

#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/netlink.h>

#include "cgstats.h"

#define SKIP 77

static const char *save_dir;
static int failures;

#define CHECK(c)                                                              \
	do {                                                                  \
		if (!(c)) {                                                   \
			fprintf(stderr, "%s:%d: check failed: %s\n",          \
				__FILE__, __LINE__, #c);                      \
			failures++;                                           \
		}                                                             \
	} while (0)

static void save(const char *name, const void *buf, size_t len)
{
	char path[4096];
	FILE *f;

	if (!save_dir)
		return;
	snprintf(path, sizeof(path), "%s/%s", save_dir, name);
	f = fopen(path, "wb");
	if (!f || fwrite(buf, 1, len, f) != len) {
		perror(path);
		failures++;
	}
	if (f)
		fclose(f);
	printf("saved %s (%zu bytes)\n", path, len);
}

static struct nl_sock *open_sock(int *family)
{
	struct nl_sock *sk = nl_socket_alloc();

	if (!sk)
		return NULL;
	if (genl_connect(sk) < 0) {
		nl_socket_free(sk);
		return NULL;
	}
	*family = genl_ctrl_resolve(sk, "TASKSTATS");
	if (*family <= 0) {
		nl_socket_free(sk);
		return NULL;
	}
	nl_socket_disable_seq_check(sk);
	nl_socket_set_buffer_size(sk, 1 << 20, 0);
	return sk;
}

static int send_cmd(struct nl_sock *sk, int family, int attr, const void *val,
		    size_t vlen)
{
	struct nl_msg *m = nlmsg_alloc();
	int r;

	if (!m)
		return -ENOMEM;
	if (!genlmsg_put(m, NL_AUTO_PORT, NL_AUTO_SEQ, family, 0, 0, 1, 1) ||
	    nla_put(m, attr, (int)vlen, val) < 0) {
		nlmsg_free(m);
		return -ENOMEM;
	}
	r = nl_send_auto(sk, m);
	nlmsg_free(m);
	return r < 0 ? -EIO : 0;
}

/* Receive one datagram into buf; returns its length or -errno. */
static ssize_t recv_one(struct nl_sock *sk, void *buf, size_t len, int ms)
{
	struct pollfd pfd = { .fd = nl_socket_get_fd(sk), .events = POLLIN };
	ssize_t n;

	if (poll(&pfd, 1, ms) <= 0)
		return -ETIMEDOUT;
	n = recv(pfd.fd, buf, len, 0);
	return n < 0 ? -errno : n;
}

/* errno of an NLMSG_ERROR message (0 for an ack), -1 if not an error */
static int nl_error_of(const unsigned char *buf, size_t n)
{
	uint16_t type;
	int32_t err;

	if (n < 20)
		return -1;
	memcpy(&type, buf + 4, 2);
	if (type != NLMSG_ERROR)
		return -1;
	memcpy(&err, buf + 16, 4);
	return -err;
}

static void check_maxmin(const struct cgs_record *r)
{
	for (int c = 0; c < CGS_DELAY__COUNT; c++) {
		const struct cgs_delay *d = &r->delay[c];

		if (d->max_ns && d->min_ns)
			CHECK(d->max_ns >= d->min_ns);
		if (d->count == 0)
			CHECK(d->max_ns == 0 && d->min_ns == 0);
		/* mean <= max <= total: fails if max were read from the
		 * wrong offset. (Not min <= mean: cpu_count also counts
		 * arrivals that never waited, which min ignores.) */
		if (d->count && d->total_ns) {
			CHECK(d->max_ns >= d->total_ns / d->count);
			CHECK(d->max_ns <= d->total_ns);
			CHECK(d->min_ns <= d->max_ns);
		}
	}
}

static void spin(void)
{
	for (;;)
		;
}

static void spin_and_wait(void)
{
	pid_t hogs[3];
	struct timespec ts = { 0, 200000 };

	for (int i = 0; i < 3; i++) {
		hogs[i] = fork();
		if (hogs[i] == 0)
			spin();
	}
	for (int i = 0; i < 200; i++) {
		for (volatile unsigned long j = 0; j < 20000ul * (i % 7); j++)
			;
		nanosleep(&ts, NULL);
	}
	for (int i = 0; i < 3; i++) {
		if (hogs[i] > 0) {
			kill(hogs[i], SIGKILL);
			waitpid(hogs[i], NULL, 0);
		}
	}
}

static void *thread_fn(void *arg)
{
	for (volatile unsigned long i = 0; i < 2000000; i++)
		;
	return arg;
}

static int test_query(void)
{
	static unsigned char buf[65536];
	CGS_OPTS(cgs_decode_stats, st);
	CGS_OPTS(cgs_record, task);
	CGS_OPTS(cgs_record, group);
	struct nl_sock *sk;
	uint32_t pid = (uint32_t)getpid();
	int family, r;
	ssize_t n;

	sk = open_sock(&family);
	if (!sk) {
		fprintf(stderr, "no TASKSTATS family: skip\n");
		return SKIP;
	}
	/* wait for a CPU many times, each wait of a different length, so
	 * that max > min when both are read from the right offsets */
	spin_and_wait();
	if (send_cmd(sk, family, 1 /* CMD_ATTR_PID */, &pid, sizeof(pid)))
		return SKIP;
	n = recv_one(sk, buf, sizeof(buf), 2000);
	nl_socket_free(sk);
	if (n < 0) {
		fprintf(stderr, "query: %s\n", strerror((int)-n));
		return n == -EPERM ? SKIP : 1;
	}
	if (nl_error_of(buf, (size_t)n) == EPERM) {
		fprintf(stderr, "query: EPERM (no CAP_NET_ADMIN): skip\n");
		return SKIP;
	}
	save("v16_query.bin", buf, (size_t)n);

	r = cgs_decode_msg(buf, (size_t)n, 0, &task, &group, &st);
	printf("query reply %zd bytes: rc %d version %u layout %u payload %u "
	       "pid %u tgid %u comm '%s' cpu count %llu total %llu max %llu "
	       "min %llu\n",
	       n, r, task.version, task.layout, task.payload_len, task.pid,
	       task.tgid, task.comm,
	       (unsigned long long)task.delay[CGS_DELAY_CPU].count,
	       (unsigned long long)task.delay[CGS_DELAY_CPU].total_ns,
	       (unsigned long long)task.delay[CGS_DELAY_CPU].max_ns,
	       (unsigned long long)task.delay[CGS_DELAY_CPU].min_ns);
	CHECK(r == 1);
	CHECK(task.kind == CGS_KIND_THREAD);
	CHECK(task.pid == pid);
	CHECK(task.tgid == pid);
	CHECK(task.ppid == (uint32_t)getppid());
	CHECK(task.uid == (uint32_t)getuid());
	CHECK(strcmp(task.comm, "test_decode_ker") == 0);
	CHECK(task.btime_s > 1600000000ull &&
	      task.btime_s <= (uint64_t)time(NULL));
	CHECK(task.cpu_run_virtual_ns > 0); /* sum_exec_runtime */
	CHECK(task.delay[CGS_DELAY_CPU].count > 1);
	CHECK(st.malformed == 0 && st.records == 1);
	if (task.version >= 15)
		CHECK(task.fields & CGS_HAS_DELAY_MAXMIN);
	if (task.version == 16) {
		CHECK(task.payload_len == 560);
		CHECK(task.layout == 16);
		CHECK(task.unknown_bytes == 0);
		/* the longest wait is >= the shortest only if max and min
		 * are read in that order (equal when the kernel recorded a
		 * single non-zero wait, as it sometimes does) */
		check_maxmin(&task);
		CHECK(task.delay[CGS_DELAY_CPU].max_ns >=
		      task.delay[CGS_DELAY_CPU].min_ns);
	} else {
		printf("kernel sends version %u, not 16: layout checks only "
		       "partly apply\n", task.version);
	}
	return 0;
}

static int test_exit_event(void)
{
	static unsigned char buf[65536];
	CGS_OPTS(cgs_decode_stats, st);
	CGS_OPTS(cgs_record, task);
	CGS_OPTS(cgs_record, group);
	struct nl_sock *sk;
	const char *mask = "0-1";
	char possible[64] = "";
	int family, r, found = 0, status, status2;
	FILE *f;
	pid_t child, child2;

	f = fopen("/sys/devices/system/cpu/possible", "r");
	if (f) {
		if (fgets(possible, sizeof(possible), f))
			possible[strcspn(possible, "\n")] = '\0';
		fclose(f);
	}
	if (possible[0])
		mask = possible;
	sk = open_sock(&family);
	if (!sk)
		return SKIP;
	nl_socket_set_buffer_size(sk, 8 << 20, 0);
	if (send_cmd(sk, family, 3 /* REGISTER_CPUMASK */, mask,
		     strlen(mask) + 1)) {
		nl_socket_free(sk);
		return SKIP;
	}
	child = fork();
	if (child == 0) {
		prctl(PR_SET_NAME, "cgs-exit-probe");
		for (volatile unsigned long i = 0; i < 5000000; i++)
			;
		_exit(3);
	}
	waitpid(child, &status, 0);
	/* a multi-threaded one: its last thread's message carries AGGR_TGID */
	child2 = fork();
	if (child2 == 0) {
		pthread_t t;

		prctl(PR_SET_NAME, "cgs-exit-mt");
		if (pthread_create(&t, NULL, thread_fn, NULL) == 0)
			pthread_join(t, NULL);
		thread_fn(NULL);
		_exit(0);
	}
	waitpid(child2, &status2, 0);

	for (int i = 0; i < 2000 && found < 2; i++) {
		ssize_t n = recv_one(sk, buf, sizeof(buf), 2000);

		if (n == -EPERM) {
			fprintf(stderr, "register: EPERM: skip\n");
			nl_socket_free(sk);
			return SKIP;
		}
		if (n < 0)
			break;
		r = cgs_decode_msg(buf, (size_t)n, 0, &task, &group, &st);
		if (r == -ENOMSG) {
			int e = nl_error_of(buf, (size_t)n);

			if (e == EPERM) {
				fprintf(stderr, "register: EPERM: skip\n");
				nl_socket_free(sk);
				return SKIP;
			}
			/* the kernel refuses listeners outside the initial
			 * pid namespace (a container) with EINVAL */
			if (e == EINVAL) {
				fprintf(stderr, "register: EINVAL (not in the "
					"initial pid namespace): skip\n");
				nl_socket_free(sk);
				return SKIP;
			}
			CHECK(e == 0); /* the ack of the registration */
			continue;
		}
		CHECK(r > 0);
		if (r <= 0)
			continue;
		if (task.pid == (uint32_t)child) {
			found++;
			printf("exit event %zd bytes: rc %d kind %d version %u "
			       "pid %u tgid %u comm '%s' status 0x%x flag "
			       "0x%x\n", n, r, task.kind, task.version,
			       task.pid, task.tgid, task.comm,
			       task.exit_status, task.flag);
			save("v16_exit.bin", buf, (size_t)n);
			CHECK(r == 1);
			CHECK(task.kind == CGS_KIND_PROCESS);
			CHECK(task.flag & CGS_AC_AGROUP);
			CHECK(task.tgid == (uint32_t)child);
			CHECK(task.ppid == (uint32_t)getpid());
			CHECK(strcmp(task.comm, "cgs-exit-probe") == 0);
			CHECK(WIFEXITED(task.exit_status) &&
			      WEXITSTATUS(task.exit_status) == 3);
			CHECK(task.exit_status == (uint32_t)status);
			if (task.version >= 15)
				check_maxmin(&task);
		} else if (task.tgid == (uint32_t)child2) {
			printf("exit event %zd bytes: rc %d kind %d pid %u "
			       "tgid %u comm '%s' flag 0x%x\n", n, r,
			       task.kind, task.pid, task.tgid, task.comm,
			       task.flag);
			if (!(r & 2)) {
				CHECK(task.kind == CGS_KIND_THREAD);
				CHECK(task.pid != (uint32_t)child2 ||
				      !(task.flag & CGS_AC_AGROUP));
				continue;
			}
			found++;
			printf("  tgid record: version %u layout %u payload %u "
			       "tgid %u utime %llu etime %llu\n",
			       group.version, group.layout, group.payload_len,
			       group.tgid, (unsigned long long)group.utime_us,
			       (unsigned long long)group.etime_us);
			save("v16_exit_tgid.bin", buf, (size_t)n);
			CHECK(r == 3);
			CHECK(task.kind == CGS_KIND_PROCESS);
			CHECK(task.flag & CGS_AC_AGROUP);
			CHECK(group.kind == CGS_KIND_TGID);
			CHECK(group.tgid == (uint32_t)child2);
			CHECK(group.pid == 0);
			CHECK(group.comm[0] == '\0');
			CHECK(group.delay[CGS_DELAY_CPU].count >=
			      task.delay[CGS_DELAY_CPU].count);
		}
	}
	send_cmd(sk, family, 4 /* DEREGISTER_CPUMASK */, mask,
		 strlen(mask) + 1);
	nl_socket_free(sk);
	CHECK(found == 2);
	CHECK(st.malformed == 0);
	return 0;
}

int main(int argc, char **argv)
{
	int r;

	if (argc == 3 && strcmp(argv[1], "--save") == 0)
		save_dir = argv[2];
	r = test_query();
	if (r == SKIP)
		return SKIP;
	if (r == 0) {
		r = test_exit_event();
		if (r == SKIP)
			printf("exit event part skipped (see above why)\n");
	}
	printf("%s (%d failed checks)\n", failures ? "FAIL" : "PASS",
	       failures);
	return failures || (r != 0 && r != SKIP) ? 1 : 0;
}
