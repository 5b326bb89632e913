/*-------------------------------------------------------------------------
 *
 * relinc.c
 *		Increments of a relation's counters from one stored element to the
 *		next (the window store, folio_perf_data.rel_chunk).
 *
 * A snapshot stores, per changed relation, its 16 counters' increments
 * since the relation's previous element: from zero where it is new, and
 * from zero where any of its counters that only a reset or a crash lowers
 * went down (scans, tuples read, fetched, inserted, updated, deleted,
 * blocks read and hit: the rule of a window's "reset" status).  Written in
 * SQL this is some sixty array subscripts per relation, most of a worst
 * case's element building (100,000 relations); here it is one pass over
 * two arrays.
 *
 * Copyright (c) 2026, folio_perf developers
 *
 * IDENTIFICATION
 *	  src/relinc.c
 *
 *-------------------------------------------------------------------------
 */
#include "folio_perf.h"

#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

PG_FUNCTION_INFO_V1(folio_perf_rel_increments);
PG_FUNCTION_INFO_V1(folio_perf_rel_reset);
PG_FUNCTION_INFO_V1(folio_perf_rel_counter_array);

/* the counters of rel_chunk, seq_scan .. toast_blks_hit */
#define REL_NCOUNTERS 16

/*
 * The counters a reset or a crash lowers (0-based): seq_scan, seq_tup_read,
 * idx_scan, idx_tup_fetch, n_tup_ins, n_tup_upd, n_tup_del, blks_read,
 * blks_hit.  The others also go down without one (a new TOAST table's
 * blocks, vacuum counts), and a window counts them at least zero.
 */
static const bool reset_counter[REL_NCOUNTERS] = {
	true, true, true, true, true, true, true, false,
	false, false, false, false, true, true, false, false
};

/*
 * Deconstruct a counters array: one dimension of REL_NCOUNTERS bigints
 * (NULL elements allowed), or an error.
 */
static void
counters_of(ArrayType *a, const char *what, Datum **values, bool **nulls)
{
	int			n;

	if (ARR_ELEMTYPE(a) != INT8OID || ARR_NDIM(a) != 1 ||
		ArrayGetNItems(ARR_NDIM(a), ARR_DIMS(a)) != REL_NCOUNTERS)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be a one-dimensional bigint array of %d counters",
						what, REL_NCOUNTERS),
				 errhint("Pass the counters in folio_perf_data.rel_chunk's order, seq_scan to toast_blks_hit.")));
	deconstruct_array(a, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE, values, nulls, &n);
}

/* Whether any counter a reset lowers is lower in cur than in prev. */
static bool
went_down(const Datum *cv, const bool *cn, const Datum *pv, const bool *pn)
{
	int			i;

	for (i = 0; i < REL_NCOUNTERS; i++)
		if (reset_counter[i] && !cn[i] && !pn[i] &&
			DatumGetInt64(cv[i]) < DatumGetInt64(pv[i]))
			return true;
	return false;
}

/*
 * folio_perf_rel_increments(cur bigint[], prev bigint[]) RETURNS bigint[]
 *
 * cur NULL (the relation is gone): 0 where prev has the counter, NULL where
 * its kind has none.  prev NULL (new), or a counter went down (reset): cur.
 * Otherwise cur - prev per counter (NULL where either is).
 */
Datum
folio_perf_rel_increments(PG_FUNCTION_ARGS)
{
	Datum	   *cv = NULL,
			   *pv = NULL;
	bool	   *cn = NULL,
			   *pn = NULL;
	Datum		out[REL_NCOUNTERS];
	bool		outnull[REL_NCOUNTERS];
	int			dims[1] = {REL_NCOUNTERS};
	int			lbs[1] = {1};
	int			i;

	if (PG_ARGISNULL(0) && PG_ARGISNULL(1))
		PG_RETURN_NULL();
	if (!PG_ARGISNULL(0))
		counters_of(PG_GETARG_ARRAYTYPE_P(0), "cur", &cv, &cn);
	if (!PG_ARGISNULL(1))
		counters_of(PG_GETARG_ARRAYTYPE_P(1), "prev", &pv, &pn);

	if (cv == NULL)
	{
		for (i = 0; i < REL_NCOUNTERS; i++)
		{
			out[i] = Int64GetDatum(0);
			outnull[i] = pn[i];
		}
	}
	else if (pv == NULL || went_down(cv, cn, pv, pn))
		PG_RETURN_DATUM(PG_GETARG_DATUM(0));
	else
	{
		for (i = 0; i < REL_NCOUNTERS; i++)
		{
			outnull[i] = cn[i] || pn[i];
			/* wraps as the counters' own sums would; never traps */
			out[i] = outnull[i] ? Int64GetDatum(0) :
				Int64GetDatum((int64) ((uint64) DatumGetInt64(cv[i]) -
									   (uint64) DatumGetInt64(pv[i])));
		}
	}
	PG_RETURN_ARRAYTYPE_P(construct_md_array(out, outnull, 1, dims, lbs, INT8OID, 8,
											 FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
}

/*
 * folio_perf_rel_reset(cur bigint[], prev bigint[]) RETURNS boolean
 *
 * Whether a counter that only a reset lowers went down from prev to cur
 * (false when either is NULL).
 */
Datum
folio_perf_rel_reset(PG_FUNCTION_ARGS)
{
	Datum	   *cv,
			   *pv;
	bool	   *cn,
			   *pn;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		PG_RETURN_BOOL(false);
	counters_of(PG_GETARG_ARRAYTYPE_P(0), "cur", &cv, &cn);
	counters_of(PG_GETARG_ARRAYTYPE_P(1), "prev", &pv, &pn);
	PG_RETURN_BOOL(went_down(cv, cn, pv, pn));
}

/*
 * folio_perf_rel_counter_array(status "char", relkind "char", numscans,
 *     tuples_returned, tuples_fetched, tuples_inserted, tuples_updated,
 *     tuples_deleted, tuples_hot_updated, vacuum_count, autovacuum_count,
 *     analyze_count, autoanalyze_count, blocks_read, blocks_hit,
 *     toast_blocks_read, toast_blocks_hit) RETURNS bigint[]
 *
 * A relation's counters in rel_chunk's order from a row of the capture's
 * work table: what an index does not have is NULL (an index's scans are
 * idx_scan, a table's seq_scan); NULL when the relation is gone ('d').
 */
Datum
folio_perf_rel_counter_array(PG_FUNCTION_ARGS)
{
	/* the argument (from 2) each counter comes from, and whether an index has it */
	static const struct
	{
		int			arg;
		bool		table;
		bool		index;
	}			map[REL_NCOUNTERS] = {
		{2, true, false},		/* seq_scan: numscans */
		{3, true, false},		/* seq_tup_read: tuples_returned */
		{2, false, true},		/* idx_scan: numscans */
		{4, true, true},		/* idx_tup_fetch: tuples_fetched */
		{5, true, false}, {6, true, false}, {7, true, false}, {8, true, false},
		{9, true, false}, {10, true, false}, {11, true, false}, {12, true, false},
		{13, true, true},		/* blks_read */
		{14, true, true},		/* blks_hit */
		{15, true, false}, {16, true, false}
	};
	Datum		out[REL_NCOUNTERS];
	bool		outnull[REL_NCOUNTERS];
	int			dims[1] = {REL_NCOUNTERS};
	int			lbs[1] = {1};
	bool		is_index;
	int			i;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1) || PG_GETARG_CHAR(0) == 'd')
		PG_RETURN_NULL();
	is_index = (PG_GETARG_CHAR(1) == RELKIND_INDEX);
	for (i = 0; i < REL_NCOUNTERS; i++)
	{
		bool		has = is_index ? map[i].index : map[i].table;

		outnull[i] = !has || PG_ARGISNULL(map[i].arg);
		out[i] = outnull[i] ? Int64GetDatum(0) : PG_GETARG_DATUM(map[i].arg);
	}
	PG_RETURN_ARRAYTYPE_P(construct_md_array(out, outnull, 1, dims, lbs, INT8OID, 8,
											 FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
}
