/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The executables the kernel source saw at exec (ksrc.h
 * cgsi_ksrc_exe_drain()): its ring's records made paths. */
#ifdef CGS_HAVE_BPF

#include <errno.h>
#include <string.h>

#include "attribute/ksrc_int.h"
#include "exitcg.skel.h"

/* The names (leaf first, each NUL-terminated) joined root first into out
 * (at least CGSK_EXE_NAMES + CGSK_EXE_NAME_MAX + 8 bytes). */
static void exe_join(char *out, const struct cgsk_exe *e, size_t len)
{
	const char *at[CGSK_EXE_DEPTH];
	size_t n = 0, off = 0, o = 0;
	while (n < e->n && n < CGSK_EXE_DEPTH && off < len) {
		at[n++] = e->names + off;
		off += strnlen(e->names + off, len - off) + 1;
	}
	if (e->flags & CGSK_EXE_F_TRUNC) {
		memcpy(out, "...", 3);
		o = 3;
	}
	for (size_t i = n; i-- > 0;) {
		size_t l = strnlen(at[i], len - (size_t)(at[i] - e->names));
		out[o++] = '/';
		memcpy(out + o, at[i], l);
		o += l;
	}
	if (!o)
		out[o++] = '/';
	out[o] = '\0';
}

int cgsi_ksrc_on_exe(void *ctx, void *data, size_t len)
{
	struct cgsi_ksrc *k = ctx;
	const struct cgsk_exe *e = data;
	/* the names' bytes, a '/' for each NUL, ".../" and a NUL */
	char path[CGSK_EXE_NAMES + CGSK_EXE_NAME_MAX + 64];
	if (len < CGSK_EXE_HDR || !k->exe_fn)
		return 0;
	size_t names = len - CGSK_EXE_HDR;
	if (names > e->len)
		names = e->len;
	exe_join(path, e, names);
	unsigned flags = e->flags & (CGSK_EXE_F_TRUNC | CGSK_EXE_F_UNLINKED |
				     CGSK_EXE_F_FOREIGN);
	k->exe_fn(k->exe_ctx, e->dev, e->ino, flags, path);
	return 0;
}

int cgsi_ksrc_exe_drain(struct cgsi_ksrc *k, cgsi_ksrc_exe_fn *fn, void *ctx)
{
	if (!k || !k->exerb)
		return -EOPNOTSUPP;
	pthread_mutex_lock(&k->exelock);
	k->exe_fn = fn;
	k->exe_ctx = ctx;
	int n = ring_buffer__consume(k->exerb);
	k->exe_fn = NULL;
	pthread_mutex_unlock(&k->exelock);
	return n;
}

int64_t cgsi_ksrc_exe_lost(struct cgsi_ksrc *k)
{
	if (!k || !k->exerb)
		return -EOPNOTSUPP;
	return (int64_t)__atomic_load_n(&k->skel->bss->exe_lost,
					__ATOMIC_RELAXED);
}

#endif /* CGS_HAVE_BPF */
