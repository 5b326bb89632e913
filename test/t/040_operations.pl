# test/t/040_operations.pl - FOLIO operations: the data-import jobs of a
# window (folio_perf_data_import_jobs) and the operations counted from the
# window's own statistics with their DB cost (folio_perf_operations), on
# the fixture with its workloads: exact counts, the overlap of jobs with
# the window, a tenant without the module's schema, a user-defined
# operation, the definitions' privileges and dump, the report and compare
# sections, and tenant tables that try to run code as the reader.
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

my $node = PostgreSQL::Test::Cluster->new('operations');
$node->init;
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'pg_stat_statements,folio_perf'
pg_stat_statements.track = all
compute_query_id = on
folio_perf.sample_interval = 0
});
$node->start;
my @conn = ('-h', $node->host, '-p', $node->port);

sub q1 { return $node->safe_psql('folio', $_[0]); }

sub try_sql
{
	my ($sql, @opts) = @_;
	my ($ret, $out, $err) = $node->psql('folio', $sql, @opts);
	return ($ret, $out, $err);
}

my ($out, $err) = run_command(
	[ 'bash', $build, '-d', 'folio', '-T', 'fs09000000,cs00000int_0001', '-r', '20', '-P', '2', '-q', @conn ]);
like($out, qr/^fixture folio: 2 tenants/m, 'fixture built') or diag($err);
q1(q{
CREATE EXTENSION pg_stat_statements;
CREATE EXTENSION folio_perf;
-- a tenant with circulation only: no mod_source_record_manager schema
CREATE SCHEMA fs09000077_mod_circulation_storage;
CREATE TABLE fs09000077_mod_circulation_storage.loan (id uuid PRIMARY KEY, jsonb jsonb NOT NULL);
CREATE TABLE fs09000077_mod_circulation_storage.check_in (id uuid PRIMARY KEY, jsonb jsonb NOT NULL);
CREATE ROLE opswriter LOGIN;
GRANT folio_perf_writer TO opswriter;
CREATE ROLE opsreader LOGIN;
GRANT folio_perf_reader TO opsreader;
});

# ---- window A: a data import of 12 records and 6 check-out/check-in
# cycles on fs09000000; 3 check-outs and 5 check-ins on fs09000077
my $wa = q1(q{SELECT folio_perf_begin('DI 12 + CICO 6', '{"release":"Poppy"}')});
($out, $err) = run_command(
	[ 'bash', $run, '-d', 'folio', '-w', 'di_create', '-n', '12', '-t', 'fs09000000', '-F', '12K.mrc', @conn ]);
like($out, qr/== di_create done/, 'di_create ran') or diag("$out\n$err");
like($out, qr/^fs09000000 +fs09000000_mod_source_record_manager +mod-source-record-manager-3\.8\.0 +\(role default\) +1  UPDATE fs09000000_mod_source_record_manager\.job_execution SET status = \$1/m,
	'the driver lists the job statements with their one call');
($out, $err) = run_command(
	[ 'bash', $run, '-d', 'folio', '-w', 'cico', '-n', '6', '-c', '2', '-t', 'fs09000000', @conn ]);
like($out, qr/== cico done/, 'cico ran') or diag("$out\n$err");
q1(q{INSERT INTO fs09000077_mod_circulation_storage.loan
	SELECT gen_random_uuid(), '{"status": {"name": "Open"}}' FROM generate_series(1, 3)});
q1(q{INSERT INTO fs09000077_mod_circulation_storage.check_in
	SELECT gen_random_uuid(), '{}' FROM generate_series(1, 5)});
is(q1("SELECT folio_perf_end($wa)"), $wa, 'window A ended');

my $job = 'fs09000000_mod_source_record_manager.job_execution';
is( q1(qq{SELECT j.tenant || '|' || j.file_name || '|' || j.job_profile || '|' || j.status || '|'
	|| j.records || '|' || j.overlap || '|' || (j.job_id = e.id) || '|' || (j.hrid = e.hrid) || '|'
	|| (j.started = e.started_date) || '|' || (j.completed = e.completed_date) || '|'
	|| (j.duration = e.completed_date - e.started_date) || '|'
	|| (j.records_per_minute = round(12 / (extract(epoch FROM e.completed_date - e.started_date) / 60), 1))
	FROM folio_perf_data_import_jobs($wa) j JOIN $job e ON e.file_name = '12K.mrc'}),
	'fs09000000|12K.mrc|PTF - Create 2|COMMITTED|12|whole|true|true|true|true|true|true',
	'the job: 12 records, the span of the job, records per minute of that span, wholly inside');
is(q1("SELECT count(*) FROM folio_perf_data_import_jobs($wa)"), '1',
	'one job: the seeded job of 2024 did not run in the window');
# (jobs are read when asked for: window B's jobs below, made to have
# started an hour ago, will show in window A too; later checks of window A
# look at fs09000000 only)

# "tenant:operation:count" of a window
sub ops
{
	my ($w) = @_;
	return q1(qq{SELECT string_agg(tenant || ':' || operation || ':' || count, ',')
		FROM folio_perf_operations($w)});
}
is( ops($wa),
	'fs09000000:check_in:6,fs09000000:check_out:6,fs09000000:instance_created:12,'
	. 'fs09000000:record_imported:12,fs09000077:check_in:5,fs09000077:check_out:3',
	'counts: 12 records imported, 6 check-outs and check-ins on fs09000000, 3 and 5 on fs09000077; '
	. 'nothing for the idle tenant, no record_imported where there is no mod_source_record_manager');
like( q1(qq{SELECT source FROM folio_perf_operations($wa) WHERE tenant = 'fs09000000' AND operation = 'record_imported'}),
	qr/^records of 1 data-import job completed in the window \(mod_source_record_manager\.job_execution\)$/,
	'record_imported counted from the job');
is( q1(qq{SELECT source FROM folio_perf_operations($wa) WHERE tenant = 'fs09000077' AND operation = 'check_out'}),
	'inserts of mod_circulation_storage.loan', 'check_out counted from the loan inserts');

# the tenant's attributed DB time, statements, rows written, WAL
my $tenant_cost = qq{
	WITH st AS (SELECT tenant, sum(total_exec_ms) AS ms, sum(calls) AS calls, sum(wal_bytes) AS wal
	            FROM folio_perf_top_statements($wa, 100000) GROUP BY tenant),
	     wr AS (SELECT tenant, sum(inserts + updates + deletes) AS w
	            FROM folio_perf_module_activity($wa) GROUP BY tenant),
	     w AS (SELECT extract(epoch FROM duration) AS s FROM folio_perf_windows WHERE window_id = $wa)};
is( q1(qq{$tenant_cost
	SELECT string_agg(o.operation || ':' || (abs(o.tenant_db_time_per_op_ms - st.ms / o.count) < 1e-9) || ':'
	                  || (o.db_time_ms < st.ms) || ':'
	                  || (o.per_minute = round(o.count / (w.s / 60), 2)), ',' ORDER BY o.operation)
	FROM folio_perf_operations($wa) o JOIN st USING (tenant) JOIN wr USING (tenant), w
	WHERE o.tenant = 'fs09000000'}),
	'check_in:true:true:true,check_out:true:true:true,'
	. 'instance_created:true:true:true,record_imported:true:true:true',
	'tenant DB time per record = the tenant\'s attributed DB time / 12; the DB time of its own flow is less; per minute of the window');
# the own flow of a check-out (137_operation_cost.sql): 6 cycles of
# loan insert, patron_action_session insert, users select (1 each), item
# select and update (2 each, half of them check-out's), request select
# (1, half): 5.5 statements and 3 rows written per check-out
is( q1(qq{SELECT statements_per_op || ':' || rows_written_per_op || ':' || shared_with FROM folio_perf_operations($wa)
	WHERE tenant = 'fs09000000' AND operation = 'check_out'}),
	'5.50:3.00:check_in', 'a check-out: 5.5 statements and 3 rows of its own flow, some shared with check-in');
is( q1(qq{SELECT db_time_ms > 0 AND statements_per_op >= 6.5 AND statements_per_op < 7 FROM folio_perf_operations($wa)
	WHERE tenant = 'fs09000000' AND operation = 'record_imported'}),
	't', 'an imported record cost DB time and the 7 statements of the workload, the instance insert shared half with instance_created');

# ---- window B: jobs that overlap the window in every way, on cs00000int_0001
my $sj = 'cs00000int_0001_mod_source_record_manager.job_execution';
sub job_sql
{
	my ($id, $sub, $file, $status, $total, $started, $completed, $deleted) = @_;
	$completed //= 'NULL';
	$deleted   //= 'false';
	return qq{INSERT INTO $sj (id, hrid, parent_job_id, subordination_type, file_name,
		progress_current, progress_total, started_date, completed_date, status, ui_status,
		job_profile_name, is_deleted)
		VALUES ('$id', nextval('cs00000int_0001_mod_source_record_manager.job_execution_hr_id_sequence'),
		'00000088-0000-4000-8000-100000000004', '$sub', '$file', 0, $total, $started, $completed,
		'$status', 'RUNNING', 'PTF - Create 2', $deleted);};
}
q1(job_sql('00000088-0000-4000-8000-100000000001', 'PARENT_SINGLE', 'spans.mrc', 'PROCESSING_IN_PROGRESS', 100,
		"now() - interval '1 hour'")
	. job_sql('00000088-0000-4000-8000-100000000002', 'PARENT_SINGLE', 'ended.mrc', 'PROCESSING_IN_PROGRESS', 40,
		"now() - interval '1 hour'")
	. job_sql('00000088-0000-4000-8000-100000000003', 'PARENT_SINGLE', 'before.mrc', 'COMMITTED', 30,
		"now() - interval '2 hours'", "now() - interval '1 hour'"));
my $wb = q1(q{SELECT folio_perf_begin('jobs', '{"release":"Quesnelia"}')});
q1(qq{UPDATE $sj SET status = 'COMMITTED', progress_current = 40, completed_date = clock_timestamp()
	WHERE file_name = 'ended.mrc'});
q1(job_sql('00000088-0000-4000-8000-100000000004', 'COMPOSITE_PARENT', 'started.mrc', 'PARSING_IN_PROGRESS', 500,
		'clock_timestamp()')
	. job_sql('00000088-0000-4000-8000-100000000005', 'COMPOSITE_CHILD', 'started_1.mrc', 'COMMITTED', 250,
		'clock_timestamp()', 'clock_timestamp()')
	. job_sql('00000088-0000-4000-8000-100000000006', 'PARENT_MULTIPLE', 'several', 'PARENT', 0,
		'clock_timestamp()', 'clock_timestamp()')
	. job_sql('00000088-0000-4000-8000-100000000007', 'PARENT_SINGLE', 'deleted.mrc', 'COMMITTED', 9,
		'clock_timestamp()', 'clock_timestamp()', 'true')
	. job_sql('00000088-0000-4000-8000-100000000008', 'CHILD', 'whole.mrc', 'COMMITTED', 5,
		'clock_timestamp()', 'clock_timestamp()'));
# no job on fs09000000, but 4 records stored in SRS
q1(q{INSERT INTO fs09000000_mod_source_record_storage.records_lb
	(id, snapshot_id, matched_id, generation, record_type, state)
	SELECT gen_random_uuid(), '00000008-0000-4000-8000-100000000001', gen_random_uuid(), 0, 'MARC_BIB', 'ACTUAL'
	FROM generate_series(1, 4)});
# fs09000077: 3 check-outs, each far more expensive than in window A (the
# loan insert, check-out's own statement, takes 0.3 s)
q1(q{INSERT INTO fs09000077_mod_circulation_storage.loan
	SELECT gen_random_uuid(), '{"status": {"name": "Open"}}' FROM generate_series(1, 3), (SELECT pg_sleep(0.3)) s});
is(q1("SELECT folio_perf_end($wb)"), $wb, 'window B ended');

is( q1(qq{SELECT string_agg(file_name || ':' || overlap || ':' || status || ':' || records || ':'
	|| coalesce(duration::text, '-'), ',' ORDER BY file_name)
	FROM folio_perf_data_import_jobs($wb) WHERE tenant = 'cs00000int_0001'}),
	'ended.mrc:ended:COMMITTED:40:' . q1(qq{SELECT (completed_date - started_date)::text FROM $sj WHERE file_name = 'ended.mrc'})
	. ',spans.mrc:spans:PROCESSING_IN_PROGRESS:100:-,started.mrc:started:PARSING_IN_PROGRESS:250:-,'
	. 'whole.mrc:whole:COMMITTED:5:' . q1(qq{SELECT (completed_date - started_date)::text FROM $sj WHERE file_name = 'whole.mrc'}),
	'a job spanning the window, one ended and one started in it (a split file: the records of its parts), one wholly inside; parts of a split file, '
	. 'the container of a multi-file upload, deleted jobs and jobs before the window left out');
is( q1(qq{SELECT count || '|' || source FROM folio_perf_operations($wb)
	WHERE tenant = 'cs00000int_0001' AND operation = 'record_imported'}),
	'45|records of 2 data-import jobs completed in the window (mod_source_record_manager.job_execution); '
	. '2 more ran only partly in it, not counted',
	'records imported: the two jobs completed in the window (40 + 5)');
is( q1(qq{SELECT count || '|' || source FROM folio_perf_operations($wb)
	WHERE tenant = 'fs09000000' AND operation = 'record_imported'}),
	'4|inserts of mod_source_record_storage.records_lb (no data-import job completed in the window)',
	'without a job: the records stored in SRS');

# ---- a user-defined operation; the definitions' privileges
my ($ret, $o, $e) = try_sql(q{INSERT INTO folio_perf_operation_definitions (operation, module, relation, description)
	VALUES ('patron_session_opened', 'mod_circulation_storage', 'patron_action_session', 'check-out sessions');
	INSERT INTO folio_perf_operation_definitions (operation, module, relation, counter)
	VALUES ('loan_written', 'mod_circulation_storage', 'loan', 'rows_written')}, extra_params => [ '-U', 'opswriter' ]);
is($ret, 0, 'a writer adds operations') or diag($e);
is( q1(qq{SELECT string_agg(tenant || ':' || operation || ':' || count || ':' || source, ',')
	FROM folio_perf_operations($wa) WHERE operation IN ('patron_session_opened', 'loan_written')}),
	'fs09000000:loan_written:12:rows written of mod_circulation_storage.loan,'
	. 'fs09000000:patron_session_opened:6:inserts of mod_circulation_storage.patron_action_session,'
	. 'fs09000077:loan_written:3:rows written of mod_circulation_storage.loan',
	'user-defined operations counted (6 sessions; 6 loans inserted and 6 updated, 3 inserted), in a window taken before they were defined');
($ret, $o, $e) = try_sql(q{DELETE FROM folio_perf_operation_definitions WHERE operation = 'check_out'},
	extra_params => [ '-U', 'opswriter' ]);
like($e, qr/operation "check_out" is built in and cannot be changed or deleted/, 'built-in definitions stay');
($ret, $o, $e) = try_sql(q{INSERT INTO folio_perf_operation_definitions (operation, module, relation, builtin)
	VALUES ('fake', 'mod_users', 'users', true)}, extra_params => [ '-U', 'opswriter' ]);
like($e, qr/only the extension defines built-in operations/, 'no made-up built-ins');
($ret, $o, $e) = try_sql(q{INSERT INTO folio_perf_operation_definitions (operation, module, relation)
	VALUES ('bad', 'mod_users', 'users; DROP TABLE x')}, extra_params => [ '-U', 'opswriter' ]);
like($e, qr/violates check constraint/, 'a relation is a name, nothing else');
($ret, $o, $e) = try_sql(q{UPDATE folio_perf_operation_definitions SET description = 'mine'
	WHERE operation = 'loan_written' RETURNING operation}, extra_params => [ '-U', 'opswriter' ]);
is($o, 'loan_written', 'a writer changes its own definition');
($ret, $o, $e) = try_sql(q{INSERT INTO folio_perf_operation_definitions (operation, module, relation)
	VALUES ('r', 'mod_users', 'users')}, extra_params => [ '-U', 'opsreader' ]);
like($e, qr/permission denied/, 'a reader cannot add operations');
($ret, $o, $e) = try_sql(qq{SELECT count(*) FROM folio_perf_operations($wa) WHERE operation = 'check_out';
	SELECT count(*) FROM folio_perf_data_import_jobs($wa) WHERE tenant = 'fs09000000'}, extra_params => [ '-U', 'opsreader' ]);
is($o, "2\n1", 'a reader sees the operations and the jobs (without rights on the tenant tables)') or diag($e);
($ret, $o, $e) = try_sql(q{SELECT * FROM folio_perf_data.di_jobs_read(NULL, 'fs09000000_mod_source_record_manager', now(), now())},
	extra_params => [ '-U', 'opsreader' ]);
like($e, qr/permission denied for function di_jobs_read/, 'readers cannot read job_execution of a schema they name');
($ret, $o, $e) = try_sql(q{SELECT count(*) FROM fs09000000_mod_source_record_manager.job_execution},
	extra_params => [ '-U', 'opsreader' ]);
like($e, qr/permission denied/, '(the reader has no rights on job_execution itself)');

# pg_dump keeps the user's definitions only
is(q1(q{SELECT string_agg(x.r::regclass || ': ' || x.c, ', ' ORDER BY x.r::regclass::text)
	FROM pg_extension, unnest(extconfig, extcondition) x(r, c) WHERE extname = 'folio_perf' AND x.c <> ''}),
	'folio_perf_data.operation: WHERE NOT builtin, folio_perf_data.operation_flow: WHERE NOT builtin',
	'the definitions and their flows are configuration with a filter');
my ($dump) = run_command([ 'pg_dump', @conn, '--data-only', '-d', 'folio' ]);
my ($copy) = $dump =~ /^(COPY folio_perf_data\.operation .*?^\\\.)$/ms;
ok(defined $copy, 'pg_dump dumps the definitions') or diag(substr($dump, 0, 2000));
like($copy // '', qr/^patron_session_opened\t/m, 'with the user\'s');
unlike($copy // '', qr/^check_out\t/m, 'without the built-in ones');
# and a restore has both, once
my $sql = "${\ $node->basedir}/folio.sql";
($out, $err) = run_command([ 'pg_dump', @conn, '-d', 'folio', '-f', $sql ]);
$node->safe_psql('postgres', 'CREATE DATABASE folio_restored');
($out, $err) = run_command([ 'psql', @conn, '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', 'folio_restored', '-f', $sql ]);
is($err, '', 'the dump restores without an error');
is( $node->safe_psql('folio_restored', q{SELECT count(*) FILTER (WHERE builtin) || ',' || string_agg(operation, ',' ORDER BY operation) FILTER (WHERE NOT builtin)
	FROM folio_perf_operation_definitions}),
	'12,loan_written,patron_session_opened', 'restored: the 12 built-in definitions and the user\'s two');

# ---- report and compare
my $text = q1("SELECT folio_perf_report($wa, 'text')");
like($text, qr/^FOLIO operations: data-import jobs\n=+\n/m, 'text report: the data-import jobs section');
like($text, qr/^ fs09000000 +\| 12K\.mrc +\| PTF - Create 2 +\| +12 \| \d\d:\d\d:\d\d +\| +[\d.,]+ \| COMMITTED +\| whole$/m,
	'the job as the seeds show it: file, profile, records, hh:mm:ss, records/min, status');
like($text, qr/^ fs09000000 +\| record_imported +\| +12 \|/m, 'text report: operations with their cost');
like( q1("SELECT folio_perf_report($wa, 'markdown', detail => 'full')"),
	qr/^\| Tenant \| File \| Profile \| Records \| Duration \(hh:mm:ss\) \| Records\/min \| Status \| In window \|$/m,
	'markdown report: the seeds\' columns');
like( q1("SELECT folio_perf_report($wa, 'html')"),
	qr/<h2>FOLIO operations: DB cost per operation<\/h2>/, 'html report: the operations section');
is( q1(qq{SELECT string_agg(o->>'operation' || ':' || (o->>'count'), ',' ORDER BY o->>'operation')
	FROM jsonb_array_elements((folio_perf_report($wa, 'json')::jsonb)#>'{folio_operations,operations}') o
	WHERE o->>'tenant' = 'fs09000077'}),
	'check_in:5,check_out:3,loan_written:3', 'json report: folio_operations.operations');
is( q1(qq{SELECT jsonb_array_length((folio_perf_report($wb, 'json')::jsonb)#>'{folio_operations,data_import_jobs}')}),
	'4', 'json report: folio_operations.data_import_jobs');

my $cmp = q1("SELECT folio_perf_compare($wa, $wb, 'text')");
like($cmp, qr/^FOLIO operations\n=+\n.*\n Tenant +\| What +\| Metric +\| +Poppy \| +Quesnelia \| +Delta \| +Delta, %$/m,
	'compare: operations side by side, named after the release tags, with Delta and Delta, %');
like($cmp, qr/^ fs09000077 +\| check_out +\| Count +\| +3 \| +3 \| +0 \| +0%$/m, 'compare: check-outs 3 and 3 (values and deltas right-aligned)');
like($cmp, qr/^ fs09000077 +\| check_out +\| Per minute +\|/m, 'compare: check-outs per minute');
like($cmp, qr/DB time per check_out in tenant fs09000077 rose by \d+ % \([\d.,]+ ms -> [\d.,]+ ms, its own statements; 3 and 3 operations; p = [^)]+\)\./,
	'compare verdict: DB time per check-out rose (its own statement, the loan insert)');
like($cmp, qr/^ fs09000000 +\| record_imported +\| Count +\| +12 \| +4 \| +-8 \| +-66\.7%$/m, 'compare: records imported 12 and 4');
{
	# the finding quotes DB time per check-out as the table shows it
	my @f = $cmp =~ /DB time per check_out in tenant fs09000077 rose by \d+ % \(([\d.,]+) ms -> ([\d.,]+) ms/;
	my @t = $cmp =~ /^ fs09000077 +\| check_out +\| DB time per operation, ms +\| +([\d.,]+) \| +([\d.,]+) \|/m;
	ok(@f == 2 && "@f" eq "@t", "compare verdict: the DB times as the operations table rounds them (@f; @t)");
}
like( q1("SELECT folio_perf_compare($wa, $wb, 'html')"),
	qr{<td>check_out</td><td>DB time per operation,(<wbr>)? ms</td>(<td class="n">[^<]*</td>){3}<td class="n worse">\+[\d.,]+%</td>},
	'html compare: the rise of DB time per check-out is coloured as a regression');
like( q1("SELECT folio_perf_compare($wb, $wb, 'markdown')"),
	qr/\| Tenant \| What \| Metric \| Quesnelia \(window $wb\) \| Quesnelia \(window $wb\) \|/,
	'compare of windows of one release: the columns say which window');
is( q1(qq{SELECT count(*) FROM folio_perf_compare_rows($wa, $wb)
	WHERE section = 'data_import' AND key = 'fs09000000:PTF - Create 2:12K.mrc' AND metric = 'duration_per_job_s' AND status = 'gone'}),
	'1', 'compare rows: the data-import job of the base window');
is( q1(qq{SELECT count(*) > 0 FROM jsonb_array_elements((folio_perf_compare($wa, $wb, 'json')::jsonb)->'verdict') v
	WHERE v->>'finding' LIKE 'DB time per check_out in tenant fs09000077 rose by %'}), 't', 'json compare: the verdict');

# ---- a job_execution held by an ALTER TABLE is skipped, not waited for
my $bg = $node->background_psql('folio');
$bg->query_safe("BEGIN; LOCK TABLE $sj IN ACCESS EXCLUSIVE MODE;");
($ret, $o, $e) = try_sql(qq{SELECT string_agg(DISTINCT tenant, ',') FROM folio_perf_data_import_jobs($wa)});
is($o, 'fs09000000', 'a locked job_execution is skipped: the other tenants\' jobs come') or diag($e);
like($e, qr/data-import jobs of schema "cs00000int_0001_mod_source_record_manager" skipped: job_execution is locked/,
	'with a notice saying so');
$bg->query_safe('COMMIT;');
$bg->quit;

# ---- a job_execution gone since the window's end snapshot saw it: the
# lock of every tenant's table at once fails, each is then read on its own
($ret, $o, $e) = try_sql(qq{BEGIN; ALTER TABLE $sj RENAME TO job_execution_gone;
SELECT string_agg(DISTINCT tenant, ',') FROM folio_perf_data_import_jobs($wa); ROLLBACK;});
is($o, 'fs09000000', 'a job_execution gone since the window is skipped: the other tenants\' jobs come') or diag($e);

# ---- tenant tables that try to run code as the reader
# (a) the module's role casts its enum to text with its own function
q1(q{SET ROLE cs00000int_0001_mod_source_record_manager;
CREATE FUNCTION cs00000int_0001_mod_source_record_manager.evil(cs00000int_0001_mod_source_record_manager.job_execution_status)
	RETURNS text LANGUAGE plpgsql AS $$BEGIN RAISE EXCEPTION 'the cast ran as %', current_user; END$$;
CREATE CAST (cs00000int_0001_mod_source_record_manager.job_execution_status AS text)
	WITH FUNCTION cs00000int_0001_mod_source_record_manager.evil(cs00000int_0001_mod_source_record_manager.job_execution_status);});
($ret, $o, $e) = try_sql(qq{SELECT status::text FROM $sj LIMIT 1});
like($e, qr/the cast ran as/, '(a cast of the status to text runs the module role\'s function)');
is( q1(qq{SELECT string_agg(status, ',' ORDER BY file_name) FROM folio_perf_data_import_jobs($wb)}),
	'COMMITTED,PROCESSING_IN_PROGRESS,PARSING_IN_PROGRESS,COMMITTED',
	'the jobs are read through the type\'s output function, never the cast');
# (b) job_execution replaced by a view after the window
q1(q{SET ROLE fs09000000_mod_source_record_manager;
CREATE FUNCTION fs09000000_mod_source_record_manager.evil2() RETURNS int
	LANGUAGE plpgsql AS $$BEGIN RAISE EXCEPTION 'the view ran as %', current_user; END$$;
ALTER TABLE fs09000000_mod_source_record_manager.job_execution RENAME TO job_execution_was;
CREATE VIEW fs09000000_mod_source_record_manager.job_execution AS
	SELECT j.*, fs09000000_mod_source_record_manager.evil2() AS x
	FROM fs09000000_mod_source_record_manager.job_execution_was j;});
($ret, $o, $e) = try_sql(qq{SELECT count(*) FROM $job});
like($e, qr/the view ran as/, '(reading the view runs the module role\'s function)');
($ret, $o, $e) = try_sql(qq{SELECT count(*) FROM folio_perf_data_import_jobs($wa) WHERE tenant = 'fs09000000'});
is($o, '0', 'a job_execution that is no longer a table is not read') or diag($e);
is( q1(qq{SELECT count || '|' || source FROM folio_perf_operations($wa)
	WHERE tenant = 'fs09000000' AND operation = 'record_imported'}),
	'12|inserts of mod_source_record_storage.records_lb (no data-import job completed in the window)',
	'record_imported then falls back to the records stored in SRS');

# ---- a window of another database: no jobs, no error
$node->safe_psql('postgres', 'CREATE EXTENSION pg_stat_statements; CREATE EXTENSION folio_perf');
my $wp = $node->safe_psql('postgres', q{SELECT folio_perf_window(folio_perf_snapshot(), folio_perf_snapshot())});
is($node->safe_psql('postgres', "SELECT count(*) FROM folio_perf_data_import_jobs($wp)"), '0',
	'a database without FOLIO: no jobs');
is($node->safe_psql('postgres', "SELECT count(*) FROM folio_perf_operations($wp)"), '0',
	'and no operations');

$node->stop;
done_testing();
