/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * <cgstats/common.h>: what every part of <cgstats.h> shares: the
 * library version, CGS_OPTS() and CGS_SZ_HAS() for sz-prefixed structs,
 * the error codes, and the CGS_NO_TGID flag. The conventions are
 * described in <cgstats.h>'s overview.
 */
#ifndef CGSTATS_COMMON_H
#define CGSTATS_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h> /* memset, for CGS_OPTS() */

#ifdef __cplusplus
extern "C" {
#endif

#define CGS_VERSION_MAJOR 1
#define CGS_VERSION_MINOR 2
#define CGS_VERSION_PATCH 0

/**
 * CGS_OPTS() - Declare an sz-prefixed struct, zeroed, with its sz set.
 * @TYPE: Struct tag without the "struct" keyword, e.g. cgs_listener_opts.
 * @NAME: Name of the variable to declare.
 * @...: Designated initialisers of other members, if any.
 *
 * Declares `struct TYPE NAME`, zeroed first (as libbpf's LIBBPF_OPTS does,
 * so that the padding compilers copy from the initialiser is zero), with
 * .sz = sizeof(struct TYPE) and the given designated initialisers, e.g.
 *	CGS_OPTS(cgs_listener_opts, lo, .cpus = "0-3", .shards = 2);
 *	CGS_OPTS(cgs_record, rec);
 * Works for every sz-prefixed struct, options and results alike. It is a
 * declaration (a GNU statement expression: GCC or Clang), not an
 * expression.
 */
#define CGS_OPTS(TYPE, NAME, ...)                                            \
	struct TYPE NAME = ({                                                \
		memset(&NAME, 0, sizeof(struct TYPE));                       \
		(struct TYPE){ .sz = sizeof(struct TYPE), __VA_ARGS__ };     \
	})

/**
 * CGS_SZ_HAS() - Whether an sz-prefixed struct is large enough for a field.
 * @PTR: Pointer to the struct (one the library handed out or filled in).
 * @FIELD: Name of the member to test.
 *
 * Lets a program built against a newer header run on an older library:
 * test a field before reading it.
 *
 * Return: True when the struct at @PTR holds all of @FIELD, i.e. it came
 * from a library that knows the field.
 */
#define CGS_SZ_HAS(PTR, FIELD)                                               \
	(offsetof(__typeof__(*(PTR)), FIELD) + sizeof((PTR)->FIELD) <=       \
	 (PTR)->sz)

/**
 * cgs_version() - Version of the running library.
 *
 * The version the shared library was built as, which may differ from the
 * CGS_VERSION_* macros a program was compiled with.
 *
 * Context: Any thread.
 * Return: A version string such as "1.0.0", in static storage.
 */
const char *cgs_version(void);

/*
 * Errors with a project-specific meaning (returned negated):
 *  CGS_ERR_NO_TASKSTATS  the kernel has no TASKSTATS genetlink family
 *  CGS_ERR_PERM          no CAP_NET_ADMIN in the initial user namespace
 *                        (also returned when running in a child user ns)
 *  CGS_ERR_NETNS         not in the initial network namespace: the kernel
 *                        would accept the registration and never send a
 *                        single event
 *  CGS_ERR_PIDNS         not in the initial pid namespace (the kernel
 *                        refuses to register listeners there)
 *  CGS_ERR_CGROUP2       cgroupstats asked for a cgroup2 directory, which
 *                        the kernel does not support
 * cgs_strerror() explains these and falls back to strerror() otherwise.
 */
#define CGS_ERR_NO_TASKSTATS EPROTONOSUPPORT
#define CGS_ERR_PERM EPERM
#define CGS_ERR_NETNS ENETUNREACH
#define CGS_ERR_PIDNS EXDEV
#define CGS_ERR_CGROUP2 EOPNOTSUPP

/**
 * cgs_strerror() - Describe an error code returned by the library.
 * @err: An errno value, negative (as returned) or positive.
 *
 * Explains the CGS_ERR_* codes, ETIMEDOUT (see cgs_listener_selftest())
 * and EBADMSG in the library's terms; any other value gets strerror()'s
 * text. The CGS_ERR_* codes are plain errno values, so any EPERM, EXDEV,
 * ... gets the taskstats explanation.
 *
 * Context: Any thread.
 * Return: A message in static storage (strerror()'s for other codes);
 * not to be freed.
 */
const char *cgs_strerror(int err);

/*
 * CGS_NO_TGID: ignore AGGR_TGID (per-thread-group) records. One switch, the
 * same bit in the flags of cgs_decode_msg(), cgs_listener_opts and
 * cgs_rollup_opts: a listener with it never decodes them, a rollup with it
 * never accounts them.
 */
#define CGS_NO_TGID (1u << 0)

#ifdef __cplusplus
}
#endif

#endif /* CGSTATS_COMMON_H */
