-- Which functions on the stack are folio_perf's (src/own.c): each one's
-- end undoes what its start counted, whatever own_function() would say of
-- it by then, so that no count is left above 0 after a statement (from
-- then on every function of the session that is not built in would be
-- hooked, and so never inlined by the planner).  TAP 019: a function
-- looked up while another session changes pg_proc.
-- Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS folio_perf CASCADE;
CREATE EXTENSION IF NOT EXISTS pg_stat_statements;
CREATE EXTENSION folio_perf;
RESET client_min_messages;

CREATE FUNCTION own_inl(int) RETURNS int LANGUAGE sql AS 'SELECT $1 + 1';
-- Is own_inl inlined?  (EXPLAIN VERBOSE shows its body, x + 1, not a call.)
CREATE FUNCTION own_inlined() RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
    line text;
BEGIN
    FOR line IN EXPLAIN (VERBOSE, COSTS OFF) SELECT own_inl(x) FROM generate_series(1, 3) x LOOP
        IF line ~ 'own_inl\(' THEN
            RETURN false;
        END IF;
    END LOOP;
    RETURN true;
END $$;
SELECT own_inlined();

-- 1. A function of folio_perf's that leaves the extension while it runs
-- (and changes pg_proc, which empties the cache of folio_perf's functions):
-- counted at its start, not found to be folio_perf's at its end.  It left
-- the count at 1 for the rest of the session.
CREATE FUNCTION own_leaves() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    ALTER EXTENSION folio_perf DROP FUNCTION own_leaves();
    ALTER FUNCTION own_leaves() COST 101;
END $$;
ALTER EXTENSION folio_perf ADD FUNCTION own_leaves();
SELECT own_leaves();
SELECT own_inlined();
BEGIN;
SELECT own_inlined() AS "in the next transaction";
COMMIT;

-- 2. ... and the other way round: a function that joins the extension
-- while it runs (found to be folio_perf's at its end only)
CREATE FUNCTION own_joins() RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
    ALTER EXTENSION folio_perf ADD FUNCTION own_joins();
    ALTER FUNCTION own_joins() COST 101;
    RETURN own_inlined();
END $$;
SELECT own_joins() AS "inlined inside it";
SELECT own_inlined();
ALTER EXTENSION folio_perf DROP FUNCTION own_joins();

-- 3. An error of a folio_perf function caught by PL/pgSQL (its
-- subtransaction aborted, the transaction goes on), in a function of
-- folio_perf's and in one of nobody's
CREATE FUNCTION own_catches() RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
    BEGIN
        PERFORM folio_perf_window(-1, -2);
    EXCEPTION WHEN OTHERS THEN
        RAISE NOTICE 'caught: %', SQLERRM;
    END;
    RETURN own_inlined();
END $$;
BEGIN;
SELECT own_catches() AS "inlined after the error";
SELECT own_inlined() AS "after it, same transaction";
-- (a change of pg_proc empties the cache of folio_perf's functions; a
-- change of pg_depend alone does not)
ALTER EXTENSION folio_perf ADD FUNCTION own_catches();
ALTER FUNCTION own_catches() COST 101;
SELECT own_catches() AS "not inlined inside folio_perf's";
SELECT own_inlined() AS "after it, same transaction";
ALTER EXTENSION folio_perf DROP FUNCTION own_catches();
COMMIT;

DROP FUNCTION own_leaves(), own_joins(), own_catches(), own_inlined(), own_inl(int);
