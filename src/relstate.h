/*-------------------------------------------------------------------------
 *
 * relstate.h
 *		The previous relation state of a snapshot: a table of relations
 *		keyed by relid, in backend memory or in a shared image.
 *
 * The capture of a snapshot compares every relation with what the previous
 * snapshot of the database stored in folio_perf_data.rel_last.  Reading
 * that table costs a sequential scan of every row at every snapshot (18 %
 * of an idle snapshot at 40 tenants), so the state is also kept in shared
 * memory: an image per database, tagged with the snapshot that wrote it and
 * valid only once that snapshot's transaction committed.  A capture that
 * holds the database's capture lock and finds the image of the snapshot
 * before it uses the image in place; otherwise it reads rel_last (after a
 * restart, a rolled-back capture, without preloading) and the capture's
 * publish makes the image again.  See relstate.c.
 *
 * Copyright (c) 2026, folio_perf developers
 *
 * IDENTIFICATION
 *	  src/relstate.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FOLIO_PERF_RELSTATE_H
#define FOLIO_PERF_RELSTATE_H

#include "folio_perf.h"

#include "access/xlogdefs.h"
#include "storage/block.h"

/* Which of an entry's values are NULL (as in rel_last). */
#define FPERF_RS_NULL_WSIG	0x01
#define FPERF_RS_NULL_SIZE	0x02
#define FPERF_RS_NULL_LIVE	0x04
#define FPERF_RS_NULL_DEAD	0x08

/*
 * One relation of the previous state: rel_last's row, and where the pass
 * found its pg_class row (block, TOAST table) for the incremental pass.
 * 72 bytes.
 */
typedef struct FPerfRelState
{
	Oid			relid;			/* key; InvalidOid: an empty slot */
	Oid			relfilenode;
	BlockNumber blkno;			/* pg_class block; InvalidBlockNumber: unknown */
	Oid			toastrelid;		/* its pg_class row's reltoastrelid */
	int64		sig;
	int64		rel_key_id;
	int64		wsig;
	int64		size;
	int64		live;
	int64		dead;
	uint8		nulls;			/* FPERF_RS_NULL_* */
} FPerfRelState;

/*
 * A table of states: open addressing with linear probing over a power-of-
 * two array, filled to at most three quarters.  Either local (slots in
 * backend memory) or a shared image (slots in the shared area, written only
 * by the capture that holds the database's capture lock).
 */
typedef struct FPerfRelStateTable
{
	uint32		capacity;		/* slots, a power of two */
	uint32		members;
	int64		bytes;			/* sum of size over the members */
	FPerfRelState *slots;
	bool		shared;			/* slots are a shared image's */
	MemoryContext cxt;			/* local: where slots live */
} FPerfRelStateTable;

extern FPerfRelStateTable *fperf_relstate_create(MemoryContext cxt, uint32 n);
extern FPerfRelState *fperf_relstate_lookup(const FPerfRelStateTable *t, Oid relid);
extern FPerfRelState *fperf_relstate_insert(FPerfRelStateTable *t, Oid relid,
											bool *found);
extern bool fperf_relstate_delete(FPerfRelStateTable *t, Oid relid);

/*
 * A change the capture's scan returned, kept for the publish; 'b' is an
 * unchanged relation whose pg_class row moved (block, TOAST table).
 */
typedef struct FPerfRelChange
{
	char		status;			/* 'n' new, 'c' changed, 'd' dropped, 'b' moved */
	FPerfRelState v;			/* the values rel_last gets ('d': relid) */
} FPerfRelChange;

/*
 * What a pass saw of a block of pg_class: its LSN, and whether a row on it
 * was written by a transaction that could still commit or abort (its rows'
 * visibility may change without the block changing).  The incremental
 * pass reads again only blocks whose LSN moved or that were uncertain.
 */
typedef struct FPerfRelBlock
{
	XLogRecPtr	lsn;
	bool		uncertain;
} FPerfRelBlock;

/* Shared memory (preloading only) */
extern Size fperf_relstate_shmem_size(void);
extern void fperf_relstate_shmem_init(void);
extern void fperf_relstate_define_gucs(void);

/*
 * The capture's side (relstats.c): the image of the snapshot prev_snap if
 * this backend may use it (NULL otherwise), and what the scan found, kept
 * until the publish of the same transaction.
 */
extern bool fperf_relstate_enabled(void);
extern FPerfRelStateTable *fperf_relstate_image(int64 prev_snap, Oid rel_last_relid);
extern void fperf_relstate_begin_capture(FPerfRelStateTable *state);
extern void fperf_relstate_record(char status, const FPerfRelState *v);
extern const FPerfRelBlock *fperf_relstate_blocks(BlockNumber *nblocks,
												  Oid *class_rfn);
extern void fperf_relstate_record_blocks(FPerfRelBlock *blocks,
										 BlockNumber nblocks, Oid class_rfn);
extern void fperf_relstate_note_pass(BlockNumber blocks_read, bool incremental);

#endif							/* FOLIO_PERF_RELSTATE_H */
