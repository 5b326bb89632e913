/* sql/parts/046_redact.sql - the secrets cut out of statement texts before they are stored */
-- Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)

/*
 * text_redact(query): a statement text without the secrets it may carry,
 * before it is stored (and so dumped).  pg_stat_statements replaces the
 * constants of planned statements by $n but keeps utility statements (DO
 * bodies, EXECUTE strings, CREATE/ALTER ROLE, SERVER, USER MAPPING, ALTER
 * SYSTEM, CALL, ...) and every comment as they were typed, so any text may
 * hold a password:
 *   - the password of a URI (scheme://user:password@host) becomes
 *     <redacted>;
 *   - a password key (password, sslpassword, PGPASSWORD, new_password, any
 *     case, also quoted as a JSON or hstore key) followed by =, =>, : or by
 *     a quoted, dollar-quoted or commented value: the text is cut there,
 *     since where a value ends cannot be told safely in every quoting
 *     (doubled quotes inside a DO body, a dollar quote, a comment, a new
 *     line); what is before stays, to tell the statement;
 *   - CREATE/ALTER ROLE, USER, GROUP or USER MAPPING with the word
 *     password anywhere: cut there too.
 * A column or table named like password_reset_action is left alone (no
 * value follows it).
 */
CREATE FUNCTION folio_perf_data.text_redact(query text)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT CASE
             WHEN u.q ~* '\m(create|alter)\s+(role|user|group)\M' AND u.q ~* 'password'
               THEN pg_catalog.regexp_replace(u.q, '(password).*$', '\1 <redacted>', 'i')
             ELSE pg_catalog.regexp_replace(u.q,
                    '((^|[^a-z0-9])[a-z_]*password)(["'']?\s*(=>|=|:)|\s+([''"$]|e''|u&''|/\*|--)|\s*(/\*|--)).*$',
                    '\1 <redacted>', 'i')
           END
    FROM (SELECT pg_catalog.regexp_replace(query, '(://[^\s/@''"]*):[^\s@''"/]*@', '\1:<redacted>@', 'g') AS q) u
$$;

/*
 * plan_redact(plan, json): a kept plan without the secrets its constants
 * may carry (a filter on a password column or JSON key, a connection URI
 * in a constant): plans are of real executions, with their parameters'
 * values.  From a word ending in "password" to the end of its line (text
 * format) or of its JSON string (json: the string's escaped characters
 * are kept whole, so the JSON stays valid), and the password of a URI, are
 * replaced as text_redact() replaces them.
 */
CREATE FUNCTION folio_perf_data.plan_redact(plan text, is_json boolean)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT CASE WHEN is_json
                THEN pg_catalog.regexp_replace(u.p, '([a-z_]*password)((?:[^"\\]|\\.)*)', '\1 <redacted>', 'gi')
                ELSE pg_catalog.regexp_replace(u.p, '([a-z_]*password)[^\n]*', '\1 <redacted>', 'gi') END
    FROM (SELECT pg_catalog.regexp_replace(plan, '(://[^\s/@''"\\]*):[^\s@''"/\\]*@', '\1:<redacted>@', 'g') AS p) u
$$;
