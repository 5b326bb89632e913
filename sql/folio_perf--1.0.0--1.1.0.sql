/* sql/folio_perf--1.0.0--1.1.0.sql - ALTER EXTENSION folio_perf UPDATE from 1.0.0 to 1.1.0 */
-- Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)
--
-- How to add to it (doc/architecture.md, "Upgrade scripts"): everything a
-- change adds to or changes in sql/parts/ between 1.0.0 and 1.1.0 is done
-- here as well, so that an updated 1.0.0 has exactly the objects of a fresh
-- 1.1.0 install.  test/t/004_upgrade.pl compares the two (every function's
-- definition, view, table and column in order, index, constraint, trigger,
-- type, grant, comment, the pg_dump configuration and the rows an install
-- seeds) and prints what differs.
--   - a new function or view: the same CREATE here, followed by the same
--     REVOKE ALL ... FROM PUBLIC and GRANTs as in 150_privileges.sql (a new
--     function is executable by PUBLIC until revoked);
--   - a changed function: CREATE OR REPLACE FUNCTION with the new body (a
--     changed signature or return type: DROP FUNCTION the old one first,
--     then CREATE and the grants again);
--   - a new table: CREATE TABLE, the grants, and
--     SELECT pg_catalog.pg_extension_config_dump('folio_perf_data.t', '')
--     unless it must not be dumped (as 150_privileges.sql does for every
--     table but target_secret and target_status);
--   - a new column: ALTER TABLE ... ADD COLUMN; add it at the END of the
--     CREATE TABLE in sql/parts too (the test compares column order);
--   - seeded rows (folio_perf_data.operation's builtin ones): the INSERT.
-- Keep each change in its own block under a comment naming its issue, in
-- the order of sql/parts; the script runs in one transaction as the
-- extension's owner, with search_path set to the extension's schema first.

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION folio_perf UPDATE TO '1.1.0'" to load this file. \quit
