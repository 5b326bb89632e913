# test/t/002_lifecycle.pl - windows across eviction, restart and crash;
# a backend killed mid-snapshot leaves no half snapshot.
# Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('lifecycle');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'pg_stat_statements,folio_perf'
pg_stat_statements.max = 100
pg_stat_statements.track = top
compute_query_id = on
folio_perf.sample_interval = 0
restart_after_crash = on
});
$node->start;
$node->safe_psql('postgres', q{
CREATE EXTENSION pg_stat_statements;
CREATE EXTENSION folio_perf;
CREATE SCHEMA fs01_mod_users;
CREATE TABLE fs01_mod_users.users (id int PRIMARY KEY, jsonb jsonb);
});

sub no_negatives
{
	my ($w) = @_;
	return $node->safe_psql('postgres', qq{
SELECT count(*) FROM folio_perf_top_statements($w, 100000, only_toplevel => NULL,
                                               include_housekeeping => true)
WHERE calls < 0 OR total_exec_ms < 0 OR rows < 0 OR shared_blks_hit < 0});
}

# 1. eviction: pg_stat_statements.max at its minimum, 300 distinct statements
my $w = $node->safe_psql('postgres', q{SELECT folio_perf_begin('eviction')});
$node->safe_psql('postgres',
	join('', map { 'SELECT ' . ('id, ' x $_) . "id FROM fs01_mod_users.users WHERE id = $_;\n" } 1 .. 300));
$node->safe_psql('postgres', 'SELECT folio_perf_end()');
like($node->safe_psql('postgres', "SELECT string_agg(flag, ',' ORDER BY flag) FROM folio_perf_window_flags($w)"),
	qr/pgss_evictions/, 'evictions inside the window are flagged');
is(no_negatives($w), '0', 'no negative numbers after evictions');
# several evicting snapshots in a window: a probe run before the window,
# evicted (a snapshot sees it gone) and run once more is reentered, counted
# since it came back (1 call, not 2); a second probe run inside the window,
# seen by a snapshot and then evicted is evicted, counted until then (1
# call); the storm's statements that are left are new.  (Which entries
# pg_stat_statements evicts is its choice: the probes are removed by their
# query ids after the storm, which is the same to folio_perf -- an entry
# gone without a reset of all of them.)
my $probe = 'SELECT id AS lifecycle_probe FROM fs01_mod_users.users WHERE id = 0';
# (of another query id: a column alias is not part of it)
my $probe2 = 'SELECT jsonb AS lifecycle_probe_2 FROM fs01_mod_users.users WHERE id = 0';
$node->safe_psql('postgres', $probe);
$node->safe_psql('postgres', 'SELECT folio_perf_snapshot()');
my $w2 = $node->safe_psql('postgres', q{SELECT folio_perf_begin('eviction 2')});
$node->safe_psql('postgres', $probe2);
$node->safe_psql('postgres', 'SELECT folio_perf_snapshot()');
$node->safe_psql('postgres',
	join('', map { 'SELECT ' . ('jsonb, ' x $_) . "id FROM fs01_mod_users.users WHERE id = $_;\n" } 1 .. 300));
$node->safe_psql('postgres', q{SELECT pg_stat_statements_reset(0, 0, queryid) FROM pg_stat_statements
	WHERE query LIKE '%lifecycle_probe%'});
$node->safe_psql('postgres', 'SELECT folio_perf_snapshot()');
$node->safe_psql('postgres', $probe);
$node->safe_psql('postgres', 'SELECT folio_perf_end()');
is(no_negatives($w2), '0', 'no negative numbers over several evicting snapshots');
my $statuses = $node->safe_psql('postgres', qq{
SELECT status || ':' || (count(*) > 0)
FROM folio_perf_top_statements($w2, 100000, only_toplevel => NULL)
GROUP BY status ORDER BY status});
is($statuses, "evicted:true\nnew:true\nreentered:true",
	'the statements of a window over evicting snapshots are evicted, new or reentered')
  or diag($node->safe_psql('postgres', qq{SELECT status, calls, left(query, 60) FROM folio_perf_top_statements($w2, 100000, only_toplevel => NULL) WHERE status <> 'new'}));
is($node->safe_psql('postgres', qq{
SELECT status || ' ' || calls FROM folio_perf_top_statements($w2, 100000, only_toplevel => NULL)
WHERE query LIKE '%lifecycle_probe %'}),
	'reentered 1', 'the probe evicted inside the window and run again is reentered, counted since');
is($node->safe_psql('postgres', qq{
SELECT status || ' ' || calls FROM folio_perf_top_statements($w2, 100000, only_toplevel => NULL)
WHERE query LIKE '%lifecycle_probe_2%'}),
	'evicted 1', 'the probe run inside the window and evicted is evicted, counted until then');

# 2. a clean restart inside a window: flagged, counts continue
$w = $node->safe_psql('postgres', q{SELECT folio_perf_begin('restart')});
$node->safe_psql('postgres', 'INSERT INTO fs01_mod_users.users SELECT g, NULL FROM generate_series(1, 10) g');
$node->restart;
$node->safe_psql('postgres', 'INSERT INTO fs01_mod_users.users SELECT g, NULL FROM generate_series(11, 15) g');
$node->safe_psql('postgres', 'SELECT folio_perf_end()');
like($node->safe_psql('postgres', "SELECT string_agg(flag, ',' ORDER BY flag) FROM folio_perf_window_flags($w)"),
	qr/server_restart/, 'a restart inside the window is flagged');
is($node->safe_psql('postgres', "SELECT inserts FROM folio_perf_table_activity($w, 10) WHERE relname = 'users'"),
	'15', 'table counters survive a clean restart: 10 + 5 inserts');
is(no_negatives($w), '0', 'no negative numbers across a restart');

# 3. a crash inside a window: statistics are lost; flagged, never negative
$w = $node->safe_psql('postgres', q{SELECT folio_perf_begin('crash')});
$node->safe_psql('postgres', 'INSERT INTO fs01_mod_users.users SELECT g, NULL FROM generate_series(100, 120) g');
$node->stop('immediate');
$node->start;
$node->safe_psql('postgres', 'INSERT INTO fs01_mod_users.users SELECT g, NULL FROM generate_series(200, 202) g');
$node->safe_psql('postgres', 'SELECT folio_perf_end()');
my $flags = $node->safe_psql('postgres', "SELECT string_agg(flag, ',' ORDER BY flag) FROM folio_perf_window_flags($w)");
like($flags, qr/server_restart/, "a crash inside the window is flagged ($flags)");
like($flags, qr/relations_reset|stats_reset/, 'lost relation statistics are flagged');
is(no_negatives($w), '0', 'no negative numbers across a crash');
is($node->safe_psql('postgres', "SELECT count(*) FROM folio_perf_table_activity($w, 100) WHERE inserts < 0 OR updates < 0 OR seq_scan < 0"),
	'0', 'no negative table numbers across a crash');

# 4. kill -9 of a backend in the middle of a snapshot: no half snapshot
my $before = $node->safe_psql('postgres', 'SELECT count(*) FROM folio_perf_snapshots');
my $rows_before = $node->safe_psql('postgres', 'SELECT (SELECT count(*) FROM folio_perf_data.stmt) + (SELECT count(*) FROM folio_perf_data.snapshot_activity)');
my $blocker = $node->background_psql('postgres');
$blocker->query_safe('BEGIN; LOCK TABLE folio_perf_data.rel_last IN ACCESS EXCLUSIVE MODE;');
my $victim = $node->background_psql('postgres', on_error_stop => 0);
my $victim_pid = $victim->query_safe('SELECT pg_backend_pid()');
$victim->query_until(qr/^$/, "SELECT folio_perf_snapshot('doomed');\n");
# the snapshot has written its first rows and now waits for the lock
$node->poll_query_until('postgres', qq{
SELECT wait_event_type = 'Lock' FROM pg_stat_activity WHERE pid = $victim_pid}) or die 'victim never blocked';
kill 'KILL', $victim_pid;
eval { $blocker->quit; };
eval { $victim->quit; };
$node->poll_query_until('postgres', 'SELECT true') or die 'server did not come back';
is($node->safe_psql('postgres', 'SELECT count(*) FROM folio_perf_snapshots'), $before,
	'no snapshot row after the capturing backend was killed');
is($node->safe_psql('postgres', q{SELECT count(*) FROM folio_perf_snapshots WHERE label = 'doomed'}), '0',
	'the half snapshot is not visible');
is($node->safe_psql('postgres', 'SELECT (SELECT count(*) FROM folio_perf_data.stmt) + (SELECT count(*) FROM folio_perf_data.snapshot_activity)'),
	$rows_before, 'no statement or activity row of the half snapshot is left');
ok($node->safe_psql('postgres', 'SELECT folio_perf_snapshot() > 0') eq 't', 'snapshots work after crash recovery');

$node->stop;
done_testing();
