# test/t/001_preload.pl - folio_perf with and without shared_preload_libraries
# Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('preload');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'pg_stat_statements,folio_perf'
compute_query_id = on
folio_perf.sample_interval = 0
});
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION pg_stat_statements; CREATE EXTENSION folio_perf');

# Two tenants' schemas with the same table, one shared login, unqualified SQL.
$node->safe_psql('postgres', q{
CREATE ROLE folio_shared LOGIN;
CREATE SCHEMA fs01_mod_source_record_storage AUTHORIZATION folio_shared;
CREATE SCHEMA fs02_mod_source_record_storage AUTHORIZATION folio_shared;
CREATE TABLE fs01_mod_source_record_storage.marc_records_lb(id uuid primary key, content jsonb);
CREATE TABLE fs02_mod_source_record_storage.marc_records_lb(id uuid primary key, content jsonb);
GRANT ALL ON ALL TABLES IN SCHEMA fs01_mod_source_record_storage, fs02_mod_source_record_storage TO folio_shared;
});
for my $t ('fs01', 'fs02')
{
	$node->safe_psql('postgres',
		"SET search_path = ${t}_mod_source_record_storage; "
		  . q{insert into "marc_records_lb" ("id", "content") values (gen_random_uuid(), '{}')},
		extra_params => [ '-U', 'folio_shared' ]);
}
my $res = $node->safe_psql('postgres', q{
SELECT string_agg(n.nspname, ',' ORDER BY n.nspname)
FROM pg_stat_statements s
JOIN folio_perf_query_relations() r ON r.queryid = s.queryid AND r.dbid = s.dbid
JOIN pg_namespace n ON n.oid = r.target_nsp
WHERE s.query LIKE 'insert into "marc_records_lb"%'});
if ($node->pg_version >= 18)
{
	# 18 jumbles relations by name: one query id for both tenants, which
	# the hook then vouches for no schema
	is( $node->safe_psql('postgres', q{
SELECT count(*) || ' ' || bool_and(r.target_nsp IS NULL AND cardinality(r.nsps) = 0)
FROM pg_stat_statements s
JOIN folio_perf_query_relations() r ON r.queryid = s.queryid AND r.dbid = s.dbid
WHERE s.query LIKE 'insert into "marc_records_lb"%'}), '1 true',
		'same unqualified text of two tenants, one queryid (18): no schema vouched for');
}
else
{
	is($res, 'fs01_mod_source_record_storage,fs02_mod_source_record_storage',
		'same unqualified text, two queryids, each with its own tenant schema');
}

is($node->safe_psql('postgres', 'SELECT folio_perf_relations_reset() > 0'), 't',
	'reset removes entries');
is($node->safe_psql('postgres', q{SELECT count(*) FROM folio_perf_query_relations() r
	JOIN pg_namespace n ON n.oid = ANY (r.nsps) WHERE n.nspname LIKE 'fs0%'}), '0',
	'store empty after reset');

# Without preloading: parsing works, the relation store says how to enable it.
$node->append_conf('postgresql.conf', "shared_preload_libraries = 'pg_stat_statements'");
$node->restart;
is($node->safe_psql('postgres',
	q{SELECT module FROM folio_perf_parse_schema('fs09000000_mod_users')}),
	'mod_users', 'parse works without preload');
is($node->safe_psql('postgres', 'SELECT count(*) FROM folio_perf_query_relations()'), '0',
	'relations view is empty, not an error, without preload');
my ($rc, $out, $err) = $node->psql('postgres', 'SELECT folio_perf_relations_reset()');
like($err, qr/folio_perf must be loaded via shared_preload_libraries/,
	'reset without preload fails with a clear message');
$node->stop;
done_testing();
