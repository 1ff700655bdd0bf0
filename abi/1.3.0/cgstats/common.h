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

/*
 * CGS_EXPORT: on every function declared in these headers, so that the
 * library (built with hidden visibility) exports what its headers declare
 * and nothing else; lib/libcgstats.map then gives each its symbol version.
 */
#ifndef CGS_EXPORT
#define CGS_EXPORT __attribute__((visibility("default")))
#endif

#define CGS_VERSION_MAJOR 1
#define CGS_VERSION_MINOR 3
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
CGS_EXPORT const char *cgs_version(void);

/*
 * Errors of the library's own, in a range above every errno (as libbpf's
 * LIBBPF_ERRNO__START), returned negated as errnos are: a plain errno
 * always has its plain meaning, and cgs_strerror() says exactly which of
 * these it got. Since 1.3; before, each was a plain errno of a library
 * meaning (in parentheses), which programs linked against 1.0 .. 1.2 still
 * get (their symbol versions of the functions that return them).
 *  CGS_ERR_NO_TASKSTATS  the kernel has no TASKSTATS genetlink family
 *                        (EPROTONOSUPPORT)
 *  CGS_ERR_PERM          no CAP_NET_ADMIN in the initial user namespace
 *                        (also returned when running in a child user ns,
 *                        and when the kernel refuses a registration)
 *                        (EPERM)
 *  CGS_ERR_NETNS         not in the initial network namespace: the kernel
 *                        would accept the registration and never send a
 *                        single event (ENETUNREACH)
 *  CGS_ERR_PIDNS         not in the initial pid namespace (the kernel
 *                        refuses to register listeners there) (EXDEV)
 *  CGS_ERR_CGROUP2       cgroupstats asked for a cgroup2 directory, which
 *                        the kernel does not support (EOPNOTSUPP)
 *  CGS_ERR_NO_KSRC       (1.3) the rollup has no kernel source, which the
 *                        call needs (cgs_rollup_set_identity())
 */
#define CGS_ERRNO__START 4000
#define CGS_ERR_NO_TASKSTATS (CGS_ERRNO__START + 0)
#define CGS_ERR_PERM (CGS_ERRNO__START + 1)
#define CGS_ERR_NETNS (CGS_ERRNO__START + 2)
#define CGS_ERR_PIDNS (CGS_ERRNO__START + 3)
#define CGS_ERR_CGROUP2 (CGS_ERRNO__START + 4)
#define CGS_ERR_NO_KSRC (CGS_ERRNO__START + 5)
#define CGS_ERRNO__END (CGS_ERRNO__START + 6)

/**
 * cgs_strerror() - Describe an error code returned by the library.
 * @err: An error code, negative (as returned) or positive.
 *
 * Explains each CGS_ERR_* code (CGS_ERRNO__START <= |@err| <
 * CGS_ERRNO__END) in the library's terms; any other value is a plain
 * errno and gets strerror()'s text (since 1.3: before, the plain errnos
 * the CGS_ERR_* codes were, and ETIMEDOUT and EBADMSG, got library texts,
 * as programs linked against 1.0 .. 1.2 still do).
 *
 * Context: Any thread.
 * Return: A message in static storage (strerror()'s for other codes);
 * not to be freed.
 */
CGS_EXPORT const char *cgs_strerror(int err);

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
