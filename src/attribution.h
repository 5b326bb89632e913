/*-------------------------------------------------------------------------
 *
 * attribution.h
 *		Which tenant and module a statement or a session belongs to.
 *
 * The one precedence of folio_perf's attribution (attribution.c), used by
 * the snapshot's statement attribution, the live views and the sampler.
 *
 * Copyright (c) 2026, folio_perf developers
 *
 * IDENTIFICATION
 *	  src/attribution.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FOLIO_PERF_ATTRIBUTION_H
#define FOLIO_PERF_ATTRIBUTION_H

#include "folio_perf.h"

#include "nodes/pg_list.h"

/* The evidence that decided, strongest first; NONE: nothing decided. */
typedef enum FPerfAttrBy
{
	FPERF_BY_NONE = 0,
	FPERF_BY_RELATIONS,
	FPERF_BY_ROLE,
	FPERF_BY_QUALIFIED,
	FPERF_BY_RELATION_NAME,
	FPERF_BY_APPLICATION_NAME
} FPerfAttrBy;

/* Most schema names of a statement's relations (relstore.c keeps 4). */
#define FPERF_ATTR_MAX_SCHEMAS FPERF_MAX_NSP

/*
 * Where objects named `name` (unqualified, NUL-terminated) exist: the names
 * of the schemas holding a table, view, materialized view, foreign table or
 * function of that name, as a List of char *.  NIL if none.  The list
 * belongs to the callee (or is allocated in CurrentMemoryContext); the
 * caller neither changes nor frees it.
 */
typedef List *(*fperf_name_schemas_fn) (const char *name, void *arg);

/*
 * What a caller knows.  Every member may be absent (NULL / 0); absent
 * evidence is skipped.
 */
typedef struct FPerfAttrEvidence
{
	/* relations: their schemas' names, the DML target first */
	const char *schemas[FPERF_ATTR_MAX_SCHEMAS];
	int			nschemas;
	/* role: the role name (pg_stat_statements' userid, a session's user) */
	const char *rolname;
	/* qualified and relation_name: the statement's text */
	const char *query;
	size_t		query_len;
	/* relation_name: where unqualified names live (needs query) */
	fperf_name_schemas_fn name_schemas;
	void	   *name_schemas_arg;
	/* application_name: a session's */
	const char *appname;
} FPerfAttrEvidence;

/* The answer: empty strings where there is no tenant / no module. */
typedef struct FPerfAttribution
{
	FPerfAttrBy by;
	char		tenant[NAMEDATALEN];
	char		module[NAMEDATALEN];
} FPerfAttribution;

/* The precedence: fill *out from *ev.  Catalog access only in a transaction. */
extern void fperf_attribute(const FPerfAttrEvidence *ev, FPerfAttribution *out);

/* "relations", "role", ... for the by values; NULL for FPERF_BY_NONE. */
extern const char *fperf_attr_by_name(FPerfAttrBy by);

/*
 * Fill ev->schemas from the relation store's entry of (dbid, queryid), the
 * DML target first.  Schema names come from this database's catalog, so
 * dbid must be MyDatabaseId (other databases give none); needs a
 * transaction.  Returns the number of schemas.
 */
extern int	fperf_attr_set_relations(FPerfAttrEvidence *ev, Oid dbid, uint64 queryid);

/*
 * The same from schema oids already read from the store (nsp[0..n-1], the
 * DML target first; repeats and InvalidOid skipped).
 */
extern int	fperf_attr_set_schemas(FPerfAttrEvidence *ev, Oid dbid,
								   const Oid *nsp, int n);

/* fperf_name_schemas_fn over this database's catalog (arg unused). */
extern List *fperf_attr_catalog_schemas(const char *name, void *arg);

#endif							/* FOLIO_PERF_ATTRIBUTION_H */
