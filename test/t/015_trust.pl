# test/t/015_trust.pl - numbers a FOLIO engineer can trust, on the
# FOLIO-like fixture (test/fixture) with its workloads (test/workload):
#   - a begin / workload / end window as the demo takes it: folio_perf's
#     own SQL appears nowhere in its JSON report, nor in the top lists,
#     plans, DB load and the live view, unless asked for;
#   - connections per tenant and module in folio_perf_module_activity,
#     including a module that only held an idle pool;
#   - a window in which the sampler was off for 3 s is flagged with its
#     coverage in every format;
#   - no report column is constant NULL or 0 across the windows unless the
#     report says why.
# Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)
use strict;
use warnings;
use Cwd qw(abs_path);
use File::Basename qw(dirname);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

my $testdir =
  ($ENV{TESTDIR} && -d "$ENV{TESTDIR}/test/fixture")
  ? "$ENV{TESTDIR}/test"
  : abs_path(dirname(__FILE__) . '/..');
my $build = "$testdir/fixture/build_fixture.sh";
my $run   = "$testdir/workload/run_workload.sh";

my $node = PostgreSQL::Test::Cluster->new('trust');
$node->init;
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'pg_stat_statements,folio_perf'
pg_stat_statements.track = all
pg_stat_statements.max = 5000
compute_query_id = on
folio_perf.sample_interval = 100
folio_perf.flush_interval = 1
folio_perf.database = 'folio'
folio_perf.plan_min_duration = 0
max_connections = 60
});
$node->start;
my @conn = ('-h', $node->host, '-p', $node->port);

sub q1 { return $node->safe_psql('folio', $_[0]); }

my ($out, $err) = run_command(
	[ 'bash', $build, '-d', 'folio', '-t', '2', '-r', '20', '-P', '2', @conn ]);
like($out, qr/^fixture folio: 2 tenants/m, 'fixture built') or diag($err);
q1('CREATE EXTENSION pg_stat_statements; CREATE EXTENSION folio_perf');

# as the demo: the window begins once the sampler is sampling
ok( $node->poll_query_until('folio', q{
	SELECT state = 'sampling' AND last_sample_at > now() - interval '1 s'
	  FROM folio_perf_sampler_status}),
	'the sampler is sampling');

# ---- window A: begin, an idle pool, the workloads, end -------------------

# idle pools of mod-orders-storage (no statement inside the window), held
# through windows A and B
my @pool = (
	(map { $node->background_psql('folio', extra_params => [ '-U', 'fs09000000_mod_orders_storage' ]) } 1 .. 3),
	(map { $node->background_psql('folio', extra_params => [ '-U', 'fs09000001_mod_orders_storage' ]) } 1 .. 2));
$_->query_safe('SELECT 1') for @pool;

my $wa = q1(q{SELECT folio_perf_begin('DI + CICO', '{"release":"test"}')});
for my $wl ([ 'di_create', 'fs09000000' ], [ 'cico', 'fs09000000,fs09000001' ])
{
	my ($o, $e) = run_command(
		[ 'bash', $run, '-d', 'folio', '-w', $wl->[0], '-n', '5', '-t', $wl->[1], '-q', @conn ]);
	like($o, qr/done/, "workload $wl->[0] ran") or diag($e);
}
# a slow statement and a CPU-bound one of mod-users: seen by the sampler
# (the workloads' statements take less than a sample interval)
$node->safe_psql('folio',
	q{SELECT pg_sleep(0.6), count(*) FROM fs09000000_mod_users.users;
	  SELECT count(*) FROM fs09000000_mod_users.users, generate_series(1, 150000)},
	extra_params => [ '-U', 'fs09000000_mod_users' ]);
# folio_perf's reports and views used inside the window, as a user would
q1(q{SELECT count(*) FROM folio_perf_statements});
q1(q{SELECT count(*) FROM folio_perf_activity});
q1(q{SELECT pg_stat_force_next_flush()});
q1(qq{SELECT folio_perf_end($wa)});

# folio_perf's own SQL: its functions, its schema, and the SQL of its
# nested statements, which reads catalogs as pg_catalog.pg_* (FOLIO's SQL
# never does)
my $own = q{(folio_perf_|pg_catalog\.pg_)};

my $json = $node->safe_psql('folio', qq{
	CREATE TEMP TABLE rep AS SELECT folio_perf_report($wa, 'json')::jsonb AS j;
	SELECT count(*) FROM rep,
	       jsonb_path_query(j, 'strict \$.**.query') v
	 WHERE v #>> '{}' ~ '$own'});
is($json, '0', 'the JSON report shows no statement text of folio_perf');
is( q1(qq{SELECT count(*) FROM (SELECT folio_perf_report($wa, 'json')::jsonb AS j) r,
	       jsonb_path_query(r.j, 'strict \$.**.text') v
	 WHERE jsonb_typeof(v) = 'string' AND v #>> '{}' ~ '$own'}),
	'0', 'the JSON report shows no plan of folio_perf');
unlike(q1("SELECT folio_perf_report($wa, 'json')"), qr/folio_perf_data/,
	'the JSON report mentions folio_perf\'s schema nowhere');
ok(q1("SELECT count(*) FROM jsonb_array_elements(folio_perf_report($wa, 'json')::jsonb -> 'top_statements')") > 0,
	'the report has top statements');
# controls of the three: the paths find the report's own statement texts,
# and the same checks flag one of folio_perf's statements (a nested one that
# reads folio_perf_data) and one of its plans put into the report
my $own_doc = qq{
	(SELECT jsonb_set(r.j, '{top_statements,0,query}', to_jsonb(o.query))
	        || jsonb_build_object('control', jsonb_build_object('text', p.plan)) AS j
	   FROM (SELECT folio_perf_report($wa, 'json')::jsonb AS j) r,
	        (SELECT query FROM folio_perf_top_statements($wa, 1000, only_toplevel => false,
	                 include_housekeeping => true)
	          WHERE query ~ '$own' AND query ~ 'folio_perf_data' LIMIT 1) o,
	        (SELECT plan FROM folio_perf_plans($wa, include_housekeeping => true)
	          WHERE query ~ '$own' AND plan ~ '$own' LIMIT 1) p)};
cmp_ok(q1(qq{SELECT count(*) FROM (SELECT folio_perf_report($wa, 'json')::jsonb AS j) r,
	       jsonb_path_query(r.j, 'strict \$.**.query') v WHERE jsonb_typeof(v) = 'string'}),
	'>', 0, 'control: the statement texts of the report are where the check looks');
cmp_ok(q1(qq{SELECT count(*) FROM (SELECT folio_perf_report($wa, 'json')::jsonb AS j) r,
	       jsonb_path_query(r.j, 'strict \$.**.text') v WHERE jsonb_typeof(v) = 'string'}),
	'>', 0, 'control: and its plan texts');
is(q1(qq{SELECT count(*) FROM $own_doc d, jsonb_path_query(d.j, 'strict \$.**.query') v
	 WHERE v #>> '{}' ~ '$own'}),
	'1', 'control: one of folio_perf\'s statements in the report is found');
is(q1(qq{SELECT count(*) FROM $own_doc d, jsonb_path_query(d.j, 'strict \$.**.text') v
	 WHERE jsonb_typeof(v) = 'string' AND v #>> '{}' ~ '$own'}),
	'1', 'control: one of folio_perf\'s plans in the report is found');
like(q1(qq{SELECT d.j::text FROM $own_doc d}), qr/folio_perf_data/,
	'control: and the report with it names folio_perf\'s schema');

is( q1(qq{SELECT count(*) FROM folio_perf_top_statements($wa, 1000, only_toplevel => NULL)
	WHERE query ~ '$own'}),
	'0', 'top statements: none of folio_perf\'s');
ok( q1(qq{SELECT count(*) FROM folio_perf_top_statements($wa, 1000, only_toplevel => NULL,
	include_housekeeping => true) WHERE query ~ '$own'}) > 0,
	'... they come back with include_housekeeping');
ok( q1(qq{SELECT count(*) FROM folio_perf_top_statements($wa, 1000, only_toplevel => false,
	include_housekeeping => true) WHERE query ~ '$own' AND query !~ 'folio_perf'}) > 0,
	'... among them nested statements whose text names no folio_perf function');
is(q1(qq{SELECT count(*) FROM folio_perf_plans($wa) WHERE query ~ '$own' OR plan ~ 'folio_perf_data'}),
	'0', 'plans: none of folio_perf\'s');
ok(q1(qq{SELECT count(*) FROM folio_perf_plans($wa, include_housekeeping => true) WHERE query ~ '$own'}) > 0,
	'... they come back with include_housekeeping');
ok(q1(qq{SELECT count(*) FROM folio_perf_plans($wa)}) > 0, 'the workload\'s plans are there');
is(q1(qq{SELECT count(*) FROM folio_perf_db_load($wa)
	WHERE query ~ '$own' OR folio_perf_data.own_queryid(queryid)}),
	'0', 'DB load by statement: none of folio_perf\'s');
is(q1(qq{SELECT count(*) FROM folio_perf_timeseries($wa, 'db_load_by_statement')
	WHERE series ~ '^-?[0-9]+\$' AND folio_perf_data.own_queryid(series::bigint)}),
	'0', 'DB load over time by statement: none of folio_perf\'s');
ok(q1(qq{SELECT count(*) FROM folio_perf_db_load($wa) WHERE dimension = 'statement' AND module = 'mod_users'}) > 0,
	'the slow mod-users statement is in the DB load');
is(q1(qq{SELECT count(*) FROM folio_perf_statements WHERE query ~ '$own'}),
	'0', 'live view folio_perf_statements: none of folio_perf\'s');
ok(q1(qq{SELECT count(*) FROM folio_perf_statements(include_housekeeping => true) WHERE query ~ '$own'}) > 0,
	'... they come back with include_housekeeping');
is( q1(qq{SELECT count(*) FROM folio_perf_module_activity($wa) WHERE module = 'folio_perf'}),
	'0', 'folio_perf is no module of the window');
# the sampler's own process: the probe sees it (control), no CPU row of the
# window has it (the worker's flushes during the workloads used CPU)
ok(q1(q{SELECT count(*) FROM folio_perf_samples WHERE application_name = 'folio_perf sampler'}) > 0,
	'control: the sampler samples its own process');
is( q1(qq{SELECT count(*) FROM folio_perf_cpu($wa)
	WHERE dimension = 'application_name' AND key = 'folio_perf sampler'}),
	'0', 'CPU: the sampler\'s own process is in no row');

# connections per tenant and module: the idle pool, and the workload's modules
is( q1(qq{SELECT connections_avg || ' ' || connections_max || ' ' || statement_calls
	FROM folio_perf_module_activity($wa)
	WHERE tenant = 'fs09000000' AND module = 'mod_orders_storage'}),
	'3.00 3 0', 'an idle pool of 3 connections: its module is listed with avg = max = 3');
is( q1(qq{SELECT connections_avg || ' ' || connections_max || ' ' || statement_calls
	FROM folio_perf_module_activity($wa)
	WHERE tenant = 'fs09000001' AND module = 'mod_orders_storage'}),
	'2.00 2 0', '... and the other tenant\'s pool of 2, told apart');
is( q1(qq{SELECT count(*) FROM folio_perf_module_activity($wa) WHERE connections_avg IS NULL}),
	'0', 'every module of a sampled window has its connections');
is( q1(qq{SELECT count(*) FROM folio_perf_module_activity($wa) m
	JOIN folio_perf_connections($wa) c ON c.dimension = 'tenant_module'
	 AND c.tenant IS NOT DISTINCT FROM m.tenant AND c.module = m.module
	WHERE c.avg <> m.connections_avg OR c.max <> m.connections_max}),
	'0', 'module activity agrees with folio_perf_connections by tenant_module');

# ---- window B: the sampler off for 3 s in the middle ----------------------

# (each step waits for the sampler to have done it: under load a reload
# takes effect late, so the gap is timed from when the sampler stopped)
my $wb = q1(q{SELECT folio_perf_begin('sampler gap')});
my $wb_begin = q1(qq{SELECT b.taken_at FROM folio_perf_windows w
	JOIN folio_perf_snapshots b ON b.snap_id = w.begin_snap WHERE w.window_id = $wb});
$node->poll_query_until('folio', qq{SELECT last_sample_at > '$wb_begin'::timestamptz + interval '1.5 s'
	FROM folio_perf_sampler_status}) or die 'no samples in the window';
q1(q{ALTER SYSTEM SET folio_perf.sample_interval = 0});
q1(q{SELECT pg_reload_conf()});
$node->poll_query_until('folio', q{SELECT sample_interval_ms = 0 FROM folio_perf_sampler_status})
  or die 'the sampler did not stop';
usleep(3_000_000);
my $on_at = q1(q{SELECT clock_timestamp()});
q1(q{ALTER SYSTEM RESET folio_perf.sample_interval});
q1(q{SELECT pg_reload_conf()});
$node->poll_query_until('folio', qq{SELECT last_sample_at > '$on_at'::timestamptz + interval '1.5 s'
	FROM folio_perf_sampler_status}) or die 'the sampler did not sample again';
q1(qq{SELECT folio_perf_end($wb)});
my $wb_s = q1(qq{SELECT extract(epoch FROM e.taken_at - b.taken_at) FROM folio_perf_windows w
	JOIN folio_perf_snapshots b ON b.snap_id = w.begin_snap
	JOIN folio_perf_snapshots e ON e.snap_id = w.end_snap WHERE w.window_id = $wb});

my $flag = q1(qq{SELECT detail FROM folio_perf_window_flags($wb) WHERE flag = 'sampler_gap'});
like($flag, qr/cover \d+(\.\d+)?% of the window \(\d+ of ~\d+ samples\): no samples for \d+\.\d s/,
	"the gap is a data-quality flag with its coverage and size ($flag)");
my ($cov) = $flag =~ /cover (\d+(?:\.\d+)?)%/;
# the longest gap named (under load the sampler may also start late)
my ($gaps) = $flag =~ /no samples for (.*)$/;
my $gap;
for my $g (($gaps // '') =~ /(\d+\.\d) s\b/g)
{
	$gap = $g if !defined $gap || $g > $gap;
}
# the sampler was off for at least 3 s of the window: the coverage is at
# most the rest of it (give or take one sample: the ~N expected is the
# window's length over the interval, and a tick's timing moves by some
# milliseconds), and more than none
my ($expected) = $flag =~ /of ~(\d+) samples/;
my $cov_max = 100 * (1 - 3 / $wb_s) + 100 / ($expected || 1);
ok(defined $cov && $cov > 0 && $cov <= $cov_max + 0.1,
	sprintf('coverage of a %.1f s window without at least 3 s: %s %% (at most %.1f %%, one sample of slack)', $wb_s, $cov // 'none', $cov_max));
ok(defined $gap && $gap >= 2.5, "the longest gap's size: $gap s (the sampler was off for 3 s or more)");
like(q1(qq{SELECT key FROM folio_perf_connections($wb) WHERE dimension = 'sampler'}),
	qr/^partial: samples cover/, 'folio_perf_connections says partial');
is( q1(qq{SELECT count(DISTINCT coverage_pct) || ' ' || bool_and(coverage_pct IS NOT NULL AND coverage_pct < 100)
	FROM folio_perf_connections($wb)}),
	'1 true', 'every connections row carries the same partial coverage');
like(q1(qq{SELECT connections_note FROM folio_perf_module_activity($wb) WHERE module = 'mod_orders_storage' LIMIT 1}),
	qr/^partial/, 'module activity notes partial connections');
$_->quit for @pool;
for my $fmt ('text', 'markdown', 'html', 'json')
{
	my $r = q1(qq{SELECT folio_perf_report($wb, '$fmt')});
	like($r, qr/sampler_gap/, "$fmt report flags the gap");
	unlike($r, qr/every number is exact/, "$fmt report does not say every number is exact");
}
is( q1(qq{SELECT folio_perf_report($wb, 'json')::jsonb #>> '{window,sampler}' LIKE 'partial%'}),
	't', 'the JSON report\'s sampler line says partial');

# ---- window C: the sampler off for the whole window ------------------------

q1(q{ALTER SYSTEM SET folio_perf.sample_interval = 0});
q1(q{SELECT pg_reload_conf()});
$node->poll_query_until('folio', q{SELECT sample_interval_ms = 0 FROM folio_perf_sampler_status});
my $wc = q1(q{SELECT folio_perf_begin('sampler off')});
my ($o, $e) = run_command(
	[ 'bash', $run, '-d', 'folio', '-w', 'cico', '-n', '3', '-t', 'fs09000001', '-q', @conn ]);
q1(q{SELECT pg_stat_force_next_flush()});
q1(qq{SELECT folio_perf_end($wc)});
ok(q1(qq{SELECT count(*) FROM folio_perf_module_activity($wc)}) > 0, 'window C has modules');
is( q1(qq{SELECT count(*) FROM folio_perf_module_activity($wc)
	WHERE NOT (connections_avg IS NULL AND connections_max IS NULL
	           AND connections_note LIKE 'off: no samples%sample_interval is 0%')}),
	'0', 'sampler off: connections NULL, and the note says why');
like(q1(qq{SELECT string_agg(key, ';') FROM folio_perf_cpu($wc)}), qr/^off: no samples/,
	'CPU without samples: one row saying why');
# the HTML report's summary cards: a figure that cannot be had is "n/a"
# with the reason, never an empty card
my $empty_card = qr{<div class="v">\s*(?:/\s*)?%?\s*</div>|host busy\s+%};
like('<div class="v"> / </div><div class="v"></div>', $empty_card,
	'control: the check sees empty cards');
my $html_c = q1(qq{SELECT folio_perf_report($wc, 'html')});
my ($cards) = $html_c =~ m{<div class="cards">(.*?)</div></header>}s;
ok(defined $cards && $cards ne '', 'window C: the HTML report has its cards');
unlike($cards // '', $empty_card, 'sampler off: no empty summary card');
like($cards // '', qr{Connections avg / max</div><div class="v">n/a / n/a</div><div class="d">needs the sampler},
	'sampler off: connections n/a, with the reason');

q1(q{ALTER SYSTEM RESET folio_perf.sample_interval});
q1(q{SELECT pg_reload_conf()});

# ---- no report column constant NULL or 0 across the windows ---------------
#
# For every report function, each column must have a value other than NULL
# and 0 (false, '') in some row of windows A, B, C.  The exceptions are
# columns whose emptiness is what the workload measured (the reason each)
# or that a note row explains.
my %why = (
	'folio_perf_top_statements.temp_blks_written' => 'the workloads sort in memory',
	'folio_perf_top_statements.status'           => 'text; ok is the usual status',
	'folio_perf_table_activity.status'           => 'text; ok is the usual status',
	'folio_perf_table_activity.vacuum_count'     => 'nobody runs VACUUM',
	'folio_perf_table_activity.analyze_count'    => 'nobody runs ANALYZE',
	'folio_perf_table_activity.autovacuum_count' => 'windows are shorter than autovacuum_naptime',
	'folio_perf_table_activity.autoanalyze_count' => 'windows are shorter than autovacuum_naptime',
	'folio_perf_module_activity.vacuum_count'    => 'nobody runs VACUUM, windows are shorter than autovacuum_naptime',
	'folio_perf_module_activity.analyze_count'   => 'nobody runs ANALYZE, windows are shorter than autovacuum_naptime',
	'folio_perf_module_activity.flags'           => 'no relation was created, dropped or reset',
	'folio_perf_db_summary.rollbacks'            => 'the workloads commit',
	'folio_perf_db_summary.temp_files'           => 'the workloads sort in memory',
	'folio_perf_db_summary.temp_bytes'           => 'the workloads sort in memory',
	'folio_perf_db_summary.deadlocks'            => 'no deadlock',
	'folio_perf_db_summary.conflicts'            => 'a primary has no recovery conflicts',
	'folio_perf_db_summary.checkpoints_timed'    => 'windows are shorter than checkpoint_timeout',
	'folio_perf_db_summary.checkpoints_req'      => 'no checkpoint is requested',
	'folio_perf_db_summary.buffers_checkpoint'   => 'no checkpoint inside the windows',
	'folio_perf_db_summary.buffers_clean'        => 'shared_buffers never fill: the bgwriter has nothing to clean',
	'folio_perf_db_summary.buffers_backend'      => 'shared_buffers never fill',
	'folio_perf_plans.plan_changed'              => 'one plan shape per statement',
	'folio_perf_plans.generic'                   => 'local windows have plans of executions (generic plans are a remote target\'s: TAP 030_remote)',
	'folio_perf_compare_rows.plan_changed'       => 'one plan shape per statement',
	# the fixture's seed jobs are in progress across every window; their
	# status says so
	'folio_perf_data_import_jobs.completed'      => 'jobs in progress (status PARSING_IN_PROGRESS)',
	'folio_perf_data_import_jobs.duration'       => 'jobs in progress (status PARSING_IN_PROGRESS)',
	'folio_perf_data_import_jobs.records'        => 'jobs in progress (status PARSING_IN_PROGRESS)',
	'folio_perf_data_import_jobs.records_per_minute' => 'jobs in progress (status PARSING_IN_PROGRESS)',
	'folio_perf_plans.analyzed'                  => 'folio_perf.plan_analyze is off',
	'folio_perf_plans.truncated'                 => 'plans are small',
	'folio_perf_plans.json_invalid'              => 'every EXPLAIN JSON of the workloads parses (regress skipped_items plants one that does not)',
	'folio_perf_top_statements.shared_blks_read' => 'the fixture fits in shared_buffers: every block is a hit',
	'folio_perf_table_activity.deletes'          => 'the workloads delete nothing',
	'folio_perf_table_activity.hot_updates'      => 'HOT needs free space on the page: the freshly loaded fixture may have none',
	'folio_perf_module_activity.hot_updates'     => 'HOT needs free space on the page: the freshly loaded fixture may have none',
	'folio_perf_module_activity.deletes'         => 'the workloads delete nothing',
	'folio_perf_table_activity.idx_tup_fetch'    => 'the fixture\'s tables are small: lookups scan them, index probes are conflict checks',
	'folio_perf_module_activity.idx_tup_fetch'   => 'the fixture\'s tables are small: lookups scan them, index probes are conflict checks',
	'folio_perf_module_activity.blks_read'       => 'the fixture fits in shared_buffers: every block is a hit',
	'folio_perf_table_activity.blks_read'        => 'the fixture fits in shared_buffers: every block is a hit',
	'folio_perf_db_summary.blks_read'            => 'the fixture fits in shared_buffers: every block is a hit',
	# a session's CPU is read from /proc only after it ran something, in
	# whole milliseconds: the fixture's short statements in these windows
	# may leave every module row under 1 ms, and then only the total rows
	# (unattributed) remain
	'folio_perf_cpu.tenant'        => 'module sessions may use under 1 ms of CPU between two ticks',
	'folio_perf_cpu.module'        => 'module sessions may use under 1 ms of CPU between two ticks',
	'folio_perf_cpu.attributed_by' => 'module sessions may use under 1 ms of CPU between two ticks',
	# NULL before PostgreSQL 18 (the JSON report's window.not_counted says so)
	# the windows' workloads are single sessions, which active_span() does
	# not take for load (the report's "Active span" note says so)
	'folio_perf_operations.per_minute_active' => 'no active span: the workloads run one session at a time',
	'folio_perf_top_statements.wal_buffers_full' => 'counted from 18 on; the workloads never fill the WAL buffers',
	'folio_perf_top_statements.parallel_workers_to_launch' => 'counted from 18 on; the fixture\'s queries are too small for parallel plans',
	'folio_perf_top_statements.parallel_workers_launched'  => 'counted from 18 on; the fixture\'s queries are too small for parallel plans',
);
my @calls = (
	[ 'folio_perf_top_statements', 'folio_perf_top_statements(%s, 1000, only_toplevel => NULL)' ],
	[ 'folio_perf_module_activity', 'folio_perf_module_activity(%s)' ],
	[ 'folio_perf_table_activity',  'folio_perf_table_activity(%s, 1000)' ],
	[ 'folio_perf_db_summary',      'folio_perf_db_summary(%s)' ],
	[ 'folio_perf_connections',     'folio_perf_connections(%s)' ],
	[ 'folio_perf_db_load',         'folio_perf_db_load(%s)' ],
	[ 'folio_perf_cpu',             'folio_perf_cpu(%s)' ],
	[ 'folio_perf_plans',           'folio_perf_plans(%s)' ],
	[ 'folio_perf_compare_rows',    "folio_perf_compare_rows(%s, $wa)", "$wb,$wc" ],
	[ 'folio_perf_operations',      'folio_perf_operations(%s)' ],
	[ 'folio_perf_data_import_jobs', 'folio_perf_data_import_jobs(%s)' ],
);
my $windows = join(',', $wa, $wb, $wc);
my @empty;
for my $c (@calls)
{
	my ($fn, $call, $ws) = @$c;
	my $sql = sprintf($call, 'w.id');
	$ws //= $windows;
	my $cols = q1(qq{
		SELECT string_agg(e.key, ',' ORDER BY e.key)
		  FROM (SELECT e.key,
		               bool_or(CASE jsonb_typeof(e.value)
		                       WHEN 'null' THEN false
		                       WHEN 'number' THEN (e.value #>> '{}')::numeric <> 0
		                       WHEN 'boolean' THEN (e.value #>> '{}')::boolean
		                       WHEN 'string' THEN e.value #>> '{}' <> ''
		                       ELSE jsonb_array_length(CASE jsonb_typeof(e.value) WHEN 'array' THEN e.value ELSE '[1]' END) > 0 END) AS filled
		          FROM unnest('{$ws}'::bigint[]) w(id)
		          CROSS JOIN LATERAL $sql t
		          CROSS JOIN LATERAL jsonb_each(to_jsonb(t)) e
		         GROUP BY e.key) e
		 WHERE NOT e.filled});
	for my $col (split /,/, $cols)
	{
		push @empty, "$fn.$col" unless $why{"$fn.$col"};
	}
}
is(join(', ', @empty), '', 'no report column is constant NULL or 0 without a reason');

$node->stop;
done_testing();
