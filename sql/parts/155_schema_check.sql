/* sql/parts/155_schema_check.sql - CREATE EXTENSION warns when other roles may create objects in the extension's schema */
-- Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)

/*
 * folio_perf's own calls of its functions are schema-qualified with exact
 * argument types, but a function that another role creates in the
 * extension's schema with the same name and more parameters that have
 * defaults makes such a call ambiguous (a planted
 * folio_perf_sampler_flush(int DEFAULT 0) fails every snapshot, the
 * worker's timed ones included), and a caller's own unqualified call can
 * resolve to a planted function that matches its arguments better
 * (folio_perf_data_import_jobs(int) for a call with an integer literal).
 * The default install stays where CREATE EXTENSION puts it (the public
 * surface of DESIGN.md), but when roles other than superusers and the
 * installing role may create objects in that schema, CREATE EXTENSION
 * (and ALTER EXTENSION UPDATE) says so, with the hint to install into a
 * schema of its own.  There folio_perf's own calls are safe whatever is
 * planted elsewhere; a user's unqualified call still resolves through the
 * user's search_path, where a better-matching function in a schema listed
 * after the extension's wins (test/t/016_attacks.pl shows both).
 */
DO $$
DECLARE
    n int;
    who text;
BEGIN
    SELECT pg_catalog.count(*),
           pg_catalog.string_agg(pg_catalog.quote_ident(x.rolname), ', ' ORDER BY x.rolname)
               FILTER (WHERE x.i OPERATOR(pg_catalog.<=) 5)
    INTO n, who
    FROM (SELECT r.rolname, pg_catalog.row_number() OVER (ORDER BY r.rolname) AS i
          FROM pg_catalog.pg_roles r
          WHERE NOT r.rolsuper AND r.rolname OPERATOR(pg_catalog.<>) CURRENT_USER
            AND r.rolname OPERATOR(pg_catalog.!~) '^pg_'
            AND pg_catalog.has_schema_privilege(r.oid, '@extschema@', 'CREATE')) x;
    IF n OPERATOR(pg_catalog.>) 0 THEN
        IF n OPERATOR(pg_catalog.>) 5 THEN
            who := who OPERATOR(pg_catalog.||) pg_catalog.format(' and %s more', n OPERATOR(pg_catalog.-) 5);
        END IF;
        RAISE WARNING 'roles other than superusers may create objects in schema "%" of extension folio_perf: %',
            '@extschema@', who
            USING DETAIL = 'A function they create there under the name of a folio_perf function can be called by a user''s unqualified call that it matches better, or make folio_perf''s own calls ambiguous.',
                  HINT = 'Install folio_perf in a schema of its own (CREATE SCHEMA folio_perf; CREATE EXTENSION folio_perf SCHEMA folio_perf) and give its users a search_path without schemas that other roles may create in, or have them call folio_perf.<function>.';
    END IF;
END
$$;
