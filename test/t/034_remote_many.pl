# test/t/034_remote_many.pl - one repository samples several targets: a
# target that is stopped and one that answers slowly (its sampler session
# stopped with SIGSTOP, so each tick's query waits out
# folio_perf.remote_timeout) never delay the sampling of the others, nor
# the repository's own.  Control: the same counts of the healthy target
# before the other two fail.
# Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

my %tinst =
  $ENV{FOLIO_PERF_TARGET_INSTALL}
  ? (install_path => $ENV{FOLIO_PERF_TARGET_INSTALL})
  : ();
my @targets;
for my $name ('healthy', 'stopped', 'slow')
{
	my $t = PostgreSQL::Test::Cluster->new($name, %tinst);
	$t->init;
	$t->append_conf('postgresql.conf', "shared_preload_libraries = 'pg_stat_statements'\n");
	$t->start;
	$t->safe_psql('postgres', q{
CREATE EXTENSION pg_stat_statements;
CREATE ROLE folio_perf_collector LOGIN IN ROLE pg_read_all_stats;});
	push @targets, $t;
}
my ($healthy, $stopped, $slow) = @targets;

my $repo = PostgreSQL::Test::Cluster->new('repository');
$repo->init;
$repo->append_conf('postgresql.conf', q{
shared_preload_libraries = 'pg_stat_statements,folio_perf'
folio_perf.sample_interval = 100
folio_perf.flush_interval = 1
folio_perf.database = 'postgres'
folio_perf.remote_timeout = 1500
});
$repo->start;
$repo->safe_psql('postgres', 'CREATE EXTENSION pg_stat_statements; CREATE EXTENSION folio_perf');
sub q1 { return $repo->safe_psql('postgres', $_[0]); }
for my $t (@targets)
{
	my ($h, $p, $n) = ($t->host, $t->port, $t->name);
	is(q1(qq{SELECT folio_perf_target_add('$n', 'host=$h port=$p dbname=postgres user=folio_perf_collector') > 0}),
		't', "target $n added");
}
ok( $repo->poll_query_until('postgres', q{
	SELECT count(*) = 3 FROM folio_perf_targets WHERE sampler = 'sampling' AND last_sample_at IS NOT NULL}),
	'the three targets are sampled');

# ticks of a target and the repository's own, and the target's missed ticks
sub counts
{
	my ($n) = @_;
	my ($ticks, $missed) = split /\|/,
	  q1(qq{SELECT sampler_ticks || '|' || sampler_ticks_missed FROM folio_perf_targets WHERE name = '$n'});
	return ($ticks, $missed, q1('SELECT ticks FROM folio_perf_sampler_status()'));
}
# what the healthy target and the repository get over 3 s (the counts are
# written at each flush, every second)
sub over_3s
{
	my ($t0, $m0, $l0) = counts('healthy');
	usleep(3_000_000);
	$repo->safe_psql('postgres', 'SELECT folio_perf_sampler_flush()');
	my ($t1, $m1, $l1) = counts('healthy');
	return ($t1 - $t0, $m1 - $m0, $l1 - $l0);
}

# control: all three answer
my ($ticks, $missed, $local) = over_3s();
note("all answering, in 3 s: healthy target $ticks ticks ($missed missed), repository $local");
cmp_ok($ticks, '>=', 15, 'control: the healthy target is sampled while all answer');

# one target stopped, one whose sampler session hangs
$stopped->stop('immediate');
my @spid = split /\n/, $slow->safe_psql('postgres',
	q{SELECT pid FROM pg_stat_activity WHERE application_name = 'folio_perf sampler'});
is(scalar(@spid), 1, 'the slow target has the sampler\'s session');
kill 'STOP', @spid;
ok( $repo->poll_query_until('postgres', q{
	SELECT sampler = 'down' FROM folio_perf_targets WHERE name = 'stopped'}),
	'the stopped target is seen down');
ok( $repo->poll_query_until('postgres', q{
	SELECT sampler_last_error LIKE 'query: no answer within 1500 ms%' FROM folio_perf_targets WHERE name = 'slow'}),
	'the slow target\'s tick is given up after folio_perf.remote_timeout');
my ($ticks2, $missed2, $local2) = over_3s();
note("one stopped, one slow, in 3 s: healthy target $ticks2 ticks ($missed2 missed), repository $local2");
cmp_ok($ticks2, '>=', 15, 'the healthy target is sampled as before');
is($missed2, 0, 'and misses no tick');
cmp_ok($local2, '>=', 15, 'and the repository samples itself as before');
# the slow one meanwhile: its ticks in flight were not taken
cmp_ok(q1(q{SELECT sampler_ticks_missed FROM folio_perf_targets WHERE name = 'slow'}), '>', 0,
	'the slow target\'s ticks were missed, not waited for');

kill 'CONT', @spid;
$stopped->start;
ok( $repo->poll_query_until('postgres', q{
	SELECT count(*) = 3 FROM folio_perf_targets WHERE sampler = 'sampling' AND last_sample_at > now() - interval '1 second'}),
	'both are sampled again once they answer');

$repo->stop;
$_->stop for @targets;
done_testing();
