# test/t/060_attribution.pl - one attribution rule: a session of each FOLIO
# style gets the same (tenant, module, attributed_by) from the live view
# (folio_perf_activity), from the sampler's series of a window
# (folio_perf_connections) and, for its statement, from the window report
# (folio_perf_top_statements).
# Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('attribution');
$node->init;
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'pg_stat_statements,folio_perf'
compute_query_id = on
folio_perf.sample_interval = 100
folio_perf.flush_interval = 60
folio_perf.database = 'postgres'
});
$node->start;
$node->safe_psql('postgres', q{
CREATE EXTENSION pg_stat_statements;
CREATE EXTENSION folio_perf;
-- RMB: a role per tenant and module, qualified SQL
CREATE ROLE fs01_mod_inventory_storage LOGIN;
CREATE SCHEMA fs01_mod_inventory_storage AUTHORIZATION fs01_mod_inventory_storage;
CREATE TABLE fs01_mod_inventory_storage.item (id int);
ALTER TABLE fs01_mod_inventory_storage.item OWNER TO fs01_mod_inventory_storage;
CREATE ROLE fs04_mod_users LOGIN;
-- one shared login for SRS (search_path as a startup parameter), Spring
-- (SET search_path on checkout) and vertx-lib
CREATE ROLE folio_shared LOGIN;
CREATE SCHEMA fs02_mod_source_record_storage AUTHORIZATION folio_shared;
CREATE TABLE fs02_mod_source_record_storage.marc_records_lb (id int, content jsonb);
CREATE SCHEMA fs03_mod_search AUTHORIZATION folio_shared;
CREATE TABLE fs03_mod_search.instance (id int);
GRANT ALL ON ALL TABLES IN SCHEMA fs02_mod_source_record_storage, fs03_mod_search TO folio_shared;
});

# Each style: how it connects, what it sets, the statement it runs (tagged
# by an alias so that the report's row can be found), and the answer.
my @styles = (
	{
		name => 'RMB role, qualified SQL',
		user => 'fs01_mod_inventory_storage',
		app => 'mod-inventory-storage-27.1.0',
		setup => [],
		stmt => 'SELECT count(*) AS rmb_qualified FROM fs01_mod_inventory_storage.item',
		tag => 'rmb_qualified',
		expect => 'fs01|mod_inventory_storage|relations',
	},
	{
		name => 'RMB role, no relations',
		user => 'fs04_mod_users',
		app => 'mod-users-19.2.0',
		setup => [],
		stmt => 'SELECT 1 AS rmb_ping',
		tag => 'rmb_ping',
		expect => 'fs04|mod_users|role',
	},
	{
		name => 'shared login, search_path at connect, unqualified SQL',
		user => 'folio_shared',
		app => 'mod-source-record-storage-5.9.0',
		options => '-c search_path=fs02_mod_source_record_storage',
		setup => [],
		stmt => q{insert into "marc_records_lb" ("id", "content") values (1, cast('{}' as jsonb))},
		tag => 'marc_records_lb',
		expect => 'fs02|mod_source_record_storage|relations',
	},
	{
		name => 'Spring, SET search_path',
		user => 'folio_shared',
		app => 'mod-search',
		setup => ['SET search_path = fs03_mod_search, public'],
		stmt => 'select count(*) AS spring_count from instance',
		tag => 'spring_count',
		expect => 'fs03|mod_search|relations',
	},
	{
		name => 'application_name only',
		user => 'folio_shared',
		app => 'mod_authtoken',
		setup => [],
		stmt => 'SELECT 2 AS appname_ping',
		tag => 'appname_ping',
		expect => '-|mod_authtoken|application_name',
	});

ok( $node->poll_query_until('postgres', q{
	SELECT state = 'sampling' FROM folio_perf_sampler_status()}),
	'sampler is sampling');

# Every session runs its statement once before the window (so that it is
# attributed the same way during the whole window) and once inside it.
my @sessions;
for my $st (@styles)
{
	local $ENV{PGAPPNAME} = $st->{app};
	local $ENV{PGOPTIONS} = $st->{options} // '';
	my $s = $node->background_psql('postgres',
		extra_params => [ '-U', $st->{user} ]);
	$s->query_safe($_) for @{ $st->{setup} };
	$s->query_safe($st->{stmt});
	$st->{session} = $s;
	$st->{pid} = $s->query_safe('SELECT pg_backend_pid()');
	$s->query_safe($st->{stmt});
	push @sessions, $s;
}
my $pids = join(',', map { $_->{pid} } @styles);

# the sampler has seen every session idle after its statement
ok( $node->poll_query_until('postgres', qq{
	SELECT count(DISTINCT pid) = @{[ scalar @styles ]}
	  FROM folio_perf_samples()
	 WHERE pid IN ($pids) AND state = 'idle'
	   AND sampled_at > now() - interval '300 ms'}),
	'sampler sees the sessions');

$node->safe_psql('postgres', q{SELECT folio_perf_begin('attribution')});
$_->{session}->query_safe($_->{stmt}) for @styles;

# 1. the live view, per session
my %live;
for my $st (@styles)
{
	$live{ $st->{tag} } = $node->safe_psql('postgres', qq{
		SELECT coalesce(tenant, '-') || '|' || coalesce(module, '-') || '|'
		       || coalesce(attributed_by, '-')
		  FROM folio_perf_activity
		 WHERE application_name = '$st->{app}' AND role = '$st->{user}'});
	is($live{ $st->{tag} }, $st->{expect}, "live view: $st->{name}");
}

# two seconds of idle sessions inside the window (most of its ticks)
$node->safe_psql('postgres', 'SELECT pg_sleep(2)');
my $w = $node->safe_psql('postgres', 'SELECT folio_perf_end()');

# 2. the sampler's series of the window: each session counted under its
# (tenant, module, evidence) at (nearly) every tick -- a tick that falls
# between the start of a statement and its parse sees no query id yet
for my $st (@styles)
{
	my ($t, $m, $by) = split /\|/, $st->{expect};
	my $key = ($t eq '-' ? '' : $t) . "/$m by $by";
	is( $node->safe_psql('postgres', qq{
		SELECT coalesce(tenant, '-') || '|' || coalesce(module, '-') || '|'
		       || coalesce(attributed_by, '-') || '|' || p95
		  FROM folio_perf_connections($w)
		 WHERE dimension = 'attribution' AND key = '$key'}),
		"$st->{expect}|1", "sampler series: $st->{name}");
	is( $node->safe_psql('postgres', qq{
		SELECT count(*) > 0 AND bool_and(value > 0)
		  FROM folio_perf_timeseries($w, 'connections_by_attribution')
		 WHERE series = '$key'}),
		't', "sampler time series: $st->{name}");
}

# 3. the window report, for the session's statement
for my $st (@styles)
{
	my $expect = $st->{expect};
	# pg_stat_statements keeps no application_name: a statement nothing
	# else attributes stays unattributed
	$expect = '-|-|-' if $expect =~ /application_name$/;
	is( $node->safe_psql('postgres', qq{
		SELECT coalesce(tenant, '-') || '|' || coalesce(module, '-') || '|'
		       || coalesce(attributed_by, '-')
		  FROM folio_perf_top_statements($w, 1000)
		 WHERE query LIKE '%$st->{tag}%' AND calls = 1}),
		$expect, "window report: $st->{name}");
}

$_->quit for @sessions;
$node->stop;
done_testing();
