# test/t/052_quickstart.pl - the README's Quickstart, followed literally.
#
# Takes the two code blocks of README.md's "Quickstart" section as they are:
# the postgresql.conf lines go into a new server's configuration, the SQL
# runs line by line in psql, and "-- ... run the test ..." is where this
# test runs a FOLIO workload (check-in/check-out on a tenant and on a
# consortium member tenant, and a statement of a few milliseconds) for a
# little longer than the Quickstart's folio_perf.snapshot_interval.  Then
# every statement of the block must succeed, and the window must have what
# the Quickstart promises: samples of the sampler from its begin (the
# window begins right after CREATE EXTENSION, before the sampler's next
# flush), a trend (a timed snapshot inside it), plans, and the consortium
# member as a tenant of its own.  The commented schema_pattern example must
# keep consortium tenants too.
# Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)
use strict;
use warnings;
use Cwd qw(abs_path);
use File::Basename qw(dirname);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $top =
  ($ENV{TESTDIR} && -d "$ENV{TESTDIR}/test/fixture")
  ? $ENV{TESTDIR}
  : abs_path(dirname(__FILE__) . '/../..');

open(my $fh, '<', "$top/README.md") or die $!;
my $readme = do { local $/; <$fh> };
close $fh;
my ($qs) = $readme =~ /^## Quickstart\n(.*?)^## /ms;
ok($qs, 'README has a Quickstart section');
my @blocks = $qs =~ /^```[a-z]*\n(.*?)^```$/msg;
is(scalar(@blocks), 2, 'two code blocks: postgresql.conf and SQL');
my ($conf, $sql) = @blocks;
like($conf, qr/^folio_perf\.snapshot_interval\s*=/m, 'the configuration sets snapshot_interval');
like($conf, qr/^pg_stat_statements\.track\s*=\s*all/m, 'and pg_stat_statements.track = all');
my ($interval) = $conf =~ /^folio_perf\.snapshot_interval\s*=\s*(\d+)/m;

my $node = PostgreSQL::Test::Cluster->new('quickstart');
$node->init;
$node->append_conf('postgresql.conf', $conf);
$node->start;
my @conn = ('-h', $node->host, '-p', $node->port);

# the fixture (the application's database; the Quickstart starts in it)
my ($out, $err) = run_command(
	[ 'bash', "$top/test/fixture/build_fixture.sh", '-d', 'folio', '-t', '3',
	  '-r', '50', '-P', '2', '-q', @conn ]);
like($out, qr/^fixture folio: 3 tenants/m, 'fixture built (fs09000000, cs00000int, cs00000int_0001)')
  or diag($err);

# the SQL block, before and after the placeholder, one statement at a time
my ($before, $after) = split /^-- \.\.\. run the test \.\.\.\n/m, $sql, 2;
ok(defined $after, 'the SQL block has the "-- ... run the test ..." placeholder');
sub statements
{
	my ($text) = @_;
	my @s;
	for my $line (split /\n/, $text)
	{
		$line =~ s/\s*--.*$//;
		next unless $line =~ /\S/;
		push @s, $line;
	}
	return @s;
}
my %result;
my $n_ok = 0;
my @stmts = (statements($before));
for my $s (@stmts)
{
	my ($rc, $o, $e) = $node->psql('folio', $s);
	$n_ok++ if $rc == 0 && $e !~ /ERROR/;
	diag("$s\n$e") if $rc != 0 || $e =~ /ERROR/;
	$result{$s} = $o;
}
is($n_ok, scalar(@stmts), 'every Quickstart statement before the test runs');

# ---- the test: until a timed snapshot is inside the window, and a little more
my $begin_snap = $node->safe_psql('folio',
	q{SELECT begin_snap FROM folio_perf_windows ORDER BY window_id DESC LIMIT 1});
my $run = "$top/test/workload/run_workload.sh";
my $started = time;
my $rounds = 0;
my $timed_inside = 0;
while (time - $started < 4 * $interval)
{
	for my $t ('fs09000000', 'cs00000int_0001')
	{
		my ($o, $e) = run_command([ 'bash', $run, '-q', '-d', 'folio', '-w', 'cico', '-n', '20',
				'-t', $t, @conn ]);
		diag($e) if $e =~ /ERROR|FATAL/;
	}
	# a statement of a few milliseconds, as FOLIO's search queries are
	$node->safe_psql('folio', q{SELECT count(*) FROM item a, item b WHERE a.id < b.id},
		extra_params => [ '-U', 'cs00000int_0001_mod_inventory_storage' ]);
	$rounds++;
	$timed_inside = $node->safe_psql('folio', qq{
		SELECT count(*) FROM folio_perf_data.snapshot
		 WHERE snap_id > $begin_snap AND kind = 'timed'});
	last if $timed_inside > 0 && time - $started > $interval + 5;
	sleep 1;
}
cmp_ok($timed_inside, '>', 0, "a timed snapshot was taken inside the window (after $rounds rounds)");

@stmts = statements($after);
$n_ok = 0;
for my $s (@stmts)
{
	my ($rc, $o, $e) = $node->psql('folio', $s);
	$n_ok++ if $rc == 0 && $e !~ /ERROR/;
	diag("$s\n$e") if $rc != 0 || $e =~ /ERROR/;
	$result{$s} = $o;
}
is($n_ok, scalar(@stmts), 'every Quickstart statement after the test runs');
my ($end_stmt) = grep { /folio_perf_end\(\)/ } @stmts;
my $w = $result{$end_stmt};
like($w, qr/^\d+$/, 'folio_perf_end() returned the window id');

# ---- what the window has --------------------------------------------------------
my ($top_stmt) = grep { /folio_perf_top_statements/ } @stmts;
like($result{$top_stmt}, qr/\|cs00000int_0001\|mod_/m,
	'top statements: the consortium member cs00000int_0001 is a tenant of its own');
like($result{$top_stmt}, qr/\|fs09000000\|mod_/m, 'and fs09000000 one');
my ($plans_stmt) = grep { /folio_perf_plans/ } @stmts;
cmp_ok(scalar(grep { /\S/ } split /\n/, $result{$plans_stmt} // ''), '>', 0,
	'folio_perf_plans has plans under the default plan_min_duration');
like($node->safe_psql('folio', qq{SELECT string_agg(query, ' ') FROM folio_perf_plans($w)}),
	qr/a\.id < b\.id/, 'the statement of a few milliseconds among them');
my ($report_stmt) = grep { /folio_perf_report/ } @stmts;
my $md = $result{$report_stmt} // '';
unlike($md, qr/No snapshots inside the window/, 'the report has no "no snapshots inside" note');
unlike($md, qr/Not checked: the trend/, 'and its verdict does not say the trend was not checked');
like($node->safe_psql('folio', "SELECT folio_perf_report($w, 'markdown', detail => 'full')"),
	qr/^#+ Trend: first half against second half\n\n\| /m, 'the full report has its trend section, with a table');
cmp_ok($node->safe_psql('folio', qq{
	SELECT jsonb_array_length(folio_perf_report($w, 'json')::jsonb #> '{trend,statements}')}),
	'>', 0, 'with statements in it (the JSON report\'s trend)');
my $cov = $node->safe_psql('folio', qq{
	SELECT count(*) FROM folio_perf_timeseries($w, 'connections')
	 WHERE bucket_start < (SELECT begin_at + interval '10 s' FROM folio_perf_windows WHERE window_id = $w)});
cmp_ok($cov, '>', 0, 'samples from the window\'s first seconds (before the sampler\'s first flush)');
unlike($md, qr/sampler (is )?off|no samples/i, 'the report does not say the sampler was off');

# the commented schema_pattern example keeps consortium members
my ($pattern) = $conf =~ /^#folio_perf\.schema_pattern\s*=\s*'([^']+)'/m;
ok($pattern, 'the Quickstart shows a schema_pattern example');
$node->safe_psql('postgres', "ALTER SYSTEM SET folio_perf.schema_pattern = '$pattern'");
$node->reload;
is($node->safe_psql('folio', q{
	SELECT string_agg(coalesce(p.tenant, '-') || '/' || coalesce(p.module, '-'), ' ' ORDER BY n)
	  FROM unnest(ARRAY['cs00000int_0001_mod_users', 'fs09000000_mod_source_record_manager',
	                    'cs00000int_mod_inventory_storage', 'public']) WITH ORDINALITY u(s, n),
	       folio_perf_parse_schema(u.s) p}),
	'cs00000int_0001/mod_users fs09000000/mod_source_record_manager cs00000int/mod_inventory_storage -/-',
	'the example pattern splits consortium members, plain tenants and non-module schemas right');

$node->stop;
done_testing();
