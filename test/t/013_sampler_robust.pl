# test/t/013_sampler_robust.pl - the sampler waits quietly for a
# folio_perf.database that does not exist yet (one LOG line, no FATAL, no
# restart loop) and starts sampling once it is created; a cancel request
# (pg_cancel_backend) does not end the sampler.
# Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

my $node = PostgreSQL::Test::Cluster->new('robust');
$node->init;
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'pg_stat_statements,folio_perf'
compute_query_id = on
folio_perf.sample_interval = 100
folio_perf.flush_interval = 1
folio_perf.database = 'folio_later'
});
$node->start;
# the SQL functions, to look at the sampler from another database
$node->safe_psql('postgres',
	'CREATE EXTENSION pg_stat_statements; CREATE EXTENSION folio_perf');

sub log_count
{
	my ($re) = @_;
	my @n = (slurp_file($node->logfile) =~ /$re/g);
	return scalar @n;
}

sub wait_for_log
{
	my ($re) = @_;
	for (1 .. 600)
	{
		return 1 if log_count($re) > 0;
		usleep(100_000);
	}
	return 0;
}

my $wait_re = qr/sampler waits for database "folio_later" to exist/;

# ---- a missing database: one LOG line, then waiting with backoff
ok(wait_for_log($wait_re), 'the launcher says what it waits for');
like(slurp_file($node->logfile),
	qr/HINT:  Create database "folio_later" and run CREATE EXTENSION folio_perf in it, or set folio_perf.database/,
	'and how to fix it');
# (the launcher logs first and then publishes its state: waited for)
ok( $node->poll_query_until('postgres',
		q{SELECT state || ' ' || database || ' ' || (pid IS NULL) FROM folio_perf_sampler_status()},
		'waiting for database folio_later true'),
	'folio_perf_sampler_status() shows the wait');
# the launcher looks again after 1 s, 2 s, 4 s: let it look a few times.
# (No timing can make the checks below fail: a loaded machine only looks
# fewer times; a second line or a worker's exit is a real failure.)
sleep(4);
is(log_count($wait_re), 1, 'one line while it waits, not one per attempt');
is(log_count(qr/FATAL/), 0, 'no FATAL');
is(log_count(qr/background worker "folio_perf [a-z]+" \(PID \d+\) exited/), 0,
	'no worker exited (no restart loop)');

# ---- the database appears: the sampler starts and stores samples
$node->safe_psql('postgres', 'CREATE DATABASE folio_later');
$node->safe_psql('folio_later',
	'CREATE EXTENSION pg_stat_statements; CREATE EXTENSION folio_perf');
ok( $node->poll_query_until('folio_later', q{
	SELECT folio_perf_sampler_flush() >= 0
	   AND (SELECT state = 'sampling' FROM folio_perf_sampler_status())
	   AND (SELECT count(*) > 0 FROM folio_perf_data.sample_interval)}),
	'once the database exists the sampler samples and stores');
ok(log_count(qr/database "folio_later" exists now, starting the sampler/) == 1,
	'the start is logged');
is(log_count($wait_re), 1, 'still one waiting line');
is(log_count(qr/FATAL/), 0, 'still no FATAL');

# ---- cancel requests do not end the sampler
my ($pid, $starts) = split /\|/, $node->safe_psql('folio_later',
	q{SELECT pid, starts FROM folio_perf_sampler_status()});
ok($pid > 0, 'the sampler has a pid');
# several cancels, some land while it sleeps, some while it flushes (every 1 s)
for (1 .. 8)
{
	is( $node->safe_psql('folio_later', "SELECT pg_cancel_backend($pid)"), 't',
		'the cancel request is delivered');
	usleep(150_000);
}
my $ticks = $node->safe_psql('folio_later', 'SELECT ticks FROM folio_perf_sampler_status()');
ok( $node->poll_query_until('folio_later', qq{
	SELECT ticks > $ticks + 10 AND last_flush_at > now() - interval '3 seconds'
	  FROM folio_perf_sampler_status()}),
	'after the cancels the sampler goes on sampling and flushing');
is( $node->safe_psql('folio_later', q{SELECT pid || '|' || starts FROM folio_perf_sampler_status()}),
	"$pid|$starts", 'the same sampler process, never restarted');
is( $node->safe_psql('folio_later',
		"SELECT count(*) FROM pg_stat_activity WHERE pid = $pid AND backend_type = 'folio_perf sampler'"),
	'1', 'and it is in pg_stat_activity');
ok(log_count(qr/sampler ignores cancel requests/) >= 1, 'the ignored cancel is logged');
is(log_count(qr/FATAL/), 0, 'no FATAL after the cancels');

$node->stop;
done_testing();
