/*-------------------------------------------------------------------------
 *
 * format.h
 *		The numbers of reports as text (format.c), for the renderer
 *		(render.c) and the SQL functions fmt_num, fmt_sig and fmt_bytes.
 *
 * Copyright (c) 2026, folio_perf developers
 *
 * IDENTIFICATION
 *	  src/format.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FPERF_FORMAT_H
#define FPERF_FORMAT_H

#include "postgres.h"

/* n and the results: numeric Datums and texts, neither NULL */
extern text *fperf_fmt_num(Datum n, int32 digits);
extern text *fperf_fmt_sig(Datum n);
extern text *fperf_fmt_bytes(Datum n);

#endif							/* FPERF_FORMAT_H */
