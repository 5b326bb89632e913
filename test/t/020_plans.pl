# test/t/020_plans.pl - plans of slow executions on the FOLIO-like
# fixture (test/fixture) with the RTAC workload (test/workload):
#  - the query inside get_items_and_holdings_view() is captured with a Seq
#    Scan on item while item_holdingsrecordid_idx is missing, with an index
#    scan once it exists, and compare flags the change;
#  - a real threshold keeps a slow statement and not a fast one;
#  - plan_min_duration = -1 captures nothing;
#  - a statement cancelled mid-execution (also inside a function) leaves
#    nothing captured, no memory and the nesting level right;
#  - after a restart with a tiny store: a storm of distinct statements is
#    counted as dropped or evicted and the server stays healthy; a plan
#    larger than plan_max_bytes keeps its text, cut, and is counted.
# Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)
use strict;
use warnings;
use Cwd qw(abs_path);
use File::Basename qw(dirname);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $testdir =
  ($ENV{TESTDIR} && -d "$ENV{TESTDIR}/test/fixture")
  ? "$ENV{TESTDIR}/test"
  : abs_path(dirname(__FILE__) . '/..');
my $build = "$testdir/fixture/build_fixture.sh";
my $run   = "$testdir/workload/run_workload.sh";
my $schema = 'fs09000000_mod_inventory_storage';

my $node = PostgreSQL::Test::Cluster->new('plans');
$node->init;
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'pg_stat_statements,folio_perf'
pg_stat_statements.track = all
compute_query_id = on
folio_perf.sample_interval = 0
folio_perf.plan_min_duration = -1
max_parallel_workers_per_gather = 0
});
$node->start;
my @conn = ('-h', $node->host, '-p', $node->port);

sub q1 { return $node->safe_psql('folio', $_[0]); }

# Sets folio_perf.plan_min_duration for new sessions (the workload logs in
# as module roles, which may not SET it) and waits until they see it.
sub set_threshold
{
	my $v = shift;
	$node->safe_psql('postgres',
		"ALTER SYSTEM SET folio_perf.plan_min_duration = '$v'");
	$node->reload;
	$node->poll_query_until('folio',
		"SELECT current_setting('folio_perf.plan_min_duration') IN ('$v', '${v}ms')")
	  or die "plan_min_duration did not become $v";
}

sub rtac
{
	my ($out, $err) = run_command(
		[ 'bash', $run, '-d', 'folio', '-w', 'rtac', '-n', '20', '-t', 'fs09000000', '-q', @conn ]);
	like($out, qr/== rtac done/, 'rtac workload ran') or diag($err);
}

# ---- the fixture ----------------------------------------------------------

my ($out, $err) = run_command(
	[ 'bash', $build, '-d', 'folio', '-t', '1', '-r', '2000', '-P', '2', '-q', @conn ]);
like($out, qr/^fixture folio: 1 tenants/m, 'fixture built') or diag($err);
q1('CREATE EXTENSION pg_stat_statements');
q1('CREATE EXTENSION folio_perf');
q1('ANALYZE');

# ---- RTAC without and with the index ----------------------------------

q1("DROP INDEX $schema.item_holdingsrecordid_idx");
my $w1 = q1("SELECT folio_perf_begin('rtac, item_holdingsrecordid_idx missing')");
set_threshold(0);
rtac();
set_threshold(-1);
q1("SELECT folio_perf_end($w1)");

my $inner = q{query LIKE 'SELECT i.id,%'};
is( q1(qq{SELECT string_agg(concat_ws('|', tenant, module, toplevel, slow_calls), ',')
	FROM folio_perf_plans($w1) WHERE $inner}),
	"fs09000000|mod_inventory_storage|f|20",
	'the query inside get_items_and_holdings_view: nested, its tenant, 20 executions');
like(q1("SELECT outline FROM folio_perf_plans($w1) WHERE $inner"),
	qr/Seq Scan on item it/, 'captured with a Seq Scan on item');
is( q1(qq{SELECT plan_json->'Plan'->>'Node Type' IS NOT NULL AND NOT truncated
	FROM folio_perf_plans($w1) WHERE $inner}),
	't', 'and its JSON');
is( q1(qq{SELECT concat_ws('|', toplevel, outline) FROM folio_perf_plans($w1)
	WHERE query = 'select * from get_items_and_holdings_view(\$1,\$2)'}),
	't|Function Scan on get_items_and_holdings_view',
	'the top-level call is captured too');
like(q1("SELECT folio_perf_report($w1)"),
	qr/Plans of the slowest nested statements\n=+\n#1 (Q\d+ )?mod_inventory_storage \(fs09000000\).*\nSELECT i\.id,.*\n(    .*\n)*    .*Seq Scan on item it/,
	'the report shows the nested plan');

q1("CREATE INDEX item_holdingsrecordid_idx ON $schema.item (holdingsrecordid)");
q1("ANALYZE $schema.item");
my $w2 = q1("SELECT folio_perf_begin('rtac, with the index')");
set_threshold(0);
rtac();
set_threshold(-1);
q1("SELECT folio_perf_end($w2)");
like(q1("SELECT outline FROM folio_perf_plans($w2) WHERE $inner"),
	qr/Index Scan using item_holdingsrecordid_idx on item it/,
	'the next window shows the index scan');
is(q1("SELECT plan_changed FROM folio_perf_plans($w2) WHERE $inner"),
	'f', 'one plan inside the window');
is( q1(qq{SELECT string_agg(concat_ws('|', section, status, plan_changed), ',')
	FROM folio_perf_compare_rows($w1, $w2) WHERE $inner}),
	'nested_plan|both|t', 'compare_rows flags the plan change');
like(q1("SELECT folio_perf_compare($w1, $w2)"),
	qr/\| nested \| .*Seq Scan on item it.*\| .*Index Scan using item_holdingsrecordid_idx on item it/,
	'compare shows both plans');

# ---- a real threshold ----------------------------------------------------

set_threshold(50);
my $w3 = q1("SELECT folio_perf_begin('threshold 50 ms')");
q1("SELECT pg_sleep(0.2) AS slow_one");
q1("SELECT 42 AS fast_one");
q1("SELECT folio_perf_end($w3)");
is( q1(qq{SELECT string_agg(query || ':' || (slowest_ms >= 200), ',')
	FROM folio_perf_plans($w3) WHERE query IN ('SELECT pg_sleep(\$1) AS slow_one', 'SELECT \$1 AS fast_one')}),
	'SELECT pg_sleep($1) AS slow_one:true', 'only the statement above 50 ms is kept');

# ---- -1 captures nothing -----------------------------------------------

set_threshold(-1);
my $slow_before = q1('SELECT slow_executions FROM folio_perf_plans_status');
my $w4 = q1("SELECT folio_perf_begin('capture off')");
rtac();
q1("SELECT pg_sleep(0.1)");
q1("SELECT folio_perf_end($w4)");
is(q1("SELECT count(*) FROM folio_perf_plans($w4)"), '0', 'plan_min_duration = -1: no plan');
is(q1('SELECT slow_executions FROM folio_perf_plans_status'), $slow_before,
	'and no execution counted');

# ---- cancelled mid-execution ----------------------------------------------

# Run both statements once, uncaptured, so that pg_stat_statements knows
# their query ids.
q1(q{CREATE FUNCTION public.sleepy(secs float8) RETURNS void LANGUAGE plpgsql AS
	$$ BEGIN PERFORM pg_sleep(secs); END $$});
q1('SELECT 1 FROM pg_sleep(0)');
q1('SELECT public.sleepy(0)');
my $cancelled = q1(q{SELECT string_agg(queryid::text, ',') FROM pg_stat_statements
	WHERE query IN ('SELECT $1 FROM pg_sleep($2)', 'SELECT public.sleepy($1)', 'SELECT pg_sleep(secs)')});
is(scalar(split(/,/, $cancelled)), 3, 'three query ids to watch');
set_threshold(0);
my ($ret, $stdout, $stderr) = $node->psql('folio', q{
SET statement_timeout = '200ms';
SELECT 1 FROM pg_sleep(5);
SELECT public.sleepy(5);
RESET statement_timeout;
SELECT count(*) AS after_cancel FROM pg_class WHERE relname = 'after_cancel';
SELECT coalesce((SELECT total_bytes FROM pg_backend_memory_contexts
                 WHERE name = 'folio_perf plans'), 0) <= 65536 AS small;
}, on_error_stop => 0);
like($stderr, qr/canceling statement due to statement timeout.*canceling statement due to statement timeout/s,
	'both statements were cancelled, one inside a function');
is($stdout, "0\nt", 'the session goes on; the hook keeps no memory');
is(q1("SELECT count(*) FROM folio_perf_plans_current() WHERE queryid IN ($cancelled)"),
	'0', 'nothing captured of the cancelled statements');
is( q1(q{SELECT string_agg(c.toplevel::text, ',') FROM folio_perf_plans_current() c
	JOIN pg_stat_statements s USING (dbid, userid, queryid, toplevel)
	WHERE s.query = 'SELECT count(*) AS after_cancel FROM pg_class WHERE relname = $1'}),
	'true', 'the next statement is captured as top-level');
set_threshold(-1);

# ---- a tiny store: storm and truncation ----------------------------------

$node->append_conf('postgresql.conf', q{
folio_perf.max_plans = 20
folio_perf.plan_max_bytes = 1024
});
$node->restart;
is(q1('SELECT concat_ws(\'|\', max_plans, plan_max_bytes, entries) FROM folio_perf_plans_status'),
	'20|1024|0', 'restarted with a store of 20 plans of 1 kB, empty');
set_threshold(0);
my $storm = join('', map { 'SELECT ' . join(',', 1 .. $_) . ";\n" } 1 .. 300);
$node->safe_psql('folio', $storm);
is( q1(q{SELECT entries <= 20 AND dropped + evicted >= 280 AND slow_executions >= 300
	FROM folio_perf_plans_status}),
	't', '300 distinct statements in a store of 20: the rest counted as dropped or evicted')
  or diag(q1('SELECT * FROM folio_perf_plans_status'));
is($node->safe_psql('postgres', 'SELECT 1'), '1', 'the server is healthy');
unlike(slurp_file($node->logfile), qr/out of shared memory|PANIC|server process .* was terminated/,
	'no shared memory error, no crash');

my $big = 'SELECT relname FROM pg_class WHERE oid = '
  . join(' UNION ALL SELECT relname FROM pg_class WHERE oid = ', map { 16384 + $_ } 1 .. 200);
$node->safe_psql('folio', $big);
is( q1(q{SELECT concat_ws('|', truncated, plan_json IS NULL, plan_text LIKE '%[plan cut: larger than folio_perf.plan_max_bytes]',
	                        octet_length(plan_text) <= 1024)
	FROM folio_perf_plans_current() WHERE plan_text LIKE 'Append%'}),
	't|t|t|t', 'a plan larger than plan_max_bytes keeps its text, cut, without JSON');
cmp_ok(q1('SELECT truncated FROM folio_perf_plans_status'), '>=', 1, 'and is counted');
set_threshold(-1);

my $s = q1("SELECT folio_perf_snapshot('after the storm')");
is( q1(qq{SELECT count(*) <= 20 AND count(*) > 0 FROM folio_perf_data.stmt_plan WHERE snap_id = $s}),
	't', 'a snapshot stores what the store held');
is(q1('SELECT entries_this_db FROM folio_perf_plans_status'), '0', 'and empties it');

$node->stop;
done_testing();
