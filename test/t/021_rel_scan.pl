# test/t/021_rel_scan.pl - the incremental pass over pg_class against DDL
# that is in progress while a snapshot reads pg_class.
#
# A snapshot whose previous state is in shared memory reads only the blocks
# of pg_class whose LSN moved since the previous snapshot, and the blocks
# that then held a row of a transaction still in progress (its rows may
# become visible or invisible later without the block changing).  Here a
# CREATE TABLE, a DROP TABLE and a TRUNCATE (a new relfilenode) are each in
# progress in another session while a snapshot is taken, and committed
# after it: the next snapshot, incremental, must see each of them exactly
# as a full pass does (the relation stored, gone, its new relfilenode), and
# rel_last must then agree with pg_class; a full pass after them must find
# nothing they missed.
# Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('rel_scan');
$node->init;
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'pg_stat_statements,folio_perf'
compute_query_id = on
folio_perf.sample_interval = 0
});
$node->start;
$node->safe_psql('postgres', q{
CREATE EXTENSION pg_stat_statements;
CREATE EXTENSION folio_perf;
CREATE SCHEMA fs01_mod_scan;
CREATE TABLE fs01_mod_scan.keep (id int PRIMARY KEY);
CREATE TABLE fs01_mod_scan.doomed (id int PRIMARY KEY);
CREATE TABLE fs01_mod_scan.emptied (id int PRIMARY KEY, doc text);
INSERT INTO fs01_mod_scan.emptied SELECT g, 'x' FROM generate_series(1, 100) g;
});

sub snap { return $node->safe_psql('postgres', 'SELECT folio_perf_snapshot()'); }
sub state
{
	my ($col) = @_;
	return $node->safe_psql('postgres',
		"SELECT $col FROM folio_perf_rel_state WHERE datname = current_database()");
}

# rel_last against pg_class: relations of the schema with another
# relfilenode, missing from rel_last, or in rel_last but gone
sub disagreement
{
	return $node->safe_psql('postgres', q{
		SELECT count(*) FROM (
		  SELECT c.oid, c.relfilenode FROM pg_class c
		  WHERE c.relnamespace = 'fs01_mod_scan'::regnamespace AND c.relkind IN ('r', 'i')
		  EXCEPT
		  SELECT l.relid, l.relfilenode FROM folio_perf_data.rel_last l WHERE l.target_id IS NULL
		    AND l.relid IN (SELECT k.relid FROM folio_perf_data.rel_key k
		                    WHERE k.nspname = 'fs01_mod_scan' AND k.dropped_snap IS NULL)
		) x});
}
sub stored
{
	my ($relname) = @_;
	return $node->safe_psql('postgres', qq{
		SELECT count(*) FROM folio_perf_data.rel_last l
		JOIN folio_perf_data.rel_key k USING (rel_key_id)
		WHERE k.nspname = 'fs01_mod_scan' AND k.relname = '$relname'});
}

snap();
snap();
my $inc0 = state('incremental');

# ---- a CREATE TABLE in progress during a snapshot, committed after it
my $ddl = $node->background_psql('postgres');
$ddl->query_safe('BEGIN; CREATE TABLE fs01_mod_scan.in_flight (id int PRIMARY KEY)');
snap();
is(stored('in_flight'), '0', 'a table created by a transaction in progress is not stored');
$ddl->query_safe('COMMIT');
snap();
cmp_ok(state('incremental'), '>', $inc0, 'the snapshots after the first two were incremental');
is(stored('in_flight'), '1', 'committed after the snapshot: the next, incremental one stores it');
ok(state('blocks_read < class_blocks'), 'that snapshot read fewer blocks than pg_class has');

# ---- a DROP TABLE in progress, committed after the snapshot
$ddl->query_safe('BEGIN; DROP TABLE fs01_mod_scan.doomed');
snap();
is(stored('doomed'), '1', 'a table dropped by a transaction in progress is still there');
$ddl->query_safe('COMMIT');
snap();
is(stored('doomed'), '0', 'dropped after the snapshot: the next one finds it gone');

# ---- a TRUNCATE (new relfilenode) in progress, committed after the snapshot
$ddl->query_safe('BEGIN; TRUNCATE fs01_mod_scan.emptied');
snap();
$ddl->query_safe('COMMIT');
snap();
is(disagreement(), '0', 'rel_last has every relation with its relfilenode after the truncate');

# ---- and a full pass finds nothing the incremental ones missed (the DDL
# session's statistics flushed first, then an incremental snapshot)
$ddl->query_safe('SELECT pg_stat_force_next_flush()');
$ddl->query_safe('SELECT 1');
snap();
$node->safe_psql('postgres', q{
	ALTER SYSTEM SET folio_perf.rel_scan = 'full'; SELECT pg_reload_conf()});
my $s_full = snap();
is( $node->safe_psql('postgres', qq{
		SELECT count(*) FROM folio_perf_data.rel_chunk WHERE snap_id = $s_full}),
	'0', 'a full pass after them stores no change: the incremental passes missed none');
is(disagreement(), '0', 'rel_last agrees with pg_class');
$node->safe_psql('postgres', q{
	ALTER SYSTEM RESET folio_perf.rel_scan; SELECT pg_reload_conf()});
$ddl->quit;

done_testing();
