# test/t/004_upgrade.pl - ALTER EXTENSION folio_perf UPDATE from 1.0.0 (its
# install script saved as sql/folio_perf--1.0.0.sql) keeps every window's
# report exactly but for what 1.1.0 changed on purpose (each part named
# with its reason; what it changed or added is checked for what it must
# hold, against 1.0.0's figures and the stored data), and leaves the same
# objects as a fresh install of the default version: functions (with their
# definitions), views, tables and columns, indexes, constraints, triggers,
# types, grants, comments, the pg_dump configuration and the rows a fresh
# install seeds.  An object added to sql/parts/ but not to the upgrade
# script fails the second check; the listing it prints names the object
# (see doc/architecture.md, "Upgrade scripts").
# Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('upgrade');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'pg_stat_statements,folio_perf'
pg_stat_statements.track = all
compute_query_id = on
folio_perf.sample_interval = 100
folio_perf.flush_interval = 1
folio_perf.database = 'up'
});
$node->start;

my ($default) = $node->safe_psql('postgres',
	q{SELECT default_version FROM pg_available_extensions WHERE name = 'folio_perf'});
my $old = '1.0.0';
isnt($default, $old, "the default version ($default) is not $old");

# Every object of the extension and what defines it, one line each, sorted;
# OIDs never appear (names, definitions, md5 of function bodies).
my $listing = q{
WITH e AS (SELECT oid, extconfig, extcondition FROM pg_extension WHERE extname = 'folio_perf'),
m AS (SELECT d.classid, d.objid, d.objsubid FROM pg_depend d, e
      WHERE d.refclassid = 'pg_extension'::regclass AND d.refobjid = e.oid AND d.deptype = 'e'),
lines(l) AS (
    SELECT 'member ' || pg_describe_object(m.classid, m.objid, m.objsubid) FROM m
  UNION ALL
    SELECT 'function ' || p.oid::regprocedure::text
        || ' owner ' || pg_get_userbyid(p.proowner)
        || CASE WHEN p.prokind = 'a'
                THEN ' aggregate ' || (SELECT md5(row(a.aggtransfn::text, a.aggfinalfn::text,
                                          a.aggcombinefn::text, format_type(a.aggtranstype, NULL),
                                          a.agginitval)::text)
                                       FROM pg_aggregate a WHERE a.aggfnoid = p.oid)
                ELSE ' def ' || md5(pg_get_functiondef(p.oid)) END
        || ' acl ' || coalesce((SELECT string_agg(x::text, ',' ORDER BY x::text) FROM unnest(p.proacl) x), '-')
        || ' comment ' || coalesce(md5(obj_description(p.oid, 'pg_proc')), '-')
    FROM pg_proc p JOIN m ON m.classid = 'pg_proc'::regclass AND m.objid = p.oid
  UNION ALL
    SELECT 'relation ' || c.oid::regclass::text || ' kind ' || c.relkind::text
        || ' persistence ' || c.relpersistence::text || ' owner ' || pg_get_userbyid(c.relowner)
        || ' options ' || coalesce(c.reloptions::text, '-') || ' rls ' || c.relrowsecurity::text
        || ' acl ' || coalesce((SELECT string_agg(x::text, ',' ORDER BY x::text) FROM unnest(c.relacl) x), '-')
        || ' comment ' || coalesce(md5(obj_description(c.oid, 'pg_class')), '-')
        || CASE WHEN c.relkind IN ('v', 'm') THEN ' view ' || md5(pg_get_viewdef(c.oid)) ELSE '' END
    FROM pg_class c JOIN m ON m.classid = 'pg_class'::regclass AND m.objid = c.oid
  UNION ALL
    -- columns of member relations and of member composite types, in order
    SELECT 'column ' || c.oid::regclass::text || ' #'
        || row_number() OVER (PARTITION BY c.oid ORDER BY a.attnum)
        || ' ' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod)
        || CASE WHEN a.attnotnull THEN ' not null' ELSE '' END
        || coalesce(' default ' || pg_get_expr(ad.adbin, ad.adrelid), '')
        || CASE WHEN a.attidentity <> '' THEN ' identity ' || a.attidentity::text ELSE '' END
        || CASE WHEN a.attgenerated <> '' THEN ' generated ' || a.attgenerated::text ELSE '' END
        || ' storage ' || a.attstorage::text || coalesce(' collation ' || NULLIF(a.attcollation, 0)::regcollation::text, '')
        || ' acl ' || coalesce((SELECT string_agg(x::text, ',' ORDER BY x::text) FROM unnest(a.attacl) x), '-')
        || ' comment ' || coalesce(md5(col_description(c.oid, a.attnum)), '-')
    FROM pg_class c
    JOIN m ON (m.classid = 'pg_class'::regclass AND m.objid = c.oid)
           OR (m.classid = 'pg_type'::regclass AND m.objid = c.reltype AND c.relkind = 'c')
    JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
    LEFT JOIN pg_attrdef ad ON ad.adrelid = c.oid AND ad.adnum = a.attnum
  UNION ALL
    SELECT 'index ' || i.indrelid::regclass::text || ' ' || pg_get_indexdef(i.indexrelid)
        || ' ' || coalesce((SELECT reloptions::text FROM pg_class WHERE oid = i.indexrelid), '-')
    FROM pg_index i JOIN m ON m.classid = 'pg_class'::regclass AND m.objid = i.indrelid
  UNION ALL
    SELECT 'constraint ' || coalesce(co.conrelid::regclass::text, co.contypid::regtype::text)
        || ' ' || co.conname || ' ' || pg_get_constraintdef(co.oid)
        || CASE WHEN co.condeferrable THEN ' deferrable' ELSE '' END
    FROM pg_constraint co
    JOIN m ON (m.classid = 'pg_class'::regclass AND m.objid = co.conrelid)
           OR (m.classid = 'pg_type'::regclass AND m.objid = co.contypid)
  UNION ALL
    SELECT 'trigger ' || t.tgrelid::regclass::text || ' ' || pg_get_triggerdef(t.oid)
        || ' enabled ' || t.tgenabled::text
    FROM pg_trigger t JOIN m ON m.classid = 'pg_class'::regclass AND m.objid = t.tgrelid
    WHERE NOT t.tgisinternal
  UNION ALL
    SELECT 'policy ' || po.polrelid::regclass::text || ' ' || po.polname || ' ' || po.polcmd::text
        || ' ' || coalesce(pg_get_expr(po.polqual, po.polrelid), '-')
        || ' ' || coalesce(pg_get_expr(po.polwithcheck, po.polrelid), '-')
    FROM pg_policy po JOIN m ON m.classid = 'pg_class'::regclass AND m.objid = po.polrelid
  UNION ALL
    SELECT 'sequence ' || s.seqrelid::regclass::text || ' ' || format_type(s.seqtypid, NULL)
        || ' ' || s.seqstart || ' ' || s.seqincrement || ' ' || s.seqmin || ' ' || s.seqmax
        || ' ' || s.seqcache || ' ' || s.seqcycle
    FROM pg_sequence s JOIN m ON m.classid = 'pg_class'::regclass AND m.objid = s.seqrelid
  UNION ALL
    SELECT 'type ' || t.oid::regtype::text || ' kind ' || t.typtype::text
        || ' owner ' || pg_get_userbyid(t.typowner)
        || coalesce(' base ' || NULLIF(t.typbasetype, 0)::regtype::text, '')
        || coalesce(' labels ' || (SELECT string_agg(en.enumlabel, ',' ORDER BY en.enumsortorder)
                                   FROM pg_enum en WHERE en.enumtypid = t.oid), '')
        || ' acl ' || coalesce((SELECT string_agg(x::text, ',' ORDER BY x::text) FROM unnest(t.typacl) x), '-')
    FROM pg_type t JOIN m ON m.classid = 'pg_type'::regclass AND m.objid = t.oid
  UNION ALL
    SELECT 'schema ' || n.nspname || ' owner ' || pg_get_userbyid(n.nspowner)
        || ' acl ' || coalesce((SELECT string_agg(x::text, ',' ORDER BY x::text) FROM unnest(n.nspacl) x), '-')
        || ' comment ' || coalesce(md5(obj_description(n.oid, 'pg_namespace')), '-')
    FROM pg_namespace n
    WHERE n.oid IN (SELECT m.objid FROM m WHERE m.classid = 'pg_namespace'::regclass)
       OR n.oid = (SELECT extnamespace FROM pg_extension WHERE extname = 'folio_perf')
  UNION ALL
    SELECT 'dumped ' || c::regclass::text || ' where ' || coalesce(w, '')
    FROM e, unnest(e.extconfig, e.extcondition) AS u(c, w)
  UNION ALL
    SELECT 'default acl ' || coalesce(d.defaclnamespace::regnamespace::text, '-') || ' '
        || d.defaclobjtype::text || ' ' || d.defaclacl::text
    FROM pg_default_acl d
)
SELECT string_agg(l, E'\n' ORDER BY l COLLATE "C") FROM lines};

# The rows of every table of folio_perf_data, as md5 per table: run on a
# database right after CREATE EXTENSION (or after the update of one) it
# shows the rows an install seeds.
my $seeded = q{
DO $$
DECLARE t regclass; h text;
BEGIN
    CREATE TEMP TABLE seeded (tab text, rows_md5 text);
    FOR t IN SELECT c.oid FROM pg_class c
             WHERE c.relnamespace = 'folio_perf_data'::regnamespace AND c.relkind IN ('r', 'p')
             ORDER BY c.relname LOOP
        EXECUTE format('SELECT md5(coalesce(string_agg(x::text, E''\n'' ORDER BY x::text), '''')) FROM %s x', t)
            INTO h;
        INSERT INTO seeded VALUES (t::text, h);
    END LOOP;
END $$;
SELECT string_agg(tab || ' ' || rows_md5, E'\n' ORDER BY tab) FROM seeded};

# 1. a fresh install of the default version, and 1.0.0 updated at once
$node->safe_psql('postgres', 'CREATE DATABASE fresh');
$node->safe_psql('fresh', 'CREATE EXTENSION pg_stat_statements; CREATE EXTENSION folio_perf');
is($node->safe_psql('fresh', q{SELECT extversion FROM pg_extension WHERE extname = 'folio_perf'}),
	$default, "a fresh install is $default");
my $fresh = $node->safe_psql('fresh', $listing);
my $fresh_rows = $node->safe_psql('fresh', $seeded);
cmp_ok(scalar(() = $fresh =~ /^function /mg), '>', 100, 'the listing has the functions');
like($fresh, qr/^column folio_perf_data\.snapshot #1 snap_id /m, 'the listing has the columns');
like($fresh, qr/^relation folio_perf_windows kind v .* acl .*folio_perf_reader=r/m, 'the listing has views and grants');

$node->safe_psql('postgres', 'CREATE DATABASE up0');
$node->safe_psql('up0', "CREATE EXTENSION pg_stat_statements; CREATE EXTENSION folio_perf VERSION '$old'");
$node->safe_psql('up0', 'ALTER EXTENSION folio_perf UPDATE');
is($node->safe_psql('up0', q{SELECT extversion FROM pg_extension WHERE extname = 'folio_perf'}),
	$default, "ALTER EXTENSION folio_perf UPDATE reaches $default");
my $updated = $node->safe_psql('up0', $listing);
is($updated, $fresh, "the updated extension's objects are a fresh $default install's");
if ($updated ne $fresh)
{
	my %f = map { $_ => 1 } split /\n/, $fresh;
	my %u = map { $_ => 1 } split /\n/, $updated;
	diag("in a fresh install only: $_") for grep { !$u{$_} } split /\n/, $fresh;
	diag("after the update only:   $_") for grep { !$f{$_} } split /\n/, $updated;
}
is($node->safe_psql('up0', $seeded), $fresh_rows, 'the updated extension has the rows a fresh install seeds');
# controls: what an upgrade script could miss shows in the listing
for my $c (
	[ 'a function body', q{CREATE OR REPLACE FUNCTION folio_perf_data.check_older_than(older_than interval)
	  RETURNS void LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$ BEGIN END $$} ],
	[ 'a grant', 'GRANT EXECUTE ON FUNCTION folio_perf_data.check_older_than(interval) TO PUBLIC' ],
	[ 'a column', 'ALTER TABLE folio_perf_data.window ADD COLUMN x int' ],
	[ 'a column default', q{ALTER TABLE folio_perf_data.window ALTER COLUMN tags SET DEFAULT '{"x":1}'} ],
	[ 'an index', 'CREATE INDEX ON folio_perf_data.window (label)' ],
	[ 'a view', 'CREATE OR REPLACE VIEW folio_perf_windows AS SELECT * FROM folio_perf_windows' ],
	[ 'a member', 'ALTER EXTENSION folio_perf DROP FUNCTION folio_perf_data.check_older_than(interval)' ],
	[ 'a seeded row', q{INSERT INTO folio_perf_data.operation (operation, module, relation) VALUES ('x', 'mod_x', 'x')} ])
{
	my $l = $node->safe_psql('up0', "BEGIN; $c->[1]; " . ($c->[0] eq 'a seeded row' ? $seeded : $listing) . '; ROLLBACK');
	isnt($l, $c->[0] eq 'a seeded row' ? $fresh_rows : $fresh, "control: $c->[0] missing from an upgrade script shows");
}

# 2. windows taken under 1.0.0: new, dropped, truncated, rewritten relations,
# a statistics reset, a restart, a workload of three sessions, several
# snapshots, a timed snapshot, a remote target; their reports before and
# after the update
$node->safe_psql('postgres', 'CREATE DATABASE up');
$node->safe_psql('postgres', 'CREATE DATABASE tgt');
$node->safe_psql('tgt', q{
CREATE EXTENSION pg_stat_statements;
CREATE SCHEMA fs02_mod_orders;
CREATE TABLE fs02_mod_orders.orders (id int PRIMARY KEY, v text);
});
$node->safe_psql('up', qq{
CREATE EXTENSION pg_stat_statements;
CREATE EXTENSION folio_perf VERSION '$old';
CREATE SCHEMA fs01_mod_users;
CREATE SCHEMA fs01_mod_inventory;
CREATE TABLE fs01_mod_users.users (id int PRIMARY KEY, jsonb jsonb);
CREATE TABLE fs01_mod_inventory.item (id int PRIMARY KEY, jsonb jsonb);
CREATE TABLE fs01_mod_inventory.holdings (id int PRIMARY KEY, note text);
});
ok( $node->poll_query_until('up', q{
	SELECT folio_perf_sampler_flush() >= 0
	   AND (SELECT state = 'sampling' AND pid IS NOT NULL FROM folio_perf_sampler_status())}),
	'the sampler stores its samples in database up');
sub flushed { my ($db, $sql) = @_; $node->safe_psql($db, "$sql; SELECT pg_stat_force_next_flush()"); }
my @windows;
# new and dropped relations, several snapshots in the window
push @windows, $node->safe_psql('up', q{SELECT folio_perf_begin('new and dropped', '{"release":"R1"}')});
flushed('up', q{INSERT INTO fs01_mod_users.users SELECT g, '{}' FROM generate_series(1, 100) g});
$node->safe_psql('up', 'SELECT folio_perf_snapshot()');
flushed('up', q{CREATE TABLE fs01_mod_users.tmp (id int, t text); INSERT INTO fs01_mod_users.tmp SELECT g, repeat('x', 3000) FROM generate_series(1, 50) g});
$node->safe_psql('up', 'SELECT folio_perf_snapshot()');
flushed('up', q{UPDATE fs01_mod_users.users SET jsonb = '{"a":1}' WHERE id < 30; DROP TABLE fs01_mod_users.tmp});
$node->safe_psql('up', 'SELECT folio_perf_snapshot_timed()');
flushed('up', q{SELECT count(*) FROM fs01_mod_users.users});
$node->safe_psql('up', 'SELECT folio_perf_end()');
# truncated and rewritten
push @windows, $node->safe_psql('up', q{SELECT folio_perf_begin('truncate and vacuum full', '{"release":"R2"}')});
flushed('up', q{INSERT INTO fs01_mod_inventory.item SELECT g, '{}' FROM generate_series(1, 200) g; TRUNCATE fs01_mod_users.users});
$node->safe_psql('up', 'SELECT folio_perf_snapshot()');
flushed('up', q{INSERT INTO fs01_mod_users.users SELECT g, '{}' FROM generate_series(1, 10) g; DELETE FROM fs01_mod_inventory.item WHERE id > 100; VACUUM FULL fs01_mod_inventory.item});
$node->safe_psql('up', 'SELECT folio_perf_end()');
# a statistics reset
push @windows, $node->safe_psql('up', q{SELECT folio_perf_begin('stats reset', '{}')});
flushed('up', q{INSERT INTO fs01_mod_inventory.holdings SELECT g, 'n' FROM generate_series(1, 40) g});
flushed('up', q{SELECT pg_stat_reset(); SELECT pg_stat_statements_reset()});
flushed('up', q{UPDATE fs01_mod_inventory.holdings SET note = 'm' WHERE id < 5});
$node->safe_psql('up', 'SELECT folio_perf_end()');
# a restart
push @windows, $node->safe_psql('up', q{SELECT folio_perf_begin('restart', '{}')});
flushed('up', q{INSERT INTO fs01_mod_inventory.holdings SELECT g, 'r' FROM generate_series(41, 60) g});
$node->restart;
flushed('up', q{DELETE FROM fs01_mod_inventory.holdings WHERE id > 50});
$node->safe_psql('up', 'SELECT folio_perf_end()');
# a workload: two more sessions active for 1.5 s while users are created
# (the sampler's ticks stored under 1.0.0 have a burst of active sessions:
# 1.1.0 finds the active span in them, #25; the other windows have none)
push @windows, $node->safe_psql('up', q{SELECT folio_perf_begin('workload', '{}')});
my @busy = map {
	IPC::Run::start([ 'psql', '-X', '-q', '-d', $node->connstr('up'), '-c', 'SELECT pg_sleep(1.5)' ], '>', \my $o)
} 1 .. 2;
flushed('up', q{INSERT INTO fs01_mod_users.users SELECT g, '{}' FROM generate_series(1001, 1040) g; SELECT pg_sleep(1.6)});
$_->finish or die 'a busy session failed' for @busy;
$node->safe_psql('up', 'SELECT folio_perf_end()');
# a remote target (this server's database tgt)
my $connstr = 'host=' . $node->host . ' port=' . $node->port . ' dbname=tgt';
$node->safe_psql('up', qq{SELECT folio_perf_target_add('loop', '$connstr')});
push @windows, $node->safe_psql('up', q{SELECT folio_perf_begin('remote', '{"release":"R3"}', 'loop')});
flushed('tgt', q{INSERT INTO fs02_mod_orders.orders SELECT g, 'o' FROM generate_series(1, 30) g});
$node->safe_psql('up', q{SELECT folio_perf_snapshot('between', 'loop')});
flushed('tgt', q{UPDATE fs02_mod_orders.orders SET v = 'p' WHERE id < 10});
$node->safe_psql('up', "SELECT folio_perf_end($windows[-1])");
# every sampler interval that overlaps a window is stored before the reports are read
$node->safe_psql('up', 'SELECT pg_sleep(0.3); SELECT folio_perf_sampler_flush()');
is($node->safe_psql('up', 'SELECT count(*) FROM folio_perf_windows WHERE end_snap IS NOT NULL'),
	scalar(@windows), 'the windows taken under ' . $old);

# where two sets of reports differ: per window, the text around the first difference
# Numbers with a fraction rounded to 9 decimals: a sum of floating-point
# values has last digits that depend on the order a plan adds them, and
# plans change as autovacuum analyzes the tables (the same window gave
# 88.205777 and 88.20577700000003 on 1.0.0 and 1.1.0).  Integers are
# compared as they are.
sub norm
{
	my ($t) = @_;
	$t =~ s/(-?\d+\.\d+)/my $x = sprintf('%.9f', $1); $x =~ s{0+$}{}; $x =~ s{\.$}{}; $x/ge;
	return $t;
}
is(norm('a 88.20577700000003 b 88.205777 c -1.50 d 7'), 'a 88.205777 b 88.205777 c -1.5 d 7',
	'norm rounds fractions only');
sub same_reports
{
	my ($got, $want, $name) = @_;
	($got, $want) = (norm($got), norm($want));
	return 1 if is($got, $want, $name);
	my @g = split /\n/, $got;
	my @w = split /\n/, $want;
	for my $i (0 .. ($#g > $#w ? $#g : $#w))
	{
		my ($x, $y) = ($g[$i] // '', $w[$i] // '');
		next if $x eq $y;
		my $p = 0;
		$p++ while $p < length($x) && substr($x, $p, 1) eq substr($y, $p, 1);
		my $from = $p > 300 ? $p - 300 : 0;
		diag("report line $i differs at $p:\n  got:  ..." . substr($x, $from, 600) . "\n  want: ..." . substr($y, $from, 600));
	}
	return 0;
}
# (the note naming the sampler's database appears where a report is read in
# another database: restored and up_old).  Members the JSON report gained
# after 1.0.0 are left out of both sides (1.0.0 has none of them); every
# other member must be identical.  Add a new member's path here.  #30: a
# remote window's window.sampled is new, and its note window.plans is
# corrected (1.0.0 said plans were off for want of preloading; 1.1.0 says
# why a target has none, or that they are generic plans), left out of
# remote windows only (both checked below); the compare's db_cpu rows are
# new.  What is new or changed on purpose is checked after the update for
# what it must hold.
my @added = ('{timeseries,cpu}', '{timeseries,cpu_by_module}',
	# table health, settings, lock waits (#29)
	'{health}',
	# #30: a remote window says what is sampled or estimated there (new; its
	# note window.plans, which 1.0.0 got wrong, is left out below for
	# remote windows only; both checked after the update)
	'{window,sampled}',
	# when the workload ran (#25), and the data-import jobs grouped per
	# profile and file (#25; 080_findings.pl tests them)
	'{active_span}', '{folio_operations,data_import_groups}');
# Members a 1.1.0 fix changed on purpose, with the commit that did: left out
# of both sides too.  9e7f474: the time series keep to their bucket count
# (1.0.0 made one bucket more, numbered -1, and so other bucket bounds):
# compared bucket by bucket below.
push @added, '{timeseries}';
my $strip = join('', map { " #- '$_'" } @added);
# Within members, what changed on purpose (left out of both sides):
# - verdict: the rows of checks 1.1.0 added (not_checked, 005dcc6; the
#   health findings, which are those of health.findings, 89ba95f), 'none'
#   (1.1.0 drops it where health has a finding), mean_time_rose (9f9e8b0:
#   a rise must also cost min_impact_pct of the window's DB time); the
#   rows of every other check of 1.0.0 are compared, in order
# - folio_operations.operations: the DB cost, from each operation's own
#   statements from 1.1.0 on (9f9e8b0: db_time_ms, db_time_per_op_ms,
#   statements_per_op, rows_written_per_op, wal_bytes_per_op) and the
#   members it added beside it; 1.0.0's db_time_per_op_ms, the tenant's DB
#   time per operation, is 1.1.0's tenant_db_time_per_op_ms, compared
#   under 1.0.0's name.  Counts, rates, sources, the note and the jobs are
#   compared.
# (Mutations that fail the comparison: dominant_wait only from 3 AAS;
# user_created counting updates too; tenant_db_time_per_op_ms from the own
# flow's statements.)
my $own_cost = join(', ', map { "'$_'" } qw(db_time_ms db_time_per_op_ms statements_per_op rows_written_per_op
	wal_bytes_per_op per_minute_active shared_db_time_ms shared_with db_time_per_op_se_ms tenant_db_time_per_op_ms));
# 9e7f474: an unsampled window names the reason, and its sampler note
# says where the data come from; 1.0.0's notes say otherwise.  A window
# shorter than a sample interval, or the restart window when the
# sampler's first tick after the restart comes after its end, has no
# samples now and then (a race: 18 twice in CI): what follows "off: no
# samples in this window" is left out of both sides.
my $reports = qq{
SELECT string_agg(w.window_id || ' ' || regexp_replace(replace(
                  (CASE WHEN r.j->'window' ? 'target' THEN r.j #- '{window,plans}' ELSE r.j END
                   - 'generated_at'$strip)::text,
                  ' (the sampler stores its data in database up, set by folio_perf.database)', ''),
                  'off: no samples in this window[^"]*', 'off: no samples in this window', 'g'),
                  E'\n' ORDER BY w.window_id)
FROM folio_perf_windows w,
LATERAL (SELECT folio_perf_report(w.window_id, 'json')::jsonb AS j) r0,
LATERAL (SELECT jsonb_set(jsonb_set(r0.j, '{verdict}',
            (SELECT coalesce(jsonb_agg(v ORDER BY o), '[]')
             FROM jsonb_array_elements(r0.j->'verdict') WITH ORDINALITY x(v, o)
             WHERE v->>'check' NOT IN ('not_checked', 'none', 'mean_time_rose')
               AND NOT EXISTS (SELECT FROM jsonb_array_elements(r0.j#>'{health,findings}') f
                               WHERE f->>'check' = v->>'check' AND f->>'finding' = v->>'finding'))),
          '{folio_operations,operations}',
            (SELECT coalesce(jsonb_agg((op - ARRAY[$own_cost])
                                       || jsonb_build_object('db_time_per_op_ms',
                                              coalesce(op->'tenant_db_time_per_op_ms', op->'db_time_per_op_ms'))
                                       ORDER BY o), '[]')
             FROM jsonb_array_elements(r0.j#>'{folio_operations,operations}') WITH ORDINALITY y(op, o))) AS j) r};
my $others = qq{
SELECT md5(string_agg(r::text, E'\n' ORDER BY r::text))
FROM folio_perf_compare_rows($windows[0], $windows[1]) r WHERE r.section NOT IN ('db_cpu', 'operation', 'data_import')};
my $before = $node->safe_psql('up', $reports);
my $before_cmp = $node->safe_psql('up', $others);
like($before, qr/"new and dropped"/, 'the reports before the update');
like($before, qr/orders/, 'the remote window reports the target\'s table');
# what 1.0.0 reported under the members 1.1.0 changed on purpose, for the
# checks after the update
my $old_parts = $node->safe_psql('up', q{
SELECT jsonb_object_agg(w.window_id, jsonb_build_object('timeseries', r.j->'timeseries', 'verdict', r.j->'verdict'))
FROM folio_perf_windows w, LATERAL (SELECT folio_perf_report(w.window_id, 'json')::jsonb AS j) r});

# a copy that stays at the old version: the sampler leaves the database for it
$node->safe_psql('postgres', q{ALTER SYSTEM SET folio_perf.database = 'postgres'; SELECT pg_reload_conf()});
$node->poll_query_until('postgres', q{SELECT count(*) = 0 FROM pg_stat_activity WHERE datname = 'up'})
  or die 'the sampler did not leave database up';
$node->safe_psql('postgres', 'CREATE DATABASE up_old TEMPLATE up');
$node->safe_psql('postgres', q{ALTER SYSTEM RESET folio_perf.database; SELECT pg_reload_conf()});

$node->safe_psql('up', 'ALTER EXTENSION folio_perf UPDATE');
is($node->safe_psql('up', q{SELECT extversion FROM pg_extension WHERE extname = 'folio_perf'}),
	$default, "updated to $default with windows stored");
my $after = $node->safe_psql('up', $reports);
same_reports($after, $before, "every window's JSON report is the same after the update");
# the update stored the windows' facts (window_facts) at the first report:
# reports read from them are what 1.0.0 computed, for the restart and the
# remote window too; a second read gives the same
cmp_ok($node->safe_psql('up', 'SELECT count(*) FROM folio_perf_data.fact_pair'), '>=', scalar(@windows),
	'the reports stored the windows\' facts');
same_reports($node->safe_psql('up', $reports), $before, "every window's report read from its stored facts is 1.0.0's");
same_reports($node->safe_psql('up', "SET folio_perf.window_facts = off; $reports"), $before,
	'and computed without them');
like( $node->safe_psql('up', "SELECT folio_perf_report($windows[-1], 'json')::jsonb #>> '{window,sampled}'"),
	qr/^\["statements, tables, modules and the database: /,
	'what 1.1.0 adds: the remote window says what is sampled or estimated');
# (#37: any of the three wordings was accepted on every version) the
# window was taken under 1.0.0, which planned nothing on a target: before
# 16 the target cannot give generic plans, from 16 on none was planned
my $plans_note = $node->safe_psql('up', "SELECT folio_perf_report($windows[-1], 'json')::jsonb #>> '{window,plans}'");
like($plans_note,
	$node->pg_version >= 16
	? qr/^none: no statement of the window was planned on target loop \(EXPLAIN \(GENERIC_PLAN\)/
	: qr/^none: target loop runs PostgreSQL ${\ int($node->pg_version) }; plans of a remote target are its generic plans/,
	'and why it has no plans, for the version it runs');
is($node->safe_psql('up', $others), $before_cmp, 'the comparison of two windows is the same after the update');
is( $node->safe_psql('up', q{SELECT bool_and(r ? 'active_span' AND r->'folio_operations' ? 'data_import_groups')
	FROM folio_perf_windows w, LATERAL (SELECT folio_perf_report(w.window_id, 'json')::jsonb AS r) x}),
	't', 'after the update every window reports its active span and data-import groups (1.1.0)');

# What 1.1.0 changed on purpose or added, after the update, against 1.0.0's
# figures and independent data of the same database (each query lists
# what is wrong, one line each: "check: problem").  d: every window with
# its 1.0.0 parts (o) and the parts of its 1.1.0 report the checks read.
my %checked = (
	series_kept => "1.0.0's time series in 1.1.0's buckets: the same values",
	series_layout => 'the time series keep to their bucket count, inside the window',
	series_cpu => 'the DB CPU series are the summary\'s DB CPU, by module too',
	verdict_rows => 'the verdict says which checks could not run, and "nothing stands out" only alone',
	verdict_health => 'the verdict ends with the top health findings, each as the window\'s figures call for',
	health_tables => 'health lists the tables the window changed or read, with their counters and findings',
	health_server => 'health has the summary\'s checkpoint, background writer and WAL counters',
	health_stored => 'health makes up no settings or index definitions for 1.0.0\'s snapshots',
	active_span => 'the active span lies in the workload window and holds its busy ticks; the others have none',
	operations_cost => 'an operation\'s DB cost is that of its own flow\'s statements');
my $checks = q{
-- (JIT would compile these small queries for most of a second)
SET jit = off;
CREATE TEMP TABLE d AS
SELECT w.window_id AS w, w.label, w.begin_snap, w.end_snap, w.begin_at AS t0, w.end_at AS t1, w.target_id,
       o.value AS o, r.j->'timeseries' AS ts, r.j->'summary' AS summ, r.j->'verdict' AS verdict,
       r.j->'db_load' AS db_load, r.j->'active_span' AS span, r.j#>'{folio_operations,operations}' AS ops,
       r.j#>'{health,findings}' AS h_findings, r.j#>'{health,tables}' AS h_tables,
       r.j#>'{health,indexes}' AS h_indexes, r.j#>'{health,server}' AS h_server,
       r.j#>'{health,settings}' AS h_settings, r.j#>>'{health,settings_note}' AS h_settings_note
FROM folio_perf_windows w JOIN jsonb_each($o1$OLD_PARTS$o1$::jsonb) o ON o.key::bigint = w.window_id,
     LATERAL (SELECT folio_perf_report(w.window_id, 'json')::jsonb AS j) r;
-- the tables of every window as folio_perf_table_activity has them
CREATE TEMP TABLE ta AS SELECT d.w, a.* FROM d, folio_perf_table_activity(d.w, 1000) a;
CREATE TEMP TABLE ts AS
SELECT d.w, v.version, m.key AS member, (x->>'bucket')::int AS b, x->>'series' AS s,
       (x->>'value')::numeric AS v, (x->>'bucket_start')::timestamptz AS bs, (x->>'bucket_end')::timestamptz AS be,
       extract(epoch FROM (x->>'bucket_end')::timestamptz - (x->>'bucket_start')::timestamptz) AS width,
       -- 1.1.0's bucket count (9e7f474): the window over the width, a
       -- window shorter than a second taken as one second
       greatest(ceil(greatest(extract(epoch FROM d.t1 - d.t0), 1)
                     / extract(epoch FROM (x->>'bucket_end')::timestamptz - (x->>'bucket_start')::timestamptz)), 1) AS nb
FROM d, LATERAL (VALUES ('1.0.0', d.o->'timeseries'), ('1.1.0', d.ts)) v(version, doc),
     jsonb_each(v.doc) m, jsonb_array_elements(m.value) x;

-- series_kept: 1.0.0's series (connections, connections_by_module,
-- db_load_by_wait_event_type) with their bucket numbers clamped to
-- 0 .. nb - 1 as 9e7f474 does: a 1.1.0 bucket that one 1.0.0 bucket
-- became has its rows; one that several became (a bucket -1 of ticks
-- before the begin, or one at the end) has each series, its max their
-- greatest, any other value between their least and greatest (0 where a
-- series was missing from one: those are over all ticks of the bucket).
-- (mutation: the per-tick avg and max swapped: fails)
WITH om AS (
    SELECT ts.*, least(greatest(ts.b, 0), ts.nb::int - 1) AS cb FROM ts WHERE ts.version = '1.0.0'
), e AS (
    SELECT om.w, om.member, om.cb, om.s, min(om.v) AS lo, max(om.v) AS hi, count(*) AS n_rows,
           min(om.bs) AS bs, min(om.be) AS be,
           (SELECT count(DISTINCT x.b) FROM om x WHERE x.w = om.w AND x.member = om.member AND x.cb = om.cb) AS k
    FROM om GROUP BY 1, 2, 3, 4
), n AS (
    SELECT ts.* FROM ts JOIN d ON d.w = ts.w WHERE ts.version = '1.1.0' AND d.o->'timeseries' ? ts.member
)
SELECT format('series_kept: window %s %s bucket %s series %s: %s', coalesce(e.w, n.w), coalesce(e.member, n.member),
              coalesce(e.cb, n.b), coalesce(e.s, n.s),
              CASE WHEN n.w IS NULL THEN 'in 1.0.0 only' WHEN e.w IS NULL THEN 'in 1.1.0 only'
                   ELSE format('%s from %s to %s, 1.1.0 %s from %s to %s (of %s 1.0.0 buckets)',
                               e.lo || CASE WHEN e.hi > e.lo THEN '..' || e.hi ELSE '' END, e.bs, e.be,
                               n.v, n.bs, n.be, e.k) END)
FROM e FULL JOIN n ON n.w = e.w AND n.member = e.member AND n.b = e.cb AND n.s = e.s
WHERE n.w IS NULL OR e.w IS NULL
   OR (e.k = 1 AND (n.v IS DISTINCT FROM e.lo OR n.bs <> e.bs OR n.be <> e.be))
   OR (e.k > 1 AND e.member = 'connections' AND e.s = 'max' AND n.v <> e.hi)
   OR (e.k > 1 AND NOT n.v BETWEEN CASE WHEN e.n_rows < e.k THEN least(e.lo, 0) ELSE e.lo END AND e.hi)
UNION ALL
SELECT format('series_kept: window %s: 1.0.0''s %s is not in 1.1.0''s timeseries', d.w, k)
FROM d, jsonb_object_keys(d.o->'timeseries') k WHERE NOT d.ts ? k;

-- series_layout: every member of 1.1.0's, cpu and cpu_by_module too: its
-- buckets numbered 0 .. nb - 1, at most 120 (the report's bucket count),
-- each one width long from the window's begin plus its number of widths,
-- so none before the begin or past the end (mutation: buckets numbered
-- from 1, not clamped at the end: fails)
SELECT format('series_layout: window %s %s bucket %s from %s to %s: %s', ts.w, ts.member, ts.b, ts.bs, ts.be,
              concat_ws(', ', CASE WHEN ts.b IS NULL OR ts.b < 0 OR ts.b >= ts.nb THEN format('not in 0..%s', ts.nb - 1) END,
                              CASE WHEN ts.nb > 120 THEN format('%s buckets', ts.nb) END,
                              CASE WHEN ts.width <> (SELECT min(x.width) FROM ts x WHERE x.version = ts.version
                                                     AND x.w = ts.w AND x.member = ts.member) THEN 'another width' END,
                              CASE WHEN abs(extract(epoch FROM ts.bs - d.t0) - ts.b * ts.width) > 0.001
                                   THEN format('not %s widths after the begin %s', ts.b, d.t0) END,
                              CASE WHEN ts.bs < d.t0 OR ts.bs >= d.t1 THEN format('begins outside the window %s .. %s', d.t0, d.t1) END))
FROM ts JOIN d ON d.w = ts.w
WHERE ts.version = '1.1.0'
  AND (ts.b IS NULL OR ts.b < 0 OR ts.b >= ts.nb OR ts.nb > 120
       OR ts.width <> (SELECT min(x.width) FROM ts x WHERE x.version = ts.version AND x.w = ts.w AND x.member = ts.member)
       OR abs(extract(epoch FROM ts.bs - d.t0) - ts.b * ts.width) > 0.001 OR ts.bs < d.t0 OR ts.bs >= d.t1);

-- series_cpu: the cpu series (new) are there where the summary has host
-- or DB CPU (host_busy_pct and db_cpu_pct in each bucket); a window of
-- one bucket has the summary's DB (0 without) and host CPU in it (rounded
-- to 0.1 from 0.01); cpu_by_module adds up to db_cpu_pct in each bucket,
-- within its rounding (mutation: cpu_by_module over the host's busy time,
-- not its capacity: fails)
WITH c AS (
    SELECT d.w, d.summ, ts.b, ts.nb,
           max(ts.v) FILTER (WHERE ts.s = 'db_cpu_pct') AS db, max(ts.v) FILTER (WHERE ts.s = 'host_busy_pct') AS host,
           count(*) FILTER (WHERE ts.s NOT IN ('db_cpu_pct', 'host_busy_pct')) AS other
    FROM d LEFT JOIN ts ON ts.w = d.w AND ts.version = '1.1.0' AND ts.member = 'cpu'
    GROUP BY 1, 2, 3, 4
), m AS (
    SELECT ts.w, ts.b, sum(ts.v) AS v, count(*) AS k FROM ts WHERE ts.version = '1.1.0' AND ts.member = 'cpu_by_module'
    GROUP BY 1, 2
)
SELECT format('series_cpu: window %s bucket %s: db_cpu_pct %s, host_busy_pct %s, by module %s, in the summary %s and %s',
              coalesce(c.w, m.w), coalesce(c.b, m.b), c.db, c.host, m.v, c.summ->'db_cpu_pct', c.summ->'host_cpu_pct')
FROM c FULL JOIN m ON m.w = c.w AND m.b = c.b
WHERE c.w IS NULL
   OR (c.b IS NULL) <> (c.summ->>'db_cpu_pct' IS NULL AND c.summ->>'host_cpu_pct' IS NULL)
   OR (c.b IS NOT NULL AND (c.db IS NULL OR c.host IS NULL OR c.other > 0))
   OR (c.nb = 1 AND (abs(c.db - coalesce((c.summ->>'db_cpu_pct')::numeric, 0)) >= 0.06
                     OR abs(c.host - (c.summ->>'host_cpu_pct')::numeric) >= 0.06))
   OR (c.b IS NOT NULL AND abs(coalesce(m.v, 0) - c.db) > 0.05 * (coalesce(m.k, 0) + 1) + 0.001);

-- verdict_rows: past 1.0.0's checks (compared above), 1.1.0's verdict
-- has: mean_time_rose rows of 1.0.0's only (9f9e8b0 added a floor);
-- 'none' where no row but not_checked is left, 1.0.0's if it had one;
-- not_checked with a part for each check that could not run, from the
-- stored data: the trend without a snapshot of the window's database and
-- target between its begin and end, DB CPU of a remote target without a
-- vCPU count or of a window whose stored sample intervals have no CPU
-- ticks or no backend's CPU time, all the sampler's checks without a
-- tick (mutations: the trend's part where the window has a snapshot
-- inside; the DB CPU part where the summary has DB CPU; 'none' added to
-- every verdict: each fails)
WITH x AS (
    SELECT d.*,
           (SELECT coalesce(jsonb_agg(v ORDER BY o), '[]') FROM jsonb_array_elements(d.verdict) WITH ORDINALITY y(v, o)
            WHERE v->>'check' = 'not_checked') AS nc,
           ARRAY(SELECT v FROM jsonb_array_elements(d.verdict) v WHERE v->>'check' = 'none') AS nn,
           ARRAY(SELECT v FROM jsonb_array_elements(d.o->'verdict') v WHERE v->>'check' = 'none') AS on_,
           (SELECT count(*) FROM jsonb_array_elements(d.verdict) v WHERE v->>'check' NOT IN ('none', 'not_checked')) AS others,
           array_remove(ARRAY[
               CASE WHEN NOT EXISTS (SELECT FROM folio_perf_data.snapshot b, folio_perf_data.snapshot s
                                     WHERE b.snap_id = d.begin_snap AND s.snap_id > d.begin_snap AND s.snap_id < d.end_snap
                                       AND s.dbid = b.dbid AND s.target_id IS NOT DISTINCT FROM b.target_id)
                    THEN 'the trend and the saturation check (' END,
               CASE WHEN i.ticks = 0 THEN 'DB load, connections and DB CPU ('
                    WHEN d.target_id IS NOT NULL
                         AND (SELECT t.vcpus FROM folio_perf_data.target t WHERE t.target_id = d.target_id) IS NULL
                    THEN 'DB CPU (the backends of a remote target'
                    WHEN d.target_id IS NULL AND NOT i.db_cpu THEN 'DB CPU (the sampler could not read' END], NULL) AS parts
    FROM d, LATERAL (SELECT coalesce(sum(i.n_ticks), 0) AS ticks,
                            coalesce(sum(i.cpu_ticks), 0) > 0
                            AND EXISTS (SELECT FROM folio_perf_data.sample_interval j, unnest(j.u_series) u
                                        JOIN folio_perf_data.sample_series ss ON ss.series_id = u
                                        WHERE j.ended_at > d.t0 AND j.ended_at <= d.t1
                                          AND j.target_id IS NOT DISTINCT FROM d.target_id AND ss.dimension = 'total') AS db_cpu
                     FROM folio_perf_data.sample_interval i
                     WHERE i.ended_at > d.t0 AND i.ended_at <= d.t1 AND i.target_id IS NOT DISTINCT FROM d.target_id) i
)
SELECT format('verdict_rows: window %s (%s): %s', x.w, x.label, p)
FROM x, LATERAL (
    SELECT format('not_checked %s, expected the parts %s', x.nc, x.parts) AS p
    WHERE jsonb_array_length(x.nc) <> CASE WHEN cardinality(x.parts) > 0 THEN 1 ELSE 0 END
       OR (cardinality(x.parts) > 0
           AND (x.nc->0->>'severity' <> 'info'
                OR x.nc->0->>'finding' !~ '^Not checked: .*\.$'
                OR cardinality(string_to_array(substr(x.nc->0->>'finding', 14), '; ')) <> cardinality(x.parts)
                OR EXISTS (SELECT FROM unnest(x.parts) e
                           WHERE NOT EXISTS (SELECT FROM unnest(string_to_array(substr(x.nc->0->>'finding', 14), '; ')) a
                                             WHERE starts_with(a, e)))))
    UNION ALL
    SELECT format('none %s with %s other rows (1.0.0: %s)', to_jsonb(x.nn), x.others, to_jsonb(x.on_))
    WHERE (cardinality(x.nn) = 1) <> (x.others = 0) OR cardinality(x.nn) > 1
       OR (cardinality(x.nn) = 1 AND cardinality(x.on_) = 1 AND x.nn[1] <> x.on_[1])
    UNION ALL
    SELECT format('mean_time_rose %s is not 1.0.0''s', v)
    FROM jsonb_array_elements(x.verdict) v
    WHERE v->>'check' = 'mean_time_rose' AND NOT x.o->'verdict' @> jsonb_build_array(v)) y;

-- verdict_health: the verdict ends with the first five of health.findings
-- (or all), warnings first; health.findings has checkpoints_requested,
-- backend_writes and deadlocks exactly where the summary's counters (as
-- 1.0.0 had them) call for them, lock_waits only with lock waits in
-- db_load, a table's finding only on a table health.tables gives it, and
-- unused_index only on an index of health.indexes not scanned while its
-- table was read (folio_perf_table_activity) (mutations: one health
-- finding in the verdict; backend_writes from 50 % of the buffers: each
-- fails)
WITH x AS (
    SELECT d.w, d.label, d.db_load, d.summ AS su, d.h_findings AS hf,
           (SELECT coalesce(jsonb_agg(v ORDER BY o), '[]') FROM jsonb_array_elements(d.verdict) WITH ORDINALITY y(v, o)
            WHERE EXISTS (SELECT FROM jsonb_array_elements(d.h_findings) f
                          WHERE f->>'check' = v->>'check' AND f->>'finding' = v->>'finding')) AS hv,
           (SELECT max(o) FILTER (WHERE NOT h) - min(o) FILTER (WHERE h)
            FROM (SELECT o, EXISTS (SELECT FROM jsonb_array_elements(d.h_findings) f
                                    WHERE f->>'check' = v->>'check' AND f->>'finding' = v->>'finding') AS h
                  FROM jsonb_array_elements(d.verdict) WITH ORDINALITY y(v, o)) z) AS interleaved
    FROM d
), f AS (
    SELECT x.w, x.label, f->>'check' AS c, f->>'finding' AS t
    FROM x, jsonb_array_elements(x.hf) f
), srv AS (
    SELECT x.w, x.label, e.c, e.want,
           EXISTS (SELECT FROM f WHERE f.w = x.w AND f.c = e.c) AS got
    FROM x, LATERAL (VALUES
        ('checkpoints_requested', (x.su->>'checkpoints_req')::numeric > 0
                                  AND (x.su->>'checkpoints_req')::numeric > (x.su->>'checkpoints_timed')::numeric),
        ('backend_writes', (x.su->>'buffers_backend')::numeric >= 1000
                           AND 100 * (x.su->>'buffers_backend')::numeric
                               / ((x.su->>'buffers_checkpoint')::numeric + (x.su->>'buffers_clean')::numeric
                                  + (x.su->>'buffers_backend')::numeric) >= 20),
        ('deadlocks', (x.su->>'deadlocks')::numeric > 0),
        ('lock_waits', CASE WHEN EXISTS (SELECT FROM jsonb_array_elements(x.db_load) l
                                         WHERE l->>'dimension' = 'statement_wait_event' AND l->>'key' LIKE 'Lock:%')
                            THEN NULL ELSE false END)) e(c, want)
)
SELECT format('verdict_health: window %s (%s): %s', x.w, x.label, p)
FROM x, LATERAL (
    SELECT format('%s health rows in the verdict, %s in health.findings', jsonb_array_length(x.hv), jsonb_array_length(x.hf)) AS p
    WHERE jsonb_array_length(x.hv) <> least(5, jsonb_array_length(x.hf))
    UNION ALL
    SELECT format('an info before a warning: %s', x.hv)
    WHERE EXISTS (SELECT FROM jsonb_array_elements(x.hv) WITH ORDINALITY a(v, o), jsonb_array_elements(x.hv) WITH ORDINALITY b(v, o)
                  WHERE a.o < b.o AND a.v->>'severity' <> 'warning' AND b.v->>'severity' = 'warning')
    UNION ALL
    SELECT format('warning %s left out for an info', f)
    FROM jsonb_array_elements(x.hf) f
    WHERE f->>'severity' = 'warning' AND NOT x.hv @> jsonb_build_array(jsonb_build_object('check', f->>'check', 'severity', f->>'severity', 'finding', f->>'finding'))
      AND EXISTS (SELECT FROM jsonb_array_elements(x.hv) v WHERE v->>'severity' <> 'warning')
    UNION ALL
    SELECT 'a health row before another row' WHERE x.interleaved > 0) y
UNION ALL
SELECT format('verdict_health: window %s (%s): %s %s, expected %s', srv.w, srv.label, srv.c,
              CASE WHEN srv.got THEN 'found' ELSE 'not found' END, srv.want)
FROM srv WHERE srv.got IS DISTINCT FROM srv.want AND srv.want IS NOT NULL
UNION ALL
SELECT format('verdict_health: window %s (%s): %s without what calls for it: %s', f.w, f.label, f.c, f.t)
FROM f JOIN d ON d.w = f.w
WHERE (f.c IN ('seq_scans_on_large_table', 'no_autovacuum_under_writes', 'dead_tuples_growing')
       AND NOT EXISTS (SELECT FROM jsonb_array_elements(d.h_tables) ht
                       WHERE f.t LIKE f.c || ' on ' || (ht->>'schema_name') || '.' || (ht->>'relname') || ' (%'
                         AND f.c = ANY (string_to_array(ht->>'finding', ', '))))
   OR (f.c = 'unused_index'
       AND NOT EXISTS (SELECT FROM jsonb_array_elements(d.h_indexes) i
                       JOIN ta a ON a.w = d.w AND a.schema = i->>'schema_name' AND a.relname = i->>'table_name'
                       WHERE f.t LIKE 'Index ' || (i->>'schema_name') || '.' || (i->>'index_name') || ' (%'
                         AND i->>'finding' LIKE '%unused_index%' AND (i->>'idx_scan')::bigint = 0
                         AND a.seq_scan + a.idx_scan > 0))
   OR f.c NOT IN ('seq_scans_on_large_table', 'no_autovacuum_under_writes', 'dead_tuples_growing', 'unused_index',
                  'duplicate_index', 'covered_index', 'lock_waits', 'checkpoints_requested', 'backend_writes', 'deadlocks');

-- health_tables: health.tables (new) are the window's tables as
-- folio_perf_table_activity has them (1.0.0's, compared above as the
-- report's tables), with the same counters, and the findings those
-- counters call for at PostgreSQL's default autovacuum settings (no
-- settings are stored with 1.0.0's snapshots: health_stored):
-- seq_scans_on_large_table at 10 scans of 10,000 rows each or more,
-- no_autovacuum_under_writes past 50 + 0.2 x rows of updates and deletes
-- and of dead rows, no vacuum; dead_tuples_growing only at 1,000 dead
-- rows or more.  Not the sizes: health has a relation's size when last
-- seen, folio_perf_table_activity its size at the end (none for a table
-- dropped in the window, such as window 1's tmp) (mutations: tables whose
-- counters were reset left out; autovacuum's scale factor taken as 0.5:
-- each fails)
WITH h AS (
    SELECT d.w, d.label, t FROM d, jsonb_array_elements(d.h_tables) t
), a AS (
    SELECT d.label, a.*,
           array_remove(ARRAY[
               CASE WHEN a.seq_scan >= 10 AND a.seq_tup_read >= 10000 * a.seq_scan THEN 'seq_scans_on_large_table' END,
               CASE WHEN a.vacuum_count + a.autovacuum_count = 0 AND a.updates + a.deletes > 50 + 0.2 * coalesce(a.live_tup, 0)
                         AND coalesce(a.dead_tup, 0) > 50 + 0.2 * coalesce(a.live_tup, 0)
                    THEN 'no_autovacuum_under_writes' END], NULL) AS want
    FROM d JOIN ta a ON a.w = d.w
)
SELECT format('health_tables: window %s (%s) %s.%s: %s', coalesce(a.w, h.w), coalesce(a.label, h.label),
              coalesce(a.schema::text, h.t->>'schema_name'), coalesce(a.relname::text, h.t->>'relname'),
              CASE WHEN h.w IS NULL THEN 'not in health.tables' WHEN a.w IS NULL THEN 'not in folio_perf_table_activity'
                   ELSE format('%s, in folio_perf_table_activity %s, findings %s', h.t, to_jsonb(a), a.want) END)
FROM a FULL JOIN h ON h.w = a.w AND h.t->>'schema_name' = a.schema AND h.t->>'relname' = a.relname
WHERE a.w IS NULL OR h.w IS NULL
   OR (h.t->>'tenant', h.t->>'module', h.t->>'status', (h.t->>'n_tup_ins')::bigint, (h.t->>'n_tup_upd')::bigint,
       (h.t->>'n_tup_del')::bigint, (h.t->>'seq_scan')::bigint, (h.t->>'seq_tup_read')::bigint,
       (h.t->>'live_tup')::bigint, (h.t->>'dead_tup')::bigint, (h.t->>'vacuum_count')::bigint,
       (h.t->>'autovacuum_count')::bigint, (h.t->>'analyze_count')::bigint, (h.t->>'autoanalyze_count')::bigint)
      IS DISTINCT FROM
      (a.tenant, a.module, a.status, a.inserts, a.updates, a.deletes, a.seq_scan, a.seq_tup_read, a.live_tup,
       a.dead_tup, a.vacuum_count, a.autovacuum_count, a.analyze_count, a.autoanalyze_count)
   OR array_remove(coalesce(string_to_array(h.t->>'finding', ', '), '{}'), 'dead_tuples_growing') <> a.want
   OR ('dead_tuples_growing' = ANY (string_to_array(h.t->>'finding', ', ')) AND coalesce(a.dead_tup, 0) < 1000);

-- health_server: the checkpoint, background writer and WAL counters of
-- health.server are the summary's (1.0.0's, compared above) where it has
-- the same metric, at least five of them (mutation: checkpoints_req and
-- checkpoints_timed swapped: fails)
SELECT format('health_server: window %s (%s): %s', d.w, d.label, p)
FROM d, LATERAL (
    SELECT format('%s %s, in the summary %s', m->>'metric', m->'value', d.summ->(m->>'metric')) AS p
    FROM jsonb_array_elements(d.h_server) m
    WHERE d.summ ? (m->>'metric') AND (m->>'value')::numeric IS DISTINCT FROM (d.summ->>(m->>'metric'))::numeric
    UNION ALL
    SELECT format('%s metrics of health.server in the summary', count(*))
    FROM jsonb_array_elements(d.h_server) m WHERE d.summ ? (m->>'metric')
    HAVING count(*) < 5) x;

-- health_stored: no settings or index definitions are made up for
-- snapshots taken under 1.0.0 (none were stored): health.settings empty
-- with the note saying so, every index without its key columns (no
-- duplicate or covered finding) (mutation: the note for an end snapshot
-- with settings stored and the one without swapped: fails)
SELECT format('health_stored: window %s (%s): %s', d.w, d.label, p)
FROM d, LATERAL (
    SELECT format('%s settings stored with the end snapshot', count(*)) AS p
    FROM folio_perf_data.snapshot_setting s WHERE s.snap_id = d.end_snap HAVING count(*) > 0
    UNION ALL
    SELECT format('settings %s, note %s', d.h_settings, d.h_settings_note)
    WHERE d.h_settings <> '[]'
       OR d.h_settings_note IS DISTINCT FROM 'No settings were stored with the end snapshot (taken before folio_perf 1.1.0).'
    UNION ALL
    SELECT format('index %s', i)
    FROM jsonb_array_elements(d.h_indexes) i
    WHERE i->'columns' <> 'null' OR i->'duplicate_of' <> 'null' OR i->'covered_by' <> 'null'
       OR EXISTS (SELECT FROM folio_perf_data.index_def x JOIN folio_perf_data.rel_key k USING (rel_key_id)
                  WHERE k.nspname = i->>'schema_name' AND k.relname = i->>'index_name')) x;

-- active_span: the workload window's span (#25, new) lies inside the
-- window, a second or more, its lengths those of its bounds; it begins at
-- a tick the sampler stored and ends one sample interval after one (or at
-- the window's end), and holds every tick stored with the three sessions
-- active; the others, shorter than a second, have none (mutations: a tick
-- busy only at 5 active sessions or 5 connections above the idle pool;
-- the span from the window's begin: each fails)
WITH t AS (
    SELECT d.w, i.started_at + u.ms * interval '1 millisecond' AS ts,
           i.started_at + u.ms * interval '1 millisecond' + i.sample_interval_ms * interval '1 millisecond' AS next, u.a
    FROM d, folio_perf_data.sample_interval i, unnest(i.tick_ms, i.tick_active) AS u(ms, a)
    WHERE i.ended_at > d.t0 AND i.ended_at <= d.t1 AND i.target_id IS NOT DISTINCT FROM d.target_id
), x AS (
    SELECT d.*, d.span AS sp, (d.span->>'active_begin')::timestamptz AS ab,
           (d.span->>'active_end')::timestamptz AS ae, k.*
    FROM d, LATERAL (
        SELECT count(*) FILTER (WHERE t.a >= 3) AS n3, min(t.ts) FILTER (WHERE t.a >= 3) AS first3,
               max(t.ts) FILTER (WHERE t.a >= 3) AS last3,
               bool_or(t.ts = (d.span->>'active_begin')::timestamptz) AS begins_at_tick,
               bool_or(t.next = (d.span->>'active_end')::timestamptz) AS ends_after_tick
        FROM t WHERE t.w = d.w AND t.ts BETWEEN d.t0 AND d.t1) k
)
SELECT format('active_span: window %s (%s) from %s to %s, %s ticks with 3 active from %s to %s: %s',
              x.w, x.label, x.t0, x.t1, x.n3, x.first3, x.last3, x.sp)
FROM x
WHERE CASE WHEN x.label = 'workload'
           THEN x.ab IS NULL OR x.ae IS NULL OR x.ab < x.t0 OR x.ae > x.t1 OR x.ae <= x.ab
                OR (x.sp->>'active_s')::numeric < 1
                OR (x.sp->>'active_s')::numeric <> round(extract(epoch FROM x.ae - x.ab)::numeric, 3)
                OR (x.sp->>'idle_before_s')::numeric <> round(extract(epoch FROM x.ab - x.t0)::numeric, 3)
                OR (x.sp->>'idle_after_s')::numeric <> round(extract(epoch FROM x.t1 - x.ae)::numeric, 3)
                OR x.n3 < 5 OR x.first3 < x.ab OR x.last3 >= x.ae
                OR NOT x.begins_at_tick OR NOT (x.ends_after_tick OR x.ae = x.t1)
                OR NOT x.sp->'rows' @> jsonb_build_array(jsonb_build_object(
                       'metric', 'Duration, s', 'wall', round(extract(epoch FROM x.t1 - x.t0)::numeric, 3),
                       'active', x.sp->'active_s'))
           -- (a window the sampler has no tick of says so instead)
           ELSE x.sp IS DISTINCT FROM '{"note": "no workload found: no burst of active sessions of a second or more", "rows": []}'
                AND NOT (x.sp->'rows' = '[]' AND x.sp->>'note' LIKE 'off: no samples in this window%')
      END;

-- operations_cost: an operation's DB cost is its own flow's (9f9e8b0):
-- its tenant's top-level statements of the flow's module writing the
-- relation, here user_created's (INSERT, UPDATE or DELETE of
-- fs01_mod_users.users, read from folio_perf_top_statements' texts); its
-- count the inserts folio_perf_table_activity has for the relation; no
-- share with another operation (the only one of its tenant); the rate
-- over the active span where there is one (mutation: a 'write' flow
-- matching any statement whose first relation it is: fails)
WITH op AS (
    SELECT d.w, d.label, d.ops, d.span, j AS o
    FROM d, jsonb_array_elements(d.ops) j
), x AS (
    SELECT op.*, f.module AS fmod, f.relation AS frel, f.action, s.*, t.inserts
    FROM op
    LEFT JOIN folio_perf_operation_flows f ON f.operation = op.o->>'operation'
    LEFT JOIN LATERAL (
        SELECT sum(t.total_exec_ms) AS own_ms, sum(t.calls) AS own_calls
        FROM folio_perf_top_statements(op.w, 1000) t
        WHERE t.tenant = op.o->>'tenant' AND t.module = f.module
          AND t.query ~* ('^\s*(insert\s+into|update|delete\s+from)\s+' || (op.o->>'tenant') || '_' || f.module
                          || '\.' || f.relation || '\M')) s ON true
    LEFT JOIN ta t ON t.w = op.w AND t.schema = (op.o->>'tenant') || '_' || f.module AND t.relname = f.relation
)
SELECT format('operations_cost: window %s (%s): %s; the flow %s %s.%s, its statements %s ms in %s calls, %s inserts',
              x.w, x.label, x.o, x.action, x.fmod, x.frel, x.own_ms, x.own_calls, x.inserts)
FROM x
WHERE x.o->>'operation' <> 'user_created' OR x.action IS DISTINCT FROM 'write'
   OR (SELECT count(*) FROM folio_perf_operation_flows f WHERE f.operation = x.o->>'operation') <> 1
   OR x.o->>'source' <> format('inserts of %s.%s', x.fmod, x.frel)
   OR (x.o->>'count')::bigint IS DISTINCT FROM x.inserts
   OR abs((x.o->>'db_time_ms')::numeric - coalesce(x.own_ms, 0)::numeric) > 1e-6 * greatest(x.own_ms, 1)
   OR abs((x.o->>'db_time_per_op_ms')::numeric - (x.o->>'db_time_ms')::numeric / (x.o->>'count')::numeric) > 1e-9
   OR (x.o->>'statements_per_op')::numeric <> round(coalesce(x.own_calls, 0) / (x.o->>'count')::numeric, 2)
   OR (x.o->>'shared_db_time_ms')::numeric <> 0 OR x.o->'shared_with' <> 'null'
   OR (SELECT count(*) FROM jsonb_array_elements(x.ops) y WHERE y->>'tenant' = x.o->>'tenant') <> 1
   OR (x.o->>'per_minute_active')::numeric IS DISTINCT FROM
      round((x.o->>'count')::numeric / ((x.span->>'active_s')::numeric / 60), 2)
UNION ALL
SELECT format('operations_cost: window %s (%s): no operation', d.w, d.label)
FROM d WHERE d.label IN ('new and dropped', 'truncate and vacuum full', 'workload')
  AND jsonb_array_length(d.ops) = 0;
};
my %problems;
$checks =~ s/OLD_PARTS/$old_parts/;
for my $l (split /\n/, $node->safe_psql('up', $checks))
{
	my ($c) = $l =~ /^(\w+): / or die "not a check's line: $l";
	push @{ $problems{$c} }, $l;
}
for my $c (sort keys %problems) { die "unknown check $c" unless $checked{$c}; }
is(join("\n", @{ $problems{$_} // [] }), '', "after the update: $checked{$_}") for sort keys %checked;
is($node->safe_psql('up', $listing), $fresh, "with windows stored, the updated objects are a fresh install's");

# pg_dump / pg_restore of the updated database
my $dump = $node->basedir . '/up.dump';
$node->command_ok([ 'pg_dump', '-Fc', '-f', $dump, '-d', $node->connstr('up') ], 'pg_dump of the updated database');
$node->safe_psql('postgres', 'CREATE DATABASE restored');
$node->command_ok([ 'pg_restore', '-d', $node->connstr('restored'), $dump ], 'pg_restore');
same_reports($node->safe_psql('restored', $reports), $after, 'the restored database reports every window the same');

# purge: the same snapshots go on 1.0.0 (the copy made before the update)
# and on the updated and the restored database.  A purge removes the
# snapshots inside a window, so the trend changes the same way in both.
# What the windows say of relations does not change in 1.1.0 (its purge
# folds a removed snapshot's rows into the next one's): 1.0.0's lost a
# table created and dropped between the kept snapshots, and a rewrite only
# a removed snapshot saw.  So the relations' members are compared with
# the same database before its purge, everything else with 1.0.0's purge.
my @rel_members = ('{tables}', '{modules}', '{data_quality}', '{record_counts}',
	'{folio_operations}', '{summary,flags}', '{verdict}');
my $rel_part = q{
SELECT string_agg(w.window_id || ' ' || jsonb_build_object(
           'tables', r.j->'tables', 'modules', r.j->'modules', 'data_quality', r.j->'data_quality',
           'record_counts', r.j->'record_counts', 'folio_operations', r.j->'folio_operations',
           'flags', r.j#>'{summary,flags}')::text, E'\n' ORDER BY w.window_id)
FROM folio_perf_windows w, LATERAL (SELECT folio_perf_report(w.window_id, 'json')::jsonb AS j) r};
(my $reports_norel = $reports) =~ s/- 'generated_at'/"- 'generated_at'" . join('', map { " #- '$_'" } @rel_members)/e
  or die 'no generated_at in the reports query';
my %rel_before = map { $_ => $node->safe_psql($_, $rel_part) } ('up', 'restored', 'up_old');
my $old_purged = $node->safe_psql('up_old', q{SELECT folio_perf_purge('0 seconds')});
cmp_ok($old_purged, '>', 0, "purge on $old removed the snapshots inside windows ($old_purged)");
my $old_reports = $node->safe_psql('up_old', $reports_norel);
isnt($node->safe_psql('up_old', $rel_part), $rel_before{up_old},
	"${old}'s purge changed what windows say of relations (what 1.1.0's fold keeps)");
is($node->safe_psql('up', q{SELECT folio_perf_purge('0 seconds')}), $old_purged,
	'purge after the update removed as many snapshots');
same_reports($node->safe_psql('up', $reports_norel), $old_reports, "after purge, every window reports what ${old}'s purge leaves, relations aside");
same_reports($node->safe_psql('up', $rel_part), $rel_before{up}, 'and says of relations what it said before the purge');
is($node->safe_psql('restored', q{SELECT folio_perf_purge('0 seconds')}), $old_purged,
	'purge on the restored database removed as many snapshots');
same_reports($node->safe_psql('restored', $reports_norel), $old_reports, 'and leaves the same reports');
same_reports($node->safe_psql('restored', $rel_part), $rel_before{restored}, 'and the same relations as before its purge');

# snapshots and windows go on
$node->safe_psql('up', q{INSERT INTO fs01_mod_users.users SELECT g, '{}' FROM generate_series(11, 20) g});
my $wn = $node->safe_psql('up', q{SELECT folio_perf_window(folio_perf_snapshot(), folio_perf_snapshot())});
like($node->safe_psql('up', "SELECT folio_perf_report($wn, 'json')::jsonb ->> 'format_version'"), qr/^\d+$/,
	'windows after the update report');

$node->stop;
done_testing();
