/*-------------------------------------------------------------------------
 *
 * parse_core.h
 *		Pure-C schema / application_name / query-text parsers of folio_perf.
 *
 * These functions depend on nothing but the C library, so that the fuzz
 * harness (test/fuzz) can link them without a server.  They never allocate,
 * never read past the length they are given and accept any bytes.
 *
 * Copyright (c) 2026, folio_perf developers
 *
 * IDENTIFICATION
 *	  src/parse_core.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FOLIO_PERF_PARSE_CORE_H
#define FOLIO_PERF_PARSE_CORE_H

#include <stddef.h>
#include <stdbool.h>

/* Longest identifier PostgreSQL keeps (NAMEDATALEN - 1). */
#define FPERF_MAX_IDENT 63

/* A slice of the caller's buffer, or of a static module name. */
typedef struct FPerfSlice
{
	const char *ptr;
	size_t		len;
} FPerfSlice;

/*
 * Split a schema name into tenant and module by FOLIO's rule.  Returns true
 * if a module was found; tenant->len is 0 for module-only schemas.  On false
 * both slices are empty.
 */
extern bool fperf_folio_schema_split(const char *name, size_t len,
									 FPerfSlice *tenant, FPerfSlice *module);

/*
 * Normalise an application_name to a module name ("mod-inventory-storage-
 * 27.1.0" -> "mod_inventory_storage").  Writes at most outsize-1 bytes plus
 * a terminator into out and returns the length, or 0 if the name does not
 * name a module.
 */
extern size_t fperf_appname_module(const char *name, size_t len,
								   char *out, size_t outsize);

/*
 * Callback for fperf_scan_query: called for every identifier that is
 * followed by a '.', i.e. a qualifier (qualified = true), and for every
 * unqualified identifier that follows FROM, JOIN, INTO, UPDATE or TABLE
 * (qualified = false).  The identifier is given unquoted and, if it was not
 * quoted, lower-cased into a caller-visible buffer.  Return false to stop.
 */
typedef bool (*fperf_ident_cb) (const char *ident, size_t len,
								bool qualified, void *arg);

/*
 * Where an identifier of len bytes (NUL-terminated at buf[len]) longer than
 * the server keeps is cut: the largest length <= limit that ends on a
 * character boundary of the database encoding.  The server's
 * truncate_identifier() cuts the same way (pg_mbcliplen).
 */
typedef size_t (*fperf_clip_fn) (const char *buf, size_t len, size_t limit);

/*
 * Tokenise SQL text (any bytes) and report identifiers as described above.
 * clip cuts identifiers longer than FPERF_MAX_IDENT bytes; NULL cuts at the
 * byte limit (callers without a server).
 */
extern void fperf_scan_query(const char *sql, size_t len,
							 fperf_ident_cb cb, void *arg, fperf_clip_fn clip);

#endif							/* FOLIO_PERF_PARSE_CORE_H */
