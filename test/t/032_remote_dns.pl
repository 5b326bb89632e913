# test/t/032_remote_dns.pl - a remote target whose host name resolves slowly
# never stops local sampling: the repository runs with an LD_PRELOAD shim
# (test/fakepg/slow_getaddrinfo.c) under which looking up *.slow.invalid
# takes 3 s and fails; the sampler must go on sampling meanwhile, and a
# lookup longer than folio_perf.remote_timeout fails the attempt.
# Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)
use strict;
use warnings;
use Cwd qw(abs_path);
use File::Basename qw(dirname);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);

my $testdir =
  ($ENV{TESTDIR} && -d "$ENV{TESTDIR}/test/fakepg")
  ? "$ENV{TESTDIR}/test"
  : abs_path(dirname(__FILE__) . '/..');
my $tmp  = PostgreSQL::Test::Utils::tempdir();
my $shim = "$tmp/slow_getaddrinfo.so";
my $mark = "$tmp/lookup_running";

my ($out, $err) = run_command(
	[ $ENV{CC} // 'cc', '-shared', '-fPIC', '-o', $shim,
	  "$testdir/fakepg/slow_getaddrinfo.c", '-ldl' ]);
plan skip_all => "cannot build the shim: $err" unless -f $shim;

# control: under the shim a lookup of such a name takes its 3 s
{
	local $ENV{LD_PRELOAD}   = $shim;
	local $ENV{SLOWDNS_MARK} = "$tmp/control_mark";
	my $t0 = time;
	run_command([ 'getent', 'ahosts', 'db.slow.invalid' ]);
	cmp_ok(time - $t0, '>=', 2.5, 'control: a synchronous lookup under the shim blocks for 3 s');
}

my $node = PostgreSQL::Test::Cluster->new('repository');
$node->init;
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'pg_stat_statements,folio_perf'
folio_perf.sample_interval = 100
folio_perf.flush_interval = 1
folio_perf.database = 'postgres'
});
{
	local $ENV{LD_PRELOAD}   = $shim;
	local $ENV{SLOWDNS_MARK} = $mark;
	$node->start;
}
$node->safe_psql('postgres', 'CREATE EXTENSION pg_stat_statements; CREATE EXTENSION folio_perf');
sub q1 { return $node->safe_psql('postgres', $_[0]); }

ok($node->poll_query_until('postgres', "SELECT ticks > 10 FROM folio_perf_sampler_status()"),
	'the sampler samples');

# a target whose name takes 3 s to (not) resolve; stored directly by the
# owner, as folio_perf_target_add would refuse it after the lookup
q1(q{INSERT INTO folio_perf_data.target (name, conninfo, restricted)
     VALUES ('slowdns', 'host=db.slow.invalid port=5432 dbname=folio user=u', false)});

# wait until a lookup is under way, then for the sampler to take three
# local samples while it still runs (a worker blocked in the lookup takes
# none until it ends); a lookup that ends first is tried again
my $seen = 0;
for my $try (1 .. 3)
{
	for (1 .. 200)
	{
		last if -e $mark;
		usleep(50_000);
	}
	next unless -e $mark;
	my $ticks0 = q1('SELECT ticks FROM folio_perf_sampler_status()');
	my $ticks  = $ticks0;
	while (-e $mark && $ticks < $ticks0 + 3)
	{
		usleep(50_000);
		$ticks = q1('SELECT ticks FROM folio_perf_sampler_status()');
	}
	# the mark still there after the count was read: taken during the lookup
	if ($ticks >= $ticks0 + 3 && -e $mark)
	{
		pass('the sampler took ' . ($ticks - $ticks0) . ' local samples during a 3 s host name lookup');
		$seen = 1;
		last;
	}
	# wait for this lookup to end before the next try
	usleep(50_000) while -e $mark;
}
ok($seen, 'a lookup was observed while it ran');
ok( $node->poll_query_until('postgres', q{
	SELECT sampler_last_error LIKE 'connect: could not translate host name "db.slow.invalid" to address%'
	  FROM folio_perf_targets WHERE name = 'slowdns'}),
	'the failed lookup is the target\'s error');

# a lookup longer than folio_perf.remote_timeout fails the attempt in time
q1(q{ALTER SYSTEM SET folio_perf.remote_timeout = 1000});
q1(q{SELECT pg_reload_conf()});
ok( $node->poll_query_until('postgres', q{
	SELECT sampler_last_error LIKE 'connect: no answer within 1000 ms while looking up the host name%'
	  FROM folio_perf_targets WHERE name = 'slowdns'}),
	'a lookup that outlasts folio_perf.remote_timeout fails the attempt');
my $ticks = q1('SELECT ticks FROM folio_perf_sampler_status()');
ok($node->poll_query_until('postgres', "SELECT ticks > $ticks + 20 FROM folio_perf_sampler_status()"),
	'local sampling goes on');
unlike(slurp_file($node->logfile), qr/terminated by signal/, 'nothing crashed');

$node->stop;
done_testing();
