/*-------------------------------------------------------------------------
 *
 * exitcpu.h
 *		In every backend: its CPU time as it exits, for the sampler.
 *
 * Copyright (c) 2026, folio_perf developers
 *
 * IDENTIFICATION
 *	  src/exitcpu.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FOLIO_PERF_EXITCPU_H
#define FOLIO_PERF_EXITCPU_H

#include "sampler.h"

/* Install the hooks that register the exit callback.  From _PG_init. */
extern void fperf_exitcpu_install_hooks(void);

#endif							/* FOLIO_PERF_EXITCPU_H */
