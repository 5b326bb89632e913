# test/t/033_remote_timed.pl - a remote target's sampled ticks are stored
# exactly once while the sampler takes timed snapshots: a timed snapshot
# flushes the remote buffer and then calls folio_perf_sampler_flush() in
# the same transaction, which must not write the same ticks again.
# Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

# ---- the target: any server with pg_stat_statements
my $target = PostgreSQL::Test::Cluster->new('target');
$target->init;
$target->append_conf('postgresql.conf', q{
shared_preload_libraries = 'pg_stat_statements'
});
$target->start;
$target->safe_psql('postgres', 'CREATE EXTENSION pg_stat_statements');

# ---- the repository: every flush is a timed snapshot's (flush_interval is long)
my $repo = PostgreSQL::Test::Cluster->new('repo');
$repo->init;
$repo->append_conf('postgresql.conf', q{
shared_preload_libraries = 'pg_stat_statements,folio_perf'
compute_query_id = on
folio_perf.sample_interval = 100
folio_perf.flush_interval = 3600
folio_perf.database = 'postgres'
});
$repo->start;
$repo->safe_psql('postgres',
	'CREATE EXTENSION pg_stat_statements; CREATE EXTENSION folio_perf');
my ($thost, $tport) = ($target->host, $target->port);
$repo->safe_psql('postgres',
	qq{SELECT folio_perf_target_add('t1', 'host=$thost port=$tport dbname=postgres')});
my $tid = $repo->safe_psql('postgres',
	q{SELECT target_id FROM folio_perf_data.target WHERE name = 't1'});

# the first flush reads the list of targets; then the target is sampled
ok( $repo->poll_query_until('postgres', qq{
	SELECT folio_perf_sampler_flush() >= 0
	   AND (SELECT ticks > 0 FROM folio_perf_data.target_status WHERE target_id = $tid)}),
	'the target is sampled');

# ---- timed snapshots, each flushing local and remote ticks
$repo->safe_psql('postgres', q{ALTER SYSTEM SET folio_perf.snapshot_interval = 1; SELECT pg_reload_conf()});
my $snaps = $repo->safe_psql('postgres', 'SELECT snapshots FROM folio_perf_sampler_status()');
ok( $repo->poll_query_until('postgres', qq{
	SELECT snapshots >= $snaps + 4 FROM folio_perf_sampler_status()}),
	'the sampler takes timed snapshots');
$repo->safe_psql('postgres', q{ALTER SYSTEM SET folio_perf.snapshot_interval = 0; SELECT pg_reload_conf()});
ok( $repo->poll_query_until('postgres',
		q{SELECT snapshot_interval_s = 0 FROM folio_perf_sampler_status()}),
	'timed snapshots off again');
# a last flush: what was taken is written, and the target's state with it
$repo->safe_psql('postgres', 'SELECT folio_perf_sampler_flush()');

cmp_ok( $repo->safe_psql('postgres', qq{
	SELECT count(*) FROM folio_perf_data.sample_interval
	 WHERE target_id = $tid AND cut = 'snapshot'}),
	'>=', 4, 'timed snapshots wrote intervals of the target');
my ($stored, $taken) = split /\|/, $repo->safe_psql('postgres', qq{
	SELECT (SELECT sum(n_ticks) FROM folio_perf_data.sample_interval WHERE target_id = $tid),
	       (SELECT ticks - ticks_dropped FROM folio_perf_data.target_status WHERE target_id = $tid)});
cmp_ok($taken, '>', 20, 'the worker took ticks of the target');
is($stored, $taken, 'every tick the worker took of the target is stored exactly once');
is( $repo->safe_psql('postgres', qq{
	SELECT count(*) FROM folio_perf_data.sample_interval a
	  JOIN folio_perf_data.sample_interval b
	    ON a.target_id = b.target_id AND a.ctid < b.ctid
	   AND a.started_at <= b.ended_at AND b.started_at <= a.ended_at
	 WHERE a.target_id = $tid}),
	'0', 'no two intervals of the target overlap');
# and everything stored is what the worker counts as flushed
is( $repo->safe_psql('postgres', q{
	SELECT (SELECT sum(n_ticks) FROM folio_perf_data.sample_interval)
	     = (SELECT ticks_flushed FROM folio_perf_sampler_status())}),
	't', 'stored ticks (local and remote) = ticks_flushed');

$repo->stop;
$target->stop;
done_testing();
