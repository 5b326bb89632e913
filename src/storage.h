/*-------------------------------------------------------------------------
 *
 * storage.h
 *		The sampler's storage: every SQL statement the worker runs.
 *
 * Copyright (c) 2026, folio_perf developers
 *
 * IDENTIFICATION
 *	  src/storage.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FOLIO_PERF_STORAGE_H
#define FOLIO_PERF_STORAGE_H

#include "aggregate.h"
#include "rsampler.h"

/* Set up the series id cache under the worker's long-lived context. */
extern void fperf_storage_init(MemoryContext parent);

/*
 * True if folio_perf's storage tables exist in this database; logs once
 * when they go missing and once when they appear.  Needs a transaction.
 */
extern bool fperf_storage_ready(void);

/*
 * Lock folio_perf against DROP EXTENSION for the transaction and return its
 * owner; InvalidOid when not installed.
 */
extern Oid	fperf_storage_hold_extension(void);

/* Around the storage calls of one transaction: SPI_connect / SPI_finish. */
extern void fperf_storage_connect(void);
extern void fperf_storage_disconnect(void);

/* Write one interval (with its new series) to sample_interval. */
extern void fperf_storage_write_interval(FPerfInterval *iv, const char *cut);

/* The enabled remote targets, palloc'd; returns their number. */
extern int	fperf_storage_read_targets(FPerfTargetDef **defs);

/* Write the remote targets' state to target_status. */
extern void fperf_storage_write_target_status(const FPerfTargetStatus *st, int n);

/* Delete intervals that ended more than retention_min minutes ago. */
extern uint64 fperf_storage_purge(int retention_min);

/* Take a timed snapshot (folio_perf_snapshot_timed()). */
extern void fperf_storage_timed_snapshot(void);

#endif							/* FOLIO_PERF_STORAGE_H */
