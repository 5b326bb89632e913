# test/t/019_own_functions.pl - which functions are folio_perf's (src/own.c),
# while another session changes pg_proc.
#
# The fmgr hook asks, once per function and backend, whether a function is
# the extension's (pg_depend, cached); a change of pg_proc by any session
# empties the cache and forgets the extension's oid.  That change is taken
# in when the lookup opens pg_depend, and the lookup used to compare the
# function's extension (none: InvalidOid) with the oid as it was then
# (forgotten: InvalidOid), so the function was taken for folio_perf's
# until the next change of pg_proc: it was not inlined by the planner
# (regress domain.sql's makedcomp raised its error with a "SQL function"
# CONTEXT once in PostgreSQL's own suite on the folio_perf server,
# test/pg_suites.sh), it was hooked, what it ran was recorded as
# folio_perf's own (and so left out of every report), and a later change
# of pg_proc while it ran left the count of folio_perf's functions on the
# stack above 0 for the rest of the session (regress own_functions plants
# that with a function that leaves the extension while it runs).  Here the
# other session's change is committed between two statements of one
# transaction, after the extension's oid was cached and with the catalog
# caches warm, so that opening pg_depend for the function is the first
# lock the transaction takes after it: every time, not by chance.
# Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('own_functions');
$node->init;
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'pg_stat_statements,folio_perf'
pg_stat_statements.track = all
compute_query_id = on
folio_perf.sample_interval = 0
});
$node->start;
$node->safe_psql('postgres', q{
CREATE EXTENSION pg_stat_statements;
CREATE EXTENSION folio_perf;
CREATE TABLE app_log (n int);
CREATE FUNCTION other(int) RETURNS int LANGUAGE sql AS 'SELECT $1 * 2';
CREATE FUNCTION inl(int) RETURNS int LANGUAGE sql AS 'SELECT $1 + 1';
CREATE FUNCTION app_write(int) RETURNS int LANGUAGE sql
  AS 'INSERT INTO app_log VALUES ($1) RETURNING n';
});

my $s = $node->background_psql('postgres');

# Another session's change of pg_proc, committed inside the transaction in
# which the session looks the function up next: before that, a function
# of no extension looked up (the extension's oid cached) and the catalog
# caches the statement needs filled (a change of pg_proc empties the
# lists of functions by name, so again before each time).
my $n = 0;
my $in_race = sub {
	my ($sql, $func) = @_;
	$n++;
	$s->query_safe('SELECT other(x) FROM generate_series(1, 3) x');
	$s->query_safe("SELECT '$func'::regprocedure::text");
	$s->query_safe('BEGIN');
	$s->query_safe('SELECT 1');
	$node->safe_psql('postgres',
		"CREATE FUNCTION change_$n() RETURNS int LANGUAGE sql AS 'SELECT $n'");
	my $out = $s->query_safe($sql);
	$s->query_safe('COMMIT');
	return $out;
};
my $explain = 'EXPLAIN (VERBOSE, COSTS OFF) SELECT inl(x) FROM generate_series(1, 3) x';

my $plan = $in_race->($explain, 'inl(int)');
like($plan, qr/Output: \(x \+ 1\)/,
	'a function looked up while another session changes pg_proc is inlined')
  or diag($plan);
$plan = $s->query_safe($explain);
like($plan, qr/Output: \(x \+ 1\)/, '... and in the next transaction')
  or diag($plan);

$in_race->('SELECT app_write(7)', 'app_write(int)');
is( $node->safe_psql('postgres', q{
	SELECT count(*) || ' ' || bool_or(folio_perf_data.own_queryid(queryid))
	  FROM pg_stat_statements WHERE query LIKE 'INSERT INTO app_log%'}),
	'1 false',
	'the statement of a function looked up while another session changes pg_proc'
	  . ' is not recorded as folio_perf\'s');

# the control: a function of folio_perf's is found as one, looked up the
# same way (the statement that calls it recorded as folio_perf's)
$in_race->('SELECT capacity FROM folio_perf_data.own_status()', 'folio_perf_data.own_status()');
is( $node->safe_psql('postgres', q{
	SELECT count(*) || ' ' || bool_or(folio_perf_data.own_queryid(queryid))
	  FROM pg_stat_statements WHERE query LIKE 'SELECT capacity FROM folio_perf_data.own_status()%'}),
	'1 true', 'control: a call of folio_perf\'s function looked up the same way is recorded as folio_perf\'s');

$s->quit;
$node->stop;
done_testing();
