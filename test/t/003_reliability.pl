# test/t/003_reliability.pl - concurrent snapshots, windows and purge;
# pg_dump/pg_restore keeps every snapshot and window; the upgrade path.
# Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('reliability');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'pg_stat_statements,folio_perf'
compute_query_id = on
folio_perf.sample_interval = 0
max_connections = 40
deadlock_timeout = 100ms
});
$node->start;
$node->safe_psql('postgres', q{
CREATE EXTENSION pg_stat_statements;
CREATE EXTENSION folio_perf;
CREATE SCHEMA fs01_mod_users;
CREATE TABLE fs01_mod_users.users (id serial PRIMARY KEY, jsonb jsonb);
});

# 1. Eight sessions take snapshots and windows while a ninth purges.
my $rounds = 15;
my @workers;
for my $i (1 .. 8)
{
	my $sql = '';
	for my $r (1 .. $rounds)
	{
		$sql .= "INSERT INTO fs01_mod_users.users (jsonb) VALUES ('{}');\n";
		if ($i % 2)
		{
			$sql .= "SELECT folio_perf_snapshot('w$i r$r');\n";
		}
		else
		{
			$sql .= "SELECT folio_perf_window(folio_perf_snapshot('a$i r$r'), folio_perf_snapshot('b$i r$r'));\n";
		}
	}
	my ($out, $err) = ('', '');
	my $h = IPC::Run::start(
		[ 'psql', '-X', '-v', 'ON_ERROR_STOP=1', '-d', $node->connstr('postgres'), '-c', $sql ],
		'>', \$out, '2>', \$err);
	push @workers, [ $h, \$out, \$err, $i ];
}
my ($pout, $perr) = ('', '');
my $purger = IPC::Run::start(
	[ 'psql', '-X', '-At', '-v', 'ON_ERROR_STOP=1', '-d', $node->connstr('postgres'),
	  map { ('-c', "SELECT pg_sleep(0.2)", '-c', "SELECT folio_perf_purge('0 seconds')") } 1 .. 20 ],
	'>', \$pout, '2>', \$perr);
my $errors = 0;
for my $w (@workers)
{
	if (!$w->[0]->finish)
	{
		diag("worker $w->[3]: ${$w->[2]}");
		$errors++;
	}
}
my $purge_ok = $purger->finish;
is($errors, 0, 'eight concurrent sessions took snapshots and windows without error');
ok($purge_ok, 'purge ran alongside without error') or diag($perr);
my $purged = 0;
$purged += $_ for ($pout =~ /^\s*(\d+)\s*$/mg);
ok($purged > 0, "purge deleted snapshots meanwhile ($purged)");

# every window still has both its snapshots; no duplicate windows
is($node->safe_psql('postgres', q{
SELECT count(*) FROM folio_perf_windows w
WHERE NOT EXISTS (SELECT 1 FROM folio_perf_snapshots s WHERE s.snap_id = w.begin_snap)
   OR NOT EXISTS (SELECT 1 FROM folio_perf_snapshots s WHERE s.snap_id = w.end_snap)}),
	'0', 'no window lost a snapshot to the purge');
is($node->safe_psql('postgres', 'SELECT count(*) FROM folio_perf_windows'), 4 * $rounds,
	'every window was recorded once');
is($node->safe_psql('postgres', q{
SELECT count(*) FROM (SELECT begin_snap, end_snap FROM folio_perf_windows
                      GROUP BY 1, 2 HAVING count(*) > 1) d}), '0', 'no duplicate windows');
# the snapshots of one database form a chain: each statement key has at most
# one row per snapshot and no row refers to a missing snapshot
is($node->safe_psql('postgres', q{
SELECT count(*) FROM folio_perf_data.stmt x
WHERE NOT EXISTS (SELECT 1 FROM folio_perf_data.snapshot s WHERE s.snap_id = x.snap_id)}),
	'0', 'no orphan statement rows');
is($node->safe_psql('postgres', q{
SELECT count(*) FROM folio_perf_data.rel_chunk x
WHERE NOT EXISTS (SELECT 1 FROM folio_perf_data.snapshot s WHERE s.snap_id = x.snap_id)
   OR EXISTS (SELECT 1 FROM unnest(x.keys) u(k)
              WHERE NOT EXISTS (SELECT 1 FROM folio_perf_data.rel_key k WHERE k.rel_key_id = u.k))}),
	'0', 'no orphan relation elements (rel_chunk has no foreign keys: capture and purge keep them)');
# windows report exactly after the storm: a window around one insert has
# it once, with its one row and the table's one insert
my $w = $node->safe_psql('postgres', q{
SELECT folio_perf_snapshot('x') AS x \gset
INSERT INTO fs01_mod_users.users (jsonb) VALUES ('{"after":"storm"}');
SELECT pg_stat_force_next_flush();
SELECT folio_perf_window(:x, folio_perf_snapshot('y'));});
$w = (split /\n/, $w)[-1];
is($node->safe_psql('postgres', qq{
SELECT string_agg(calls || ' ' || rows, ',') FROM folio_perf_top_statements($w, 100)
WHERE query LIKE 'INSERT INTO fs01_mod_users.users%'}),
	'1 1', 'after the storm a window around one insert has it exactly once');
is($node->safe_psql('postgres', qq{
SELECT inserts FROM folio_perf_table_activity($w, 100) WHERE relname = 'users'}),
	'1', 'and the table its one insert');

# 1b. Two sessions store a fresh window's facts at once, each asking for
# the kinds in the other's order, in one transaction each: the first holds
# rel_delta and table_rows uncommitted while the second takes
# health_tables (whose computation needs rel_delta) and then wants
# table_rows, and the first wants health_tables.  Storing never waits for
# another session (it computes instead), so neither waits for the other:
# no deadlock, the same rows on both sides, each kind stored once.
$node->safe_psql('postgres', q{INSERT INTO fs01_mod_users.users (jsonb) SELECT '{}' FROM generate_series(1, 50)});
my $fw = $node->safe_psql('postgres', q{
SELECT folio_perf_window(folio_perf_snapshot('facts a'),
                         (SELECT folio_perf_snapshot('facts b')
                          FROM (SELECT pg_stat_force_next_flush()) f,
                               (SELECT count(*) FROM fs01_mod_users.users WHERE id > 0) u))});
my ($fb, $fe) = split /\|/, $node->safe_psql('postgres',
	"SELECT begin_snap, end_snap FROM folio_perf_data.window WHERE window_id = $fw");
my $tr = "SELECT 'tr', count(*), sum(inserts) FROM folio_perf_data.table_rows($fb, $fe)";
my $th = "SELECT 'th', count(*), sum(n_tup_ins) FROM folio_perf_table_health($fw)";
my @facts;
for my $order ([ $tr, 'SELECT pg_sleep(1.5)', $th ], [ 'SELECT pg_sleep(0.5)', $th, 'SELECT pg_sleep(1.5)', $tr ])
{
	my ($out, $err) = ('', '');
	my $h = IPC::Run::start(
		[ 'psql', '-X', '-At', '-v', 'ON_ERROR_STOP=1', '-d', $node->connstr('postgres'),
		  '-c', join(";\n", 'BEGIN', 'SET deadlock_timeout = 100', @$order, 'COMMIT') ],
		'>', \$out, '2>', \$err);
	push @facts, [ $h, \$out, \$err ];
}
my %seen;
for my $f (@facts)
{
	ok($f->[0]->finish, 'a session storing window facts alongside another finished without error')
	  or diag(${ $f->[2] });
	$seen{$1} .= "$2;" while ${ $f->[1] } =~ /^(t[rh])\|(.*)$/mg;
}
for my $k ('tr', 'th')
{
	my @v = split /;/, $seen{$k} // '';
	is(scalar(@v), 2, "both sessions read $k");
	is($v[0], $v[1], "both sessions got the same $k rows ($v[0])");
}
is($node->safe_psql('postgres', qq{
SELECT string_agg(kind || '=' || n, ',' ORDER BY kind)
FROM (SELECT kind, count(*) AS n FROM folio_perf_data.fact_pair
      WHERE begin_snap = $fb AND end_snap = $fe GROUP BY kind) x}),
	'health_tables=1,rel_delta=1,table_rows=1', 'each kind of the window stored once');
# (the statements' differences are not among them: folio_perf_table_health
# reads them only for a table with a sequential-scan finding, and none has
# one here, whatever join order the planner picks)
# and stored once: each kind's rows are those its pair row counts, not twice
is($node->safe_psql('postgres', qq{
SELECT string_agg(p.kind || '=' || (p.n_rows = x.n), ',' ORDER BY p.kind)
FROM folio_perf_data.fact_pair p
JOIN (SELECT 'rel_delta' AS kind, count(*) AS n FROM folio_perf_data.fact_rel
      WHERE begin_snap = $fb AND end_snap = $fe
      UNION ALL SELECT 'table_rows', count(*) FROM folio_perf_data.fact_table_rows
      WHERE begin_snap = $fb AND end_snap = $fe
      UNION ALL SELECT 'health_tables', count(*) FROM folio_perf_data.fact_health_tables
      WHERE begin_snap = $fb AND end_snap = $fe) x ON x.kind = p.kind
WHERE p.begin_snap = $fb AND p.end_snap = $fe}),
	'health_tables=true,rel_delta=true,table_rows=true', 'each kind\'s rows stored once, as many as its pair row counts');

# 2. pg_dump / pg_restore keeps every snapshot and window
my $w1 = $node->safe_psql('postgres', q{SELECT folio_perf_begin('dumped', '{"release":"R1"}')});
$node->safe_psql('postgres', q{INSERT INTO fs01_mod_users.users (jsonb) SELECT '{}' FROM generate_series(1, 7)});
$node->safe_psql('postgres', 'SELECT pg_stat_force_next_flush()');
$node->safe_psql('postgres', 'SELECT folio_perf_end()');
my $before = $node->safe_psql('postgres', qq{
SELECT (SELECT count(*) FROM folio_perf_snapshots) || ' ' || (SELECT count(*) FROM folio_perf_windows)
    || ' ' || (SELECT string_agg(calls::text || ':' || query, ';' ORDER BY query)
               FROM folio_perf_top_statements($w1, 50) WHERE module = 'mod_users')});
my $dump = $node->basedir . '/fp.dump';
$node->command_ok([ 'pg_dump', '-Fc', '-f', $dump, '-d', $node->connstr('postgres') ], 'pg_dump');
$node->safe_psql('postgres', 'CREATE DATABASE restored');
$node->command_ok([ 'pg_restore', '-d', $node->connstr('restored'), $dump ], 'pg_restore');
my $after = $node->safe_psql('restored', qq{
SELECT (SELECT count(*) FROM folio_perf_snapshots) || ' ' || (SELECT count(*) FROM folio_perf_windows)
    || ' ' || (SELECT string_agg(calls::text || ':' || query, ';' ORDER BY query)
               FROM folio_perf_top_statements($w1, 50) WHERE module = 'mod_users')});
is($after, $before, 'restored database has the same snapshots, windows and report');
like($node->safe_psql('restored', 'SELECT folio_perf_snapshot()'), qr/^\d+$/,
	'snapshots continue in the restored database');

# 3. the upgrade path: every older version reaches the default one and keeps
# its data (there is one version today; the loop runs for each added)
my ($default) = $node->safe_psql('postgres',
	q{SELECT default_version FROM pg_available_extensions WHERE name = 'folio_perf'});
my @versions = split /\n/, $node->safe_psql('postgres',
	q{SELECT version FROM pg_available_extension_versions WHERE name = 'folio_perf' ORDER BY version});
ok((grep { $_ eq $default } @versions), "default version $default has an install script");
# the source version of every upgrade script installed is walked below (a
# script whose version cannot be installed first would go untested: this
# fails then)
my $extdir = $node->config_data('--sharedir') . '/extension';
my %src = map { m{/folio_perf--([^/]+?)--[^/]+\.sql$} ? ($1 => 1) : () } glob("$extdir/folio_perf--*--*.sql");
my @sources = sort keys %src;
my @walked;
for my $v (grep { $_ ne $default } @versions)
{
	push @walked, $v;
	is($node->safe_psql('postgres', qq{
SELECT count(*) FROM pg_extension_update_paths('folio_perf')
WHERE source = '$v' AND target = '$default' AND path IS NOT NULL}), '1', "update path $v -> $default");
	$node->safe_psql('postgres', "CREATE DATABASE up_$v" =~ s/\./_/gr);
	my $db = "up_$v" =~ s/\./_/gr;
	$node->safe_psql($db, "CREATE EXTENSION pg_stat_statements; CREATE EXTENSION folio_perf VERSION '$v'");
	my $win = $node->safe_psql($db, 'SELECT folio_perf_window(folio_perf_snapshot(), folio_perf_snapshot())');
	$node->safe_psql($db, 'ALTER EXTENSION folio_perf UPDATE');
	is($node->safe_psql($db, "SELECT count(*) FROM folio_perf_windows WHERE window_id = $win"), '1',
		"data kept across ALTER EXTENSION UPDATE from $v");
}
my %walked = map { $_ => 1 } @walked;
is(join(' ', grep { !$walked{$_} } @sources), '',
	'every version with an upgrade script is walked to ' . $default
	  . ' (' . (join(' ', @sources) || 'no upgrade script yet') . ')');

$node->stop;
done_testing();
