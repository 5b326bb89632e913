/* sql/parts/030_attribution.sql - attribution helpers: housekeeping, a target's catalog, statement attribution */
-- Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)

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

-- The same for many statements: of this database (p_remote false), or of a
-- remote target (no relations evidence; where its objects of a name live
-- given as parallel arrays of name and schema).
CREATE FUNCTION folio_perf_data.attribute(p_queryid bigint[], p_rolname text[],
    p_query text[], p_remote boolean, p_catalog_names text[], p_catalog_schemas text[],
    OUT ord bigint, OUT tenant text, OUT module text, OUT attributed_by text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'folio_perf_attribute_many'
LANGUAGE C VOLATILE PARALLEL SAFE CALLED ON NULL INPUT;


/*
 * Attribution of statements: for each (queryid, userid, query) the tenant
 * and module and the evidence that decided, by folio_perf_data.attribute()
 * (the one precedence, in C: relations > role > qualified > relation_name);
 * also the role's name.  Statements that use folio_perf's storage schema
 * are folio_perf's own (module folio_perf, housekeeping).  For a remote
 * target (p_target) the roles and the schemas of the relations and
 * functions named in the texts come from the target's catalogs, in one
 * round trip; attribution by relations needs the parse hook and is not
 * available there.
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
own AS (
    SELECT DISTINCT s.ord
    FROM s JOIN @extschema@.folio_perf_query_relations() rel ON rel.queryid = s.q
    JOIN pg_catalog.pg_namespace ns ON ns.oid = ANY (rel.nsps)
    WHERE p_target IS NULL AND ns.nspname = 'folio_perf_data'
),
-- the target's catalogs: k = 'r' role (oid, name), k = 'n' schema of a
-- relation or function named in a text
remote AS MATERIALIZED (
    SELECT c.k, c.oid, c.name, c.nspname
    FROM folio_perf_data.remote_catalog(p_target,
        CASE WHEN p_target IS NOT NULL
             THEN (SELECT pg_catalog.array_agg(DISTINCT s.u) FROM s) END,
        CASE WHEN p_target IS NOT NULL
             THEN (SELECT pg_catalog.array_agg(DISTINCT n.name)
                   FROM s, pg_catalog.unnest(@extschema@.folio_perf_query_relnames(s.t)) n(name))
        END) c
    WHERE p_target IS NOT NULL
),
cat AS (
    SELECT pg_catalog.array_agg(remote.name ORDER BY remote.name, remote.nspname) AS names,
           pg_catalog.array_agg(remote.nspname ORDER BY remote.name, remote.nspname) AS nsps
    FROM remote WHERE remote.k = 'n'
),
roles AS (
    SELECT r.oid AS userid, r.rolname
    FROM pg_catalog.pg_roles r
    WHERE p_target IS NULL AND r.oid IN (SELECT s.u FROM s)
    UNION ALL
    SELECT remote.oid, remote.name::name FROM remote WHERE remote.k = 'r'
),
a AS (
    SELECT * FROM folio_perf_data.attribute(
        (SELECT pg_catalog.array_agg(s.q ORDER BY s.ord) FROM s),
        (SELECT pg_catalog.array_agg(rr.rolname::text ORDER BY s.ord)
           FROM s LEFT JOIN roles rr ON rr.userid = s.u),
        (SELECT pg_catalog.array_agg(s.t ORDER BY s.ord) FROM s),
        p_target IS NOT NULL,
        (SELECT cat.names FROM cat),
        (SELECT cat.nsps FROM cat))
)
SELECT s.ord,
       CASE WHEN own.ord IS NULL THEN a.tenant END,
       CASE WHEN own.ord IS NOT NULL THEN 'folio_perf' ELSE a.module END,
       CASE WHEN own.ord IS NOT NULL THEN 'relations' ELSE a.attributed_by END,
       (own.ord IS NOT NULL OR folio_perf_data.is_housekeeping(s.t)
        -- run by folio_perf itself (src/own.c): on this server only
        OR (p_target IS NULL AND folio_perf_data.own_queryid(s.q))),
       rr.rolname
FROM s
JOIN a ON a.ord = s.ord
LEFT JOIN roles rr ON rr.userid = s.u
LEFT JOIN own ON own.ord = s.ord
$$;
