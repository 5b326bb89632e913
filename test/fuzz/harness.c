/*-------------------------------------------------------------------------
 *
 * harness.c
 *		libFuzzer harness for src/parse_core.c.
 *
 * Feeds arbitrary bytes to the schema-name splitter, the application_name
 * normaliser and the query-text scanner, and checks their contracts: slices
 * lie inside the input (or are static module names), output is NUL
 * terminated and bounded, a split reassembles to the input.  Built with
 * -fsanitize=fuzzer,address,undefined by test/fuzz/Makefile, once per
 * routine (-DFUZZ_SCHEMA, -DFUZZ_APPNAME, -DFUZZ_QUERY) so that each gets
 * its own coverage-guided corpus, and once with all three (-DFUZZ_ALL).
 *
 * Copyright (c) 2026, folio_perf developers
 *
 * IDENTIFICATION
 *	  test/fuzz/harness.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parse_core.h"

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static size_t idents_seen;

static int
inside(const char *p, size_t n, const char *base, size_t size)
{
	return p >= base && p + n <= base + size;
}

static bool
count_cb(const char *ident, size_t len, bool qualified, void *arg)
{
	(void) qualified;
	(void) arg;
	if (len > FPERF_MAX_IDENT || ident[len] != '\0')
		abort();
	idents_seen++;
	return idents_seen < 100000;
}

/* Cut like the server in UTF-8: never inside a multibyte sequence. */
static size_t
utf8_clip(const char *buf, size_t len, size_t limit)
{
	size_t		c = len < limit ? len : limit;

	if (buf[len] != '\0')
		abort();
	while (c > 0 && c < len && ((unsigned char) buf[c] & 0xC0) == 0x80)
		c--;
	return c;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* copy into an exactly-sized heap buffer so ASan sees any overread */
	char	   *buf = malloc(size ? size : 1);
	FPerfSlice	t,
				m;
	char		out[FPERF_MAX_IDENT + 1];
	size_t		n;

	(void) t;
	(void) m;
	(void) out;
	(void) n;

	if (buf == NULL)
		return 0;
	memcpy(buf, data, size);

#if defined(FUZZ_SCHEMA) || defined(FUZZ_ALL)
	if (fperf_folio_schema_split(buf, size, &t, &m))
	{
		if (m.len == 0 || m.len > FPERF_MAX_IDENT || t.len > FPERF_MAX_IDENT)
			abort();
		if (t.len > 0)
		{
			/* tenant + '_' + module is the input, byte for byte */
			if (!inside(t.ptr, t.len, buf, size) || t.len + 1 + m.len != size ||
				buf[t.len] != '_' || memcmp(buf + t.len + 1, m.ptr, m.len) != 0)
				abort();
		}
	}
	else if (t.len != 0 || m.len != 0)
		abort();
#endif

#if defined(FUZZ_APPNAME) || defined(FUZZ_ALL)
	n = fperf_appname_module(buf, size, out, sizeof(out));
	if (n >= sizeof(out) || out[n] != '\0' || (n > 0 && strncmp(out, "mod_", 4) != 0))
		abort();
#endif

#if defined(FUZZ_QUERY) || defined(FUZZ_ALL)
	idents_seen = 0;
	fperf_scan_query(buf, size, count_cb, NULL, NULL);
	idents_seen = 0;
	fperf_scan_query(buf, size, count_cb, NULL, utf8_clip);
#endif

	free(buf);
	return 0;
}
