/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libFuzzer target: the collector's escaping of arbitrary bytes for JSON,
 * CSV, Prometheus labels and the text table (cmd/common/escape.c).
 *
 * Input: the bytes of a name (cgroup path or comm), as is.
 * Checked for every format: the output is valid UTF-8; JSON and table text
 * hold no raw control byte; CSV needs quotes exactly when RFC 4180 says;
 * Prometheus labels hold no raw newline, quote or lone backslash. Each
 * output is decoded back by a small, strict decoder per format here: the
 * table, CSV and Prometheus outputs give back the input exactly (the
 * reversible escape: \\ a backslash, \xNN a byte that does not start a
 * valid UTF-8 sequence), so two names never print alike; JSON gives back
 * the input with each such byte replaced by U+FFFD, and the functions
 * report exactly when that happened (the caller then adds NAME_hex).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "escape.h"

static const char REPL[] = "\xef\xbf\xbd";

/* The expected rendering: valid sequences kept, other bytes -> U+FFFD. */
static size_t lossy(const unsigned char *s, size_t n, char *out, bool *rep)
{
	size_t o = 0;

	*rep = false;
	for (size_t i = 0; i < n;) {
		size_t l = utf8_seq_len(s + i, n - i);
		if (!l) {
			memcpy(out + o, REPL, 3);
			o += 3;
			*rep = true;
			i++;
		} else {
			memcpy(out + o, s + i, l);
			o += l;
			i += l;
		}
	}
	return o;
}

static void valid_utf8(const struct buf *b)
{
	const unsigned char *u = (const unsigned char *)b->p;

	if (!u) { /* nothing was ever added */
		CHECK(b->len == 0);
		return;
	}
	for (size_t i = 0; i < b->len;) {
		size_t l = utf8_seq_len(u + i, b->len - i);
		CHECK(l);
		i += l;
	}
	CHECK(b->p[b->len] == '\0');
}

static int hexv(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* xNN at p (after the backslash, n bytes left): the byte NN, in lower-case
 * hex, never ASCII (ASCII is always valid UTF-8, so never escaped). */
static char rev_byte(const char *p, size_t n)
{
	CHECK(n >= 3 && p[0] == 'x');
	int h = hexv(p[1]), l = hexv(p[2]);
	CHECK(h >= 8 && l >= 0);
	CHECK(!(p[1] >= 'A' && p[1] <= 'F') && !(p[2] >= 'A' && p[2] <= 'F'));
	return (char)(h * 16 + l);
}

/* The reversible escape's decoder: \\ -> \, \xNN -> byte NN, nothing
 * else after a backslash. */
static size_t rev_decode(const char *p, size_t n, char *out)
{
	size_t o = 0;

	for (size_t i = 0; i < n; i++) {
		if (p[i] != '\\') {
			out[o++] = p[i];
			continue;
		}
		CHECK(i + 1 < n);
		if (p[i + 1] == '\\') {
			out[o++] = '\\';
			i++;
		} else {
			out[o++] = rev_byte(p + i + 1, n - i - 1);
			i += 3;
		}
	}
	return o;
}

/* JSON string body [p, p+n) -> out; only what esc_json may produce, or
 * with rev (the table) what esc_text may: \xNN instead of \ufffd. */
static size_t json_decode(const char *p, size_t n, char *out, bool rev)
{
	size_t o = 0;

	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)p[i];
		CHECK(c >= 0x20 && c != 0x7f && c != '"');
		if (c != '\\') {
			out[o++] = (char)c;
			continue;
		}
		CHECK(i + 1 < n);
		char e = p[++i];
		switch (e) {
		case '"': out[o++] = '"'; break;
		case '\\': out[o++] = '\\'; break;
		case '/': out[o++] = '/'; break;
		case 'b': out[o++] = '\b'; break;
		case 'f': out[o++] = '\f'; break;
		case 'n': out[o++] = '\n'; break;
		case 'r': out[o++] = '\r'; break;
		case 't': out[o++] = '\t'; break;
		case 'x':
			CHECK(rev);
			out[o++] = rev_byte(p + i, n - i);
			i += 2;
			break;
		case 'u': {
			CHECK(i + 4 < n);
			int v = 0;
			for (int k = 1; k <= 4; k++) {
				int h = hexv(p[i + k]);
				CHECK(h >= 0);
				v = v * 16 + h;
			}
			i += 4;
			if (v == 0xfffd && !rev) {
				memcpy(out + o, REPL, 3);
				o += 3;
			} else {
				CHECK(v < 0x20 || v == 0x7f); /* controls only */
				out[o++] = (char)v;
			}
			break;
		}
		default:
			CHECK(0);
		}
	}
	return o;
}

static void check_json(const unsigned char *s, size_t n, const char *want,
		       size_t wl, bool rep, bool quoted)
{
	struct buf b;
	char *dec = malloc(6 * n + 8);

	CHECK(dec);
	buf_init(&b);
	bool r = quoted ? esc_json(&b, (const char *)s, n)
			: esc_text(&b, (const char *)s, n);
	CHECK(r == rep && !b.oom);
	valid_utf8(&b);
	const char *body = b.p ? b.p : "";
	CHECK(b.p || !quoted);
	size_t bl = b.len;
	if (quoted) {
		CHECK(bl >= 2 && body[0] == '"' && body[bl - 1] == '"');
		body++;
		bl -= 2;
	}
	size_t dl = json_decode(body, bl, dec, !quoted);
	if (quoted) /* JSON: U+FFFD for each invalid byte, reported */
		CHECK(dl == wl && !memcmp(dec, want, wl));
	else /* the table: reversible */
		CHECK(dl == n && !memcmp(dec, s, n));
	free(dec);
	buf_free(&b);
}

static void check_csv(const unsigned char *s, size_t n, bool rep)
{
	struct buf b;
	char *unq = malloc(8 * n + 8), *dec = malloc(n + 8);
	size_t ul = 0;

	CHECK(unq && dec);
	buf_init(&b);
	CHECK(esc_csv(&b, (const char *)s, n) == rep && !b.oom);
	valid_utf8(&b);
	const char *p = b.p ? b.p : "";
	size_t l = b.len;
	bool need = n && (s[0] == ' ' || s[n - 1] == ' ');
	for (size_t i = 0; i < n; i++)
		if (s[i] == ',' || s[i] == '"' || s[i] == '\r' || s[i] == '\n')
			need = true;
	if (l && p[0] == '"') {
		CHECK(need);
		CHECK(l >= 2 && p[l - 1] == '"');
		for (size_t i = 1; i < l - 1; i++) {
			if (p[i] == '"') {
				CHECK(i + 1 < l - 1 && p[i + 1] == '"');
				i++;
			}
			unq[ul++] = p[i];
		}
	} else {
		CHECK(!need);
		memcpy(unq, p, l);
		ul = l;
	}
	size_t dl = rev_decode(unq, ul, dec);
	CHECK(dl == n && !memcmp(dec, s, n));
	free(unq);
	free(dec);
	buf_free(&b);
}

static void check_prom(const unsigned char *s, size_t n, bool rep)
{
	struct buf b;
	char *val = malloc(8 * n + 8), *dec = malloc(n + 8);
	size_t vl = 0;

	CHECK(val && dec);
	buf_init(&b);
	CHECK(esc_prom_label(&b, (const char *)s, n) == rep && !b.oom);
	valid_utf8(&b);
	const char *p = b.p ? b.p : "";
	/* the exposition format's escapes give the label value ... */
	for (size_t i = 0; i < b.len; i++) {
		CHECK(p[i] != '\n' && p[i] != '"');
		if (p[i] == '\\') {
			CHECK(i + 1 < b.len);
			char e = p[++i];
			CHECK(e == '\\' || e == '"' || e == 'n');
			val[vl++] = e == 'n' ? '\n' : e;
		} else {
			val[vl++] = p[i];
		}
	}
	/* ... and the value is the reversible escape of the name */
	size_t dl = rev_decode(val, vl, dec);
	CHECK(dl == n && !memcmp(dec, s, n));
	free(val);
	free(dec);
	buf_free(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *want = malloc(3 * size + 1);
	bool rep;

	CHECK(want);
	size_t wl = lossy(data, size, want, &rep);
	check_json(data, size, want, wl, rep, true);
	check_json(data, size, want, wl, rep, false);
	check_csv(data, size, rep);
	check_prom(data, size, rep);
	free(want);
	return 0;
}
