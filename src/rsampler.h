/*-------------------------------------------------------------------------
 *
 * rsampler.h
 *		The sampler's remote targets: kept libpq connections whose
 *		pg_stat_activity answers become ticks of observations.
 *
 * rsampler.c produces; it runs no SQL locally.  The worker hands it the
 * list of enabled targets (read by storage.c), takes each target's
 * buffered ticks at a flush and writes them (aggregate.c, storage.c), and
 * writes the targets' state that rsampler.c reports.
 *
 * Copyright (c) 2026, folio_perf developers
 *
 * IDENTIFICATION
 *	  src/rsampler.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FOLIO_PERF_RSAMPLER_H
#define FOLIO_PERF_RSAMPLER_H

#include "aggregate.h"

/* Most targets sampled. */
#define FPERF_REMOTE_MAX_TARGETS	64

/* An enabled target, as folio_perf_data.target lists it. */
typedef struct FPerfTargetDef
{
	int32		target_id;
	const char *name;
	const char *conninfo;		/* NULL: none; without secrets */
	bool		restricted;		/* added by a non-superuser (remote_conn.c) */
	const char *password;		/* from target_secret; NULL: none */
	const char *sslpassword;
	int32		vcpus;			/* the target's vCPU count; 0: unknown */
} FPerfTargetDef;

/* A target's state, for folio_perf_data.target_status. */
typedef struct FPerfTargetStatus
{
	int32		target_id;
	const char *state;			/* sampling, connecting, down, ... */
	TimestampTz last_sample_at; /* 0: never */
	int64		ticks;
	int64		ticks_missed;
	int64		ticks_dropped;
	int64		connects;
	int64		failures;
	const char *last_error;		/* "": none */
	TimestampTz last_error_at;	/* 0: never */
	TimestampTz next_attempt_at;	/* 0: not waiting to reconnect */
} FPerfTargetStatus;

extern void fperf_rsampler_init(MemoryContext parent);
extern void fperf_rsampler_tick(TimestampTz ts, int interval_ms);
extern bool fperf_rsampler_poll(void);

/* True when some target has ticks not yet written, or the list is unread. */
extern bool fperf_rsampler_pending(void);

/* Replace the list of targets (in the flush transaction). */
extern void fperf_rsampler_set_targets(const FPerfTargetDef *defs, int n);

/*
 * The next target (from *iter = 0 on) with ticks not yet written in this
 * transaction: false when there is none.  The ticks handed out count as
 * written until fperf_rsampler_end_xact().
 */
extern bool fperf_rsampler_take_ticks(int *iter, int32 *target_id,
									  const FPerfObsTick **ticks, int *nticks);

/* The state of every target; returns how many were filled (at most max). */
extern int	fperf_rsampler_status(FPerfTargetStatus *out, int max);

/* After the flush transaction: free what was written, or keep it. */
extern void fperf_rsampler_end_xact(bool committed);

extern void fperf_rsampler_shutdown(void);

#endif							/* FOLIO_PERF_RSAMPLER_H */
