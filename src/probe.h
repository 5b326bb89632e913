/*-------------------------------------------------------------------------
 *
 * probe.h
 *		The sampler's probe: one sample of every process into the ring.
 *
 * Copyright (c) 2026, folio_perf developers
 *
 * IDENTIFICATION
 *	  src/probe.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FOLIO_PERF_PROBE_H
#define FOLIO_PERF_PROBE_H

#include "sampler.h"

/* Set up the probe's CPU bookkeeping under the worker's long-lived context. */
extern void fperf_probe_init(MemoryContext parent);

/*
 * utime + stime of a process from /proc/<pid>/stat, in clock ticks; false
 * if it is gone or there is no /proc.  No allocation, no error.
 */
extern bool fperf_read_proc_cpu(int pid, uint64 *jiffies);

/* Take one sample of every process and append it to the ring. */
extern void fperf_probe(void);

#endif							/* FOLIO_PERF_PROBE_H */
