/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The kernel attribution source's own state, shared by its parts:
 * ksrc_open.c (load the BPF program, map its rings, close), ksrc_cgev.c
 * (the cgroup events: ids and paths, the reader thread, the hook) and
 * ksrc.c (records joined with their exit entries). With BPF only.
 */
#ifndef CGS_ATTRIBUTE_KSRC_INT_H
#define CGS_ATTRIBUTE_KSRC_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <bpf/libbpf.h>

#include "attribute/bpf/exitcg_abi.h"
#include "attribute/cgid.h"
#include "attribute/cgid_v1.h"
#include "attribute/kjoin.h"
#include "attribute/ksrc.h"
#include "util/futex_lock.h"

/* Entries are expired this long after the newest one a record claimed:
 * records of one shard arrive in exit order, so an older entry's record
 * is not coming (dropped by the kernel, or on a listener we don't have);
 * the margin covers tasks that migrated to another shard's CPU and a
 * shard read late on a loaded host. The table's size bounds memory. */
#define KSRC_EXPIRE_NS 60000000000ull

/* The cgroup event ring is also read every this many lookups, so a burst
 * of mkdir/rmdir without exits (or with known ids) cannot overflow it. */
#define KSRC_CG_EVERY 1024u

struct kshard {
	struct cgsi_flock lock; /* owner per record; others on a miss */
	unsigned *cpus;       /* the CPUs whose rings this shard reads */
	unsigned ncpus;
	struct cgsi_kjoin join;
	uint64_t waits, expired_calls;
	uint64_t ring_peak;   /* most entries one ring held when consumed */
	int64_t off;          /* CLOCK_REALTIME - CLOCK_MONOTONIC, cached */
	uint32_t off_left;    /* lookups until off is read again */
} __attribute__((aligned(64)));

struct cgsi_ksrc {
	struct exitcg_bpf *skel;
	unsigned nshards;
	struct kshard *sh;
	unsigned ncpu;          /* possible CPUs (ring count) */
	uint32_t nslots;        /* entries per CPU ring */
	struct cgsk_ctl *ctl;   /* mmapped, ncpu elements */
	size_t ctl_len;
	const struct cgsk_exit *slots; /* mmapped, ncpu * nslots */
	size_t slots_len;
	const struct cgsk_comm *comms; /* mmapped like slots, or NULL */
	size_t comms_len;
	size_t ring_bytes;      /* per shard */
	unsigned wait_us;
	struct ring_buffer *cgrb;
	pthread_mutex_t idlock; /* ids, cgrb, dfl_hier */
	struct cgsi_cgid ids;
	const struct cgsi_cg_mount *mount;
	int64_t dfl_hier;       /* its hierarchy id (cgroup2: -1 till known) */
	struct cgsi_cgv1 v1;    /* a v1 hierarchy: how (else how 0) */
	uint64_t now_ms;        /* for cgroup events, under idlock */
	uint64_t cg_unreadable; /* events with no usable path (idlock) */
	pthread_t reader;       /* cg_reader(), if reader_on */
	bool reader_on;
	_Atomic int reader_tried; /* reader_start() ran (first lookup) */
	int stopfd;             /* eventfd: tells the reader to stop */
	_Atomic uint64_t lost_charged; /* lost entries given as a reason */
	cgsi_ksrc_cg_fn *cg_hook; /* cgsi_ksrc_set_cg_hook(), under idlock */
	struct ring_buffer *exerb; /* executables (exe_max), else NULL */
	pthread_mutex_t exelock;   /* exerb and the drain's callback */
	cgsi_ksrc_exe_fn *exe_fn;  /* the drain's, under exelock */
	void *exe_ctx;
	void *cg_hook_ctx;
};

/* ksrc_exe.c: the exe ring's callback (ring_buffer__new()). */
int cgsi_ksrc_on_exe(void *ctx, void *data, size_t len);

/* ksrc_cgev.c */
/* cgroup2's hierarchy id, as /proc/self/cgroup shows it; -1: none. */
int64_t cgsi_ksrc_dfl_hier(void);
/* The cgroup event ring's callback (ring_buffer__new()). */
int cgsi_ksrc_on_cg_event(void *ctx, void *data, size_t len);
/* A walk's tick (cgsi_cgid.tick): the cgroup events read meanwhile. */
void cgsi_ksrc_walk_tick(void *ctx);
/* The reader thread: started once, by the first lookup or hook. */
void cgsi_ksrc_reader_start(struct cgsi_ksrc *k);
void cgsi_ksrc_reader_stop(struct cgsi_ksrc *k);

#endif
