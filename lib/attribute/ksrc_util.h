/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The kernel source's helpers that need none of its state (ksrc.c):
 * clocks, capabilities, the task state, mapping the rings, and what is
 * read of the program and its rings for the stats (the lost entries
 * given out as reasons, the fill, the programs' run time).
 */
#ifndef CGS_ATTRIBUTE_KSRC_UTIL_H
#define CGS_ATTRIBUTE_KSRC_UTIL_H

#include <linux/capability.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "attribute/ksrc.h"

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

struct bpf_map;
struct bpf_object;
struct cgsk_ctl;

uint64_t cgsi_ksrc_mono_ns(void);
/* CLOCK_REALTIME - CLOCK_MONOTONIC now. */
int64_t cgsi_ksrc_real_off_ns(void);
/* Whether the calling thread has capability cap in its effective set. */
bool cgsi_ksrc_have_cap(int cap);
/* Whether task `tid` is past the tracepoint: a zombie (Z), dead (X) or
 * gone. sched_process_exit runs before exit_notify() makes it a zombie,
 * so a task still in another state has not published its entry yet. (A
 * pid reused meanwhile reads as "not done": the wait stays bounded.) */
bool cgsi_ksrc_task_done(uint32_t tid);
size_t cgsi_ksrc_page_round(size_t n);
/* mmap of an mmapable array map, NULL on failure (errno). */
void *cgsi_ksrc_mmap(struct bpf_map *m, size_t len, int prot);
/* Take one entry the program counted lost and no record was given as a
 * reason yet (ctl: ncpu rings): true if there was one. */
bool cgsi_ksrc_charge_lost(const struct cgsk_ctl *ctl, unsigned ncpu,
			   _Atomic uint64_t *charged);
/* Entries written and not read yet, all rings. */
uint64_t cgsi_ksrc_queued(const struct cgsk_ctl *ctl, unsigned ncpu);
/* The run time and count of obj's programs (bpf_prog_info run_time_ns,
 * run_cnt): of the exit program, and summed over the others (cgroup
 * events); bpf_stats 1 when the kernel counts them (sysctl
 * kernel.bpf_stats_enabled = 1, or a BPF_ENABLE_STATS fd held by some
 * process: then some count is not 0), else 0 and all 0. */
void cgsi_ksrc_prog_stats(const struct bpf_object *obj,
			  struct cgsi_ksrc_stats *out);

#endif
