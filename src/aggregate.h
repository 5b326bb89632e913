/*-------------------------------------------------------------------------
 *
 * aggregate.h
 *		The sampler's aggregation: observations of sessions at ticks, and
 *		the interval they are counted into.
 *
 * An observation (FPerfObs) is one session at one tick, with names, not
 * oids alone: the local ring's process records (aggregate.c maps them) and
 * a remote target's pg_stat_activity rows (rsampler.c) both become
 * observations, so that one accumulator counts both.
 *
 * Copyright (c) 2026, folio_perf developers
 *
 * IDENTIFICATION
 *	  src/aggregate.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FOLIO_PERF_AGGREGATE_H
#define FOLIO_PERF_AGGREGATE_H

#include "sampler.h"

#include "utils/hsearch.h"

/* One session at one tick. */
typedef struct FPerfObs
{
	const char *datname;		/* "" when none */
	const char *rolname;		/* "" when none */
	const char *appname;
	const char *state;			/* as pg_stat_activity.state */
	const char *wait_type;		/* NULL: not waiting */
	const char *wait_event;		/* NULL: none */
	const char *btype;			/* as pg_stat_activity.backend_type */
	Oid			dbid;			/* the oids of the server observed */
	Oid			userid;
	int64		queryid;		/* 0: none */
	int32		cpu_ms;			/* CPU since the previous tick, -1: unknown */
	int32		pid;			/* 0: not known (remote targets) */
	int32		blocker_pid;	/* the process its lock wait waits for, 0:
								 * none or not known */
	bool		client;			/* a client backend (not the sampler) */
	bool		active;			/* state active or fastpath (not the sampler) */
} FPerfObs;

/* One tick: when, and every session seen. */
typedef struct FPerfObsTick
{
	TimestampTz ts;
	int32		interval_ms;	/* folio_perf.sample_interval at the time */
	int32		host_ncpu;		/* 0: host CPU unknown */
	int32		host_busy_ms;
	int32		host_total_ms;
	int			nobs;
	FPerfObs   *obs;
} FPerfObsTick;

/* Series kinds and dimensions, as one-letter codes in series keys. */
#define FPERF_KIND_CONN		'c'
#define FPERF_KIND_LOAD		'l'
#define FPERF_KIND_CPU		'u'

/* Key of a series: kind code, dimension code, key text. */
#define FPERF_KEYLEN 160

/* One series of an interval: its histogram of per-tick values. */
typedef struct FPerfSeries
{
	char		key[FPERF_KEYLEN];	/* hash key, must be first */
	int32		series_id;		/* 0 until storage knows it */
	int32		cur;			/* sessions counted in tick cur_tick */
	int			cur_tick;
	int			nh;				/* histogram: distinct per-tick values */
	int			maxh;
	int32	   *hv;
	int32	   *hf;
	int64		cpu_ms;			/* FPERF_KIND_CPU: the sum */
	/* what describes a new series in sample_series */
	Oid			dbid;
	Oid			userid;
	int64		queryid;
	int32		target_id;		/* 0: this server */
	bool		has_ids;
	char	   *tenant;
	char	   *module;
	const char *attributed_by;
} FPerfSeries;

/* One interval being accumulated: per-tick totals and the series. */
typedef struct FPerfInterval
{
	int32		target_id;		/* 0: this server */
	TimestampTz started_at;
	TimestampTz ended_at;
	int			interval_ms;
	int			nticks;
	int			maxticks;
	int32	   *tick_ms;		/* offsets from started_at */
	int32	   *tick_conns;
	int32	   *tick_active;
	int			host_ncpu;
	int64		host_busy_ms;
	int64		host_total_ms;
	int			cpu_ticks;		/* ticks with a host CPU figure */
	int64		ticks_dropped;	/* lost before this interval */
	HTAB	   *series;			/* FPerfSeries by key */
	FPerfSeries **touched;		/* series counted in the current tick */
	int			ntouched;
	int			maxtouched;
} FPerfInterval;

/* Name caches of one flush (catalog lookups: needs a transaction). */
extern void fperf_agg_begin_flush(MemoryContext cxt);
extern void fperf_agg_end_flush(void);

/*
 * Map the ring's tick at *pos to observations (in the current memory
 * context; reused by the next call) and move *pos past it.
 */
extern void fperf_agg_ring_tick(uint64 *pos, FPerfObsTick *tick);

/* An interval of a server (target_id 0: this one). */
extern FPerfInterval *fperf_interval_begin(int32 target_id);

/*
 * Count a tick into the interval.  False (and nothing counted) when it
 * belongs to the next interval: the interval is full, the tick was taken at
 * another interval length, or too long after the start.
 */
extern bool fperf_interval_add_tick(FPerfInterval *iv, const FPerfObsTick *tick);

/* Names of series kinds and dimensions, and back (0: unknown). */
extern const char *fperf_series_kind_name(char code);
extern const char *fperf_series_dim_name(char code);
extern char fperf_series_kind_code(const char *name);
extern char fperf_series_dim_code(const char *name);

#endif							/* FOLIO_PERF_AGGREGATE_H */
