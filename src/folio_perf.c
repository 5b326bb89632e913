/*-------------------------------------------------------------------------
 *
 * folio_perf.c
 *		Module entry point: GUCs, shared memory hooks, hook chaining.
 *
 * folio_perf works without being preloaded: snapshots, windows and reports
 * are plain SQL over pg_stat_statements and the statistics views.  When it is
 * listed in shared_preload_libraries it also
 *	- records, per queryid, the schemas of the relations each statement
 *	  touches (relstore.c), which is what tells tenants apart for modules
 *	  that share one login and use unqualified SQL;
 *	- runs the sampler background worker (sampler.c, worker.c);
 *	- keeps, per statement, the plan of its slowest execution since the last
 *	  snapshot (plans.c);
 *	- records the query ids of what folio_perf itself runs (own.c), which
 *	  reports leave out as housekeeping.
 *
 * _PG_init follows the order of contrib/pg_stat_statements: GUCs that must
 * exist without preloading, return unless preloading, PGC_POSTMASTER GUCs,
 * reserve the prefix, chain hooks, register the worker last.
 *
 * Copyright (c) 2026, folio_perf developers
 *
 * IDENTIFICATION
 *	  src/folio_perf.c
 *
 *-------------------------------------------------------------------------
 */
#include "folio_perf.h"

#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/shmem.h"
#include "utils/guc.h"

#include "exitcpu.h"
#include "metrics.h"
#include "relstate.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

/* GUC variables */
bool		fperf_track_relations = true;
int			fperf_max_queries = 20000;

bool		fperf_preloaded = false;

#ifdef FPERF_HAVE_SHMEM_REQUEST_HOOK
static shmem_request_hook_type prev_shmem_request_hook = NULL;
#endif
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

/*
 * Total shared memory folio_perf needs.
 */
static Size
fperf_memsize(void)
{
	Size		size = 0;

	size = add_size(size, fperf_relstore_shmem_size());
	size = add_size(size, fperf_sampler_shmem_size());
	size = add_size(size, fperf_plans_shmem_size());
	size = add_size(size, fperf_metrics_shmem_size());
	size = add_size(size, fperf_own_shmem_size());
	size = add_size(size, fperf_relstate_shmem_size());
	return size;
}

/*
 * Ask for shared memory and our LWLock tranche.  On 15+ this runs as
 * shmem_request_hook; before 15 it is called from _PG_init.
 */
static void
fperf_shmem_request(void)
{
#ifdef FPERF_HAVE_SHMEM_REQUEST_HOOK
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
#endif
	RequestAddinShmemSpace(fperf_memsize());
	RequestNamedLWLockTranche(FPERF_NAME, FPERF_NUM_LWLOCKS);
	fperf_metrics_shmem_request();
}

/*
 * shmem_startup hook: create or attach to our shared structures.
 */
static void
fperf_shmem_startup(void)
{
	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	fperf_relstore_shmem_init();
	fperf_sampler_shmem_init();
	fperf_plans_shmem_init();
	fperf_metrics_shmem_init();
	fperf_own_shmem_init();
	fperf_relstate_shmem_init();
	LWLockRelease(AddinShmemInitLock);
}

/* folio_perf.grafana_url: where the HTML report links its window to */
static char *fperf_grafana_url = NULL;

/*
 * An address the HTML report can put into a link as it is: http:// or
 * https://, then no space, quote, angle bracket, backslash or control
 * character (the report escapes it too).
 */
static bool
fperf_grafana_url_check(char **newval, void **extra, GucSource source)
{
	const char *u = *newval;
	const char *c;

	if (u == NULL || u[0] == '\0')
		return true;
	if (strncmp(u, "http://", 7) != 0 && strncmp(u, "https://", 8) != 0)
	{
		GUC_check_errcode(ERRCODE_INVALID_PARAMETER_VALUE);
		GUC_check_errdetail("folio_perf.grafana_url must begin with http:// or https://.");
		return false;
	}
	for (c = u; *c; c++)
	{
		if ((unsigned char) *c <= ' ' || *c == '"' || *c == '\'' || *c == '<' ||
			*c == '>' || *c == '\\' || *c == '`' || (unsigned char) *c == 0x7f)
		{
			GUC_check_errcode(ERRCODE_INVALID_PARAMETER_VALUE);
			GUC_check_errdetail("folio_perf.grafana_url may not contain spaces, quotes, angle brackets or backslashes.");
			return false;
		}
	}
	return true;
}

/*
 * Module load callback.
 */
void
_PG_init(void)
{
	/* Settings that make sense even without preloading. */
	DefineCustomBoolVariable("folio_perf.track_relations",
							 "Records the schemas of the relations each statement touches.",
							 "Needs folio_perf in shared_preload_libraries. This is the "
							 "evidence that attributes unqualified SQL of shared-login "
							 "modules to a tenant.",
							 &fperf_track_relations,
							 true,
							 PGC_SUSET,
							 0,
							 NULL, NULL, NULL);

	DefineCustomStringVariable("folio_perf.grafana_url",
							   "Grafana address the HTML report links its window to.",
							   "Empty: no link. Otherwise http:// or https:// and the "
							   "address of the Grafana that has the folio_perf dashboard "
							   "(monitoring/grafana_folio_perf.json).",
							   &fperf_grafana_url,
							   "",
							   PGC_USERSET,
							   0,
							   fperf_grafana_url_check, NULL, NULL);

	fperf_parse_define_gucs();
	fperf_sampler_define_gucs();
	fperf_remote_define_gucs();
	fperf_plans_define_gucs();
	fperf_relstats_define_gucs();
	fperf_relstate_define_gucs();

	if (!process_shared_preload_libraries_in_progress)
	{
		fperf_reserve_guc_prefix(FPERF_NAME);
		return;
	}

	fperf_preloaded = true;

	DefineCustomIntVariable("folio_perf.max_queries",
							"Maximum number of statements whose relation schemas are remembered.",
							"Statements beyond this are counted as dropped and "
							"attributed by other evidence.",
							&fperf_max_queries,
							20000,
							100,
							1000000,
							PGC_POSTMASTER,
							0,
							NULL, NULL, NULL);

	fperf_sampler_define_postmaster_gucs();
	fperf_plans_define_postmaster_gucs();
	fperf_metrics_define_postmaster_gucs();

	fperf_reserve_guc_prefix(FPERF_NAME);

#ifdef FPERF_HAVE_SHMEM_REQUEST_HOOK
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = fperf_shmem_request;
#else
	fperf_shmem_request();
#endif
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = fperf_shmem_startup;

	fperf_relstore_install_hook();
	fperf_plans_install_hooks();
	fperf_own_install_hooks();
	fperf_exitcpu_install_hooks();

	fperf_sampler_register();
}
