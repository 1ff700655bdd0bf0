/*
 * The places where a listener cannot work must fail fast with their own
 * error: no CAP_NET_ADMIN, a foreign network namespace (where registering
 * "succeeds" and nothing ever arrives), a foreign pid or user namespace.
 * Each case runs in a forked child so the test process keeps its powers.
 * A case whose namespace the host refuses to create (a chroot, a
 * container, user.max_user_namespaces=0) skips, saying why: it is one
 * ctest of its own (CMake CASES).
 */
#include <dlfcn.h> /* dlvsym: _GNU_SOURCE is the build's */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <linux/capability.h>
#include <sched.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cgstats.h"
#include "support/clock.h"
#include "support/skip.h"

/* Child: open a listener, exit 0 iff it fails with `want` within 1 s. */
static void expect_open_error(int want, unsigned flags)
{
	double t0 = cgt_now_s();
	struct cgs_listener *l = NULL;
	struct cgs_listener_opts o = { .sz = sizeof(o), .flags = flags };
	int r = cgs_listener_open(&l, &o);
	double dt = cgt_now_s() - t0;
	if (r != want || dt > 1.0) {
		fprintf(stderr, "got %d (%s) after %.3fs, want %d\n", r,
			cgs_strerror(r), dt, want);
		_exit(1);
	}
	fprintf(stderr, "ok: %s (%.3fs)\n", cgs_strerror(r), dt);
	_exit(0);
}

/* Child: enter the namespaces of `flags`, or exit CGT_SKIP saying why
 * the host refuses them. */
static void enter(int flags, const char *what)
{
	if (unshare(flags) < 0) {
		cgt_skip_note("unshare(%s): %s (refused here: a chroot, a "
			      "container, sysctl limits)", what,
			      strerror(errno));
		_exit(CGT_SKIP);
	}
}

static int run_child(void (*fn)(void))
{
	pid_t p = fork();
	if (p == 0) {
		fn();
		_exit(2);
	}
	int st;
	waitpid(p, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static void drop_net_admin(void)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];
	if (syscall(SYS_capget, &h, d) < 0)
		_exit(3);
	for (int i = 0; i < 2; i++) {
		d[i].effective &= i == CAP_NET_ADMIN / 32
					  ? ~(1u << (CAP_NET_ADMIN % 32)) : ~0u;
		d[i].permitted = d[i].effective;
		d[i].inheritable = 0;
	}
	if (syscall(SYS_capset, &h, d) < 0)
		_exit(3);
	expect_open_error(-CGS_ERR_PERM, 0);
}

static void foreign_netns(void)
{
	enter(CLONE_NEWNET, "CLONE_NEWNET");
	expect_open_error(-CGS_ERR_NETNS, 0);
}

/* A program linked against 1.0 .. 1.2 (their symbol versions of
 * cgs_listener_open and cgs_strerror) gets the plain errno of then, with
 * the library's text for it; 1.3's cgs_strerror() calls it what it is. */
static void foreign_netns_1_0(void)
{
	enter(CLONE_NEWNET, "CLONE_NEWNET");
	int (*open_1_0)(struct cgs_listener **,
			const struct cgs_listener_opts *) =
		(int (*)(struct cgs_listener **,
			 const struct cgs_listener_opts *))
			dlvsym(RTLD_DEFAULT, "cgs_listener_open", "CGSTATS_1.0");
	const char *(*strerror_1_0)(int) = (const char *(*)(int))
		dlvsym(RTLD_DEFAULT, "cgs_strerror", "CGSTATS_1.0");
	if (!open_1_0 || !strerror_1_0)
		_exit(4);
	struct cgs_listener *l = NULL;
	struct cgs_listener_opts o = { .sz = sizeof(o) };
	int r = open_1_0(&l, &o);
	if (r != -ENETUNREACH ||
	    !strstr(strerror_1_0(r), "network namespace") ||
	    strcmp(cgs_strerror(r), strerror(ENETUNREACH))) {
		fprintf(stderr, "1.0: got %d (%s)\n", r, strerror_1_0(r));
		_exit(1);
	}
	_exit(0);
}

/* Without the up-front check, the self-test is what catches it. */
static void foreign_netns_selftest(void)
{
	enter(CLONE_NEWNET, "CLONE_NEWNET");
	struct cgs_listener *l = NULL;
	struct cgs_listener_opts o = { .sz = sizeof(o),
				       .flags = CGS_LISTEN_NO_NS_CHECK };
	int r = cgs_listener_open(&l, &o);
	if (r < 0) {
		/* kernels before 5.19 hide the family: also a clear error */
		_exit(r == -CGS_ERR_NO_TASKSTATS ? 0 : 1);
	}
	double t0 = cgt_now_s();
	r = cgs_listener_selftest(l, 500, NULL, NULL);
	double dt = cgt_now_s() - t0;
	cgs_listener_close(l);
	fprintf(stderr, "selftest in foreign netns: %d after %.3fs\n", r, dt);
	_exit(r == -ETIMEDOUT && dt < 1.0 ? 0 : 1);
}

static void foreign_pidns(void)
{
	enter(CLONE_NEWPID, "CLONE_NEWPID");
	pid_t p = fork(); /* the first child becomes pid 1 of the new ns */
	if (p == 0)
		expect_open_error(-CGS_ERR_PIDNS, 0);
	int st;
	waitpid(p, &st, 0);
	_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 1);
}

static void foreign_userns(void)
{
	enter(CLONE_NEWUSER, "CLONE_NEWUSER");
	expect_open_error(-CGS_ERR_PERM, 0);
}

/* Run fn in a child: it asserts by its exit code, or skips (CGT_SKIP,
 * having printed why). */
static void in_child(void (*fn)(void))
{
	int rc = run_child(fn);
	if (rc == CGT_SKIP)
		cgt_skip("its namespace cannot be made here (the line above)");
	assert_int_equal(rc, 0);
}

static void test_no_cap_net_admin(void **s) { (void)s; in_child(drop_net_admin); }
static void test_foreign_netns(void **s) { (void)s; in_child(foreign_netns); }
static void test_foreign_netns_1_0(void **s) { (void)s; in_child(foreign_netns_1_0); }
static void test_foreign_netns_selftest(void **s) { (void)s; in_child(foreign_netns_selftest); }
static void test_foreign_pidns(void **s) { (void)s; in_child(foreign_pidns); }
static void test_foreign_userns(void **s) { (void)s; in_child(foreign_userns); }

static void test_messages_distinct(void **s)
{
	(void)s;
	int codes[] = { CGS_ERR_NO_TASKSTATS, CGS_ERR_PERM, CGS_ERR_NETNS,
			CGS_ERR_PIDNS, CGS_ERR_CGROUP2, CGS_ERR_NO_KSRC };
	size_t n = sizeof(codes) / sizeof(codes[0]);
	assert_int_equal(n, CGS_ERRNO__END - CGS_ERRNO__START);
	for (size_t i = 0; i < n; i++) {
		/* the library's own range: no errno has its number */
		assert_true(codes[i] >= CGS_ERRNO__START &&
			    codes[i] < CGS_ERRNO__END);
		assert_string_not_equal(cgs_strerror(-codes[i]),
					strerror(codes[i]));
		for (size_t j = 0; j < i; j++) {
			assert_int_not_equal(codes[i], codes[j]);
			assert_string_not_equal(cgs_strerror(-codes[i]),
						cgs_strerror(-codes[j]));
		}
	}
	assert_non_null(strstr(cgs_strerror(-CGS_ERR_NETNS), "network namespace"));
	assert_non_null(strstr(cgs_strerror(-CGS_ERR_PERM), "CAP_NET_ADMIN"));
	/* a plain errno is described as the errno it is */
	int plain[] = { EOPNOTSUPP, EPERM, EXDEV, ENETUNREACH,
			EPROTONOSUPPORT, ETIMEDOUT, EBADMSG };
	for (size_t i = 0; i < sizeof(plain) / sizeof(plain[0]); i++)
		assert_string_equal(cgs_strerror(-plain[i]),
				    strerror(plain[i]));
}

int main(int argc, char **argv)
{
	cgt_require_taskstats();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_messages_distinct),
		cmocka_unit_test(test_no_cap_net_admin),
		cmocka_unit_test(test_foreign_netns),
		cmocka_unit_test(test_foreign_netns_1_0),
		cmocka_unit_test(test_foreign_netns_selftest),
		cmocka_unit_test(test_foreign_pidns),
		cmocka_unit_test(test_foreign_userns),
	};
	return CGT_RUN(argc, argv, tests);
}
