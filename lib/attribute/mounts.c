/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Mount discovery: find the cgroup hierarchy in mountinfo instead of
 * assuming /sys/fs/cgroup (hybrid hosts mount v2 at .../unified, pure v2
 * hosts at /sys/fs/cgroup, containers elsewhere).
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "attribute/mounts.h"
#include "util/common.h"

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static void unescape(char *s)
{
	char *d = s;
	while (*s) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '7' && s[2] >= '0' &&
		    s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
			*d++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 +
				      (s[3] - '0'));
			s += 4;
		} else {
			*d++ = *s++;
		}
	}
	*d = '\0';
}

static const char *const v1_controllers[] = {
	"cpu", "cpuacct", "cpuset", "memory", "devices", "freezer", "net_cls",
	"net_prio", "blkio", "perf_event", "hugetlb", "pids", "rdma", "misc",
};

static bool is_controller(const char *tok)
{
	if (!strncmp(tok, "name=", 5))
		return true;
	for (size_t i = 0; i < CGS_ARRAY_SIZE(v1_controllers); i++)
		if (!strcmp(tok, v1_controllers[i]))
			return true;
	return false;
}

/* First controller in a v1 super-options list when want is NULL, else
 * whether `want` is one of them. */
static bool v1_match(char *opts, const char *want, char *first, size_t flen)
{
	for (char *save = NULL, *t = strtok_r(opts, ",", &save); t;
	     t = strtok_r(NULL, ",", &save)) {
		if (!is_controller(t) && !(want && !strcmp(t, want)))
			continue;
		if (!want) {
			snprintf(first, flen, "%s", t);
			return true;
		}
		if (!strcmp(t, want))
			return true;
	}
	return false;
}

static void set_mount(struct cgsi_cg_mount *out, const char *root,
		      const char *mnt)
{
	out->mounted = true;
	snprintf(out->root, sizeof(out->root), "%s", root);
	snprintf(out->mnt, sizeof(out->mnt), "%s", mnt);
	unescape(out->root);
	unescape(out->mnt);
}

int cgsi_cg_mount_find(const char *mountinfo, const char *want,
		       struct cgsi_cg_mount *out)
{
	bool want_v2 = want && !strcmp(want, "v2");
	memset(out, 0, sizeof(*out));
	if (want)
		snprintf(out->hier, sizeof(out->hier), "%s", want);

	FILE *f = fopen(mountinfo, "re");
	if (!f) {
		int e = -errno;
		if (!want || want_v2) {
			snprintf(out->hier, sizeof(out->hier), "v2");
			return 0;
		}
		return e;
	}
	char *line = NULL;
	size_t cap = 0;
	bool have_v1 = false;
	struct cgsi_cg_mount v1 = { 0 };
	while (getline(&line, &cap, f) > 0) {
		/* id parent maj:min root mountpoint opts [optional...] - fstype
		 * source superopts */
		char *sep = strstr(line, " - ");
		if (!sep)
			continue;
		*sep = '\0';
		char *f4[5] = { 0 };
		char *save = NULL;
		int n = 0;
		for (char *t = strtok_r(line, " ", &save); t && n < 5;
		     t = strtok_r(NULL, " ", &save))
			f4[n++] = t;
		if (n < 5)
			continue;
		char *save2 = NULL;
		char *fstype = strtok_r(sep + 3, " \n", &save2);
		char *source = fstype ? strtok_r(NULL, " \n", &save2) : NULL;
		char *super = source ? strtok_r(NULL, " \n", &save2) : NULL;
		if (!fstype)
			continue;
		if (!strcmp(fstype, "cgroup2")) {
			if (!want || want_v2) {
				snprintf(out->hier, sizeof(out->hier), "v2");
				set_mount(out, f4[3], f4[4]);
				break;
			}
		} else if (!strcmp(fstype, "cgroup") && super && !want_v2) {
			char first[64] = "";
			if (!v1_match(super, want, first, sizeof(first)))
				continue;
			if (want) {
				set_mount(out, f4[3], f4[4]);
				break;
			}
			if (!have_v1) {
				have_v1 = true;
				snprintf(v1.hier, sizeof(v1.hier), "%s", first);
				set_mount(&v1, f4[3], f4[4]);
			}
		}
	}
	free(line);
	fclose(f);
	if (out->mounted)
		return 0;
	if (!want) {
		if (have_v1) {
			*out = v1;
			return 0;
		}
		snprintf(out->hier, sizeof(out->hier), "v2");
		return 0;
	}
	return want_v2 ? 0 : -ENOENT;
}

int cgsi_cg_dir(const struct cgsi_cg_mount *m, const char *path, char *buf,
		size_t len)
{
	if (!m->mounted || path[0] != '/')
		return -ENOENT;
	size_t rl = strlen(m->root);
	if (rl == 1)
		rl = 0; /* root "/" */
	if (rl && (strncmp(path, m->root, rl) || (path[rl] && path[rl] != '/')))
		return -ENOENT;
	const char *rest = path + rl;
	if (!strcmp(rest, "/"))
		rest = "";
	int n = snprintf(buf, len, "%s%s", m->mnt, rest);
	if (n < 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	return n;
}

uint64_t cgsi_cg_ino(const struct cgsi_cg_mount *m, const char *path,
		     char *dirbuf, size_t dirlen, bool *gone)
{
	*gone = false;
	if (cgsi_cg_dir(m, path, dirbuf, dirlen) < 0)
		return 0;
	struct stat st;
	if (stat(dirbuf, &st) < 0) {
		*gone = errno == ENOENT || errno == ENOTDIR;
		return 0;
	}
	if (!S_ISDIR(st.st_mode)) {
		*gone = true;
		return 0;
	}
	return (uint64_t)st.st_ino;
}
