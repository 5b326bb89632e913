# test/t/012_sampler_load.pl - the sampler on the FOLIO-like fixture:
# connections held across a window are counted exactly per role and module;
# sleeping and lock-blocked sessions show up as DB load with their wait
# events; samples taken before a restart stay in storage.
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

my $node = PostgreSQL::Test::Cluster->new('sampler_load');
$node->init;
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'pg_stat_statements,folio_perf'
compute_query_id = on
max_connections = 60
folio_perf.sample_interval = 100
folio_perf.flush_interval = 60
folio_perf.database = 'folio'
});
$node->start;
command_ok([ 'bash', "$testdir/fixture/build_fixture.sh", '-q', '-d', 'folio', '-t', '1',
	'-r', '20', '-P', '2', '-h', $node->host, '-p', $node->port ], 'one-tenant fixture');
$node->safe_psql('folio', 'CREATE EXTENSION pg_stat_statements; CREATE EXTENSION folio_perf');
ok($node->poll_query_until('folio', q{
	SELECT folio_perf_sampler_flush() >= 0 AND state = 'sampling' FROM folio_perf_sampler_status()}),
	'the sampler stores into the fixture database');

# 12 idle connections as an RMB module role, 5 as the shared login with a
# Spring module's application_name
my @held;
for (1 .. 12)
{
	my $s = $node->background_psql('folio', extra_params => [ '-U', 'fs09000000_mod_inventory_storage' ]);
	$s->query_safe(q{SET application_name = 'mod-inventory-storage-27.1.0'});
	push @held, $s;
}
for (1 .. 5)
{
	my $s = $node->background_psql('folio', extra_params => [ '-U', 'folio_admin' ]);
	$s->query_safe(q{SET application_name = 'mod-search'});
	push @held, $s;
}
ok($node->poll_query_until('folio', q{
	SELECT count(*) = 17 FROM folio_perf_samples()
	 WHERE sampled_at = (SELECT max(sampled_at) FROM folio_perf_samples())
	   AND application_name IN ('mod-inventory-storage-27.1.0', 'mod-search')}),
	'the sampler sees the 17 sessions');
# the samples taken before all 17 were there go into an interval of their
# own, stored now, before the window
$node->safe_psql('folio', 'SELECT folio_perf_sampler_flush()');
my $w = $node->safe_psql('folio', q{SELECT folio_perf_begin('held connections')});
$node->safe_psql('folio', 'SELECT pg_sleep(2)');
$node->safe_psql('folio', 'SELECT folio_perf_end()');
my %c = map { my ($d, $k, $a, $m) = split /\|/; ("$d:$k" => [ $a, $m ]) } split /\n/,
  $node->safe_psql('folio', "SELECT dimension, key, avg, max FROM folio_perf_connections($w)");
for my $case ([ 'role:fs09000000_mod_inventory_storage', 12 ], [ 'module:mod_inventory_storage', 12 ],
	[ 'role:folio_admin', 5 ], [ 'module:mod_search', 5 ], [ 'tenant:fs09000000', 12 ])
{
	my ($key, $n) = @$case;
	my ($avg, $max) = @{ $c{$key} // [ -99, -99 ] };
	ok($avg == $n && $max == $n, "$key: avg $avg, max $max (expected $n, held throughout)");
}
$_->quit for @held;

# 3 sessions in pg_sleep and 2 blocked on a row lock (the first waits for
# the holder's transactionid, the second for the tuple lock): DB load of about 5.
# The two waiters are mod-circulation-storage's, updating its table; the
# holder is a session of mod-inventory-storage that updated the row and
# then read a table of its own (its last statement names it)
$node->safe_psql('folio', q{
CREATE TABLE fs09000000_mod_circulation_storage.lockme (id int PRIMARY KEY, v int);
INSERT INTO fs09000000_mod_circulation_storage.lockme VALUES (1, 0);
CREATE TABLE fs09000000_mod_inventory_storage.held (id int);
GRANT USAGE ON SCHEMA fs09000000_mod_circulation_storage, fs09000000_mod_inventory_storage TO PUBLIC;
GRANT ALL ON fs09000000_mod_circulation_storage.lockme, fs09000000_mod_inventory_storage.held TO PUBLIC;});
my $holder = $node->background_psql('folio', extra_params => [ '-U', 'fs09000000_mod_inventory_storage' ]);
$holder->query_safe('BEGIN; UPDATE fs09000000_mod_circulation_storage.lockme SET v = v + 1 WHERE id = 1;');
$holder->query_safe('SELECT count(*) FROM fs09000000_mod_inventory_storage.held;');
my @busy;
for (1 .. 3)
{
	my $s = $node->background_psql('folio');
	$s->query_until(qr/^$/, "SELECT pg_sleep(600);\n");
	push @busy, $s;
}
for (1 .. 2)
{
	my $s = $node->background_psql('folio', extra_params => [ '-U', 'fs09000000_mod_circulation_storage' ]);
	$s->query_until(qr/^$/,
		"UPDATE fs09000000_mod_circulation_storage.lockme SET v = v + 1 WHERE id = 1;\n");
	push @busy, $s;
	# one at a time: the second waits for the first (the tuple lock)
	$node->poll_query_until('folio', qq{SELECT count(*) = $_ FROM pg_stat_activity WHERE wait_event_type = 'Lock'})
	  or die 'the waiter did not start waiting';
}
$node->poll_query_until('folio', q{
	SELECT count(*) = 5 FROM pg_stat_activity
	 WHERE wait_event = 'PgSleep' OR wait_event_type = 'Lock'})
  or die 'sessions did not start waiting';
# the window begins when all five wait, however long they took to start
# (the samples from before are stored first, in an interval of their own)
$node->safe_psql('folio', 'SELECT folio_perf_sampler_flush()');
$w = $node->safe_psql('folio', q{SELECT folio_perf_begin('load')});
sleep 3;    # not in a session of its own: that would be a sixth active one
$node->safe_psql('folio', 'SELECT folio_perf_end()');
$node->safe_psql('folio', q{SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE wait_event = 'PgSleep'});
$holder->query_safe('COMMIT');
# the cancelled sleepers' psql has stopped on the error already
eval { $_->quit; 1 } for @busy;
$holder->quit;
my $load = $node->safe_psql('folio', "SELECT aas FROM folio_perf_db_load($w) WHERE dimension = 'total'");
# every sample of the window has the five; the window's own snapshots are
# active in a few samples more, never in all of them
ok($load >= 5 && $load < 6, "average active sessions $load (the five waiting in every sample, and less than one more)");
is($node->safe_psql('folio', qq{
SELECT string_agg(key || ' ' || aas, ',' ORDER BY key) FROM folio_perf_db_load($w)
 WHERE dimension = 'wait_event' AND key IN ('Timeout:PgSleep', 'Lock:transactionid', 'Lock:tuple')}),
	'Lock:transactionid 1.000,Lock:tuple 1.000,Timeout:PgSleep 3.000',
	'exactly 3 sessions sleeping, 1 waiting for the transaction and 1 for the tuple lock');
my $waits = $node->safe_psql('folio', qq{
SELECT string_agg(key, ',' ORDER BY key) FROM folio_perf_db_load($w)
 WHERE dimension = 'wait_event' AND key IN ('Timeout:PgSleep', 'Lock:transactionid')});
is($waits, 'Lock:transactionid,Timeout:PgSleep', 'PgSleep and transactionid are among the waits');
# who held what: the first waiter waited for mod-inventory-storage's
# session in every sample, the second for the first (its tuple lock)
is($node->safe_psql('folio', qq{
SELECT string_agg(tenant || '/' || module || ' <- ' || holder_tenant || '/' || holder_module || ' ' || aas, ','
                  ORDER BY holder_module) FROM folio_perf_lock_holders($w)}),
	'fs09000000/mod_circulation_storage <- fs09000000/mod_circulation_storage 1.000,'
	  . 'fs09000000/mod_circulation_storage <- fs09000000/mod_inventory_storage 1.000',
	'lock holders: the waiters\' module and the modules they waited for, one session each in every sample');
like($node->safe_psql('folio', "SELECT folio_perf_report($w, 'text', detail => 'full')"),
	qr/^Lock holders\n=+\n/m, 'the report has the lock holders');

# a restart: samples taken before it are still in storage
my $before = $node->safe_psql('folio', 'SELECT count(*) FROM folio_perf_data.sample_interval');
ok($before > 0, "samples stored before the restart ($before intervals)");
$node->restart;
is($node->safe_psql('folio', 'SELECT count(*) >= ' . $before . ' FROM folio_perf_data.sample_interval'),
	't', 'samples from before the restart are still stored');
is($node->safe_psql('folio', "SELECT count(*) > 0 FROM folio_perf_db_load($w) WHERE dimension = 'total'"),
	't', 'the window before the restart still reports');

$node->stop;
done_testing();
