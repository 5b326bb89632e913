/*-------------------------------------------------------------------------
 *
 * relstate.c
 *		The previous relation state of a snapshot, and its image in shared
 *		memory.
 *
 * A local snapshot compares every relation with the state its database's
 * previous snapshot left in folio_perf_data.rel_last (relid, relfilenode,
 * signature, rows-written signature, size, live and dead tuples, key).
 * The comparison looks each relation up in a table of those states:
 * open addressing with linear probing, at most three quarters full,
 * deletion by backward shift (no tombstones), so that the table needs no
 * allocation but its one array and can live in shared memory as it is.
 *
 * The image.  Reading rel_last into the table is a sequential scan of
 * every row and an insert per relation at every snapshot.  With folio_perf
 * preloaded, the capture's publish (folio_perf_data.rel_state_publish,
 * called by capture() after it wrote rel_last) leaves the table in a
 * dynamic shared memory area, one image per database, tagged with the
 * snapshot that wrote it.  The next capture of that database uses the image
 * in place instead of reading rel_last when
 *	 - it holds the database's capture lock (folio_perf_data.capture_lock in
 *	   EXCLUSIVE mode: every capture and publish of the database takes it, so
 *	   no one else reads or writes the image meanwhile),
 *	 - the image's tag is the snapshot before its own (capture() passes it)
 *	   and the image was made for the rel_last table that exists now (its oid
 *	   and relfilenode: a re-created extension or a truncated table has other
 *	   ones).
 * The tag is set only when the publishing transaction commits (an xact
 * callback); a publish first clears it, so that an image that a rolled-back
 * capture changed, or one whose snapshot was rolled back to a savepoint, is
 * never used: the next capture reads rel_last and publishes again.  After
 * a restart shared memory is empty and the first capture reads rel_last.
 * Anything else that changes rel_last must call rel_state_forget().
 *
 * Locking.  RelStateShared->lock (folio_perf's tranche) guards the area's
 * handle, the slot array of databases and every image's header; an image's
 * slots are read and written only under the database's capture lock, which
 * the functions check (LockHeldByMe) rather than trust.  Memory is bounded
 * by folio_perf.rel_state_memory: an image that does not fit is not made
 * (the capture reads rel_last, as without preloading); at most
 * RELSTATE_MAX_DBS databases have an image (a dropped database's slot is
 * taken over).
 *
 * Copyright (c) 2026, folio_perf developers
 *
 * IDENTIFICATION
 *	  src/relstate.c
 *
 *-------------------------------------------------------------------------
 */
#include "relstate.h"

#include "access/htup_details.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "commands/dbcommands.h"
#include "catalog/pg_type.h"
#include "common/hashfn.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "port/pg_bitutils.h"
#include "storage/lmgr.h"
#include "storage/lock.h"
#include "storage/shmem.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/dsa.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"

PG_FUNCTION_INFO_V1(folio_perf_rel_state);
PG_FUNCTION_INFO_V1(folio_perf_rel_state_publish);
PG_FUNCTION_INFO_V1(folio_perf_rel_state_forget);
PG_FUNCTION_INFO_V1(folio_perf_rel_state_rows);

/* Databases with an image at most. */
#define RELSTATE_MAX_DBS 32

/* The smallest table; and fill at most 3/4. */
#define RELSTATE_MIN_CAPACITY 1024

/* An image: this header, then its slots. */
typedef struct RelStateImage
{
	Oid			dbid;
	Oid			rel_last_relid; /* the rel_last it mirrors ... */
	Oid			rel_last_rfn;	/* ... and that table's relfilenode */
	int64		snap_id;		/* the snapshot that wrote it; 0: not valid */
	uint32		capacity;
	uint32		members;
	int64		bytes;
	Size		alloc_size;		/* of the whole image */
	/* what the pass that left it saw of pg_class (none: nblocks 0) */
	Oid			class_rfn;		/* pg_class's relfilenode then */
	BlockNumber nblocks;
	dsa_pointer blocks;			/* FPerfRelBlock[nblocks] */
	/* FPerfRelState slots[capacity] follow at IMAGE_SLOTS_OFFSET */
} RelStateImage;

#define IMAGE_SLOTS_OFFSET MAXALIGN(sizeof(RelStateImage))
#define IMAGE_SIZE(capacity) \
	(IMAGE_SLOTS_OFFSET + (Size) (capacity) * sizeof(FPerfRelState))

typedef struct RelStateSlot
{
	Oid			dbid;			/* InvalidOid: free */
	dsa_pointer image;			/* InvalidDsaPointer: none (yet) */
	TimestampTz published;		/* last publish */
	uint64		uses;			/* captures that used the image */
	uint64		reads;			/* captures that read rel_last */
	uint64		publishes;
	uint64		not_made;		/* publishes that could not keep an image */
	uint64		incremental;	/* captures that read changed pg_class blocks only */
	uint32		blocks_read;	/* pg_class blocks the last capture read */
	uint32		class_blocks;	/* pg_class blocks then */
} RelStateSlot;

typedef struct RelStateShared
{
	LWLock	   *lock;
	int			tranche_id;		/* of the area's own locks */
	bool		have_area;		/* area made (on first publish) */
	dsa_handle	area;
	Size		used;			/* bytes of all images */
	RelStateSlot db[RELSTATE_MAX_DBS];
} RelStateShared;

/* folio_perf.rel_state_memory, MB; 0: no images */
static int	fperf_rel_state_memory_mb = 256;

static RelStateShared *rsshared = NULL;
static dsa_area *rs_area = NULL;	/* this backend's attachment */

/*
 * This transaction's capture: the state it compared with (an image or a
 * local table in TopTransactionContext), what its scan found, and what
 * its publish will tag at commit.
 */
static FPerfRelStateTable *xact_state = NULL;
static Oid	xact_rel_last = InvalidOid;
static FPerfRelChange *xact_changes = NULL;
static int	xact_nchanges = 0;
static int	xact_maxchanges = 0;
static bool xact_pending = false;	/* a publish waits for commit */
static int	xact_pending_slot = -1;
static dsa_pointer xact_pending_image = InvalidDsaPointer;
static int64 xact_pending_snap = 0;
static SubTransactionId xact_pending_subid = InvalidSubTransactionId;
static bool callbacks_registered = false;
/* the image's pg_class blocks (in the area), and the capture's own */
static const FPerfRelBlock *xact_img_blocks = NULL;
static BlockNumber xact_img_nblocks = 0;
static Oid	xact_img_class_rfn = InvalidOid;
static FPerfRelBlock *xact_blocks = NULL;
static BlockNumber xact_nblocks = 0;
static Oid	xact_class_rfn = InvalidOid;
static BlockNumber xact_blocks_read = 0;
static bool xact_incremental = false;

/* ---------------------------------------------------------------------
 * The table
 * ---------------------------------------------------------------------
 */

static inline uint32
slot_of(const FPerfRelStateTable *t, Oid relid)
{
	return murmurhash32(relid) & (t->capacity - 1);
}

static uint32
capacity_for(uint32 n)
{
	uint64		want = Max((uint64) n * 4 / 3 + 1, RELSTATE_MIN_CAPACITY);

	if (want > (uint64) PG_UINT32_MAX / 2)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("too many relations for the previous-state table: %u", n)));
	return (uint32) pg_nextpower2_64(want);
}

/* An empty local table for n relations. */
FPerfRelStateTable *
fperf_relstate_create(MemoryContext cxt, uint32 n)
{
	FPerfRelStateTable *t = MemoryContextAllocZero(cxt, sizeof(FPerfRelStateTable));

	t->capacity = capacity_for(n);
	t->slots = MemoryContextAllocExtended(cxt,
										  (Size) t->capacity * sizeof(FPerfRelState),
										  MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	t->cxt = cxt;
	return t;
}

FPerfRelState *
fperf_relstate_lookup(const FPerfRelStateTable *t, Oid relid)
{
	uint32		mask = t->capacity - 1;
	uint32		i = slot_of(t, relid);

	for (;;)
	{
		FPerfRelState *e = &t->slots[i];

		if (e->relid == relid)
			return e;
		if (e->relid == InvalidOid)
			return NULL;
		i = (i + 1) & mask;
	}
}

/* Insert without growing: the caller made room. */
static FPerfRelState *
insert_no_grow(FPerfRelStateTable *t, Oid relid, bool *found)
{
	uint32		mask = t->capacity - 1;
	uint32		i = slot_of(t, relid);

	for (;;)
	{
		FPerfRelState *e = &t->slots[i];

		if (e->relid == relid)
		{
			*found = true;
			return e;
		}
		if (e->relid == InvalidOid)
		{
			memset(e, 0, sizeof(*e));
			e->relid = relid;
			t->members++;
			*found = false;
			return e;
		}
		i = (i + 1) & mask;
	}
}

/* Move every member of from into to (empty, big enough). */
static void
rehash_into(FPerfRelStateTable *to, const FPerfRelStateTable *from)
{
	uint32		i;

	for (i = 0; i < from->capacity; i++)
	{
		const FPerfRelState *e = &from->slots[i];
		bool		found;

		if (e->relid != InvalidOid)
			*insert_no_grow(to, e->relid, &found) = *e;
	}
	to->bytes = from->bytes;
}

static inline bool
needs_room(const FPerfRelStateTable *t, uint32 more)
{
	return (uint64) (t->members + more) * 4 > (uint64) t->capacity * 3;
}

/*
 * Insert relid (a zeroed entry with the key set) or find it.  A local
 * table grows as needed; a shared one never does here (publish makes room
 * first).
 */
FPerfRelState *
fperf_relstate_insert(FPerfRelStateTable *t, Oid relid, bool *found)
{
	Assert(relid != InvalidOid);
	if (needs_room(t, 1))
	{
		FPerfRelStateTable *bigger;

		if (t->shared)
			elog(ERROR, "shared previous-state image is full");
		bigger = fperf_relstate_create(t->cxt, t->members * 2 + 1);
		rehash_into(bigger, t);
		pfree(t->slots);
		t->slots = bigger->slots;
		t->capacity = bigger->capacity;
		pfree(bigger);
	}
	return insert_no_grow(t, relid, found);
}

/* Delete relid, shifting back the run after it; false if not there. */
bool
fperf_relstate_delete(FPerfRelStateTable *t, Oid relid)
{
	uint32		mask = t->capacity - 1;
	uint32		i = slot_of(t, relid);
	uint32		j;

	for (;;)
	{
		if (t->slots[i].relid == relid)
			break;
		if (t->slots[i].relid == InvalidOid)
			return false;
		i = (i + 1) & mask;
	}

	/* backward shift: move up every later entry whose home allows it */
	j = i;
	for (;;)
	{
		uint32		home;

		j = (j + 1) & mask;
		if (t->slots[j].relid == InvalidOid)
			break;
		home = slot_of(t, t->slots[j].relid);
		/* may the entry at j move to i?  yes unless home lies in (i, j] */
		if ((i <= j) ? (home <= i || home > j) : (home <= i && home > j))
		{
			t->slots[i] = t->slots[j];
			i = j;
		}
	}
	memset(&t->slots[i], 0, sizeof(FPerfRelState));
	t->members--;
	return true;
}

/* ---------------------------------------------------------------------
 * Shared memory
 * ---------------------------------------------------------------------
 */

void
fperf_relstate_define_gucs(void)
{
	DefineCustomIntVariable("folio_perf.rel_state_memory",
							"Shared memory for the previous snapshot's relation states.",
							"Each database's snapshots keep the states of its relations "
							"(64 bytes a slot, about 128 bytes a relation) in shared "
							"memory, so that a snapshot need not read "
							"folio_perf_data.rel_last. 0 turns that off. Needs folio_perf "
							"in shared_preload_libraries.",
							&fperf_rel_state_memory_mb,
							256,
							0,
							MAX_KILOBYTES / 1024,
							PGC_SIGHUP,
							GUC_UNIT_MB,
							NULL, NULL, NULL);
}

Size
fperf_relstate_shmem_size(void)
{
	return MAXALIGN(sizeof(RelStateShared));
}

void
fperf_relstate_shmem_init(void)
{
	bool		found;

	rsshared = ShmemInitStruct("folio_perf relation states",
							   sizeof(RelStateShared), &found);
	if (!found)
	{
		int			i;

		rsshared->lock = &(GetNamedLWLockTranche(FPERF_NAME))[FPERF_LOCK_RELSTATE].lock;
		rsshared->tranche_id = LWLockNewTrancheId();
		rsshared->have_area = false;
		rsshared->used = 0;
		for (i = 0; i < RELSTATE_MAX_DBS; i++)
		{
			rsshared->db[i].dbid = InvalidOid;
			rsshared->db[i].image = InvalidDsaPointer;
		}
	}
}

/*
 * This backend's attachment to the area, made (and the area created) on
 * first use; NULL without preloading.  Called with rsshared->lock held
 * exclusively when create is true.
 */
static dsa_area *
area_attach(bool create)
{
	MemoryContext oldcxt;

	bool		have;
	dsa_handle	handle = 0;

	if (rs_area != NULL || rsshared == NULL)
		return rs_area;
	if (LWLockHeldByMe(rsshared->lock))
		have = rsshared->have_area;
	else
	{
		LWLockAcquire(rsshared->lock, LW_SHARED);
		have = rsshared->have_area;
		handle = rsshared->area;
		LWLockRelease(rsshared->lock);
		if (!have)
			return NULL;
		Assert(!create);
	}
	if (!have && !create)
		return NULL;
	if (have && !LWLockHeldByMe(rsshared->lock))
	{
		LWLockRegisterTranche(rsshared->tranche_id, "folio_perf_rel_state");
		oldcxt = MemoryContextSwitchTo(TopMemoryContext);
		rs_area = dsa_attach(handle);
		dsa_pin_mapping(rs_area);
		MemoryContextSwitchTo(oldcxt);
		return rs_area;
	}

	LWLockRegisterTranche(rsshared->tranche_id, "folio_perf_rel_state");
	oldcxt = MemoryContextSwitchTo(TopMemoryContext);
	if (!rsshared->have_area)
	{
		rs_area = dsa_create(rsshared->tranche_id);
		dsa_pin(rs_area);
		rsshared->area = dsa_get_handle(rs_area);
		rsshared->have_area = true;
	}
	else
		rs_area = dsa_attach(rsshared->area);
	dsa_pin_mapping(rs_area);
	MemoryContextSwitchTo(oldcxt);
	return rs_area;
}

static int
slot_find(Oid dbid)
{
	int			i;

	for (i = 0; i < RELSTATE_MAX_DBS; i++)
		if (rsshared->db[i].dbid == dbid)
			return i;
	return -1;
}

/* Free an image's pg_class blocks (lock held exclusively). */
static void
blocks_drop(RelStateImage *img)
{
	if (img->nblocks > 0 && DsaPointerIsValid(img->blocks))
	{
		rsshared->used -= (Size) img->nblocks * sizeof(FPerfRelBlock);
		dsa_free(rs_area, img->blocks);
	}
	img->blocks = InvalidDsaPointer;
	img->nblocks = 0;
	img->class_rfn = InvalidOid;
}

/*
 * Give the image the pg_class blocks this transaction's capture saw (none
 * if it recorded none, or they do not fit: the next capture then reads
 * every block).  Lock held exclusively.
 */
static void
blocks_store(RelStateImage *img)
{
	Size		size = (Size) xact_nblocks * sizeof(FPerfRelBlock);
	dsa_pointer dp;

	blocks_drop(img);
	if (xact_blocks == NULL || xact_nblocks == 0 ||
		rsshared->used + size > (Size) fperf_rel_state_memory_mb * 1024 * 1024)
		return;
	dp = dsa_allocate_extended(rs_area, size, DSA_ALLOC_HUGE | DSA_ALLOC_NO_OOM);
	if (!DsaPointerIsValid(dp))
		return;
	memcpy(dsa_get_address(rs_area, dp), xact_blocks, size);
	rsshared->used += size;
	img->blocks = dp;
	img->nblocks = xact_nblocks;
	img->class_rfn = xact_class_rfn;
}

/* Free the image of slot i (lock held exclusively). */
static void
slot_drop_image(int i)
{
	RelStateSlot *s = &rsshared->db[i];

	if (DsaPointerIsValid(s->image))
	{
		RelStateImage *img = dsa_get_address(rs_area, s->image);

		blocks_drop(img);
		rsshared->used -= img->alloc_size;
		dsa_free(rs_area, s->image);
		s->image = InvalidDsaPointer;
	}
}

/*
 * The slot of dbid, taken; -1 if every slot belongs to a database that
 * still exists (an image in use is never freed under its reader: a slot is
 * given up only by a database that was dropped).
 */
static int
slot_take(Oid dbid)
{
	int			i = slot_find(dbid);

	if (i >= 0)
		return i;
	for (i = 0; i < RELSTATE_MAX_DBS; i++)
	{
		Oid			other = rsshared->db[i].dbid;

		if (other == InvalidOid ||
			!SearchSysCacheExists1(DATABASEOID, ObjectIdGetDatum(other)))
			break;
	}
	if (i == RELSTATE_MAX_DBS)
		return -1;
	slot_drop_image(i);
	memset(&rsshared->db[i], 0, sizeof(RelStateSlot));
	rsshared->db[i].dbid = dbid;
	rsshared->db[i].image = InvalidDsaPointer;
	return i;
}

/* rel_last's relfilenode now, InvalidOid if it has none. */
static Oid
relfilenode_of(Oid relid)
{
	HeapTuple	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	Oid			rfn = InvalidOid;

	if (HeapTupleIsValid(tup))
	{
		rfn = ((Form_pg_class) GETSTRUCT(tup))->relfilenode;
		ReleaseSysCache(tup);
	}
	return rfn;
}

/*
 * Does this backend hold the capture lock of its database, i.e. EXCLUSIVE
 * on folio_perf_data.capture_lock?
 */
static bool
holds_capture_lock(void)
{
	Oid			nsp = get_namespace_oid("folio_perf_data", true);
	Oid			relid;
	LOCKTAG		tag;

	if (!OidIsValid(nsp))
		return false;
	relid = get_relname_relid("capture_lock", nsp);
	if (!OidIsValid(relid))
		return false;
	SET_LOCKTAG_RELATION(tag, MyDatabaseId, relid);
	return fperf_lock_held_by_me(&tag, ExclusiveLock);
}

/* ---------------------------------------------------------------------
 * This transaction's capture
 * ---------------------------------------------------------------------
 */

static void
xact_forget(void)
{
	xact_state = NULL;
	xact_rel_last = InvalidOid;
	xact_changes = NULL;
	xact_nchanges = xact_maxchanges = 0;
	xact_pending = false;
	xact_pending_slot = -1;
	xact_pending_image = InvalidDsaPointer;
	xact_pending_snap = 0;
	xact_pending_subid = InvalidSubTransactionId;
	xact_img_blocks = NULL;
	xact_img_nblocks = 0;
	xact_img_class_rfn = InvalidOid;
	xact_blocks = NULL;
	xact_nblocks = 0;
	xact_class_rfn = InvalidOid;
	xact_blocks_read = 0;
	xact_incremental = false;
}

static void
relstate_xact_callback(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_COMMIT:
			/* the snapshot is there now: its image may be used */
			if (xact_pending && rsshared != NULL && rs_area != NULL)
			{
				RelStateSlot *s;

				LWLockAcquire(rsshared->lock, LW_EXCLUSIVE);
				s = &rsshared->db[xact_pending_slot];
				if (s->dbid == MyDatabaseId && s->image == xact_pending_image)
				{
					RelStateImage *img = dsa_get_address(rs_area, s->image);

					img->snap_id = xact_pending_snap;
				}
				LWLockRelease(rsshared->lock);
			}
			xact_forget();
			break;
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
		case XACT_EVENT_PREPARE:
		case XACT_EVENT_PARALLEL_COMMIT:
			/* the image keeps its cleared tag: the next capture reads rel_last */
			xact_forget();
			break;
		default:
			break;
	}
}

static void
relstate_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
						  SubTransactionId parentSubid, void *arg)
{
	/* a publish inside (or below) a rolled-back subtransaction is undone */
	if (event == SUBXACT_EVENT_ABORT_SUB && xact_pending &&
		xact_pending_subid >= mySubid)
		xact_pending = false;
}

static void
register_callbacks(void)
{
	if (!callbacks_registered)
	{
		RegisterXactCallback(relstate_xact_callback, NULL);
		RegisterSubXactCallback(relstate_subxact_callback, NULL);
		callbacks_registered = true;
	}
}

/* Can a publish keep an image (preloaded, memory allowed)? */
bool
fperf_relstate_enabled(void)
{
	return rsshared != NULL && fperf_rel_state_memory_mb > 0;
}

/*
 * The image of this database if it is the state the snapshot prev_snap
 * left and this backend may use it (see the header); NULL otherwise.
 * Counts the use or the read of rel_last that follows.
 */
FPerfRelStateTable *
fperf_relstate_image(int64 prev_snap, Oid rel_last_relid)
{
	FPerfRelStateTable *t = NULL;
	Oid			rfn;
	int			i;

	xact_img_blocks = NULL;
	xact_img_nblocks = 0;
	xact_img_class_rfn = InvalidOid;
	if (rsshared == NULL || fperf_rel_state_memory_mb == 0)
		return NULL;
	rfn = relfilenode_of(rel_last_relid);
	if (prev_snap <= 0 || !holds_capture_lock() || area_attach(false) == NULL)
	{
		if (rs_area != NULL)
		{
			LWLockAcquire(rsshared->lock, LW_EXCLUSIVE);
			if ((i = slot_find(MyDatabaseId)) >= 0)
				rsshared->db[i].reads++;
			LWLockRelease(rsshared->lock);
		}
		return NULL;
	}

	LWLockAcquire(rsshared->lock, LW_EXCLUSIVE);
	i = slot_find(MyDatabaseId);
	if (i >= 0 && DsaPointerIsValid(rsshared->db[i].image))
	{
		RelStateImage *img = dsa_get_address(rs_area, rsshared->db[i].image);

		if (img->snap_id == prev_snap && img->dbid == MyDatabaseId &&
			img->rel_last_relid == rel_last_relid && img->rel_last_rfn == rfn)
		{
			t = MemoryContextAllocZero(TopTransactionContext, sizeof(FPerfRelStateTable));
			t->capacity = img->capacity;
			t->members = img->members;
			t->bytes = img->bytes;
			t->slots = (FPerfRelState *) ((char *) img + IMAGE_SLOTS_OFFSET);
			t->shared = true;
			t->cxt = TopTransactionContext;
			if (img->nblocks > 0 && DsaPointerIsValid(img->blocks))
			{
				xact_img_blocks = dsa_get_address(rs_area, img->blocks);
				xact_img_nblocks = img->nblocks;
				xact_img_class_rfn = img->class_rfn;
			}
		}
	}
	if (i >= 0)
	{
		if (t)
			rsshared->db[i].uses++;
		else
			rsshared->db[i].reads++;
	}
	LWLockRelease(rsshared->lock);
	return t;
}

/*
 * The capture's scan begins with state (an image, or a table read from
 * rel_last in TopTransactionContext): remember it for the publish.
 */
void
fperf_relstate_begin_capture(FPerfRelStateTable *state)
{
	register_callbacks();
	xact_state = state;
	xact_changes = NULL;
	xact_nchanges = xact_maxchanges = 0;
	xact_blocks = NULL;
	xact_nblocks = 0;
	xact_class_rfn = InvalidOid;
	xact_blocks_read = 0;
	xact_incremental = false;
}

/*
 * The pg_class blocks the image this transaction's capture uses was made
 * with (NULL if none: the capture reads every block).
 */
const FPerfRelBlock *
fperf_relstate_blocks(BlockNumber *nblocks, Oid *class_rfn)
{
	if (xact_state == NULL || !xact_state->shared || xact_img_blocks == NULL)
		return NULL;
	*nblocks = xact_img_nblocks;
	*class_rfn = xact_img_class_rfn;
	return xact_img_blocks;
}

/*
 * The pg_class blocks the capture's pass saw (blocks in
 * TopTransactionContext), how many it read, and whether it read only the
 * changed ones: kept with the image at the publish.
 */
void
fperf_relstate_record_blocks(FPerfRelBlock *blocks, BlockNumber nblocks, Oid class_rfn)
{
	xact_blocks = blocks;
	xact_nblocks = nblocks;
	xact_class_rfn = class_rfn;
}

void
fperf_relstate_note_pass(BlockNumber blocks_read, bool incremental)
{
	xact_blocks_read = blocks_read;
	xact_incremental = incremental;
}

/* A row the capture's scan returned: the values rel_last will get. */
void
fperf_relstate_record(char status, const FPerfRelState *v)
{
	if (xact_state == NULL)
		return;
	if (xact_nchanges == xact_maxchanges)
	{
		int			n = Max(1024, xact_maxchanges * 2);

		if (xact_changes == NULL)
			xact_changes = MemoryContextAllocExtended(TopTransactionContext,
													  n * sizeof(FPerfRelChange),
													  MCXT_ALLOC_HUGE);
		else
			xact_changes = repalloc_huge(xact_changes, n * sizeof(FPerfRelChange));
		xact_maxchanges = n;
	}
	xact_changes[xact_nchanges].status = status;
	xact_changes[xact_nchanges].v = *v;
	xact_nchanges++;
}

/* ---------------------------------------------------------------------
 * SQL functions
 * ---------------------------------------------------------------------
 */

/* rel_last of folio_perf_data, checked as the capture's reads check it */
static Oid
rel_last_relid_checked(AclMode mode)
{
	Oid			nsp = get_namespace_oid("folio_perf_data", true);
	Oid			relid = OidIsValid(nsp) ? get_relname_relid("rel_last", nsp) : InvalidOid;
	AclResult	aclresult;

	if (!OidIsValid(relid))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation \"folio_perf_data.rel_last\" does not exist"),
				 errhint("Install the folio_perf extension in this database.")));
	aclresult = pg_class_aclcheck(relid, GetUserId(), mode);
	if (aclresult != ACLCHECK_OK)
		aclcheck_error(aclresult, OBJECT_TABLE, "rel_last");
	return relid;
}

/* The new relations' keys, from two parallel arrays, as a table. */
static FPerfRelStateTable *
new_keys(ArrayType *relids, ArrayType *keys)
{
	Datum	   *r;
	Datum	   *k;
	bool	   *rn;
	bool	   *kn;
	int			nr;
	int			nk;
	int			i;
	FPerfRelStateTable *t;

	deconstruct_array(relids, OIDOID, sizeof(Oid), true, TYPALIGN_INT, &r, &rn, &nr);
	deconstruct_array(keys, INT8OID, sizeof(int64), FLOAT8PASSBYVAL,
					  TYPALIGN_DOUBLE, &k, &kn, &nk);
	if (nr != nk)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("new_relid and new_key must have the same length"),
				 errhint("Pass the relid and rel_key_id of every new relation stored, in the same order.")));
	t = fperf_relstate_create(CurrentMemoryContext, nr);
	for (i = 0; i < nr; i++)
	{
		bool		found;
		FPerfRelState *e;

		if (rn[i] || kn[i] || DatumGetObjectId(r[i]) == InvalidOid)
			continue;
		e = fperf_relstate_insert(t, DatumGetObjectId(r[i]), &found);
		e->rel_key_id = DatumGetInt64(k[i]);
	}
	return t;
}

/*
 * Apply this transaction's changes to t (as capture() applied them to
 * rel_last): dropped relations go, changed ones take their new values, new
 * ones with a key come in.  t has room (the caller made it).
 */
static void
apply_changes(FPerfRelStateTable *t, FPerfRelStateTable *keys)
{
	int			i;

	for (i = 0; i < xact_nchanges; i++)
	{
		FPerfRelChange *c = &xact_changes[i];
		FPerfRelState *e;
		bool		found;

		switch (c->status)
		{
			case 'd':
				e = fperf_relstate_lookup(t, c->v.relid);
				if (e)
				{
					t->bytes -= e->size;
					fperf_relstate_delete(t, c->v.relid);
				}
				break;
			case 'c':
				e = fperf_relstate_lookup(t, c->v.relid);
				if (e)
				{
					int64		key = e->rel_key_id;

					t->bytes += c->v.size - e->size;
					*e = c->v;
					e->rel_key_id = key;
				}
				break;
			case 'b':
				e = fperf_relstate_lookup(t, c->v.relid);
				if (e)
				{
					e->blkno = c->v.blkno;
					e->toastrelid = c->v.toastrelid;
				}
				break;
			case 'n':
				{
					FPerfRelState *k = fperf_relstate_lookup(keys, c->v.relid);

					if (k == NULL)
					{
						/*
						 * Not stored (045_capture_items): the next capture
						 * must see it again, so its block is read again.
						 */
						if (xact_blocks && c->v.blkno < xact_nblocks)
							xact_blocks[c->v.blkno].uncertain = true;
						break;
					}
					e = t->shared ? insert_no_grow(t, c->v.relid, &found) :
						fperf_relstate_insert(t, c->v.relid, &found);
					if (found)
						t->bytes -= e->size;
					*e = c->v;
					e->rel_key_id = k->rel_key_id;
					t->bytes += e->size;
				}
				break;
		}
	}
}

/* Copy local table t into a new image; InvalidDsaPointer if it does not fit. */
static dsa_pointer
image_make(const FPerfRelStateTable *t, Oid rel_last_relid, Oid rfn)
{
	Size		size = IMAGE_SIZE(t->capacity);
	dsa_pointer dp;
	RelStateImage *img;

	if (rsshared->used + size > (Size) fperf_rel_state_memory_mb * 1024 * 1024)
		return InvalidDsaPointer;
	dp = dsa_allocate_extended(rs_area, size, DSA_ALLOC_HUGE | DSA_ALLOC_NO_OOM);
	if (!DsaPointerIsValid(dp))
		return InvalidDsaPointer;
	img = dsa_get_address(rs_area, dp);
	img->dbid = MyDatabaseId;
	img->rel_last_relid = rel_last_relid;
	img->rel_last_rfn = rfn;
	img->snap_id = 0;
	img->capacity = t->capacity;
	img->members = t->members;
	img->bytes = t->bytes;
	img->alloc_size = size;
	img->blocks = InvalidDsaPointer;
	img->nblocks = 0;
	img->class_rfn = InvalidOid;
	memcpy((char *) img + IMAGE_SLOTS_OFFSET, t->slots,
		   (Size) t->capacity * sizeof(FPerfRelState));
	rsshared->used += size;
	blocks_store(img);
	return dp;
}

/*
 * folio_perf_data.rel_state_publish(snap bigint, new_relid oid[],
 *	 new_key bigint[]) RETURNS boolean: after capture() wrote rel_last, make
 *	 this database's image the state snapshot snap left (the state its
 *	 folio_perf_rel_capture() compared with, changed as rel_last was; the
 *	 keys of the new relations stored are passed, in two parallel arrays),
 *	 to be used once this transaction commits.  true if an image was made;
 *	 false without preloading, with folio_perf.rel_state_memory = 0 or when
 *	 it does not fit (the next capture then reads rel_last).  Only for the
 *	 holder of the capture lock with UPDATE on rel_last.
 */
Datum
folio_perf_rel_state_publish(PG_FUNCTION_ARGS)
{
	int64		snap = PG_GETARG_INT64(0);
	Oid			rel_last;
	Oid			rfn;
	FPerfRelStateTable *keys;
	FPerfRelStateTable *t = xact_state;
	int			i;
	dsa_pointer dp = InvalidDsaPointer;
	bool		made = false;

	rel_last = rel_last_relid_checked(ACL_UPDATE);
	if (!holds_capture_lock())
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the relation state can only be published by a snapshot's capture"),
				 errhint("Take snapshots with folio_perf_snapshot(), folio_perf_begin() or folio_perf_end().")));
	if (t == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("folio_perf_rel_capture() has not run in this transaction"),
				 errhint("Call folio_perf_rel_capture() first, in the same transaction.")));
	if (rsshared == NULL)
		PG_RETURN_BOOL(false);

	keys = new_keys(PG_ARGISNULL(1) ? construct_empty_array(OIDOID) : PG_GETARG_ARRAYTYPE_P(1),
					PG_ARGISNULL(2) ? construct_empty_array(INT8OID) : PG_GETARG_ARRAYTYPE_P(2));
	rfn = relfilenode_of(rel_last);
	register_callbacks();

	LWLockAcquire(rsshared->lock, LW_EXCLUSIVE);
	area_attach(true);
	i = slot_take(MyDatabaseId);
	if (i < 0)
	{
		/* every slot is another live database's: no image for this one */
		LWLockRelease(rsshared->lock);
		xact_state = NULL;
		xact_changes = NULL;
		xact_nchanges = xact_maxchanges = 0;
		PG_RETURN_BOOL(false);
	}
	rsshared->db[i].publishes++;
	rsshared->db[i].published = GetCurrentTimestamp();

	if (t->shared)
	{
		RelStateImage *img = dsa_get_address(rs_area, rsshared->db[i].image);

		/* not valid until commit; changed in place below */
		img->snap_id = 0;
		if (!needs_room(t, keys->members))
		{
			LWLockRelease(rsshared->lock);
			apply_changes(t, keys);
			LWLockAcquire(rsshared->lock, LW_EXCLUSIVE);
			img->members = t->members;
			img->bytes = t->bytes;
			blocks_store(img);
			dp = rsshared->db[i].image;
		}
		else
		{
			/* grow: a local copy, changed, then a new image */
			FPerfRelStateTable *local;

			LWLockRelease(rsshared->lock);
			local = fperf_relstate_create(CurrentMemoryContext,
										  t->members + keys->members);
			rehash_into(local, t);
			t = local;
			LWLockAcquire(rsshared->lock, LW_EXCLUSIVE);
		}
	}
	if (!t->shared)
	{
		LWLockRelease(rsshared->lock);
		apply_changes(t, keys);
		LWLockAcquire(rsshared->lock, LW_EXCLUSIVE);
		slot_drop_image(i);
		if (fperf_rel_state_memory_mb > 0)
			dp = image_make(t, rel_last, rfn);
		rsshared->db[i].image = dp;
	}
	made = DsaPointerIsValid(dp);
	if (!made)
		rsshared->db[i].not_made++;
	if (xact_incremental)
		rsshared->db[i].incremental++;
	rsshared->db[i].blocks_read = xact_blocks_read;
	rsshared->db[i].class_blocks = xact_nblocks;
	LWLockRelease(rsshared->lock);

	if (made)
	{
		xact_pending = true;
		xact_pending_slot = i;
		xact_pending_image = dp;
		xact_pending_snap = snap;
		xact_pending_subid = GetCurrentSubTransactionId();
	}
	/* a second capture in this transaction reads rel_last again */
	xact_state = NULL;
	xact_changes = NULL;
	xact_nchanges = xact_maxchanges = 0;
	PG_RETURN_BOOL(made);
}

/*
 * folio_perf_data.rel_state_forget() RETURNS boolean: drop this database's
 * image (for whatever changes rel_last outside capture(): its next capture
 * reads rel_last).  true if there was one.
 */
Datum
folio_perf_rel_state_forget(PG_FUNCTION_ARGS)
{
	bool		had = false;
	int			i;

	(void) rel_last_relid_checked(ACL_UPDATE);
	if (rsshared == NULL || area_attach(false) == NULL)
		PG_RETURN_BOOL(false);
	LWLockAcquire(rsshared->lock, LW_EXCLUSIVE);
	if ((i = slot_find(MyDatabaseId)) >= 0)
	{
		had = DsaPointerIsValid(rsshared->db[i].image);
		slot_drop_image(i);
	}
	LWLockRelease(rsshared->lock);
	xact_pending = false;
	PG_RETURN_BOOL(had);
}

/*
 * folio_perf_rel_state() RETURNS TABLE(datid oid, datname name, snap_id
 *	 bigint, relations bigint, rel_bytes bigint, memory_bytes bigint,
 *	 uses bigint, reads bigint, publishes bigint, not_made bigint,
 *	 incremental bigint, class_blocks bigint, blocks_read bigint): the
 *	 images, one row per database that published one.
 */
Datum
folio_perf_rel_state(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	RelStateSlot copy[RELSTATE_MAX_DBS];
	RelStateImage heads[RELSTATE_MAX_DBS];
	bool		have[RELSTATE_MAX_DBS];
	int			i;

	fperf_init_srf(fcinfo);
	if (rsshared == NULL)
		PG_RETURN_VOID();
	area_attach(false);
	LWLockAcquire(rsshared->lock, LW_SHARED);
	for (i = 0; i < RELSTATE_MAX_DBS; i++)
	{
		copy[i] = rsshared->db[i];
		have[i] = rs_area != NULL && DsaPointerIsValid(copy[i].image);
		if (have[i])
			heads[i] = *(RelStateImage *) dsa_get_address(rs_area, copy[i].image);
	}
	LWLockRelease(rsshared->lock);

	for (i = 0; i < RELSTATE_MAX_DBS; i++)
	{
		Datum		values[13];
		bool		nulls[13];
		char	   *datname;

		if (copy[i].dbid == InvalidOid)
			continue;
		memset(nulls, false, sizeof(nulls));
		values[0] = ObjectIdGetDatum(copy[i].dbid);
		datname = get_database_name(copy[i].dbid);
		nulls[1] = (datname == NULL);
		if (datname)
			values[1] = DirectFunctionCall1(namein, CStringGetDatum(datname));
		values[2] = Int64GetDatum(have[i] ? heads[i].snap_id : 0);
		nulls[2] = !have[i] || heads[i].snap_id == 0;
		values[3] = Int64GetDatum(have[i] ? heads[i].members : 0);
		nulls[3] = !have[i];
		values[4] = Int64GetDatum(have[i] ? heads[i].bytes : 0);
		nulls[4] = !have[i];
		values[5] = Int64GetDatum(have[i] ? (int64) heads[i].alloc_size : 0);
		values[6] = Int64GetDatum((int64) copy[i].uses);
		values[7] = Int64GetDatum((int64) copy[i].reads);
		values[8] = Int64GetDatum((int64) copy[i].publishes);
		values[9] = Int64GetDatum((int64) copy[i].not_made);
		values[10] = Int64GetDatum((int64) copy[i].incremental);
		values[11] = Int64GetDatum((int64) copy[i].class_blocks);
		values[12] = Int64GetDatum((int64) copy[i].blocks_read);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	PG_RETURN_VOID();
}

/*
 * folio_perf_data.rel_state_rows() RETURNS TABLE(relid oid, relfilenode
 *	 oid, sig bigint, rel_key_id bigint, wsig bigint, size_bytes bigint,
 *	 live_tup bigint, dead_tup bigint): this database's image, valid or not
 *	 (the exactness test compares it with rel_last).  Under the capture
 *	 lock only, which the caller takes.
 */
Datum
folio_perf_rel_state_rows(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	RelStateImage *img = NULL;
	int			i;
	uint32		k;

	fperf_init_srf(fcinfo);
	(void) rel_last_relid_checked(ACL_SELECT);
	if (!holds_capture_lock())
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the relation state can only be read under the capture lock"),
				 errhint("LOCK TABLE folio_perf_data.capture_lock IN EXCLUSIVE MODE first, in the same transaction.")));
	if (rsshared == NULL || area_attach(false) == NULL)
		PG_RETURN_VOID();
	LWLockAcquire(rsshared->lock, LW_SHARED);
	if ((i = slot_find(MyDatabaseId)) >= 0 && DsaPointerIsValid(rsshared->db[i].image))
		img = dsa_get_address(rs_area, rsshared->db[i].image);
	LWLockRelease(rsshared->lock);
	if (img == NULL)
		PG_RETURN_VOID();

	/* the slots are stable under the capture lock */
	for (k = 0; k < img->capacity; k++)
	{
		FPerfRelState *e = (FPerfRelState *) ((char *) img + IMAGE_SLOTS_OFFSET) + k;
		Datum		values[8];
		bool		nulls[8];

		if (e->relid == InvalidOid)
			continue;
		memset(nulls, false, sizeof(nulls));
		values[0] = ObjectIdGetDatum(e->relid);
		values[1] = ObjectIdGetDatum(e->relfilenode);
		values[2] = Int64GetDatum(e->sig);
		values[3] = Int64GetDatum(e->rel_key_id);
		values[4] = Int64GetDatum(e->wsig);
		nulls[4] = (e->nulls & FPERF_RS_NULL_WSIG) != 0;
		values[5] = Int64GetDatum(e->size);
		nulls[5] = (e->nulls & FPERF_RS_NULL_SIZE) != 0;
		values[6] = Int64GetDatum(e->live);
		nulls[6] = (e->nulls & FPERF_RS_NULL_LIVE) != 0;
		values[7] = Int64GetDatum(e->dead);
		nulls[7] = (e->nulls & FPERF_RS_NULL_DEAD) != 0;
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	PG_RETURN_VOID();
}
