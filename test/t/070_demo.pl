# test/t/070_demo.pl - the demo end to end, short: two runs of the phased
# test (data import, check-in/check-out) in two windows, then
#   - the data-import jobs and the FOLIO operations of each run printed,
#   - the comparison of the two runs, named after their release tags, with
#     the operations' Delta, %.
# The demo makes its own cluster (PostgreSQL of pg_config in PATH, unix
# socket only, in a temporary directory it removes).
# Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)
use strict;
use warnings;
use Cwd qw(abs_path);
use File::Basename qw(dirname);
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $top =
  ($ENV{TESTDIR} && -f "$ENV{TESTDIR}/test/demo.sh")
  ? $ENV{TESTDIR}
  : abs_path(dirname(__FILE__) . '/../..');

my ($bindir) = run_command([ 'pg_config', '--bindir' ]);
chomp $bindir;
plan skip_all => "no pgbench in $bindir" unless -x "$bindir/pgbench";

my $port = PostgreSQL::Test::Cluster::get_free_port();
# the demo's two HTML files in this run's tmp_check, not its defaults in
# /tmp, which another run (or a demo run as root) may write or own
my $html = "$PostgreSQL::Test::Utils::tmp_check/demo_report.html";
local $ENV{PG_BINDIR}           = $bindir;
local $ENV{FOLIO_PERF_DEMO_HTML} = $html;
local $ENV{FOLIO_PERF_DEMO_SERIES_HTML} = "$PostgreSQL::Test::Utils::tmp_check/demo_series.html";
my ($out, $err) = ('', '');
my $ok = IPC::Run::run(
	[ 'bash', "$top/test/demo.sh", '--no-setup', '--port', $port, '--phase', '3',
	  '--records', '20', '--cico-users', '1', '--step', '3' ],
	'<', \undef, '>', \$out, '2>', \$err);
ok($ok, 'the demo finished without an error') or diag(substr("$out\n$err", -4000));

like($out, qr/^== run 1 of 2\n.*^== run 2 of 2\n/ms, 'two runs');
# each run imports in batches back to back until its phase ends: the
# number of batches is the machine's, printed per run; each batch is one
# job of 20 records per tenant
my @batches = $out =~ /^== di_create, the last of (\d+) batches:$/mg;
is(scalar(@batches), 2, 'the number of data-import batches of each run printed (' . join(', ', @batches) . ')');
sub commify { my $n = reverse shift; $n =~ s/(\d{3})(?=\d)/$1,/g; return scalar reverse $n; }
like($out, qr/'\{"release":"run 1",.*'\{"release":"run 2",/s, 'tagged run 1 and run 2');
for my $run ([ 'of run 1 ', 1 ], [ '', 2 ])
{
	my ($name, $w) = @$run;
	my $n = $batches[ $w - 1 ] // 0;
	my ($jobs) = $out =~ /^== Data-import jobs ${name}\(FOLIO operations\): SELECT \* FROM folio_perf_data_import_jobs\($w\)\n((?:(?!==).*\n)*)/m;
	is(scalar(() = ($jobs // '') =~ /^ fs09000000 +\| +\d+ \| 20\.mrc +\| PTF - Create 2 \| COMMITTED \| +20 \|/mg), $n,
		"run $w: the data-import jobs printed, one of 20 records per batch ($n)");
	like($out,
		qr/^== FOLIO operations and their DB cost(, run 1)?: SELECT \* FROM folio_perf_operations\($w\)\n(.*\n)*? fs09000000 +\| record_imported +\| +@{[ 20 * $n ]} \|/m,
		"run $w: the operations printed with their cost, " . (20 * $n) . ' records imported');
}
like($out, qr/^== SELECT folio_perf_compare\(1, 2, 'markdown'\)/m, 'the comparison of the two runs');
like($out, qr/^## folio_perf comparison: run 1 vs run 2$/m, 'named after the release tags');
like($out, qr/^### FOLIO operations\n\n.*\n\n\| Tenant \| What \| Metric \| run 1 \| run 2 \| Delta \| Delta, % \|$/m,
	'the FOLIO operations side by side under the release tags as they are, with Delta and Delta, %');
my ($c1, $c2) = map { 20 * ($_ // 0) } @batches;
my $delta = $c2 - $c1;
my ($pct) = $out =~ /^\| fs09000000 \| record_imported \| Count \| \Q@{[ commify($c1) ]}\E \| \Q@{[ commify($c2) ]}\E \| \Q@{[ ($delta > 0 ? '+' : '') . commify($delta) ]}\E \| ([-+]?\d[\d.,]*)% \|$/m;
ok(defined $pct, "records imported in both runs, with their delta ($c1, $c2, $delta)");
$pct =~ s/,//g if defined $pct;
ok(defined $pct && abs($pct - 100 * $delta / ($c1 || 1)) < 0.1,
	'and the delta in % (' . ($pct // 'none') . ')');
like($out, qr/^\| fs09000000 \| data import PTF - Create 2 \\\| 20\.mrc \| Duration per job, s \| [\d.,]+ \| [\d.,]+ \|/m,
	'the data-import duration per job of both runs');
ok(-s $html, 'the HTML report written');
# the step-load run: one window, three marks, the series of its steps
like($out, qr/^== SELECT folio_perf_mark\('2 users'.*^== SELECT folio_perf_mark\('4 users'.*^== SELECT folio_perf_mark\('8 users'/ms,
	'the step load marks its steps');
like($out, qr/^## folio_perf series: 1 users, 2 users, 4 users, 8 users\n\n(Saturation point between \d+ and \d+ users: |No saturation in its range \(1 to 8 users\): )/m,
	'the series report of the steps names a saturation point or says there is none');
like($out, qr/^\| Metric \| 1 users \(baseline\) \| 2 users \| Delta, % \| 4 users \| Delta, % \| 8 users \| Delta, % \|$/m,
	'the steps side by side with Delta, %');
like($out, qr/^\| check_out per minute \|/m, 'with the check-outs per minute of each step');
like($out, qr/^== demo finished$/m, 'the demo says it finished');

done_testing();
