/*-------------------------------------------------------------------------
 *
 * metrics.h
 *		Live metrics per tenant and module (metrics.c).
 *
 * Copyright (c) 2026, folio_perf developers
 *
 * IDENTIFICATION
 *	  src/metrics.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FOLIO_PERF_METRICS_H
#define FOLIO_PERF_METRICS_H

#include "sampler.h"

extern int	fperf_metrics_keys;

extern void fperf_metrics_define_postmaster_gucs(void);
extern Size fperf_metrics_shmem_size(void);
extern void fperf_metrics_shmem_request(void);
extern void fperf_metrics_shmem_init(void);

/* The sampler worker, after appending a tick to the ring. */
extern void fperf_metrics_tick(const FPerfRecord *recs, int nrecs);

#endif							/* FOLIO_PERF_METRICS_H */
