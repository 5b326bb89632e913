# test/t/017_snapshot_worker.pl - timed snapshots do not stop the sampler:
# they run in a worker of their own (folio_perf snapshot) while the sampler
# keeps its ticks.  Every timed snapshot here takes at least a second (a
# one-tenant FOLIO-like fixture, and a trigger on the snapshot table that
# sleeps 1.2 s, so that the length does not depend on the machine); timed
# snapshots every 3 s for about 20 s; the window's samples must cover at
# least 90 % of it, and the time without samples (the gaps longer than 1.5
# sample intervals) must add up to less than one snapshot: a sampler that
# took the snapshots itself would miss at least 4 x 1.2 s (#37: 99 % and
# no gap over 300 ms measured the host's load on a busy 2-core machine,
# not the worker).  Control: a sampler stopped (SIGSTOP) for 1.5 s leaves
# a gap that the same checks see.
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

my $node = PostgreSQL::Test::Cluster->new('snapshot_worker');
$node->init;
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'pg_stat_statements,folio_perf'
compute_query_id = on
folio_perf.sample_interval = 200
folio_perf.flush_interval = 2
folio_perf.database = 'folio'
});
$node->start;
command_ok([ 'bash', "$testdir/fixture/build_fixture.sh", '-q', '-d', 'folio', '-t', '1',
	'-r', '20', '-P', '2', '-h', $node->host, '-p', $node->port ], 'one-tenant fixture');
$node->safe_psql('folio', 'CREATE EXTENSION pg_stat_statements; CREATE EXTENSION folio_perf');
ok($node->poll_query_until('folio', q{
	SELECT folio_perf_sampler_flush() >= 0 AND state = 'sampling' FROM folio_perf_sampler_status()}),
	'the sampler stores into the fixture database');

# every snapshot takes at least 1.2 s
$node->safe_psql('folio', q{
CREATE FUNCTION public.slow_snapshot() RETURNS trigger LANGUAGE plpgsql AS
$$BEGIN PERFORM pg_catalog.pg_sleep(1.2); RETURN NEW; END$$;
CREATE TRIGGER slow_snapshot BEFORE INSERT ON folio_perf_data.snapshot
FOR EACH ROW EXECUTE FUNCTION public.slow_snapshot();
});

sub sampler_pid
{
	return $node->safe_psql('folio', 'SELECT pid FROM folio_perf_sampler_status()');
}
my $sampler = sampler_pid();

my $w = $node->safe_psql('folio', q{SELECT folio_perf_begin('timed snapshots')});
$node->safe_psql('folio',
	q{ALTER SYSTEM SET folio_perf.snapshot_interval = 3; SELECT pg_reload_conf()});
# meanwhile: where does the timed snapshot run?
my %seen;
for my $i (1 .. 40)
{
	my $who = $node->safe_psql('folio', qq{
		SELECT string_agg(backend_type || ':' || (pid = $sampler)::text, ',')
		FROM pg_catalog.pg_stat_activity WHERE query = 'timed snapshot'});
	$seen{$_}++ for split /,/, $who;
	$node->safe_psql('folio', 'SELECT pg_sleep(0.5)');
}
$node->safe_psql('folio',
	q{ALTER SYSTEM RESET folio_perf.snapshot_interval; SELECT pg_reload_conf()});
$node->safe_psql('folio', 'SELECT folio_perf_end()');

my ($n, $min_ms, $errors) = split /\|/, $node->safe_psql('folio', qq{
	SELECT count(*), round(min(s.capture_ms)), (SELECT snapshot_errors FROM folio_perf_sampler_status())
	FROM folio_perf_data.snapshot s
	WHERE s.kind = 'timed' AND s.snap_id > (SELECT begin_snap FROM folio_perf_windows WHERE window_id = $w)
	  AND s.snap_id < (SELECT end_snap FROM folio_perf_windows WHERE window_id = $w)});
cmp_ok($n, '>=', 4, "timed snapshots inside the window ($n)");
cmp_ok($min_ms, '>=', 1000, "each took at least 1 s (shortest $min_ms ms)");
is($errors, '0', 'no snapshot errors');
is(sampler_pid(), $sampler, 'the sampler kept running (same PID)');
ok($seen{'folio_perf snapshot:false'}, 'timed snapshots ran in the snapshot worker, not in the sampler')
  or diag(explain \%seen);
ok(!$seen{'folio_perf sampler:true'}, 'the sampler never ran one');
# each timed snapshot's worker exits when it is done (#37: this filtered on
# a query text the worker never reports, '%folio_perf_sampler%', and was
# always 0).  Mutation run: the worker sleeping 60 s after its snapshot
# fails this.
ok( $node->poll_query_until('folio', q{
	SELECT count(*) = 0 FROM pg_catalog.pg_stat_activity WHERE backend_type = 'folio_perf snapshot'}),
	'no snapshot worker is left once the timed snapshots stop');

my ($cov, $gaps, $gap_ms, $detail) = split /\|/, $node->safe_psql('folio', qq{
	SELECT coverage_pct, n_gaps, round(gap_ms), coalesce(gaps, '') FROM folio_perf_data.sample_window($w)});
cmp_ok($cov, '>=', 90, "samples cover $cov % of the window");
cmp_ok($gap_ms, '<', $min_ms,
	"the time without samples ($gap_ms ms in $gaps gaps $detail) is shorter than one timed snapshot ($min_ms ms)");

# control: a sampler that stops for 1.5 s leaves a gap the check sees
my $w2 = $node->safe_psql('folio', q{SELECT folio_perf_begin('stopped sampler')});
$node->safe_psql('folio', 'SELECT pg_sleep(1)');
kill 'STOP', $sampler;
select(undef, undef, undef, 1.5);
kill 'CONT', $sampler;
$node->safe_psql('folio', 'SELECT pg_sleep(1)');
$node->safe_psql('folio', 'SELECT folio_perf_end()');
my ($cov2, $gaps2, $gap_ms2) = split /\|/, $node->safe_psql('folio', qq{
	SELECT coverage_pct, n_gaps, round(gap_ms) FROM folio_perf_data.sample_window($w2)});
cmp_ok($gaps2, '>=', 1, "control: a stopped sampler leaves a gap ($cov2 %)");
cmp_ok($gap_ms2, '>=', 1000, "control: of at least 1 s ($gap_ms2 ms), which the check above would see");
cmp_ok($cov2, '<', 90, 'and coverage below 90 %');

$node->stop;
done_testing();
