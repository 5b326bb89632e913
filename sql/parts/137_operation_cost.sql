/* sql/parts/137_operation_cost.sql - the DB cost of a FOLIO operation from the statements of its own flow */
-- Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)

------------------------------------------------------------------------
--
-- An operation's flow is the relations its statements touch, each with
-- an action: 'write' (an INSERT, UPDATE, DELETE or MERGE whose target it
-- is), 'insert', 'update' or 'delete' (that one only), 'read' (any other
-- statement naming it) or 'any'.  A top-level
-- statement of the window belongs to an operation of its tenant when its
-- module (attribution) is the flow entry's module and its text names the
-- entry's relation with the entry's action.  Its DB time, calls, rows and
-- WAL go to the operations of its tenant that it belongs to and that
-- happened in the window, split in proportion to their counts (a
-- statement of check-out's and check-in's flows, the item lookup, gives
-- each half when they are equally many); the part a statement shared with
-- other operations is reported (shared_db_time_ms, shared_with).  An
-- operation with no flow rows has the one relation it is counted from,
-- written, as its flow.
--
-- Statement texts are read by flow_matches(), as the extension's owner,
-- which gives the caller only which statement belongs to which
-- operation's flow: a reader who may not see a text still gets the same
-- costs.  Relation names are taken from the text after FROM, JOIN, INTO,
-- UPDATE or TABLE (optionally ONLY), schema-qualified or not, quoted or
-- not; the first such name of an INSERT, UPDATE, DELETE or MERGE is its
-- target.  Names inside string literals count too (a documented
-- imprecision: FOLIO's statements carry uuids and JSON there, not SQL).
------------------------------------------------------------------------

CREATE TABLE folio_perf_data.operation_flow (
    operation   text NOT NULL REFERENCES folio_perf_data.operation ON UPDATE CASCADE ON DELETE CASCADE,
    module      text NOT NULL
                CHECK (module ~ '^[a-z][a-z0-9_]{0,62}$'),
    relation    text NOT NULL
                CHECK (relation ~ '^[a-z_][a-z0-9_$]{0,62}$'),
    action      text NOT NULL DEFAULT 'any'
                CHECK (action IN ('read', 'write', 'insert', 'update', 'delete', 'any')),
    builtin     boolean NOT NULL DEFAULT false,
    -- the role that added it (operation_guard: only it changes or deletes it)
    owner       name NOT NULL DEFAULT CURRENT_USER,
    PRIMARY KEY (operation, module, relation, action)
);

-- FOLIO's flows (conventions.md 5.2 and 5.3): what mod-circulation asks of
-- the storage modules for a check-out and a check-in, what a data-import
-- record writes in SRS, SRM and inventory.
INSERT INTO folio_perf_data.operation_flow (operation, module, relation, action, builtin)
VALUES
    ('check_out', 'mod_circulation_storage', 'loan', 'insert', true),
    ('check_out', 'mod_circulation_storage', 'patron_action_session', 'write', true),
    ('check_out', 'mod_circulation_storage', 'request', 'read', true),
    ('check_out', 'mod_inventory_storage', 'item', 'any', true),
    ('check_out', 'mod_users', 'users', 'read', true),
    ('check_in', 'mod_circulation_storage', 'check_in', 'write', true),
    ('check_in', 'mod_circulation_storage', 'loan', 'read', true),
    ('check_in', 'mod_circulation_storage', 'loan', 'update', true),
    ('check_in', 'mod_circulation_storage', 'request', 'read', true),
    ('check_in', 'mod_inventory_storage', 'item', 'any', true),
    ('request_created', 'mod_circulation_storage', 'request', 'write', true),
    ('request_created', 'mod_inventory_storage', 'item', 'read', true),
    ('request_created', 'mod_users', 'users', 'read', true),
    ('record_imported', 'mod_source_record_storage', 'records_lb', 'write', true),
    ('record_imported', 'mod_source_record_storage', 'raw_records_lb', 'write', true),
    ('record_imported', 'mod_source_record_storage', 'marc_records_lb', 'write', true),
    ('record_imported', 'mod_source_record_storage', 'records_lb', 'read', true),
    ('record_imported', 'mod_source_record_manager', 'events_processed', 'write', true),
    ('record_imported', 'mod_source_record_manager', 'journal_records', 'write', true),
    ('record_imported', 'mod_source_record_manager', 'job_execution', 'any', true),
    ('record_imported', 'mod_inventory_storage', 'instance', 'write', true),
    ('instance_created', 'mod_inventory_storage', 'instance', 'write', true),
    ('instance_updated', 'mod_inventory_storage', 'instance', 'write', true),
    ('holdings_created', 'mod_inventory_storage', 'holdings_record', 'write', true),
    ('item_created', 'mod_inventory_storage', 'item', 'write', true),
    ('user_created', 'mod_users', 'users', 'write', true),
    ('fee_fine_charged', 'mod_feesfines', 'accounts', 'write', true),
    ('order_line_created', 'mod_orders_storage', 'po_line', 'write', true),
    ('invoice_created', 'mod_invoice_storage', 'invoices', 'write', true);

-- the built-in rows and the owners as the definitions': operation_guard() (135)
CREATE TRIGGER operation_flow_guard BEFORE INSERT OR UPDATE OR DELETE ON folio_perf_data.operation_flow
    FOR EACH ROW EXECUTE FUNCTION folio_perf_data.operation_guard();

-- The flows a user can read and a writer can add to.
CREATE VIEW folio_perf_operation_flows AS
SELECT f.operation, f.module, f.relation, f.action, f.builtin, f.owner
FROM folio_perf_data.operation_flow f;

/*
 * stmt_shape(query): the first keyword of a statement in lower case
 * (select, insert, update, delete, merge, with, ...) and the names of the
 * relations after FROM, JOIN, INTO, UPDATE or TABLE (optionally ONLY), the
 * last part of a qualified name, unquoted names folded to lower case, in
 * order of appearance (duplicates kept: the first is a DML's target).
 */
CREATE FUNCTION folio_perf_data.stmt_shape(query text, OUT verb text, OUT rels text[])
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT lower(substring(query FROM '^\s*(?:/\*.*?\*/\s*)*([A-Za-z]+)')),
           coalesce((SELECT array_agg(CASE WHEN m[1] LIKE '"%' THEN replace(substr(m[1], 2, length(m[1]) - 2), '""', '"')
                                           ELSE lower(m[1]) END ORDER BY o)
                     FROM regexp_matches(query,
                          '\m(?:from|join|into|update|table)\s+(?:only\s+)?(?:(?:"(?:[^"]|"")+"|[a-z_][a-z0-9_$]*)\s*\.\s*)?("(?:[^"]|"")+"|[a-z_][a-z0-9_$]*)',
                          'gi') WITH ORDINALITY AS x(m, o)), '{}')
$$;

-- Each statement text's shape, computed once when the text is stored
-- (the capture's insert, local or remote, and the update for the texts
-- stored before): flow_matches matched every text of a window against
-- the regular expressions above at each report, 4,901 texts and 0.27 s in
-- a compare of a 24-hour window's halves at 40 tenants.
ALTER TABLE folio_perf_data.query_text
    ADD COLUMN verb text GENERATED ALWAYS AS ((folio_perf_data.stmt_shape(query)).verb) STORED,
    ADD COLUMN rels text[] GENERATED ALWAYS AS ((folio_perf_data.stmt_shape(query)).rels) STORED;

/*
 * flow_matches(text_ids): which statement texts belong to which
 * operation's flow, and by which of its modules: (text_id, operation,
 * module, dml: whether it is an INSERT, UPDATE, DELETE or MERGE), the
 * caller matching the module against the statement's.  Reads
 * the texts as the extension's owner and gives nothing of them back.
 */
CREATE FUNCTION folio_perf_data.flow_matches(p_text_ids bigint[])
RETURNS TABLE(text_id bigint, operation text, module text, dml boolean)
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
    WITH flow AS (
        SELECT f.operation, f.module, f.relation, f.action FROM folio_perf_data.operation_flow f
        UNION ALL
        SELECT o.operation, o.module, o.relation, 'write' FROM folio_perf_data.operation o
        WHERE NOT EXISTS (SELECT FROM folio_perf_data.operation_flow f
                          WHERE f.operation OPERATOR(pg_catalog.=) o.operation)
    ), t AS (
        -- (each text's shape as stmt_shape() gave it when it was stored)
        SELECT q.text_id, q.verb, q.rels,
               q.verb OPERATOR(pg_catalog.=) ANY ('{insert,update,delete,merge}'::text[]) AS dml
        FROM folio_perf_data.query_text q
        WHERE q.text_id OPERATOR(pg_catalog.=) ANY (p_text_ids)
    )
    SELECT DISTINCT t.text_id, flow.operation, flow.module, t.dml
    FROM t JOIN flow ON flow.relation OPERATOR(pg_catalog.=) ANY (t.rels)
    WHERE flow.action OPERATOR(pg_catalog.=) 'any'
       OR (flow.action OPERATOR(pg_catalog.=) 'write' AND t.dml AND t.rels[1] OPERATOR(pg_catalog.=) flow.relation)
       OR (flow.action OPERATOR(pg_catalog.=) t.verb AND t.dml AND t.rels[1] OPERATOR(pg_catalog.=) flow.relation)
       OR (flow.action OPERATOR(pg_catalog.=) 'read'
           AND NOT (t.dml AND t.rels[1] OPERATOR(pg_catalog.=) flow.relation
                    AND pg_catalog.array_position(t.rels[2:], flow.relation) IS NULL))
$$;

/*
 * own_cost(p_begin, p_end, counts): per tenant and operation of counts
 * (a jsonb array of {tenant, operation, n}, the operations that happened),
 * the DB time, calls, rows and WAL of the top-level statements of its flow,
 * each shared statement split in proportion to the counts of the
 * operations it belongs to; shared_ms: the part of db_time_ms from
 * statements it shared, shared_with: with which operations; n_statements:
 * how many statements of its flow ran; time_var: the variance (ms^2) of
 * db_time_ms, taking the calls as independent (each statement's calls
 * times its window's variance of execution time, times its share squared).
 */
CREATE FUNCTION folio_perf_data.own_cost(p_begin bigint, p_end bigint, counts jsonb)
RETURNS TABLE(tenant text, operation text, db_time_ms double precision, shared_ms double precision,
    calls numeric, rows_written numeric, wal_bytes numeric, n_statements bigint, shared_with text,
    time_var double precision)
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
    WITH c AS (
        SELECT x->>'tenant' AS tenant, x->>'operation' AS operation, (x->>'n')::numeric AS n
        FROM jsonb_array_elements(counts) x
        WHERE (x->>'n')::numeric > 0
    ), s AS (
        SELECT k.key_id, k.text_id, k.tenant, k.module, d.total_exec_time, d.calls, d.rows, d.wal_bytes,
               coalesce(d.stddev_exec_time, 0) AS sd
        FROM folio_perf_data.stmt_delta(p_begin, p_end) d
        JOIN folio_perf_data.stmt_key k ON k.key_id = d.key_id
        WHERE k.toplevel AND NOT k.housekeeping AND k.tenant IN (SELECT c.tenant FROM c) AND d.calls > 0
    ), m AS (
        SELECT * FROM folio_perf_data.flow_matches((SELECT array_agg(DISTINCT s.text_id) FROM s))
    ), own AS (
        -- statement x operation, with the operation's share of it
        SELECT s.*, mm.dml, c.operation, c.n / sum(c.n) OVER (PARTITION BY s.key_id) AS share,
               count(*) OVER (PARTITION BY s.key_id) AS k
        FROM s
        JOIN (SELECT DISTINCT m.text_id, m.operation, m.module, m.dml FROM m) mm
          ON mm.text_id = s.text_id AND mm.module = s.module
        JOIN c ON c.tenant = s.tenant AND c.operation = mm.operation
    ), sharing AS (
        SELECT a.tenant, a.operation, string_agg(DISTINCT b.operation, ', ' ORDER BY b.operation) AS ops
        FROM own a JOIN own b ON b.key_id = a.key_id AND b.operation <> a.operation
        GROUP BY a.tenant, a.operation
    )
    SELECT own.tenant, own.operation,
           sum(own.total_exec_time * own.share),
           coalesce(sum(own.total_exec_time * own.share) FILTER (WHERE own.k > 1), 0),
           round(sum(own.calls * own.share), 3),
           round(coalesce(sum(own.rows * own.share) FILTER (WHERE own.dml), 0), 3),
           round(sum(coalesce(own.wal_bytes, 0) * own.share), 1),
           count(*),
           min(sharing.ops),
           -- the variance of its DB time: the calls' own, independent
           sum(own.share ^ 2 * own.calls * own.sd ^ 2)
    FROM own
    LEFT JOIN sharing ON sharing.tenant = own.tenant AND sharing.operation = own.operation
    GROUP BY own.tenant, own.operation
$$;
