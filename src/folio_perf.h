/*-------------------------------------------------------------------------
 *
 * folio_perf.h
 *		Private declarations shared by folio_perf's C files.
 *
 * Copyright (c) 2026, folio_perf developers
 *
 * IDENTIFICATION
 *	  src/folio_perf.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FOLIO_PERF_H
#define FOLIO_PERF_H

#include "compat.h"

#include "catalog/pg_class.h"
#include "nodes/parsenodes.h"
#include "storage/lwlock.h"
#include "utils/relcache.h"

#include "parse_core.h"

/* Name of the LWLock tranche and prefix of every GUC. */
#define FPERF_NAME "folio_perf"

/*
 * The LWLocks of folio_perf's tranche, one per shared structure.  Each
 * structure's file states its locking rule.
 */
typedef enum FPerfLockId
{
	FPERF_LOCK_RELSTORE = 0,	/* relstore.c: the relation store */
	FPERF_LOCK_SAMPLER,			/* sampler.c: the sampler's ring and state */
	FPERF_LOCK_PLANS,			/* plans.c: the plan store */
	FPERF_LOCK_RELSTATE,		/* relstate.c: the relation state images */
	FPERF_NUM_LWLOCKS
} FPerfLockId;

/* ---- folio_perf.c: GUC variables ---- */
extern bool fperf_track_relations;
extern int	fperf_max_queries;

/* True once _PG_init ran inside shared_preload_libraries. */
extern bool fperf_preloaded;

/* ---- relstore.c: per-queryid schemas of the relations a statement touches */

/* Most schemas remembered per statement. */
#define FPERF_MAX_NSP 4

typedef struct FPerfRelKey
{
	Oid			dbid;
	uint64		queryid;
} FPerfRelKey;

typedef struct FPerfRelEntry
{
	FPerfRelKey key;			/* hash key, must be first */
	Oid			target_nsp;		/* schema of the DML target, or InvalidOid */
	Oid			first_rel;		/* first relation of the range table */
	bool		ambiguous;		/* parsed since with another first_rel */
	int			nnsp;			/* valid entries in nsp[] */
	Oid			nsp[FPERF_MAX_NSP]; /* distinct schemas in range-table order */
	Oid			userid;			/* the role that parsed it first */
	int64		last_seen;		/* TimestampTz it was last parsed or looked
								 * up (written under the shared lock: a lost
								 * update only makes it look older) */
} FPerfRelEntry;

extern Size fperf_relstore_shmem_size(void);
extern void fperf_relstore_shmem_init(void);
extern void fperf_relstore_install_hook(void);
extern bool fperf_relstore_attached(void);
extern int	fperf_relstore_lookup(Oid dbid, uint64 queryid, Oid *nsp, int max);

/* ---- own.c: the query ids of what folio_perf itself runs ---- */
extern Size fperf_own_shmem_size(void);
extern void fperf_own_shmem_init(void);
extern void fperf_own_install_hooks(void);
extern bool fperf_own_active(void);

/* ---- sampler.c: the sampler's settings, shared memory, worker launch ---- */
extern void fperf_sampler_define_gucs(void);
extern void fperf_sampler_define_postmaster_gucs(void);
extern Size fperf_sampler_shmem_size(void);
extern void fperf_sampler_shmem_init(void);
extern void fperf_sampler_register(void);
extern bool fperf_sampler_step_aside(Node *parsetree);
extern void fperf_sampler_step_aside_end(void);

/* ---- remote_conn.c, remote.c: remote targets over libpq (see remote.h) ---- */
extern int	fperf_remote_timeout;
extern void fperf_remote_define_gucs(void);

/* ---- plans.c: plans of slow executions per statement ---- */
extern int	fperf_plan_min_duration;
extern bool fperf_plan_analyze;
extern double fperf_plan_sample_rate;
extern int	fperf_max_plans;
extern int	fperf_plan_max_bytes;

extern void fperf_plans_define_gucs(void);
extern void fperf_plans_define_postmaster_gucs(void);
extern Size fperf_plans_shmem_size(void);
extern void fperf_plans_shmem_init(void);
extern void fperf_plans_install_hooks(void);

/* ---- relstats.c: relation statistics for snapshots ---- */
typedef enum FPerfRelStatsRead
{
	FPERF_REL_STATS_PASS,		/* one pass over the shared statistics */
	FPERF_REL_STATS_LOOKUP		/* one lookup per relation (fallback) */
} FPerfRelStatsRead;

extern int	fperf_rel_stats_read;

typedef enum FPerfRelScan
{
	FPERF_REL_SCAN_INCREMENTAL,	/* read the pg_class blocks that changed */
	FPERF_REL_SCAN_FULL			/* read every block */
} FPerfRelScan;

extern int	fperf_rel_scan;
extern void fperf_relstats_define_gucs(void);

/* ---- relsize.c: a relation's size from its files ---- */
typedef struct FPerfToastMap FPerfToastMap;
extern FPerfToastMap *fperf_toast_map_build(Relation classrel);
extern bool fperf_relation_size_of(Relation classrel, Form_pg_class cls,
								   FPerfToastMap *toastmap, int64 *size);

/*
 * ---- parse.c: how a schema or role name splits into tenant and module:
 * folio_perf.schema_pattern when set, else FOLIO's rule
 * (fperf_folio_schema_split, parse_core.c)
 */
extern char *fperf_schema_pattern;
extern void fperf_parse_define_gucs(void);
extern bool fperf_schema_split(const char *name, size_t len,
							   FPerfSlice *tenant, FPerfSlice *module);
extern bool fperf_schema_split_text(const char *name, char **tenant,
									char **module);
extern size_t fperf_mbclip(const char *buf, size_t len, size_t limit);

#endif							/* FOLIO_PERF_H */
