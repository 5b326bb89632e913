# test/t/011_sampler_standby.pl - on a hot standby the sampler samples into
# shared memory and writes nothing; after promotion it stores its samples.
# Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $primary = PostgreSQL::Test::Cluster->new('primary');
$primary->init(allows_streaming => 1);
$primary->append_conf('postgresql.conf', q{
shared_preload_libraries = 'pg_stat_statements,folio_perf'
compute_query_id = on
folio_perf.sample_interval = 100
folio_perf.flush_interval = 1
folio_perf.snapshot_interval = 1
});
$primary->start;
$primary->safe_psql('postgres',
	'CREATE EXTENSION pg_stat_statements; CREATE EXTENSION folio_perf');
ok( $primary->poll_query_until('postgres', q{
	SELECT folio_perf_sampler_flush() >= 0
	   AND (SELECT state = 'sampling' FROM folio_perf_sampler_status())}),
	'primary samples and stores');

$primary->backup('b');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'b', has_streaming => 1);
$standby->start;
$primary->wait_for_catchup($standby);

sub on_standby
{
	my ($sql) = @_;
	return $standby->safe_psql('postgres', $sql);
}

ok( $standby->poll_query_until('postgres', q{
	SELECT state = 'standby' AND ticks >= 20 FROM folio_perf_sampler_status()}),
	'standby worker samples in memory');
is(on_standby(q{SELECT pg_is_in_recovery()}), 't', 'standby is in recovery');
is( on_standby(q{
	SELECT intervals = 0 AND ticks_flushed = 0 AND snapshots = 0
	   AND flush_errors = 0 AND snapshot_errors = 0 AND buffer_unflushed > 0
	  FROM folio_perf_sampler_status()}),
	't', 'standby worker wrote nothing, tried nothing');
is(on_standby('SELECT folio_perf_sampler_flush()'), '0',
	'flush on a standby returns 0 at once');
ok(on_standby('SELECT count(*) > 0 FROM folio_perf_samples') eq 't',
	'standby samples are readable');
ok($standby->log_contains(qr/sampler is running on a standby server/),
	'standby behaviour logged');
ok(!$standby->log_contains(qr/cannot execute .* in a read-only transaction/),
	'no write attempted on the standby');

# Nothing written by the standby worker reached the primary: every stored
# interval was written by the primary's worker (its ticks are the primary's).
# (the count and the worker's own counter are read in one statement; a
# flush committing between its snapshot and the counter is waited out)
ok( $primary->poll_query_until('postgres', q{
	SELECT count(*) > 0 AND count(*) = (SELECT intervals FROM folio_perf_sampler_status())
	  FROM folio_perf_data.sample_interval}),
	'primary keeps storing, and every stored interval is one its worker flushed');

# Promotion: the former standby starts storing what it sampled.
$standby->promote;
ok( $standby->poll_query_until('postgres', q{
	SELECT folio_perf_sampler_flush() >= 0
	   AND (SELECT state = 'sampling' AND ticks_flushed > 0 FROM folio_perf_sampler_status())}),
	'after promotion the worker stores its samples');
ok( $standby->log_contains(qr/sampler is no longer on a standby/),
	'promotion noticed');

$standby->stop;
$primary->stop;
done_testing();
