/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libFuzzer target: the parsers of workload identity (lib/identity/
 * id_parse.c) over the bytes of a runtime state file or a kubelet log
 * folder entry name.
 *
 * Input: the bytes as is. Each parser gets them: the OCI spec one
 * (containerd's CRI, CRI-O), Docker's config.v2.json one, and, cut at the
 * first NUL, the two kubelet name parsers. Checked: no crash, leak or
 * undefined behaviour; every name that comes out is NUL-terminated within
 * its member and holds no control byte; a parser that says "ok" named
 * something.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "identity/identity.h"

#define CID "4f3a1e0b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f"
#define UID "0b5c1d6e-7f80-4a91-b2c3-d4e5f6a7b8c9"

static void clean(const char *m, size_t cap)
{
	size_t n = strnlen(m, cap);
	CHECK(n < cap);
	for (size_t i = 0; i < n; i++)
		CHECK((unsigned char)m[i] >= 0x20 && m[i] != 0x7f);
}

static void check(const struct cgs_identity *id, enum cgsi_id_reason r)
{
	clean(id->k8s_namespace, sizeof(id->k8s_namespace));
	clean(id->pod, sizeof(id->pod));
	clean(id->container, sizeof(id->container));
	clean(id->image, sizeof(id->image));
	clean(id->pod_uid, sizeof(id->pod_uid));
	clean(id->project, sizeof(id->project));
	clean(id->service, sizeof(id->service));
	CHECK((unsigned)r < CGSI_ID__REASONS);
	CHECK(cgsi_id_reason_name(r)[0] != '?');
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cgs_identity id;
	enum cgsi_id_reason r;

	memset(&id, 0, sizeof(id));
	r = cgsi_id_parse_oci((const char *)data, size, &id);
	check(&id, r);
	if (r == CGSI_ID_OK)
		CHECK(id.k8s_namespace[0] || id.pod[0] || id.container[0] ||
		      id.image[0] || id.sandbox);
	memset(&id, 0, sizeof(id));
	check(&id, cgsi_id_parse_docker((const char *)data, size, &id));

	char *name = malloc(size + 1);
	CHECK(name);
	memcpy(name, data, size);
	name[size] = '\0';
	memset(&id, 0, sizeof(id));
	check(&id, cgsi_id_parse_log_link(name, CID, &id));
	memset(&id, 0, sizeof(id));
	r = cgsi_id_parse_pod_dir(name, UID, &id);
	check(&id, r);
	if (r == CGSI_ID_OK)
		CHECK(id.k8s_namespace[0] && id.pod[0]);
	free(name);
	return 0;
}
