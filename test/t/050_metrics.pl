# test/t/050_metrics.pl - folio_perf_metrics and the Prometheus exporter.
#
# Builds a 2-tenant fixture, holds idle connection pools of known sizes per
# (tenant, module) in the three FOLIO styles (RMB role, shared login with a
# per-tenant search_path, application_name only), then:
#   - folio_perf_metrics gives exactly those connection counts;
#   - the real exporter from Debian's package (prometheus-postgres-exporter)
#     with monitoring/postgres_exporter.yaml, scraped over HTTP, gives the
#     same counts as Prometheus series, and a non-zero DB load and growing
#     active-seconds counter for a module while a workload runs;
#   - the exporter's own session is not counted as application load;
#   - readers may read the view, other roles may not.
# Skipped when the exporter is not installed (test/setup.sh installs it).
# Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)
use strict;
use warnings;
use Cwd qw(abs_path);
use File::Basename qw(dirname);
use HTTP::Tiny;
use JSON::PP;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $exporter = '/usr/bin/prometheus-postgres-exporter';
plan skip_all => "$exporter not installed" unless -x $exporter;

my $top =
  ($ENV{TESTDIR} && -d "$ENV{TESTDIR}/test/fixture")
  ? $ENV{TESTDIR}
  : abs_path(dirname(__FILE__) . '/../..');

my $node = PostgreSQL::Test::Cluster->new('metrics');
$node->init;
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'pg_stat_statements,folio_perf'
compute_query_id = on
folio_perf.sample_interval = 100
folio_perf.database = 'folio'
max_connections = 60
});
$node->start;
my @conn = ('-h', $node->host, '-p', $node->port);

my ($out, $err) = run_command(
	[ 'bash', "$top/test/fixture/build_fixture.sh", '-d', 'folio', '-T', 'fs09000000,cs00000int',
	  '-r', '10', '-P', '2', '-q', @conn ]);
like($out, qr/^fixture folio: 2 tenants/m, 'fixture built') or diag($err);
$node->safe_psql('folio', q{
CREATE EXTENSION pg_stat_statements;
CREATE EXTENSION folio_perf;
CREATE ROLE metrics_scraper LOGIN;
GRANT folio_perf_reader TO metrics_scraper;
CREATE ROLE metrics_nobody LOGIN;
});
ok( $node->poll_query_until('folio',
		q{SELECT value = 1 FROM folio_perf_metrics WHERE metric = 'sampler_up'}),
	'the sampler is sampling');

# ---- idle pools of known sizes ------------------------------------------
my @pool;
sub hold
{
	my ($user, $n, @sql) = @_;
	for (1 .. $n)
	{
		my $s = $node->background_psql('folio', extra_params => [ '-U', $user ]);
		$s->query_safe($_) for @sql;
		push @pool, $s;
	}
}
# RMB: logs in as <tenant>_<module>
hold('fs09000000_mod_inventory_storage', 4,
	q{SET application_name = 'mod-inventory-storage-27.1.0'});
hold('cs00000int_mod_users', 2, q{SET application_name = 'mod-users-19.2.0'});
# shared login, unqualified SQL under a per-tenant search_path
hold('folio_admin', 3, q{SET application_name = 'mod-search'},
	q{SET search_path = cs00000int_mod_search},
	q{SELECT count(*) FROM instance});
# application_name only (a module without a schema of its own)
hold('folio_admin', 2, q{SET application_name = 'mod-authtoken'});

my $expect = join("\n",
	'cs00000int|mod_search|idle|3',
	'cs00000int|mod_users|idle|2',
	'fs09000000|mod_inventory_storage|idle|4',
	'-|mod_authtoken|idle|2');
my $sql_counts = q{
SELECT coalesce(tenant, '-') || '|' || module || '|' || state || '|' || value
  FROM folio_perf_metrics
 WHERE metric = 'connections' AND database = 'folio' AND module IS NOT NULL
   AND value > 0
 ORDER BY tenant NULLS LAST, module, state};
ok($node->poll_query_until('folio', "SELECT string_agg(x, E'\\n') FROM ($sql_counts) s(x)", $expect),
	'folio_perf_metrics: exact connections per tenant and module');

# ---- privileges -----------------------------------------------------------
my ($rc, $o, $e) = $node->psql('folio', 'SELECT count(*) FROM folio_perf_metrics',
	extra_params => [ '-U', 'metrics_nobody' ]);
like($e, qr/permission denied/, 'a role without folio_perf_reader cannot read the metrics');
is($node->safe_psql('folio', 'SELECT count(*) > 0 FROM folio_perf_metrics',
		extra_params => [ '-U', 'metrics_scraper' ]),
	't', 'a folio_perf_reader member can');

# ---- the exporter -----------------------------------------------------------
my $port = PostgreSQL::Test::Cluster::get_free_port();
my $dsn = sprintf('host=%s port=%d dbname=folio user=metrics_scraper sslmode=disable',
	$node->host, $node->port);
my ($ein, $eout, $eerr) = ('', '', '');
my $eh = IPC::Run::start(
	[ $exporter, "--extend.query-path=$top/monitoring/postgres_exporter.yaml",
	  "--web.listen-address=127.0.0.1:$port", '--disable-settings-metrics' ],
	'<', \$ein, '>', \$eout, '2>', \$eerr,
	init => sub { $ENV{DATA_SOURCE_NAME} = $dsn; });

my $http = HTTP::Tiny->new(timeout => 10);
# the exporter's page; a failed scrape fails the test (an empty page would
# pass every "no such series" check)
sub scrape
{
	my $r = $http->get("http://127.0.0.1:$port/metrics");
	return $r->{content} if $r->{success} && $r->{content} =~ /^folio_perf_sampler_up/m;
	fail("scrape of the exporter: $r->{status} $r->{reason}");
	diag($eerr);
	return '';
}
# the first scrapes, while the exporter starts, may find nothing
sub scrape_quiet
{
	my $r = $http->get("http://127.0.0.1:$port/metrics");
	return $r->{success} ? $r->{content} : '';
}
# one series per line: name{labels} value
sub series
{
	my ($text, $name) = @_;
	my %v;
	for (split /\n/, $text)
	{
		next unless /^\Q$name\E\{([^}]*)\} (\S+)$/;
		my ($labels, $value) = ($1, $2);
		my %l = $labels =~ /(\w+)="([^"]*)"/g;
		$v{ join('|', map { $l{$_} // '' } qw(tenant module state wait_event_type)) } += $value;
	}
	return \%v;
}

my $text = '';
for (1 .. 100)
{
	$text = scrape_quiet();
	last if $text =~ /^folio_perf_connections\{/m;
	select(undef, undef, undef, 0.3);
}
like($text, qr/^folio_perf_sampler_up(\{[^}]*\})? 1$/m, 'exporter: folio_perf_sampler_up 1')
  or diag($eerr);
my $c = series($text, 'folio_perf_connections');
is($c->{'fs09000000|mod_inventory_storage|idle|'}, 4, 'exporter: 4 idle inventory-storage connections of fs09000000');
is($c->{'cs00000int|mod_users|idle|'}, 2, 'exporter: 2 idle mod_users connections of cs00000int');
is($c->{'cs00000int|mod_search|idle|'}, 3, 'exporter: 3 idle mod_search connections (shared login, search_path)');
is($c->{'|mod_authtoken|idle|'}, 2, 'exporter: 2 mod_authtoken connections by application_name');

# the exporter's own session is not application load: it is connected, yet
# no scrape counts an unattributed connection (the pools are all attributed)
cmp_ok($node->safe_psql('folio',
		q{SELECT count(*) FROM pg_stat_activity WHERE usename = 'metrics_scraper'}),
	'>=', 1, 'precondition: the exporter is connected');
for my $i (1 .. 3)
{
	select(undef, undef, undef, 0.3);
	my $s = series(scrape(), 'folio_perf_connections');
	my $n = 0;
	$n += $s->{$_} for grep { /^\|\|/ } keys %$s;
	is($n, 0, "scrape $i: the exporter's own connection is not counted");
	is($s->{'fs09000000|mod_inventory_storage|idle|'}, 4,
		"scrape $i: control: the same scrape has the inventory-storage pool");
}
# control: read by another session, the exporter's connections are there
my $n_exporter = $node->safe_psql('folio', q{
SELECT count(*) FROM pg_stat_activity WHERE usename = 'metrics_scraper'});
ok( $node->poll_query_until('folio', qq{
	SELECT coalesce(sum(value), 0) >= $n_exporter FROM folio_perf_metrics
	 WHERE metric = 'connections' AND database = 'folio' AND module IS NULL}),
	"control: another reader counts the exporter's $n_exporter connections");

# ---- load while a workload runs ---------------------------------------------
my $window_begin = $node->safe_psql('folio', q{SELECT folio_perf_begin('metrics workload')});
my $before = series($text, 'folio_perf_active_seconds_total')->{'fs09000000|mod_inventory_storage||'} // 0;
my @busy;
for (1 .. 2)
{
	my $s = $node->background_psql('folio',
		extra_params => [ '-U', 'fs09000000_mod_inventory_storage' ]);
	$s->query_until(qr/go/, q{\echo go
SELECT pg_sleep(600);
});
	push @busy, $s;
}
my $load = 0;
for (1 .. 30)
{
	select(undef, undef, undef, 0.3);
	$text = scrape();
	$load = series($text, 'folio_perf_db_load')->{'fs09000000|mod_inventory_storage||Timeout'} // 0;
	last if $load >= 2;
}
is($load, 2, 'exporter: DB load 2 (Timeout) for the two sleeping inventory-storage sessions');
like($text, qr/^# TYPE folio_perf_cpu_seconds_total counter$/m, 'CPU seconds are a counter');
# the host's CPUs as the sampler counts them (sysconf, online processors)
chomp(my $ncpu = `getconf _NPROCESSORS_ONLN`);
like($text, qr/^folio_perf_host_cpus(\{[^}]*\})? \Q$ncpu\E$/m, "exporter: folio_perf_host_cpus $ncpu");
# CPU seconds of a module grow while one of its sessions computes (about
# a second of CPU), and not for a module that does nothing
my $cpu_before = series($text, 'folio_perf_cpu_seconds_total');
$node->safe_psql('folio', 'SELECT count(*) FROM generate_series(1, 10000000)',
	extra_params => [ '-U', 'fs09000000_mod_inventory_storage' ]);
my $cpu_after;
for (1 .. 60)
{
	$cpu_after = series(scrape(), 'folio_perf_cpu_seconds_total');
	last if ($cpu_after->{'fs09000000|mod_inventory_storage||'} // 0)
	  - ($cpu_before->{'fs09000000|mod_inventory_storage||'} // 0) >= 0.2;
	select(undef, undef, undef, 0.3);
}
cmp_ok(($cpu_after->{'fs09000000|mod_inventory_storage||'} // 0)
	  - ($cpu_before->{'fs09000000|mod_inventory_storage||'} // 0),
	'>=', 0.2, 'exporter: CPU seconds of the module grew while it computed');
is(($cpu_after->{'cs00000int|mod_search||'} // 0) - ($cpu_before->{'cs00000int|mod_search||'} // 0), 0,
	'control: an idle module\'s CPU seconds did not');
like($text, qr/^# TYPE folio_perf_db_load gauge$/m, 'DB load is a gauge');
my $after = 0;
for (1 .. 60)
{
	$text = scrape();
	$after = series($text, 'folio_perf_active_seconds_total')->{'fs09000000|mod_inventory_storage||'} // 0;
	last if $after - $before >= 1;
	select(undef, undef, undef, 0.3);
}
cmp_ok($after - $before, '>=', 1, 'active seconds of the module grew while it worked');
$node->safe_psql('folio', q{SELECT pg_cancel_backend(pid) FROM pg_stat_activity
	WHERE usename = 'fs09000000_mod_inventory_storage' AND wait_event = 'PgSleep'});
# the cancelled sessions' psql has stopped on the error already
eval { $_->quit; 1 } for @busy;
# folio_perf's series (the exporter's own collectors, as in Debian 13's
# exporter, may name the role: pg_stat_activity_count, pg_roles_*)
my $scraper_load = grep { /^folio_perf_/ && /metrics_scraper/ } split /\n/, $text;
is($scraper_load, 0, 'no series names the scraper');

# ---- idle keys keep their series at 0 -----------------------------------------
# A series that vanishes when a module goes idle is not a zero to Prometheus
# (rate() and sum() skip it): every key the sampler has seen keeps its
# gauges, at 0 while idle.  The two sleepers are gone now.
my ($zero, $l);
for (1 .. 60)
{
	$text = scrape();
	$l = series($text, 'folio_perf_db_load');
	$zero = $l->{'fs09000000|mod_inventory_storage||Timeout'};
	last if defined $zero && $zero == 0;
	select(undef, undef, undef, 0.3);
}
is($zero, 0, 'exporter: the idle module\'s DB load (Timeout) reads 0 after its sessions ended');
ok(!exists $l->{'cs00000int|mod_users||Timeout'},
	'control: a key never seen waiting on Timeout has no such series');
# the mod_authtoken pool (the last two sessions held) disconnects
$_->quit for splice(@pool, -2);
my $conn;
for (1 .. 60)
{
	$text = scrape();
	$conn = series($text, 'folio_perf_connections')->{'|mod_authtoken|idle|'};
	last if defined $conn && $conn == 0;
	select(undef, undef, undef, 0.3);
}
is($conn, 0, 'exporter: the disconnected mod_authtoken pool reads 0 connections, not nothing');
is(series($text, 'folio_perf_connections')->{'fs09000000|mod_inventory_storage|idle|'}, 4,
	'control: the inventory-storage pool still reads 4 in the same scrape');

# ---- the Grafana dashboard's queries run against a real window ---------------
my $window = $node->safe_psql('folio', 'SELECT folio_perf_end()');
open(my $fh, '<', "$top/monitoring/grafana_folio_perf.json") or die $!;
my $dash = decode_json(do { local $/; <$fh> });
close $fh;
my @sql = map { $_->{query} } @{ $dash->{templating}{list} };
for my $p (@{ $dash->{panels} })
{
	push @sql, map { $_->{rawSql} } @{ $p->{targets} || [] };
}
cmp_ok(scalar(@sql), '>=', 8, 'the dashboard has its queries');
my $ran = 0;
for my $q (@sql)
{
	(my $r = $q) =~ s/\$window\b/$window/g;
	my ($rc, $o, $e) = $node->psql('folio', $r, extra_params => [ '-U', 'metrics_scraper' ]);
	$ran++ if $rc == 0 && $e eq '';
	diag("dashboard query failed: $e\n$r") if $rc != 0 || $e ne '';
}
is($ran, scalar(@sql), 'every dashboard query runs as a folio_perf_reader member');
like($node->safe_psql('folio', qq{
	SELECT string_agg(DISTINCT series, ',') FROM folio_perf_timeseries($window, 'connections_by_module')}),
	qr/mod_inventory_storage/, 'the dashboard\'s connections panel has the module');

$eh->kill_kill;
$_->quit for @pool;
$node->stop;
done_testing();
