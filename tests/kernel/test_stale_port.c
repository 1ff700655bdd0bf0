/*
 * The kernel keys exit listeners by netlink port id. A socket closed without
 * deregistering leaves its entry, and the next socket bound to that port id
 * receives the dead registration's events. A shard must not inherit them:
 * here a raw socket registers CPUs 0-1 on port P and dies without
 * deregistering; a listener for CPU 0 only is then bound to P and must see
 * nothing from CPU 1.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <linux/netlink.h>
#include <linux/taskstats.h>
#include <sched.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cgstats.h"
#include "support/nlmsg.h"
#include "support/skip.h"
#include "receive/listener_int.h"

#include <linux/capability.h>
#include <sys/syscall.h>

static int family_id(void)
{
	struct cgs_listener *l;
	struct cgs_listener_opts o = { .sz = sizeof(o), .cpus = "0" };
	if (cgs_listener_open(&l, &o) < 0)
		return -1;
	int f = l->family;
	cgs_listener_close(l);
	return f;
}

/* Register `cpus` from a raw socket bound to `port`, then close it without
 * deregistering: the stale entry stays in the kernel's per-CPU lists. */
static void leave_stale_registration(uint32_t port, int family,
				     const char *cpus)
{
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	assert_true(fd >= 0);
	struct sockaddr_nl a = { .nl_family = AF_NETLINK, .nl_pid = port };
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	struct mb req;
	_Static_assert(TASKSTATS_GENL_VERSION == 1,
		       "mb_init() writes genetlink version 1");
	mb_init(&req, (uint16_t)family, TASKSTATS_CMD_GET);
	mb_request(&req, NLM_F_REQUEST | NLM_F_ACK, 1);
	mb_put(&req, TASKSTATS_CMD_ATTR_REGISTER_CPUMASK, cpus,
	       strlen(cpus) + 1);
	mb_finish(&req);
	struct sockaddr_nl k = { .nl_family = AF_NETLINK };
	assert_true(sendto(fd, req.b, req.len, 0, (struct sockaddr *)&k,
			   sizeof(k)) > 0);
	char ack[4096];
	for (;;) { /* wait for our ack, skipping events that race it */
		ssize_t n = recv(fd, ack, sizeof(ack), 0);
		assert_true(n > 0);
		struct nlmsghdr *h = (struct nlmsghdr *)ack;
		if (h->nlmsg_type == NLMSG_ERROR) {
			struct nlmsgerr *e = NLMSG_DATA(h);
			assert_int_equal(e->error, 0);
			break;
		}
	}
	close(fd);
}

static pid_t exit_on_cpu(int cpu, int n)
{
	pid_t p = fork();
	if (p)
		return p;
	cpu_set_t cs;
	CPU_ZERO(&cs);
	CPU_SET(cpu, &cs);
	sched_setaffinity(0, sizeof(cs), &cs);
	for (int i = 0; i < n; i++) {
		pid_t c = fork();
		if (c == 0)
			_exit(0);
		waitpid(c, NULL, 0);
	}
	_exit(0);
}

struct cnt {
	uint32_t ppid_cpu0, ppid_cpu1;
	int cpu0, cpu1;
};

static int count(const struct cgs_exit *ev, void *arg)
{
	struct cnt *c = arg;
	if (!ev->task)
		return 0;
	if (ev->task->ppid == c->ppid_cpu0)
		c->cpu0++;
	if (ev->task->ppid == c->ppid_cpu1)
		c->cpu1++;
	return 0;
}

static void test_no_inherited_registration(void **state)
{
	(void)state;
	if (cgs_possible_cpus() < 2)
		cgt_skip("one CPU: a stale registration needs a second one");
	int fam = family_id();
	assert_true(fam > 0);
	uint32_t port = 0x3ff00000u | (uint32_t)(getpid() & 0xfffff);
	leave_stale_registration(port, fam, "0-1");

	struct cgs_listener *l;
	struct cgs_listener_opts o = { .sz = sizeof(o), .cpus = "0" };
	struct cgsi_listener_iopts io = { .shard0_port = port };
	assert_int_equal(cgsi_listener_open(&l, &o, &io), 0);

	struct cnt c = { 0 };
	pid_t a = exit_on_cpu(0, 20);
	pid_t b = exit_on_cpu(1, 20);
	c.ppid_cpu0 = (uint32_t)a;
	c.ppid_cpu1 = (uint32_t)b;
	waitpid(a, NULL, 0);
	waitpid(b, NULL, 0);
	usleep(100000);
	assert_true(cgs_listener_drain(l, 0, count, &c) >= 0);
	fprintf(stderr, "cpu0 exits seen %d/20, cpu1 exits seen %d (want 0)\n",
		c.cpu0, c.cpu1);
	assert_int_equal(c.cpu0, 20);
	assert_int_equal(c.cpu1, 0);
	cgs_listener_close(l);
}


/*
 * A listener that shed CAP_NET_ADMIN after registering cannot deregister
 * (EPERM); closing must still leave nothing behind for the next socket
 * bound to its port id.
 */
static void test_close_without_privilege(void **state)
{
	(void)state;
	uint32_t port = 0x3fe00000u | (uint32_t)(getpid() & 0xfffff);
	pid_t c = fork();
	if (c == 0) {
		/* everything in one process: our own exit would clean up */
		struct cgs_listener *l;
		struct cgs_listener_opts o = { .sz = sizeof(o), .cpus = "0" };
		struct cgsi_listener_iopts io = { .shard0_port = port };
		if (cgsi_listener_open(&l, &o, &io) < 0)
			_exit(2);
		struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
		struct __user_cap_data_struct d[2];
		memset(d, 0, sizeof(d));
		if (syscall(SYS_capset, &h, d) < 0)
			_exit(3);
		cgs_listener_close(l);
		int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC,
				NETLINK_GENERIC);
		struct sockaddr_nl a = { .nl_family = AF_NETLINK,
					 .nl_pid = port };
		if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0)
			_exit(4);
		pid_t p = exit_on_cpu(0, 5);
		waitpid(p, NULL, 0);
		usleep(100000);
		char buf[4096];
		ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		fprintf(stderr, "after an unprivileged close: recv on the old "
			"port id -> %zd (%s)\n", n,
			n < 0 ? strerror(errno) : "another socket got events");
		_exit(n < 0 && errno == EAGAIN ? 0 : 1);
	}
	int st;
	assert_int_equal(waitpid(c, &st, 0), c);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

int main(int argc, char **argv)
{
	cgt_require_taskstats();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_inherited_registration),
		cmocka_unit_test(test_close_without_privilege),
	};
	return CGT_RUN(argc, argv, tests);
}
