/* sql/parts/030_attribution.sql - attribution helpers: housekeeping, a target's catalog, statement attribution */

-- Which statements are housekeeping (left out of top lists by default).
CREATE FUNCTION folio_perf_data.is_housekeeping(query text)
RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT query ~* '^\s*(set|show|reset|begin|commit|rollback|abort|start\s+transaction|end|discard|deallocate|savepoint|release|listen|unlisten|prepare\s+transaction|commit\s+prepared|rollback\s+prepared|close|checkpoint)\M'
      OR query ~* '\mfolio_perf_'
$$;

/*
 * What attribution needs from a remote target's catalogs, in one round
 * trip: k = 'r' the names of roles (oid, name), k = 'n' the schemas of the
 * relations and functions of the names given (name, nspname).  No rows for
 * this server (p_target NULL).
 */
CREATE FUNCTION folio_perf_data.remote_catalog(p_target int, p_userids oid[], p_names text[])
RETURNS TABLE(k text, oid oid, name text, nspname text)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF p_target IS NULL THEN
        RETURN;
    END IF;
    RETURN QUERY
    SELECT * FROM folio_perf_data.remote_query(p_target,
        'SELECT ''r''::text AS k, r.oid, r.rolname::text AS name, NULL::text AS nspname
         FROM pg_catalog.pg_roles r WHERE r.oid = ANY ($1::oid[])
         UNION ALL
         SELECT ''n'', NULL, c.relname::text, ns.nspname::text
         FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace ns ON ns.oid = c.relnamespace
         WHERE c.relname = ANY ($2::name[]) AND c.relkind IN (''r'', ''p'', ''v'', ''m'', ''f'')
         UNION ALL
         SELECT ''n'', NULL, f.proname::text, ns.nspname::text
         FROM pg_catalog.pg_proc f JOIN pg_catalog.pg_namespace ns ON ns.oid = f.pronamespace
         WHERE f.proname = ANY ($2::name[])',
        ARRAY[coalesce(p_userids, '{}')::text, coalesce(p_names, '{}')::text])
    AS c(k text, oid oid, name text, nspname text);
END
$$;

/*
 * Attribution of statements (DESIGN.md, "Attribution"): for each
 * (queryid, userid, query) the tenant and module, and the evidence that
 * decided: relations > role > qualified > relation_name; also the role's
 * name.  For a remote target (p_target) the roles and the relations and
 * functions named in the texts are looked up in the target's catalogs, in
 * one round trip; attribution by relations needs the parse hook and is
 * unavailable there.
 */
CREATE FUNCTION folio_perf_data.attribute_statements(
    p_queryid bigint[], p_userid oid[], p_query text[], p_target int DEFAULT NULL)
RETURNS TABLE(ord bigint, tenant text, module text, attributed_by text,
              housekeeping boolean, rolname name)
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
WITH s AS (
    SELECT x.ord, x.q, x.u, x.t
    FROM unnest(p_queryid, p_userid, p_query) WITH ORDINALITY AS x(q, u, t, ord)
),
rel AS (
    SELECT r.queryid, r.target_nsp, r.nsps
    FROM @extschema@.folio_perf_query_relations() r
    WHERE p_target IS NULL
),
by_rel AS (
    SELECT DISTINCT ON (s.ord) s.ord, p.tenant, p.module
    FROM s
    JOIN rel ON rel.queryid = s.q
    CROSS JOIN LATERAL unnest(array_prepend(rel.target_nsp, rel.nsps))
         WITH ORDINALITY AS n(nspoid, o)
    JOIN pg_catalog.pg_namespace ns ON ns.oid = n.nspoid
    CROSS JOIN LATERAL @extschema@.folio_perf_parse_schema(ns.nspname::text) p
    WHERE p.module IS NOT NULL
    ORDER BY s.ord, n.o
),
own AS (
    SELECT DISTINCT s.ord
    FROM s JOIN rel ON rel.queryid = s.q
    JOIN pg_catalog.pg_namespace ns ON ns.oid = ANY (rel.nsps)
    WHERE ns.nspname = 'folio_perf_data'
),
names AS (
    SELECT s.ord, n.name, n.o
    FROM s CROSS JOIN LATERAL unnest(@extschema@.folio_perf_query_relnames(s.t))
         WITH ORDINALITY AS n(name, o)
),
-- the target's catalogs: k = 'r' role (oid, name), k = 'n' schema of a
-- relation or function named in a text
remote AS MATERIALIZED (
    SELECT c.k, c.oid, c.name, c.nspname
    FROM folio_perf_data.remote_catalog(p_target,
        (SELECT array_agg(DISTINCT s.u) FROM s),
        (SELECT array_agg(DISTINCT names.name) FROM names)) c
    WHERE p_target IS NOT NULL
),
roles AS (
    SELECT r.oid AS userid, r.rolname
    FROM pg_catalog.pg_roles r
    WHERE p_target IS NULL AND r.oid IN (SELECT s.u FROM s)
    UNION ALL
    SELECT remote.oid, remote.name::name FROM remote WHERE remote.k = 'r'
),
by_role AS (
    SELECT s.ord, p.tenant, p.module
    FROM s
    JOIN roles r ON r.userid = s.u
    CROSS JOIN LATERAL @extschema@.folio_perf_parse_schema(r.rolname::text) p
    WHERE p.module IS NOT NULL
),
by_qual AS (
    SELECT s.ord, p.tenant, p.module
    FROM s CROSS JOIN LATERAL @extschema@.folio_perf_query_schema(s.t) p
    WHERE p.module IS NOT NULL
),
objs AS (
    SELECT names.ord, names.o, ns.nspname::text AS nspname
    FROM names
    JOIN pg_catalog.pg_class c ON c.relname = names.name
         AND c.relkind IN ('r', 'p', 'v', 'm', 'f')
    JOIN pg_catalog.pg_namespace ns ON ns.oid = c.relnamespace
    WHERE p_target IS NULL
    UNION ALL
    SELECT names.ord, names.o, ns.nspname::text
    FROM names
    JOIN pg_catalog.pg_proc f ON f.proname = names.name
    JOIN pg_catalog.pg_namespace ns ON ns.oid = f.pronamespace
    WHERE p_target IS NULL
    UNION ALL
    SELECT names.ord, names.o, remote.nspname
    FROM names JOIN remote ON remote.k = 'n' AND remote.name = names.name
),
name_owner AS (
    SELECT objs.ord, objs.o, p.tenant, p.module, objs.nspname
    FROM objs
    CROSS JOIN LATERAL @extschema@.folio_perf_parse_schema(objs.nspname) p
    WHERE p.module IS NOT NULL
),
by_name AS (
    SELECT DISTINCT ON (ord) ord,
           CASE WHEN count(DISTINCT nspname) = 1 THEN min(tenant) END AS tenant,
           min(module) AS module
    FROM name_owner
    GROUP BY ord, o
    HAVING count(DISTINCT module) = 1
    ORDER BY ord, o
)
SELECT s.ord,
       CASE WHEN own.ord IS NOT NULL THEN NULL
            WHEN by_rel.module IS NOT NULL THEN by_rel.tenant
            WHEN by_role.module IS NOT NULL THEN by_role.tenant
            WHEN by_qual.module IS NOT NULL THEN by_qual.tenant
            ELSE by_name.tenant END,
       CASE WHEN own.ord IS NOT NULL THEN 'folio_perf'
            ELSE coalesce(by_rel.module, by_role.module, by_qual.module, by_name.module) END,
       CASE WHEN own.ord IS NOT NULL THEN 'relations'
            WHEN by_rel.module IS NOT NULL THEN 'relations'
            WHEN by_role.module IS NOT NULL THEN 'role'
            WHEN by_qual.module IS NOT NULL THEN 'qualified'
            WHEN by_name.module IS NOT NULL THEN 'relation_name' END,
       (own.ord IS NOT NULL OR folio_perf_data.is_housekeeping(s.t)),
       rr.rolname
FROM s
LEFT JOIN roles rr ON rr.userid = s.u
LEFT JOIN own ON own.ord = s.ord
LEFT JOIN by_rel ON by_rel.ord = s.ord
LEFT JOIN by_role ON by_role.ord = s.ord
LEFT JOIN by_qual ON by_qual.ord = s.ord
LEFT JOIN by_name ON by_name.ord = s.ord
$$;
