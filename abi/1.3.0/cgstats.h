/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libcgstats: loss-free taskstats exit accounting, attributed to cgroups.
 *
 * Conventions (as in libmnl/libbpf; since 1.3 every function keeps them,
 * the names that did not are kept as deprecated aliases,
 * <cgstats/deprecated.h>):
 *  - every function that can fail returns 0 (or a count) on success and a
 *    negative error code on failure; libnl's NLE_* codes never leak out.
 *    A code is a plain errno with its plain meaning, or one of the
 *    library's own (CGS_ERR_*, CGS_ERRNO__START <= code < CGS_ERRNO__END,
 *    as libbpf's LIBBPF_ERRNO__*), never an errno borrowed for a library
 *    meaning; cgs_strerror() describes each;
 *  - handles are opaque; the free and close functions accept NULL;
 *  - every struct that crosses the ABI starts with a `sz` member and only
 *    ever grows at its end (new fields are appended, none is reordered or
 *    resized; arrays have a fixed capacity with room to spare):
 *     - a struct the caller fills in (options) or hands to the library to
 *       fill (results): the caller sets sz = sizeof(the struct), best with
 *       CGS_OPTS(); the library reads or writes only the first sz bytes,
 *       and a result's sz says on return how many bytes were written;
 *       options with non-zero bytes beyond what the library knows are
 *       refused (-E2BIG); a result struct whose sz cannot even hold sz
 *       (e.g. 0) is refused (-EINVAL); a NULL options pointer means "all
 *       defaults";
 *     - a struct the library hands out by pointer: its sz says how much of
 *       it exists; CGS_SZ_HAS() tells whether a field is there, so that a
 *       program built against a newer header runs on an older library;
 *  - results of variable length (lists, distributions) come through
 *    accessor functions, never as fixed arrays in these structs;
 *  - pointers handed in stay owned by the caller unless stated; pointers
 *    handed out are owned by the library object they came from and stay
 *    valid as documented next to each function;
 *  - constructors and destructors come in two pairs, by what the object
 *    holds: cgs_<object>_open() / cgs_<object>_close() for a handle on the
 *    kernel (its sockets: cgs_listener, cgs_query); cgs_<object>_new() /
 *    cgs_<object>_free() for an object of the library's memory
 *    (cgs_rollup, cgs_identity_src, cgs_workloads; a cgs_snapshot is made
 *    by cgs_rollup_snapshot() and freed by cgs_snapshot_free()). The open
 *    and new functions take the `struct cgs_<object> **out` first, then an
 *    options struct or NULL, and set *out to NULL on failure; close and
 *    free accept NULL;
 *  - functions are named cgs_<object>_<verb>(), <object> being the name
 *    of the struct they act on (struct cgs_identity_src:
 *    cgs_identity_src_resolve()), and no function bears the name of a
 *    type; a function is declared in the part of its object;
 *  - one getter verb: cgs_<object>_get_<what>() (cgs_rollup_get_totals(),
 *    cgs_snapshot_get_cgroup(); the i-th element of a view that holds one
 *    kind: cgs_workloads_get()). A getter of a live object copies into
 *    the caller's sz-prefixed struct and returns 0 or a negative code;
 *    one of a snapshot (which never changes) may hand out a pointer into
 *    it instead. A plain property is named by its noun and returned as
 *    is: a count (cgs_snapshot_count(), cgs_listener_shards()), a name
 *    (cgs_rollup_hierarchy(), cgs_*_name()), an fd. Arguments out of
 *    range (a NULL object, an index or an enum beyond the last): an int
 *    getter returns -EINVAL, a pointer getter or name NULL, a count 0 (one
 *    exception kept from 1.2: cgs_workload_kind_name() says "unknown");
 *  - calls that would grow take an options struct (and, for what they
 *    say back, a result struct) rather than new siblings:
 *    cgs_rollup_add() with struct cgs_add_opts / cgs_add_result;
 *  - every declaration carries CGS_EXPORT (visibility default); the
 *    version script (lib/libcgstats.map) gives each symbol its version,
 *    and a function whose arguments or return values changed keeps its
 *    old behaviour at its old version for programs linked against it.
 *
 * This header includes every part of the API. A part may be included alone
 * (each includes the parts it needs); the ABI is the same either way:
 *   <cgstats/common.h>     version, CGS_OPTS(), CGS_SZ_HAS(), errors,
 *                          CGS_NO_TGID
 *   <cgstats/record.h>     struct cgs_record, delay classes, field groups
 *   <cgstats/decode.h>     decoding taskstats messages without a listener
 *   <cgstats/cpus.h>       this host's CPUs, cpulists
 *   <cgstats/listener.h>   the exit listener, struct cgs_exit
 *   <cgstats/query.h>      queries of live tasks, cgroup v1 task states
 *   <cgstats/rollup.h>     attribution to cgroups, totals, retirement
 *   <cgstats/snapshot.h>   snapshots: counters, exits by signal,
 *                          distributions, top commands
 *   <cgstats/outcome.h>    exit outcomes of wait statuses, signal names
 *   <cgstats/cgroup.h>     /proc/<pid>/cgroup parsing, workload names
 *   <cgstats/deprecated.h> names kept for programs written against
 *                          1.0 .. 1.2
 *   <cgstats/identity.h>   namespace, pod, container, image of a cgroup
 *                          from the node's runtime state
 *   <cgstats/workloads.h>  the workload view: counters folded by workload,
 *                          restarts added up
 */
#ifndef CGSTATS_H
#define CGSTATS_H

#include "cgstats/common.h"
#include "cgstats/record.h"
#include "cgstats/decode.h"
#include "cgstats/cpus.h"
#include "cgstats/listener.h"
#include "cgstats/query.h"
#include "cgstats/rollup.h"
#include "cgstats/snapshot.h"
#include "cgstats/outcome.h"
#include "cgstats/cgroup.h"
#include "cgstats/deprecated.h"
#include "cgstats/identity.h"
#include "cgstats/workloads.h"

#endif /* CGSTATS_H */
