/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* taskstat-collect's HTTP export behind struct tsc_export (collector.h):
 * the one reference to http.c and webconfig.c from the rest. */
#include "collector.h"
#include "webconfig.h"

const struct tsc_export tsc_http_export = {
	.http_start = tsc_http_start,
	.http_stop = tsc_http_stop,
	.webcfg_load = tsc_webcfg_load,
	.webcfg_free = tsc_webcfg_free,
	.web_loaded = tsc_web_loaded,
	.web_describe = tsc_webcfg_describe,
	.web_reload = tsc_web_reload,
	.web_poll = tsc_web_poll,
	.web_deadline = tsc_web_deadline,
};
