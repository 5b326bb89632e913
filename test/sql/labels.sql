-- Parallel-safety labels: every IMMUTABLE function of the extension is
-- PARALLEL SAFE (PostgreSQL's opr_sanity lists those that are not), and
-- none marked PARALLEL SAFE starts subtransactions (an EXCEPTION block,
-- which a parallel worker cannot run).  Control: the same checks find a
-- planted function of each kind.
-- Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS folio_perf CASCADE;
CREATE EXTENSION IF NOT EXISTS pg_stat_statements;
CREATE EXTENSION folio_perf;
RESET client_min_messages;

CREATE FUNCTION public.regress_planted_immutable(x int) RETURNS int
LANGUAGE sql IMMUTABLE AS 'SELECT x';
CREATE FUNCTION public.regress_planted_safe_exc(x int) RETURNS int
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS
$$BEGIN RETURN x; EXCEPTION WHEN OTHERS THEN RETURN 0; END$$;

CREATE TEMP VIEW fn AS
SELECT p.oid::regprocedure::text AS f, p.provolatile, p.proparallel, p.prosrc,
       EXISTS (SELECT 1 FROM pg_depend d JOIN pg_extension e ON e.oid = d.refobjid
               WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid
                 AND d.deptype = 'e' AND e.extname = 'folio_perf') AS ours
FROM pg_proc p
WHERE p.pronamespace IN ('public'::regnamespace, 'folio_perf_data'::regnamespace);

-- immutable but not parallel safe
SELECT f, ours FROM fn WHERE provolatile = 'i' AND proparallel <> 's'
ORDER BY f COLLATE "C";
-- parallel safe with an exception block
SELECT f, ours FROM fn WHERE proparallel = 's' AND prosrc ~* '\mEXCEPTION\s+WHEN\M'
ORDER BY f COLLATE "C";

DROP FUNCTION public.regress_planted_immutable(int);
DROP FUNCTION public.regress_planted_safe_exc(int);
