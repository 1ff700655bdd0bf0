/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Cgroup intern table (chained hash, grown by doubling). Only the slow
 * path (a process seen for the first time, snapshots) touches it: the hot
 * path reaches a node through the process cache entry's pointer, so the
 * cost of a record never depends on the path's length or depth. */
#include <pthread.h>
#include <stdlib.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "rollup/rollup_int.h"
#include "util/common.h"

/*
 * The keys of the cgroup, OOM and command tables are names anyone may
 * choose (a cgroup path, a comm): their hashes are seeded, once per
 * process, from getrandom(), so that no fixed set of names collides into
 * one chain. Set before the first table exists (a constructor, and again
 * by the tables' creation: whichever comes first) and never changed, so
 * that every table of the process agrees (topk copies and merges carry
 * hashes from one table to another). Nothing is listed in hash order:
 * outputs do not depend on the seed.
 */
struct cgsi_hash_seed cgsi_hash_seed;
#define FNV_BASIS 1469598103934665603ull
static pthread_once_t seed_once = PTHREAD_ONCE_INIT;

static void seed_init(void)
{
	uint64_t s[5];
	if (getrandom(s, sizeof(s), GRND_NONBLOCK) != (ssize_t)sizeof(s)) {
		/* no entropy yet (early boot) or no getrandom: still one
		 * process's own, if guessable */
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		uint64_t x = (uint64_t)ts.tv_nsec ^ (uint64_t)ts.tv_sec << 30 ^
			     (uint64_t)getpid() << 40 ^ (uint64_t)(uintptr_t)s;
		for (int i = 0; i < 5; i++) { /* splitmix64 */
			uint64_t z = (x += 0x9e3779b97f4a7c15ull);
			z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
			z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
			s[i] = z ^ (z >> 31);
		}
	}
	cgsi_hash_seed.path = FNV_BASIS ^ s[0];
	for (int i = 0; i < 4; i++)
		cgsi_hash_seed.key[i] = s[1 + i];
	cgsi_hash_seed.key1_c1 = s[2] * 0xc2b2ae3d27d4eb4full; /* topk.c */
}

void cgsi_hash_seed_init(void)
{
	pthread_once(&seed_once, seed_init);
}

__attribute__((constructor)) static void seed_at_load(void)
{
	cgsi_hash_seed_init();
}

uint64_t cgsi_path_hash(const char *p, size_t len)
{
	uint64_t h = cgsi_hash_seed.path; /* FNV-1a, seeded offset basis */
	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)p[i];
		h *= 1099511628211ull;
	}
	return h ^ (h >> 29);
}

unsigned cgsi_path_depth(const char *p, size_t len)
{
	if (!len || p[0] != '/')
		return 0;
	unsigned d = 0;
	for (size_t i = 0; i < len; i++)
		if (p[i] == '/' && i + 1 < len && p[i + 1] != '/')
			d++;
	return d;
}

int cgsi_cgtab_init(struct cgsi_cgtab *t)
{
	cgsi_hash_seed_init();
	memset(t, 0, sizeof(*t));
	t->nbuckets = 64;
	t->buckets = calloc(t->nbuckets, sizeof(*t->buckets));
	return t->buckets ? 0 : -ENOMEM;
}

static void node_free(struct cgsi_cgnode *n)
{
	free(n->x);
	free(n->dpk);
	if (n->carry) {
		free(n->carry->x);
		free(n->carry->dpk);
		free(n->carry);
	}
	cgsi_tops_free(n->comms, CGSI_NCOMM);
	cgsi_tops_free(n->exes, CGSI_NEXE);
	free(n);
}

void cgsi_cgtab_fini(struct cgsi_cgtab *t)
{
	struct cgsi_cgnode *n = t->first;
	while (n) {
		struct cgsi_cgnode *nx = n->next;
		node_free(n);
		n = nx;
	}
	free(t->buckets);
	memset(t, 0, sizeof(*t));
}

struct cgsi_cgnode *cgsi_cgtab_find(const struct cgsi_cgtab *t,
				    const char *path, size_t len,
				    uint64_t hash)
{
	struct cgsi_cgnode *n = t->buckets[hash & (t->nbuckets - 1)];
	for (; n; n = n->hnext)
		if (n->hash == hash && n->len == len &&
		    !memcmp(n->path, path, len))
			return n;
	return NULL;
}

static void grow(struct cgsi_cgtab *t)
{
	size_t nb = t->nbuckets * 2;
	struct cgsi_cgnode **b = calloc(nb, sizeof(*b));
	if (!b)
		return; /* keep the longer chains */
	for (size_t i = 0; i < t->nbuckets; i++) {
		struct cgsi_cgnode *n = t->buckets[i];
		while (n) {
			struct cgsi_cgnode *nx = n->hnext;
			n->hnext = b[n->hash & (nb - 1)];
			b[n->hash & (nb - 1)] = n;
			n = nx;
		}
	}
	free(t->buckets);
	t->buckets = b;
	t->nbuckets = nb;
}

struct cgsi_cgnode *cgsi_cgtab_add(struct cgsi_cgtab *t, const char *path,
				   size_t len, uint64_t hash)
{
	struct cgsi_cgnode *n = calloc(1, sizeof(*n) + len + 1);
	if (!n)
		return NULL;
	memcpy(n->path, path, len);
	n->path[len] = '\0';
	n->len = len;
	n->hash = hash;
	n->depth = (uint16_t)CGS_MIN(cgsi_path_depth(path, len), UINT16_MAX);
	if (t->hashed + 1 > t->nbuckets)
		grow(t);
	size_t b = hash & (t->nbuckets - 1);
	n->hnext = t->buckets[b];
	t->buckets[b] = n;
	n->hashed = true;
	t->hashed++;
	n->prev = t->last;
	if (t->last)
		t->last->next = n;
	else
		t->first = n;
	t->last = n;
	t->count++;
	return n;
}

void cgsi_cgtab_unhash(struct cgsi_cgtab *t, struct cgsi_cgnode *n)
{
	if (!n->hashed)
		return;
	struct cgsi_cgnode **pp = &t->buckets[n->hash & (t->nbuckets - 1)];
	while (*pp && *pp != n)
		pp = &(*pp)->hnext;
	if (*pp)
		*pp = n->hnext;
	n->hnext = NULL;
	n->hashed = false;
	t->hashed--;
}

void cgsi_cgtab_del(struct cgsi_cgtab *t, struct cgsi_cgnode *n)
{
	/* unlink from its path's chain of incarnations; the chain of a
	 * deleted head is cut (no pointer into freed nodes is left) */
	struct cgsi_cgnode *c = cgsi_cgtab_find(t, n->path, n->len, n->hash);
	if (c == n) {
		while (c) {
			struct cgsi_cgnode *o = c->older;
			c->older = NULL;
			c = o;
		}
	}
	for (; c; c = c->older)
		if (c->older == n) {
			c->older = n->older;
			break;
		}
	cgsi_cgtab_unhash(t, n);
	if (n->prev)
		n->prev->next = n->next;
	else
		t->first = n->next;
	if (n->next)
		n->next->prev = n->prev;
	else
		t->last = n->prev;
	t->count--;
	node_free(n);
}
