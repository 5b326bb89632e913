# test/t/005_fixture.pl - the FOLIO-like fixture (test/fixture) and the
# workloads (test/workload): builds a 3-tenant fixture, checks its schemas,
# roles, search_paths, relation and seed counts, then runs every workload
# with a small COUNT and checks the exact calls in pg_stat_statements, the
# logins and the application_names.  Needs only pg_stat_statements, not
# folio_perf.  Nothing here depends on timing.
# Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)
use strict;
use warnings;
use Cwd qw(abs_path);
use File::Basename qw(dirname);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

# PGXS runs prove from the repository root with TESTDIR set to it.
my $testdir =
  ($ENV{TESTDIR} && -d "$ENV{TESTDIR}/test/fixture")
  ? "$ENV{TESTDIR}/test"
  : abs_path(dirname(__FILE__) . '/..');
my $build = "$testdir/fixture/build_fixture.sh";
my $run   = "$testdir/workload/run_workload.sh";

my $rows  = 30;    # build_fixture.sh -r
my $parts = 4;     # build_fixture.sh -P
my @tenants = ('fs09000000', 'cs00000int', 'cs00000int_0001');

# Modules and tables of the fixture, from its own list.
my (%modules, %tables_of);
my %global = map { $_ => 1 }
  qw(mod-pubsub/event_descriptor mod-pubsub/messaging_module
  mod-data-import/queue_items mod-search/known_tenant);
open(my $tsv, '<', "$testdir/fixture/tables.tsv") or die "tables.tsv: $!";
<$tsv>;
while (<$tsv>)
{
	chomp;
	my ($module, $table) = split /\t/;
	$modules{$module} = 1;
	push @{ $tables_of{$module} }, $table unless $global{"$module/$table"};
}
close $tsv;
is(scalar(keys %modules), 20, 'tables.tsv has 20 modules');

my $node = PostgreSQL::Test::Cluster->new('fixture');
$node->init;
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'pg_stat_statements'
pg_stat_statements.track = all
pg_stat_statements.max = 5000
compute_query_id = on
log_line_prefix = '%m [%p] app=[%a] user=[%u] '
log_statement = all
});
$node->start;
my @conn = ('-h', $node->host, '-p', $node->port);

sub q1 { return $node->safe_psql('folio', $_[0]); }

# ---- the fixture ---------------------------------------------------------

my ($out, $err) = run_command(
	[ 'bash', $build, '-d', 'folio', '-t', '3', '-r', $rows, '-P', $parts, '-j', '2', @conn ]);
like($out, qr/^fixture folio: 3 tenants, \d+ relations/m, 'fixture built')
  or diag($err);
like($out, qr/^\s+cs00000int_0001\s+20\s+/m, 'the summary lists the tenants');

command_fails_like([ 'bash', $build, '-d', 'folio', '-t', '1', @conn ],
	qr/database "folio" already exists; drop it or use -f/,
	'an existing database is refused');
command_fails_like([ 'bash', $build, '-t', '1', @conn ],
	qr/-d DBNAME is required/, 'usage without -d');

$node->safe_psql('folio', 'CREATE EXTENSION pg_stat_statements');

my $tenant_list = join(',', map { "'$_'" } @tenants);
my @schemas = sort map {
	my $t = $_;
	map { my $m = $_; $m =~ tr/-/_/; "${t}_$m" } keys %modules
} @tenants;
is(q1(qq{SELECT string_agg(nspname, ',' ORDER BY nspname) FROM pg_namespace
	WHERE nspname ~ '_mod_' AND nspname <> 'mod_search__system'}),
	join(',', @schemas), '3 tenants x 20 module schemas');
is(q1(q{SELECT string_agg(n.nspname || '.' || c.relname || ':' || n.nspowner::regrole, ','
	                  ORDER BY n.nspname, c.relname)
	FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
	WHERE c.relkind = 'r' AND n.nspname IN ('pubsub_config', 'data_import_global', 'mod_search__system')}),
	'data_import_global.queue_items:folio_admin,mod_search__system.known_tenant:folio_admin,'
	  . 'pubsub_config.event_descriptor:folio_admin,pubsub_config.messaging_module:folio_admin',
	'non-tenant schemas, owned by the shared login');
is(q1('SELECT string_agg(id, \',\' ORDER BY id) FROM mod_search__system.known_tenant'),
	'cs00000int,cs00000int_0001,fs09000000', 'known_tenant lists the tenants');

# Roles: one LOGIN role per schema, owning it, search_path set, password set
# the way the cluster hashes them, folio_admin a member of each.
my $enc = q1('SHOW password_encryption') eq 'md5' ? 'md5' : 'SCRAM-SHA-256$';
is( q1(qq{SELECT count(*) FROM pg_namespace n JOIN pg_authid r ON r.rolname = n.nspname
	WHERE n.nspname = ANY ('{@{[ join(',', @schemas) ]}}')
	  AND n.nspowner = r.oid AND r.rolcanlogin AND NOT r.rolsuper
	  AND r.rolpassword LIKE '$enc%'
	  AND (SELECT setconfig FROM pg_db_role_setting
	       WHERE setrole = r.oid AND setdatabase = 0) = ARRAY['search_path=' || n.nspname]
	  AND pg_has_role('folio_admin', r.oid, 'MEMBER')}),
	scalar(@schemas),
	'every module schema has its login role: owner, search_path, password, folio_admin member');
is(q1(q{SELECT rolcanlogin AND NOT rolsuper FROM pg_roles WHERE rolname = 'folio_admin'}),
	't', 'folio_admin logs in and is no superuser');
is( $node->safe_psql(
		'folio', 'SHOW search_path',
		extra_params => [ '-U', 'cs00000int_0001_mod_inventory_storage' ]),
	'cs00000int_0001_mod_inventory_storage',
	'an RMB login gets its schema as search_path');

# Tables: exactly those of tables.tsv in every tenant schema, owned by its role.
my $bad = 0;
for my $t (@tenants)
{
	for my $m (sort keys %modules)
	{
		(my $s = "${t}_$m") =~ tr/-/_/;
		my $want = join(',', sort { $a cmp $b } @{ $tables_of{$m} });
		my $got  = q1(qq{SELECT string_agg(relname, ',' ORDER BY relname COLLATE "C")
			FROM pg_class WHERE relnamespace = '$s'::regnamespace
			AND relkind IN ('r', 'p') AND NOT relispartition
			AND relowner = '$s'::regrole});
		if ($got ne $want)
		{
			$bad++;
			diag("$s: want $want\n got $got");
		}
	}
}
is($bad, 0, 'every tenant schema holds exactly its module\'s tables from tables.tsv');

# Relations: per tenant 1496 + 4 per marc_indexers partition (tables,
# indexes, sequences, partitions and their TOAST tables and TOAST indexes).
my $per_tenant = 1496 + 4 * $parts;
for my $t (@tenants)
{
	is( q1(qq{SELECT count(*) + 2 * count(*) FILTER (WHERE c.reltoastrelid <> 0)
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname LIKE '${t}\\_mod\\_%'}),
		$per_tenant, "$t: $per_tenant relations");
}
is( q1(q{SELECT string_agg(c.relname, ',' ORDER BY c.relname)
	FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
	WHERE i.inhparent = 'cs00000int_mod_source_record_storage.marc_indexers'::regclass}),
	'marc_indexers_001,marc_indexers_005,marc_indexers_008,marc_indexers_020',
	"marc_indexers has $parts list partitions");

# Seed data, exact.
my %seed = (
	'mod_inventory_storage.instance'                      => $rows,
	'mod_inventory_storage.holdings_record'               => $rows,
	'mod_inventory_storage.item'                          => 2 * $rows,
	'mod_source_record_storage.records_lb'                => $rows,
	'mod_source_record_storage.raw_records_lb'            => $rows,
	'mod_source_record_storage.marc_records_lb'           => $rows,
	'mod_source_record_storage.marc_indexers'             => 4 * $rows,
	'mod_source_record_storage.snapshots_lb'              => 1,
	'mod_source_record_manager.journal_records'           => $rows,
	'mod_source_record_manager.job_execution'             => 1,
	'mod_source_record_manager.events_processed'          => 0,
	'mod_users.users'                                     => 10,
	'mod_circulation_storage.loan'                        => $rows,
	'mod_circulation_storage.audit_loan'                  => $rows,
	'mod_circulation_storage.request'                     => $rows / 10,
	'mod_circulation_storage.check_in'                    => 0);
for my $t (@tenants)
{
	my $sql = join(' UNION ALL ',
		map { "SELECT '$_', count(*) FROM ${t}_$_" } sort keys %seed);
	my %got = map { split /\|/ } split /\n/, q1($sql);
	is_deeply(\%got, \%seed, "$t: seed row counts");
}
is( q1(q{SELECT count(*) FROM fs09000000_mod_circulation_storage.loan
	WHERE jsonb->'status'->>'name' = 'Open'}),
	$rows / 2, 'half the seeded loans are open');
is( $node->safe_psql(
		'folio',
		q{SELECT string_agg("instanceId" || ':' || jsonb_array_length(holdings) || ':'
		    || jsonb_array_length(items), ',' ORDER BY "instanceId")
		  FROM get_items_and_holdings_view(
		    '{00000001-0000-4000-8000-100000000001,00000001-0000-4000-8000-100000000002}', false)},
		extra_params => [ '-U', 'fs09000000_mod_inventory_storage' ]),
	'00000001-0000-4000-8000-100000000001:1:2,00000001-0000-4000-8000-100000000002:1:2',
	'get_items_and_holdings_view joins instance, holdings and items');

# ---- the workloads -------------------------------------------------------

# Calls and rows of top-level statements whose text matches, per role, as
# "role:calls" sorted; $exact compares the whole text.
sub calls
{
	my ($pattern, $exact) = @_;
	my $cond = $exact ? "query = \$q\$$pattern\$q\$" : "query LIKE \$q\$$pattern\$q\$";
	return q1(qq{SELECT string_agg(userid::regrole || ':' || calls, ',' ORDER BY userid::regrole::text, calls)
		FROM pg_stat_statements WHERE toplevel AND dbid = (SELECT oid FROM pg_database
		WHERE datname = current_database()) AND $cond});
}

sub log_lines
{
	my ($offset, $re) = @_;
	my @l = grep { /$re/ } split /\n/, slurp_file($node->logfile, $offset);
	return scalar(@l);
}

q1('SELECT pg_stat_statements_reset()');
my $log = -s $node->logfile;

# di_create, two tenants at once, 7 records each.
($out, $err) = run_command(
	[ 'bash', $run, '-d', 'folio', '-w', 'di_create', '-n', '7', '-t', 'fs09000000,cs00000int_0001', @conn ]);
like($out, qr/== di_create done/, 'di_create ran') or diag("$out\n$err");
like($out,
	qr/^fs09000000 +folio_admin +PostgreSQL JDBC Driver +fs09000000_mod_source_record_storage +7  insert into "marc_records_lb" \("id", "content"\) values \(cast\(\$1 as uuid\), cast\(\$2 as jsonb\)\) on conflict \("id"\) do update set "content" = cast\(\$3 as jsonb\)$/m,
	'the driver lists the marc insert with its count and login');

# From 18 pg_stat_statements jumbles relations by name: the same statement
# of two tenants under one login is one entry.
my $pg18 = $node->pg_version >= 18;
my $two = $pg18 ? 'folio_admin:14' : 'folio_admin:7,folio_admin:7';
my $marc = q{insert into "marc_records_lb" ("id", "content") values (cast($1 as uuid), cast($2 as jsonb)) on conflict ("id") do update set "content" = cast($3 as jsonb)};
is(calls($marc, 1), $two,
	'same unqualified marc insert text: two entries (one per tenant; one from 18), 7 calls each, as folio_admin');
is( q1(qq{SELECT count(DISTINCT queryid) FROM pg_stat_statements WHERE query = \$q\$$marc\$q\$}),
	$pg18 ? '1' : '2', 'the two entries have different queryids (the same from 18)');
is(calls('insert into "records_lb" %'), $two, 'records_lb insert 7 per tenant');
is(calls('insert into "raw_records_lb" %'), $two, 'raw_records_lb insert 7 per tenant');
is(calls('update "records_lb" %'), $two, 'SRS reactive update 7 per tenant');
for my $t ('fs09000000', 'cs00000int_0001')
{
	is( calls("INSERT INTO ${t}_mod_source_record_manager.events_processed (handler_id, event_id) VALUES (\$1, \$2)", 1),
		"${t}_mod_source_record_manager:7", "$t: events_processed insert 7, as the SRM role");
	is( calls("INSERT INTO ${t}_mod_source_record_manager.journal_records (id, job_execution_id, source_id, source_record_order, entity_type, entity_id, entity_hrid, action_type, action_status, error, action_date, title, instance_id, holdings_id, order_id, permanent_location_id, tenant_id) VALUES (\$1, \$2, \$3, \$4, \$5, \$6, \$7, \$8, \$9, \$10, \$11, \$12, \$13, \$14, \$15, \$16, \$17)", 1),
		"${t}_mod_source_record_manager:7", "$t: 17-column journal_records insert 7");
	is( calls("INSERT INTO ${t}_mod_inventory_storage.instance (id, jsonb) VALUES (\$1, \$2) RETURNING id", 1),
		"${t}_mod_inventory_storage:7", "$t: instance insert 7, as the inventory role");
	is( calls("INSERT INTO ${t}_mod_source_record_manager.job_execution %"),
		"${t}_mod_source_record_manager:1", "$t: the SRM role created the data-import job once");
	is( calls("UPDATE ${t}_mod_source_record_manager.job_execution SET %"),
		"${t}_mod_source_record_manager:1", "$t: and committed it once");
	is( q1(qq{SELECT count(*) || ',' || min(status::text) || ',' || min(subordination_type::text) || ','
		|| min(progress_total) || ',' || min(progress_current) || ',' || min(file_name) || ','
		|| bool_and(completed_date > started_date) || ',' || min(hrid)
		FROM ${t}_mod_source_record_manager.job_execution WHERE id <> '00000008-0000-4000-8000-100000000001'}),
		'1,COMMITTED,PARENT_SINGLE,7,7,7.mrc,true,2', "$t: one job, committed, 7 records, started before it completed, hrid 2");
	is( q1(qq{SELECT count(*) FROM ${t}_mod_source_record_manager.journal_records j
		JOIN ${t}_mod_source_record_manager.job_execution e ON e.id = j.job_execution_id
		WHERE e.hrid = 2}), '7', "$t: the journal records belong to the run's job");
	is( q1(qq{SELECT (SELECT count(*) FROM ${t}_mod_source_record_storage.marc_records_lb) || ','
		|| (SELECT count(*) FROM ${t}_mod_source_record_manager.events_processed) || ','
		|| (SELECT count(*) FROM ${t}_mod_source_record_manager.journal_records) || ','
		|| (SELECT count(*) FROM ${t}_mod_inventory_storage.instance)}),
		join(',', $rows + 7, 7, $rows + 7, $rows + 7), "$t: 7 new records stored");
}
is( q1(q{SELECT count(*) || ' entries, ' || sum(calls) || ' calls' FROM pg_stat_statements
	WHERE toplevel AND userid <> (SELECT oid FROM pg_roles WHERE rolname = current_user)}),
	$pg18 ? '14 entries, 102 calls' : '18 entries, 102 calls',
	'nothing else ran at top level: 7 statements x 2 tenants, 7 records, and the job created and committed'
	  . ' (the 4 shared-login statements one entry each from 18)')
  or diag(q1('SELECT userid::regrole, calls, left(query, 80) FROM pg_stat_statements WHERE toplevel'));
is( q1(q{SELECT string_agg(calls::text, ',') FROM pg_stat_statements
	WHERE NOT toplevel AND query LIKE 'INSERT INTO %_mod_source_record_storage.marc_indexers%'}),
	$pg18 ? '14' : '7,7',
	'the marc_indexers trigger insert is nested (toplevel = false), 7 per tenant (one entry from 18)');
is( log_lines($log, qr/app=\[PostgreSQL JDBC Driver\] user=\[folio_admin\] LOG:  statement: insert into "marc_records_lb"/),
	14, 'SRS JDBC statements carry the driver default application_name');
is( log_lines($log, qr/app=\[mod-source-record-storage-5\.9\.0\] user=\[folio_admin\] LOG:  statement: update "records_lb"/),
	14, 'SRS reactive statements carry mod-source-record-storage-5.9.0');
is( log_lines($log, qr/app=\[mod-source-record-manager-3\.8\.0\] user=\[cs00000int_0001_mod_source_record_manager\] LOG:  statement: INSERT INTO cs00000int_0001_mod_source_record_manager\.journal_records/),
	7, 'SRM logs in as its RMB role with its application_name');

# di_update on a third tenant: the same statements on existing records plus
# the instance update.
q1('SELECT pg_stat_statements_reset()');
($out, $err) = run_command(
	[ 'bash', $run, '-d', 'folio', '-w', 'di_update', '-n', '5', '-t', 'cs00000int', @conn ]);
like($out, qr/== di_update done/, 'di_update ran') or diag("$out\n$err");
is(calls($marc, 1), 'folio_admin:5', 'di_update: marc insert 5');
is( calls('UPDATE cs00000int_mod_inventory_storage.instance SET jsonb = $1::jsonb WHERE id=$2', 1),
	'cs00000int_mod_inventory_storage:5', 'di_update: the instance UPDATE of the reports, 5');
is( calls('INSERT INTO cs00000int_mod_source_record_manager.journal_records %'),
	'cs00000int_mod_source_record_manager:5', 'di_update: journal insert 5');
is( q1(q{SELECT calls FROM pg_stat_statements
	WHERE NOT toplevel AND query LIKE 'DELETE FROM cs00000int_mod_source_record_storage.marc_indexers%'}),
	'5', 'di_update: existing records re-indexed (nested DELETE) 5');
is( q1(q{SELECT count(*) FROM cs00000int_mod_source_record_storage.marc_records_lb}),
	$rows, 'di_update updated records, added none');

# cico: 6 check-out/check-in cycles, 2 clients per pool.
q1('SELECT pg_stat_statements_reset()');
$log = -s $node->logfile;
($out, $err) = run_command(
	[ 'bash', $run, '-d', 'folio', '-w', 'cico', '-n', '6', '-c', '2', '-t', 'fs09000000', @conn ]);
like($out, qr/== cico done/, 'cico ran') or diag("$out\n$err");
my $inv  = 'fs09000000_mod_inventory_storage';
my $circ = 'fs09000000_mod_circulation_storage';
is(calls("SELECT jsonb,id FROM $inv.item WHERE lower(item.jsonb->>\$1) LIKE lower(\$2) LIMIT \$3", 1),
	"$inv:12", 'cico: item by barcode 12 (check-out and check-in)');
is(calls("UPDATE $inv.item SET jsonb = \$1::jsonb WHERE id=\$2", 1), "$inv:12", 'cico: item status update 12');
is(calls("INSERT INTO $circ.loan (id, jsonb) VALUES (\$1, \$2) RETURNING id", 1), "$circ:6", 'cico: loan insert 6');
is(calls("INSERT INTO $circ.patron_action_session %"), "$circ:6", 'cico: patron action session 6');
is(calls("SELECT jsonb,id FROM $circ.request %"), "$circ:6", 'cico: request queue 6');
is(calls("INSERT INTO $circ.check_in (id, jsonb) VALUES (\$1, \$2) RETURNING id", 1), "$circ:6", 'cico: check-in 6');
is(calls("SELECT jsonb,id FROM $circ.loan %"), "$circ:6", 'cico: open loan lookup 6');
is(calls("UPDATE $circ.loan SET jsonb = \$1::jsonb WHERE id=\$2", 1), "$circ:6", 'cico: loan close 6');
is(calls('SELECT jsonb,id FROM fs09000000_mod_users.users %'), 'fs09000000_mod_users:6', 'cico: patron by barcode 6');
is( q1(qq{SELECT sum(rows) FROM pg_stat_statements WHERE query LIKE 'SELECT jsonb,id FROM $circ.loan %'}),
	'6', 'cico: each check-in found its open loan');
is( q1(qq{SELECT calls FROM pg_stat_statements WHERE NOT toplevel AND query LIKE 'INSERT INTO $circ.audit_loan%'}),
	'12', 'cico: nested audit_loan insert 12');
is( q1(qq{SELECT count(*) || ',' || count(*) FILTER (WHERE jsonb->'status'->>'name' = 'Open') FROM $circ.loan}),
	($rows + 6) . ',' . ($rows / 2), 'cico: 6 loans opened and closed');
is( log_lines($log, qr/app=\[mod-circulation-storage-17\.2\.0\] user=\[$circ\] LOG:  statement: /),
	36, 'circulation storage: 36 statements under its role and application_name');

# rtac
q1('SELECT pg_stat_statements_reset()');
$log = -s $node->logfile;
($out, $err) = run_command(
	[ 'bash', $run, '-d', 'folio', '-w', 'rtac', '-n', '4', '-t', 'cs00000int_0001', @conn ]);
like($out, qr/== rtac done/, 'rtac ran') or diag("$out\n$err");
is(calls('select * from get_items_and_holdings_view($1,$2)', 1),
	'cs00000int_0001_mod_inventory_storage:4', 'rtac: 4 calls, unqualified, as the inventory role');
is( log_lines($log, qr/app=\[mod-inventory-storage-27\.1\.0\] user=\[cs00000int_0001_mod_inventory_storage\] LOG:  statement: select \* from get_items_and_holdings_view/),
	4, 'rtac: application_name mod-inventory-storage-27.1.0');

command_fails_like([ 'bash', $run, '-d', 'folio', '-w', 'rtac', '-n', '4', '-t', 'nosuch', @conn ],
	qr/no such tenant in "folio": nosuch/, 'unknown tenant refused');
command_fails_like([ 'bash', $run, '-d', 'folio', '-w', 'cico', '-n', '5', '-c', '2', '-t', 'fs09000000', @conn ],
	qr/must be a multiple of CLIENTS/, 'COUNT not a multiple of CLIENTS refused');

$node->stop;
done_testing();
