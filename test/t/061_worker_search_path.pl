# test/t/061_worker_search_path.pl - the sampler worker runs as a superuser:
# a role that may create objects in public (here: the owner of the
# worker's database, who may also set the database's search_path) plants
# functions and an operator that an unqualified call in the worker's SQL
# would pick, and must not become superuser.
# Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('worker_search_path');
$node->init;
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'pg_stat_statements,folio_perf'
compute_query_id = on
folio_perf.sample_interval = 100
folio_perf.flush_interval = 1
folio_perf.snapshot_interval = 2
folio_perf.database = 'folio'
});
$node->start;
$node->safe_psql('postgres', q{
CREATE ROLE mallory LOGIN;
CREATE DATABASE folio OWNER mallory;
});
# installed by a superuser other than the bootstrap superuser the worker
# connects as: the worker acts as this owner
$node->safe_psql('folio', q{
CREATE ROLE fp_installer SUPERUSER;
SET ROLE fp_installer;
CREATE EXTENSION pg_stat_statements;
CREATE EXTENSION folio_perf;
RESET ROLE;
CREATE TABLE public.writers (who name);
CREATE FUNCTION public.note_writer() RETURNS trigger LANGUAGE plpgsql
SET search_path = pg_catalog AS $$
BEGIN INSERT INTO public.writers VALUES (current_user); RETURN NULL; END $$;
CREATE TRIGGER note_writer AFTER INSERT ON folio_perf_data.sample_interval
FOR EACH STATEMENT EXECUTE FUNCTION public.note_writer();
CREATE SCHEMA fs01_mod_users;
CREATE TABLE fs01_mod_users.users (id int);
GRANT USAGE ON SCHEMA fs01_mod_users TO mallory;
GRANT SELECT ON fs01_mod_users.users TO mallory;
});

# mallory owns the database, so public (owned by pg_database_owner) is hers
is( $node->safe_psql('folio', q{
	SELECT has_schema_privilege('mallory', 'public', 'CREATE')
	       AND NOT rolsuper FROM pg_roles WHERE rolname = 'mallory'}),
	't', 'precondition: mallory may create in public and is no superuser');

# The plant: every call is recorded with the backend that made it; called
# by the worker (a superuser) it makes mallory one.  (The test's own
# superuser sessions also call it, below: they only leave a record.)
$node->safe_psql('folio', q{
SET ROLE mallory;
CREATE TABLE public.calls (fn text, backend_type text, by_superuser boolean);
GRANT INSERT ON public.calls TO PUBLIC;
-- the backend type whose superuser calls escalate (the control below
-- points it at a client backend once)
CREATE TABLE public.trap_backend (bt text);
INSERT INTO public.trap_backend VALUES ('folio_perf sampler');
GRANT SELECT ON public.trap_backend TO PUBLIC;
CREATE FUNCTION public.trap(fn text) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog AS $$
DECLARE
    su boolean := (SELECT r.rolsuper FROM pg_catalog.pg_roles r
                    WHERE r.rolname OPERATOR(pg_catalog.=) current_user);
    bt text := (SELECT a.backend_type FROM pg_catalog.pg_stat_activity a
                 WHERE a.pid OPERATOR(pg_catalog.=) pg_catalog.pg_backend_pid());
BEGIN
    INSERT INTO public.calls VALUES (fn, bt, su);
    IF su AND bt OPERATOR(pg_catalog.=) ANY (SELECT t.bt FROM public.trap_backend t) THEN
        EXECUTE 'ALTER ROLE mallory SUPERUSER';
    END IF;
END $$;
GRANT EXECUTE ON FUNCTION public.trap(text) TO PUBLIC;
CREATE FUNCTION public.array_prepend(oid, oid[]) RETURNS oid[]
LANGUAGE plpgsql SET search_path = pg_catalog AS $$
BEGIN PERFORM public.trap('array_prepend'); RETURN pg_catalog.array_prepend($1, $2); END $$;
CREATE FUNCTION public.unnest(oid[]) RETURNS SETOF oid
LANGUAGE plpgsql SET search_path = pg_catalog AS $$
BEGIN PERFORM public.trap('unnest(oid[])'); RETURN QUERY SELECT pg_catalog.unnest($1); END $$;
CREATE FUNCTION public.unnest(text[]) RETURNS SETOF text
LANGUAGE plpgsql SET search_path = pg_catalog AS $$
BEGIN PERFORM public.trap('unnest(text[])'); RETURN QUERY SELECT pg_catalog.unnest($1); END $$;
CREATE FUNCTION public.unnest(bigint[]) RETURNS SETOF bigint
LANGUAGE plpgsql SET search_path = pg_catalog AS $$
BEGIN PERFORM public.trap('unnest(bigint[])'); RETURN QUERY SELECT pg_catalog.unnest($1); END $$;
CREATE FUNCTION public.now() RETURNS timestamptz
LANGUAGE plpgsql SET search_path = pg_catalog AS $$
BEGIN PERFORM public.trap('now'); RETURN pg_catalog.now(); END $$;
-- an operator that beats pg_catalog's only when public comes first
CREATE FUNCTION public.text_eq(text, text) RETURNS boolean
LANGUAGE plpgsql SET search_path = pg_catalog AS $$
BEGIN PERFORM public.trap('='); RETURN pg_catalog.texteq($1, $2); END $$;
CREATE OPERATOR public.= (LEFTARG = text, RIGHTARG = text, FUNCTION = public.text_eq);
RESET ROLE;
});

# Control: under the default search_path an unqualified call picks the
# planted function (an exact match beats pg_catalog's polymorphic one) ...
$node->safe_psql('folio', q{
SET ROLE mallory;
SELECT array_prepend(1::oid, '{2}'::oid[]);
SELECT count(*) FROM unnest('{a}'::text[]);
SELECT count(*) FROM unnest('{1}'::oid[]);
SELECT count(*) FROM unnest('{1}'::bigint[]);
RESET ROLE;
});
is( $node->safe_psql('folio', q{
	SELECT string_agg(DISTINCT fn, ',' ORDER BY fn) FROM public.calls}),
	'array_prepend,unnest(bigint[]),unnest(oid[]),unnest(text[])',
	'control: unqualified calls under the default search_path reach the plant');
# ... and with public first (the database owner may set that for every
# session, the worker's included) so does the operator.
$node->safe_psql('folio', q{
SET ROLE mallory;
ALTER DATABASE folio SET search_path = public, pg_catalog;
});
$node->safe_psql('folio', q{SET ROLE mallory; SELECT 'x' = 'x'; SELECT now()});
is( $node->safe_psql('folio', q{
	SELECT string_agg(DISTINCT fn, ',' ORDER BY fn) FROM public.calls
	 WHERE fn OPERATOR(pg_catalog.=) ANY ('{=,now}')
	   AND backend_type IS DISTINCT FROM 'folio_perf sampler'}),
	'=,now', 'control: with public first, text = text and now() reach the planted ones');
# control of the escalation: a superuser's call in the backend type the
# trap waits for (a client backend, for once) makes mallory superuser
$node->safe_psql('folio', q{SET ROLE mallory; UPDATE public.trap_backend SET bt = 'client backend'});
$node->safe_psql('folio', q{SELECT public.trap('control')});
is($node->safe_psql('folio', q{SELECT rolsuper FROM pg_roles WHERE rolname = 'mallory'}), 't',
	'control: a superuser calling the plant in the backend type it waits for makes mallory superuser');
$node->safe_psql('folio', q{
ALTER ROLE mallory NOSUPERUSER;
UPDATE public.trap_backend SET bt = 'folio_perf sampler';
DELETE FROM public.calls;});

# Give the worker everything to do: restart it in the database's new
# settings, sessions with statements on module relations (the worker
# attributes them), flushes and timed snapshots.
$node->restart;
ok( $node->poll_query_until('folio', q{
	SELECT state = 'sampling' FROM folio_perf_sampler_status()}),
	'sampler is sampling');
is( $node->safe_psql('folio', q{
	SELECT count(*) FROM pg_stat_activity a, public.trap_backend t
	 WHERE a.backend_type OPERATOR(pg_catalog.=) t.bt}),
	'1', 'control: the worker\'s backend type is the one the trap waits for');
my $s = $node->background_psql('folio', extra_params => [ '-U', 'mallory' ]);
$s->query_safe(q{SET application_name = 'mod-users-19.2.0'});
$s->query_safe('SELECT count(*) FROM fs01_mod_users.users');
my $flushed = $node->safe_psql('folio', 'SELECT ticks_flushed FROM folio_perf_sampler_status()');
my $snaps = $node->safe_psql('folio', 'SELECT snapshots FROM folio_perf_sampler_status()');
ok( $node->poll_query_until('folio', qq{
	SELECT ticks_flushed > $flushed + 20 AND snapshots >= $snaps + 2
	  FROM folio_perf_sampler_status()}),
	'the worker flushed and took timed snapshots');
is( $node->safe_psql('folio', q{
	SELECT count(*) FROM folio_perf_connections(
	    folio_perf_window((SELECT max(snap_id) - 1 FROM folio_perf_data.snapshot),
	                      (SELECT max(snap_id) FROM folio_perf_data.snapshot)))
	 WHERE dimension = 'tenant' AND key = 'fs01'}),
	'1', 'the worker attributed the session by its statement\'s relations');

is( $node->safe_psql('folio', q{
	SELECT string_agg(DISTINCT who, ',') FROM public.writers}),
	'fp_installer', 'the worker writes as the extension\'s owner, not as the bootstrap superuser');

is( $node->safe_psql('folio', q{
	SELECT rolsuper FROM pg_roles WHERE rolname = 'mallory'}),
	'f', 'mallory did not become superuser');
is( $node->safe_psql('folio', q{
	SELECT count(*) FROM public.calls WHERE backend_type = 'folio_perf sampler'}),
	'0', 'the worker called none of the planted objects');

$s->quit;
$node->stop;
done_testing();
