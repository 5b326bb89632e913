/*-------------------------------------------------------------------------
 *
 * relchunk.c
 *		The elements of given relations in one chunk of the window store
 *		(folio_perf_data.rel_chunk), read without unnesting the chunk.
 *
 * A value at a snapshot (folio_perf_data.rel_at: tuples, dead tuples and
 * size of each of a window's tables at its begin) is the newest element of
 * each relation at or before the snapshot.  Written in SQL that unnests
 * every chunk up to the snapshot, five arrays of up to 1,000 elements each,
 * and keeps the elements whose key is wanted: a 24-hour window's 21,663
 * tables at 40 tenants meant 300,000 unnested elements and 0.25 s a call,
 * for 20,000 kept.  Here a chunk's keys are looked up in the wanted keys
 * (sorted once per query, binary search) and only the elements found are
 * returned.
 *
 * Copyright (c) 2026, folio_perf developers
 *
 * IDENTIFICATION
 *	  src/relchunk.c
 *
 *-------------------------------------------------------------------------
 */
#include "folio_perf.h"

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "funcapi.h"
#include "lib/qunique.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/tuplestore.h"

PG_FUNCTION_INFO_V1(folio_perf_rel_chunk_pick);

/*
 * The wanted keys, sorted and without duplicates or NULLs, kept in fn_extra
 * for the rest of the query: every chunk row passes the same array.  A copy
 * of the array as passed is kept too, to see that a later call passes the
 * same.
 */
typedef struct PickKeys
{
	Size		rawsize;
	char	   *raw;			/* the array as passed */
	int			n;
	int64	   *sorted;			/* sorted, unique, no NULL */
} PickKeys;

static int
cmp_int64(const void *a, const void *b)
{
	int64		x = *(const int64 *) a;
	int64		y = *(const int64 *) b;

	return (x > y) - (x < y);
}

/* A one-dimensional array of elemtype (without NULLs unless nulls_ok), or an error. */
static void
check_array(ArrayType *a, Oid elemtype, const char *what, bool nulls_ok)
{
	if (ARR_NDIM(a) > 1 || ARR_ELEMTYPE(a) != elemtype || (!nulls_ok && ARR_HASNULL(a)))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be a one-dimensional %s array%s", what,
						format_type_be(elemtype), nulls_ok ? "" : " without NULL elements"),
				 errhint("Pass a chunk's arrays as folio_perf_data.rel_chunk stores them.")));
}

static PickKeys *
wanted_keys(FunctionCallInfo fcinfo, ArrayType *want)
{
	PickKeys   *pk = (PickKeys *) fcinfo->flinfo->fn_extra;
	Size		rawsize = VARSIZE(want);
	Datum	   *wv;
	bool	   *wn;
	int			nw;
	int			i;
	MemoryContext old;

	if (pk != NULL && pk->rawsize == rawsize && memcmp(pk->raw, want, rawsize) == 0)
		return pk;

	deconstruct_array(want, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE, &wv, &wn, &nw);
	old = MemoryContextSwitchTo(fcinfo->flinfo->fn_mcxt);
	if (pk != NULL)
	{
		pfree(pk->raw);
		pfree(pk->sorted);
	}
	else
		pk = palloc(sizeof(PickKeys));
	pk->rawsize = rawsize;
	pk->raw = palloc(rawsize);
	memcpy(pk->raw, want, rawsize);
	pk->sorted = palloc(sizeof(int64) * Max(nw, 1));
	pk->n = 0;
	for (i = 0; i < nw; i++)
		if (!wn[i])
			pk->sorted[pk->n++] = DatumGetInt64(wv[i]);
	if (pk->n > 1)
	{
		qsort(pk->sorted, pk->n, sizeof(int64), cmp_int64);
		pk->n = (int) qunique(pk->sorted, pk->n, sizeof(int64), cmp_int64);
	}
	MemoryContextSwitchTo(old);
	fcinfo->flinfo->fn_extra = pk;
	return pk;
}

static bool
wanted(const PickKeys *pk, int64 key)
{
	int			lo = 0,
				hi = pk->n - 1;

	while (lo <= hi)
	{
		int			mid = lo + (hi - lo) / 2;

		if (pk->sorted[mid] == key)
			return true;
		if (pk->sorted[mid] < key)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return false;
}

/*
 * folio_perf_rel_chunk_pick(keys bigint[], flags smallint[],
 *     n_live_tup bigint[], n_dead_tup bigint[], size_bytes bigint[],
 *     want bigint[])
 * RETURNS TABLE(k bigint, f smallint, live bigint, dead bigint, sz bigint)
 *
 * The elements of one chunk whose key is in want, in the chunk's order.
 * The five arrays are one chunk's, parallel (an error otherwise); NULL
 * elements of want match nothing.
 */
Datum
folio_perf_rel_chunk_pick(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	ArrayType  *keys,
			   *flags,
			   *live,
			   *dead,
			   *size,
			   *want;
	Datum	   *kv,
			   *fv,
			   *lv,
			   *dv,
			   *sv;
	bool	   *kn,
			   *fn,
			   *ln,
			   *dn,
			   *sn;
	int			n,
				nf,
				nl,
				nd,
				ns;
	PickKeys   *pk;
	int			i;

	fperf_init_srf(fcinfo);
	for (i = 0; i < 6; i++)
		if (PG_ARGISNULL(i))
			return (Datum) 0;
	keys = PG_GETARG_ARRAYTYPE_P(0);
	flags = PG_GETARG_ARRAYTYPE_P(1);
	live = PG_GETARG_ARRAYTYPE_P(2);
	dead = PG_GETARG_ARRAYTYPE_P(3);
	size = PG_GETARG_ARRAYTYPE_P(4);
	want = PG_GETARG_ARRAYTYPE_P(5);
	check_array(keys, INT8OID, "keys", false);
	check_array(flags, INT2OID, "flags", true);
	check_array(live, INT8OID, "n_live_tup", true);
	check_array(dead, INT8OID, "n_dead_tup", true);
	check_array(size, INT8OID, "size_bytes", true);
	check_array(want, INT8OID, "want", true);

	pk = wanted_keys(fcinfo, want);
	if (pk->n == 0)
		return (Datum) 0;

	deconstruct_array(keys, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE, &kv, &kn, &n);
	deconstruct_array(flags, INT2OID, 2, true, TYPALIGN_SHORT, &fv, &fn, &nf);
	deconstruct_array(live, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE, &lv, &ln, &nl);
	deconstruct_array(dead, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE, &dv, &dn, &nd);
	deconstruct_array(size, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE, &sv, &sn, &ns);
	if (nf != n || nl != n || nd != n || ns != n)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a chunk's arrays must have as many elements as its keys (%d): flags %d, n_live_tup %d, n_dead_tup %d, size_bytes %d",
						n, nf, nl, nd, ns),
				 errhint("Pass a chunk's arrays as folio_perf_data.rel_chunk stores them.")));

	for (i = 0; i < n; i++)
	{
		Datum		values[5];
		bool		nulls[5];

		if (!wanted(pk, DatumGetInt64(kv[i])))
			continue;
		values[0] = kv[i];
		nulls[0] = false;
		values[1] = fv[i];
		nulls[1] = fn[i];
		values[2] = lv[i];
		nulls[2] = ln[i];
		values[3] = dv[i];
		nulls[3] = dn[i];
		values[4] = sv[i];
		nulls[4] = sn[i];
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}
