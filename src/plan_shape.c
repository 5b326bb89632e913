/*-------------------------------------------------------------------------
 *
 * plan_shape.c
 *		The shape fingerprint of a plan (plans.c).
 *
 * A hash of the plan tree's node types (by their EXPLAIN names), join,
 * aggregate and set-operation strategies, scan directions, planned workers,
 * and the names of the relations and indexes scanned: no costs, row
 * estimates, OIDs or schema names.  Estimates that move do not count as a
 * plan change, and the same plan in another tenant's schema or in a
 * restored database has the same fingerprint.  Pure: no shared state, no
 * catalog writes (relation names come from the relation cache).
 *
 * Copyright (c) 2026, folio_perf developers
 *
 * IDENTIFICATION
 *	  src/plan_shape.c
 *
 *-------------------------------------------------------------------------
 */
#include "folio_perf.h"

#include "common/hashfn.h"
#include "miscadmin.h"
#include "nodes/plannodes.h"
#include "parser/parsetree.h"
#include "utils/lsyscache.h"

#include "plan_shape.h"

/*
 * The EXPLAIN name of a plan node type, so that fingerprints do not depend
 * on NodeTag numbers, which differ between major versions.  NULL for types
 * not listed (their tag number is hashed instead).
 */
static const char *
plan_node_name(Plan *plan)
{
	switch (nodeTag(plan))
	{
		case T_Result:
			return "Result";
		case T_ProjectSet:
			return "ProjectSet";
		case T_ModifyTable:
			return "ModifyTable";
		case T_Append:
			return "Append";
		case T_MergeAppend:
			return "Merge Append";
		case T_RecursiveUnion:
			return "Recursive Union";
		case T_BitmapAnd:
			return "BitmapAnd";
		case T_BitmapOr:
			return "BitmapOr";
		case T_SeqScan:
			return "Seq Scan";
		case T_SampleScan:
			return "Sample Scan";
		case T_IndexScan:
			return "Index Scan";
		case T_IndexOnlyScan:
			return "Index Only Scan";
		case T_BitmapIndexScan:
			return "Bitmap Index Scan";
		case T_BitmapHeapScan:
			return "Bitmap Heap Scan";
		case T_TidScan:
			return "Tid Scan";
		case T_SubqueryScan:
			return "Subquery Scan";
		case T_FunctionScan:
			return "Function Scan";
		case T_ValuesScan:
			return "Values Scan";
		case T_TableFuncScan:
			return "Table Function Scan";
		case T_CteScan:
			return "CTE Scan";
		case T_NamedTuplestoreScan:
			return "Named Tuplestore Scan";
		case T_WorkTableScan:
			return "WorkTable Scan";
		case T_ForeignScan:
			return "Foreign Scan";
		case T_CustomScan:
			return "Custom Scan";
		case T_NestLoop:
			return "Nested Loop";
		case T_MergeJoin:
			return "Merge Join";
		case T_HashJoin:
			return "Hash Join";
		case T_Material:
			return "Materialize";
		case T_Sort:
			return "Sort";
		case T_IncrementalSort:
			return "Incremental Sort";
		case T_Group:
			return "Group";
		case T_Agg:
			return "Aggregate";
		case T_WindowAgg:
			return "WindowAgg";
		case T_Unique:
			return "Unique";
		case T_Gather:
			return "Gather";
		case T_GatherMerge:
			return "Gather Merge";
		case T_Hash:
			return "Hash";
		case T_SetOp:
			return "SetOp";
		case T_LockRows:
			return "LockRows";
		case T_Limit:
			return "Limit";
		default:
			return NULL;
	}
}

static inline uint64
fp_int(uint64 h, uint64 v)
{
	return hash_combine64(h, hash_bytes_uint32_extended((uint32) v, v >> 32));
}

static inline uint64
fp_str(uint64 h, const char *s)
{
	if (s == NULL)
		return fp_int(h, 0);
	return hash_combine64(h, hash_bytes_extended((const unsigned char *) s,
												 strlen(s), 0));
}

/* Name of a relation or index (not its schema: tenants differ by schema). */
static inline uint64
fp_rel(uint64 h, Oid relid)
{
	return fp_str(h, OidIsValid(relid) ? get_rel_name(relid) : NULL);
}

/* The relation a scan node reads, if it reads one. */
static uint64
fp_scanrel(uint64 h, Scan *scan, List *rtable)
{
	if (scan->scanrelid > 0 && scan->scanrelid <= list_length(rtable))
	{
		RangeTblEntry *rte = rt_fetch(scan->scanrelid, rtable);

		if (rte->rtekind == RTE_RELATION)
			return fp_rel(h, rte->relid);
	}
	return fp_int(h, 1);
}

static uint64 fp_plan(uint64 h, Plan *plan, List *rtable);

static uint64
fp_plans(uint64 h, List *plans, List *rtable)
{
	ListCell   *lc;

	h = fp_int(h, list_length(plans));
	foreach(lc, plans)
		h = fp_plan(h, (Plan *) lfirst(lc), rtable);
	return h;
}

/* Hash one plan node and its children into h. */
static uint64
fp_plan(uint64 h, Plan *plan, List *rtable)
{
	const char *name;

	check_stack_depth();

	if (plan == NULL)
		return fp_int(h, 0);

	name = plan_node_name(plan);
	h = name ? fp_str(h, name) : fp_int(h, 1000 + (uint64) nodeTag(plan));
	h = fp_int(h, plan->parallel_aware ? 1 : 0);

	switch (nodeTag(plan))
	{
		case T_SeqScan:
		case T_SampleScan:
		case T_BitmapHeapScan:
		case T_TidScan:
		case T_ForeignScan:
			h = fp_scanrel(h, (Scan *) plan, rtable);
			break;
		case T_CustomScan:
			h = fp_scanrel(h, (Scan *) plan, rtable);
			h = fp_plans(h, ((CustomScan *) plan)->custom_plans, rtable);
			break;
		case T_IndexScan:
			h = fp_scanrel(h, (Scan *) plan, rtable);
			h = fp_rel(h, ((IndexScan *) plan)->indexid);
			h = fp_int(h, (uint64) (((IndexScan *) plan)->indexorderdir + 2));
			break;
		case T_IndexOnlyScan:
			h = fp_scanrel(h, (Scan *) plan, rtable);
			h = fp_rel(h, ((IndexOnlyScan *) plan)->indexid);
			h = fp_int(h, (uint64) (((IndexOnlyScan *) plan)->indexorderdir + 2));
			break;
		case T_BitmapIndexScan:
			h = fp_rel(h, ((BitmapIndexScan *) plan)->indexid);
			break;
		case T_SubqueryScan:
			h = fp_plan(h, ((SubqueryScan *) plan)->subplan, rtable);
			break;
		case T_NestLoop:
		case T_MergeJoin:
		case T_HashJoin:
			h = fp_int(h, (uint64) ((Join *) plan)->jointype);
			break;
		case T_Agg:
			h = fp_int(h, (uint64) ((Agg *) plan)->aggstrategy);
			break;
		case T_SetOp:
			h = fp_int(h, (uint64) ((SetOp *) plan)->strategy);
			break;
		case T_ModifyTable:
			h = fp_int(h, (uint64) ((ModifyTable *) plan)->operation);
			h = fp_plans(h, FPERF_MODIFYTABLE_SUBPLANS((ModifyTable *) plan), rtable);
			break;
		case T_Gather:
			h = fp_int(h, (uint64) ((Gather *) plan)->num_workers);
			break;
		case T_GatherMerge:
			h = fp_int(h, (uint64) ((GatherMerge *) plan)->num_workers);
			break;
		case T_Append:
			h = fp_plans(h, ((Append *) plan)->appendplans, rtable);
			break;
		case T_MergeAppend:
			h = fp_plans(h, ((MergeAppend *) plan)->mergeplans, rtable);
			break;
		case T_BitmapAnd:
			h = fp_plans(h, ((BitmapAnd *) plan)->bitmapplans, rtable);
			break;
		case T_BitmapOr:
			h = fp_plans(h, ((BitmapOr *) plan)->bitmapplans, rtable);
			break;
		default:
			break;
	}

	h = fp_plan(h, plan->lefttree, rtable);
	h = fp_plan(h, plan->righttree, rtable);
	return h;
}

/*
 * The shape fingerprint of a planned statement: its main plan tree, then
 * every subplan (InitPlans and SubPlans).  Does catalog lookups.
 */
uint64
fperf_plan_fingerprint(PlannedStmt *pstmt)
{
	uint64		h = UINT64CONST(0x666f6c696f706572);	/* "folioper" */

	h = fp_int(h, (uint64) pstmt->commandType);
	h = fp_plan(h, pstmt->planTree, pstmt->rtable);
	h = fp_plans(h, pstmt->subplans, pstmt->rtable);
	return h;
}
