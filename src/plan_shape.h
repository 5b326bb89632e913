/*-------------------------------------------------------------------------
 *
 * plan_shape.h
 *		The shape fingerprint of a plan (plan_shape.c).
 *
 * Copyright (c) 2026, folio_perf developers
 *
 * IDENTIFICATION
 *	  src/plan_shape.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FOLIO_PERF_PLAN_SHAPE_H
#define FOLIO_PERF_PLAN_SHAPE_H

#include "nodes/plannodes.h"

/* A hash of the plan's shape; equal for the same plan in any schema. */
extern uint64 fperf_plan_fingerprint(PlannedStmt *pstmt);

#endif							/* FOLIO_PERF_PLAN_SHAPE_H */
