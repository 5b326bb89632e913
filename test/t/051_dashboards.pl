# test/t/051_dashboards.pl - the two Grafana dashboards of monitoring/.
#
# No Grafana can be installed here, so each dashboard is checked
#   - structurally: panels with type, title and a grid position inside the
#     24 columns, no two panels overlapping, every data source uid one of
#     the dashboard's inputs, every target with a unique refId and a query,
#     every $variable of a query declared (or one of Grafana's own), the
#     links pointing at the dashboards' own uids -- with a control: the
#     same check finds the planted defects of a damaged copy;
#   - by running every query it contains for real: the PostgreSQL-source
#     dashboard's SQL against a real window (its Windows table gives the
#     window's own time range for the link that opens it), and the exporter
#     dashboard's PromQL in a real Prometheus (Debian's package) scraping the
#     real exporter with folio_perf's query file, each query answering with
#     series, an idle module's among them at 0.
# Skipped when the exporter or Prometheus is not installed (test/setup.sh
# installs both).
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
my $prometheus = '/usr/bin/prometheus';
plan skip_all => "$exporter or $prometheus not installed"
  unless -x $exporter && -x $prometheus;

my $top =
  ($ENV{TESTDIR} && -d "$ENV{TESTDIR}/test/fixture")
  ? $ENV{TESTDIR}
  : abs_path(dirname(__FILE__) . '/../..');

sub load_json
{
	my ($f) = @_;
	open(my $fh, '<', $f) or die "$f: $!";
	my $d = decode_json(do { local $/; <$fh> });
	close $fh;
	return $d;
}
my %dash = (
	pg => load_json("$top/monitoring/grafana_folio_perf.json"),
	prom => load_json("$top/monitoring/grafana_folio_perf_exporter.json"));

# ---- structure ----------------------------------------------------------------
# every panel, rows' nested ones included
sub panels
{
	my ($d) = @_;
	my @p;
	for my $p (@{ $d->{panels} || [] })
	{
		push @p, $p;
		push @p, @{ $p->{panels} || [] } if $p->{type} eq 'row';
	}
	return @p;
}

sub queries_of
{
	my ($t) = @_;
	return grep { defined } ($t->{rawSql}, $t->{expr});
}

# the problems of one dashboard, in words (empty: none)
my %uids = map { $_ => $dash{$_}{uid} } keys %dash;
my %grafana_vars = map { $_ => 1 }
  qw(__rate_interval __interval __interval_ms __range __timeFilter __timeFrom __timeTo __data);
sub problems
{
	my ($d) = @_;
	my @bad;
	push @bad, 'no uid' unless $d->{uid};
	push @bad, 'no title' unless $d->{title};
	my %inputs = map { ('${' . $_->{name} . '}') => $_->{pluginId} } @{ $d->{__inputs} || [] };
	my %vars = map { $_->{name} => 1 } @{ $d->{templating}{list} || [] };
	my @cells;
	for my $p (panels($d))
	{
		my $t = $p->{title} // '(untitled)';
		push @bad, "panel without type" unless $p->{type};
		push @bad, "panel without title" unless $p->{title};
		my $g = $p->{gridPos} || {};
		if (grep { !defined $g->{$_} } qw(x y w h))
		{
			push @bad, "$t: no grid position";
			next;
		}
		push @bad, "$t: outside the 24 columns" if $g->{x} < 0 || $g->{x} + $g->{w} > 24;
		for my $c (@cells)
		{
			push @bad, "$t overlaps $c->[0]"
			  if $g->{x} < $c->[1] + $c->[3] && $c->[1] < $g->{x} + $g->{w}
			  && $g->{y} < $c->[2] + $c->[4] && $c->[2] < $g->{y} + $g->{h};
		}
		push @cells, [ $t, @$g{qw(x y w h)} ];
		next if $p->{type} eq 'row';
		my $ds = $p->{datasource} || {};
		push @bad, "$t: data source $ds->{uid} is not an input"
		  unless defined $ds->{uid} && exists $inputs{ $ds->{uid} }
		  && $inputs{ $ds->{uid} } eq $ds->{type};
		my @t = @{ $p->{targets} || [] };
		push @bad, "$t: no targets" unless @t;
		my %ref;
		for my $q (@t)
		{
			push @bad, "$t: refId $q->{refId} twice" if $ref{ $q->{refId} // '' }++;
			my @q = queries_of($q);
			push @bad, "$t: target without a query" unless @q;
			push @bad, "$t: target data source differs"
			  if $q->{datasource} && ($q->{datasource}{uid} // '') ne ($ds->{uid} // '');
			for my $v (map { /\$\{?(\w+)/g } @q)
			{
				push @bad, "$t: \$$v is not a variable" unless $vars{$v} || $grafana_vars{$v};
			}
		}
		for my $l (@{ $p->{fieldConfig}{defaults}{links} || [] })
		{
			my ($u) = $l->{url} =~ m{/d/([^/?]+)};
			push @bad, "$t: link to unknown dashboard " . ($u // $l->{url})
			  unless defined $u && grep { $_ eq $u } values %uids;
		}
	}
	for my $v (@{ $d->{templating}{list} || [] })
	{
		my $q = ref $v->{query} ? $v->{query}{query} : $v->{query};
		push @bad, "variable $v->{name} without a query" unless $q;
		push @bad, "variable $v->{name}: data source is not an input"
		  unless exists $inputs{ $v->{datasource}{uid} // '' };
	}
	return @bad;
}

for my $k (sort keys %dash)
{
	my @bad = problems($dash{$k});
	is(scalar(@bad), 0, "dashboard $uids{$k}: structurally valid") or diag(join("\n", @bad));
}
isnt($uids{pg}, $uids{prom}, 'the two dashboards have their own uids');
# control: a damaged copy of each is found out, defect by defect
for my $k (sort keys %dash)
{
	my $copy = decode_json(encode_json($dash{$k}));
	my @p = grep { $_->{type} ne 'row' } panels($copy);
	$p[0]{gridPos} = { %{ $p[1]{gridPos} } };
	$p[1]{datasource}{uid} = '${DS_NOWHERE}';
	$p[2]{targets}[0]{refId} = 'X';
	push @{ $p[2]{targets} }, { %{ $p[2]{targets}[0] } };
	shift @{ $copy->{templating}{list} };
	my $bad = join("\n", problems($copy));
	like($bad, qr/overlaps/, "control ($k): an overlap is found");
	like($bad, qr/DS_NOWHERE\} is not an input/, "control ($k): an unknown data source is found");
	like($bad, qr/refId X twice/, "control ($k): a repeated refId is found");
	like($bad, qr/is not a variable/, "control ($k): an undeclared variable is found");
}
is($dash{prom}{__inputs}[0]{pluginId}, 'prometheus', 'the exporter dashboard reads Prometheus');
my @pg_series = map { $_->{title} } grep { $_->{type} eq 'timeseries' } panels($dash{prom});
cmp_ok(scalar(@pg_series), '>=', 5, 'the exporter dashboard has its time series panels');
for my $want (qr/Connections per module/, qr/DB load by wait class/, qr/CPU per module/, qr/DB CPU/)
{
	ok((grep { $_ =~ $want } @pg_series), "the exporter dashboard has a panel $want");
}
ok((grep { $_->{title} =~ /Sampler up/ } panels($dash{prom})), 'and the sampler health');

# ---- a server with load ---------------------------------------------------------
my $node = PostgreSQL::Test::Cluster->new('dashboards');
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
CREATE ROLE dash_reader LOGIN;
GRANT folio_perf_reader TO dash_reader;
});
ok($node->poll_query_until('folio',
		q{SELECT value = 1 FROM folio_perf_metrics WHERE metric = 'sampler_up'}),
	'the sampler is up');

my $window_begin = $node->safe_psql('folio', q{SELECT folio_perf_begin('dashboards')});
my @pool;
for (1 .. 3)
{
	my $s = $node->background_psql('folio',
		extra_params => [ '-U', 'fs09000000_mod_inventory_storage' ]);
	$s->query_safe(q{SET application_name = 'mod-inventory-storage-27.1.0'});
	push @pool, $s;
}
# a module that works for a moment and then disconnects: its series must
# stay, at 0
my $brief = $node->background_psql('folio', extra_params => [ '-U', 'cs00000int_mod_users' ]);
$brief->query_safe(q{SELECT pg_sleep(1.5)});
$brief->quit;
my $busy = $node->background_psql('folio',
	extra_params => [ '-U', 'fs09000000_mod_inventory_storage' ]);
$busy->query_until(qr/go/, q{\echo go
SELECT count(*) FROM generate_series(1, 1e6::int) g, LATERAL (SELECT sqrt(g)) s;
SELECT pg_sleep(600);
});

# ---- the exporter and Prometheus ----------------------------------------------
my $eport = PostgreSQL::Test::Cluster::get_free_port();
my $pport = PostgreSQL::Test::Cluster::get_free_port();
my $dsn = sprintf('host=%s port=%d dbname=folio user=dash_reader sslmode=disable',
	$node->host, $node->port);
my ($ein, $eout, $eerr) = ('', '', '');
my $eh = IPC::Run::start(
	[ $exporter, "--extend.query-path=$top/monitoring/postgres_exporter.yaml",
	  "--web.listen-address=127.0.0.1:$eport", '--disable-settings-metrics' ],
	'<', \$ein, '>', \$eout, '2>', \$eerr,
	init => sub { $ENV{DATA_SOURCE_NAME} = $dsn; });
my $pdir = PostgreSQL::Test::Utils::tempdir();
open(my $cf, '>', "$pdir/prometheus.yml") or die $!;
print $cf <<"EOF";
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: postgres
    static_configs:
      - targets: ['127.0.0.1:$eport']
EOF
close $cf;
my ($pin, $pout, $perr) = ('', '', '');
my $ph = IPC::Run::start(
	[ $prometheus, "--config.file=$pdir/prometheus.yml", "--storage.tsdb.path=$pdir/data",
	  "--web.listen-address=127.0.0.1:$pport" ],
	'<', \$pin, '>', \$pout, '2>', \$perr);
my $http = HTTP::Tiny->new(timeout => 10);
sub prom
{
	my ($path, %q) = @_;
	my $r = $http->get("http://127.0.0.1:$pport$path?" . $http->www_form_urlencode(\%q));
	return undef unless $r->{success};
	return decode_json($r->{content});
}
# wait until Prometheus holds 15 s of folio_perf series (rate() needs two
# samples in its range) and the brief module has disconnected
my $ready;
for (1 .. 120)
{
	my $r = prom('/api/v1/query', query => 'count_over_time(folio_perf_sampler_up[1m])');
	$ready = $r && $r->{status} eq 'success' && @{ $r->{data}{result} }
	  && $r->{data}{result}[0]{value}[1] >= 15;
	last if $ready;
	sleep 1;
}
ok($ready, 'Prometheus scraped the exporter for 15 s') or diag("$perr\n$eerr");

# the exporter dashboard's variables and queries, with the variables at All
my %subst = (server => '.*', tenant => '.*', module => '.*', __rate_interval => '10s');
sub fill
{
	my ($q) = @_;
	$q =~ s/\$\{?(\w+)\}?/exists $subst{$1} ? $subst{$1} : "\$$1"/ge;
	return $q;
}
for my $v (@{ $dash{prom}{templating}{list} })
{
	my ($label, $match) = $v->{query}{query} =~ /^label_values\((?:(.+),\s*)?(\w+)\)$/
	  or fail("variable $v->{name}: not a label_values() query");
	my $r = prom("/api/v1/label/$match/values", $label ? ('match[]' => fill($label)) : ());
	ok($r && $r->{status} eq 'success' && @{ $r->{data} },
		"exporter dashboard: variable $v->{name} has values")
	  or diag(encode_json($r // {}));
}
my %result;
for my $p (panels($dash{prom}))
{
	for my $t (@{ $p->{targets} || [] })
	{
		next unless $t->{expr};
		my $r = prom('/api/v1/query', query => fill($t->{expr}));
		my $n = $r && $r->{status} eq 'success' ? scalar @{ $r->{data}{result} } : -1;
		cmp_ok($n, '>', 0, "exporter dashboard: \"$p->{title}\" $t->{refId} answers with series")
		  or diag(fill($t->{expr}) . "\n" . encode_json($r // {}));
		$result{"$p->{title}/$t->{refId}"} = $r;
	}
}
# the brief module disconnected: its connections series reads 0, and is there
my ($users) = grep { ($_->{metric}{module} // '') eq 'mod_users' }
  @{ $result{'Connections per module (stacked)/A'}{data}{result} || [] };
ok($users, 'the disconnected module still has its connections series');
is($users ? $users->{value}[1] : undef, '0', 'at 0');
my ($inv) = grep { ($_->{metric}{module} // '') eq 'mod_inventory_storage' }
  @{ $result{'Connections per module (stacked)/A'}{data}{result} || [] };
cmp_ok($inv ? $inv->{value}[1] : 0, '>=', 4, 'control: the connected module reads its 4 connections');

# ---- the PostgreSQL-source dashboard against a real window -----------------------
$node->safe_psql('folio', q{SELECT pg_cancel_backend(pid) FROM pg_stat_activity
	WHERE usename = 'fs09000000_mod_inventory_storage' AND wait_event = 'PgSleep'});
eval { $busy->quit; 1 };
my $window = $node->safe_psql('folio', 'SELECT folio_perf_end()');
my @sql = map { $_->{query} } @{ $dash{pg}{templating}{list} };
push @sql, map { $_->{rawSql} } map { @{ $_->{targets} || [] } } panels($dash{pg});
my $ran = 0;
my $windows_rows;
for my $q (@sql)
{
	(my $r = $q) =~ s/\$window\b/$window/g;
	my ($rc, $o, $e) = $node->psql('folio', $r, extra_params => [ '-U', 'dash_reader' ]);
	$ran++ if $rc == 0 && $e eq '';
	diag("dashboard query failed: $e\n$r") if $rc != 0 || $e ne '';
	$windows_rows = $o if $q =~ /FROM folio_perf_windows/ && $q =~ /from_ms/;
}
is($ran, scalar(@sql), 'every query of the PostgreSQL-source dashboard runs as a folio_perf_reader member');
# the Windows table's link opens the window over its own time range
my ($row) = grep { /^$window\|/ } split /\n/, ($windows_rows // '');
my @f = split /\|/, ($row // '');
is($f[0], $window, 'the Windows table lists the window');
is( "$f[-2]|$f[-1]",
	$node->safe_psql('folio', qq{
	SELECT (extract(epoch FROM begin_at) * 1000)::bigint || '|' || (extract(epoch FROM end_at) * 1000)::bigint
	  FROM folio_perf_windows WHERE window_id = $window}),
	'its link times are the window\'s begin and end in ms');
my ($wp) = grep { ($_->{title} // '') =~ /^Windows/ } panels($dash{pg});
like($wp->{fieldConfig}{defaults}{links}[0]{url},
	qr{^/d/\Q$uids{pg}\E/[^?]*\?var-window=\$\{__data\.fields\.window_id\}&from=\$\{__data\.fields\.from_ms\}&to=\$\{__data\.fields\.to_ms\}$},
	'the link sets the window variable and the time range');

$ph->kill_kill;
$eh->kill_kill;
$_->quit for @pool;
$node->stop;
done_testing();
