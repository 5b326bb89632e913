# test/t/010_sampler.pl - the sampler worker: start, exact counts in a
# window, flush at snapshot, SIGHUP, failed flushes, timed snapshots,
# restart after termination and after kill -9, sampler off, no preload.
# Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use POSIX ();

my $node = PostgreSQL::Test::Cluster->new('sampler');
$node->init;
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'pg_stat_statements,folio_perf'
compute_query_id = on
folio_perf.sample_interval = 100
folio_perf.flush_interval = 60
folio_perf.database = 'postgres'
restart_after_crash = on
});
$node->start;
$node->safe_psql('postgres',
	'CREATE EXTENSION pg_stat_statements; CREATE EXTENSION folio_perf');

sub status
{
	my ($expr) = @_;
	return $node->safe_psql('postgres',
		"SELECT $expr FROM folio_perf_sampler_status()");
}

# A window of about $secs seconds, taken now.
sub take_window
{
	my ($secs) = @_;
	my $s0 = $node->safe_psql('postgres', 'SELECT folio_perf_snapshot()');
	$node->safe_psql('postgres', "SELECT pg_sleep($secs)");
	my $s1 = $node->safe_psql('postgres', 'SELECT folio_perf_snapshot()');
	return $node->safe_psql('postgres', "SELECT folio_perf_window($s0, $s1)");
}

# ---- the worker starts and finds its storage
ok( $node->poll_query_until('postgres', q{
	SELECT folio_perf_sampler_flush() >= 0
	   AND (SELECT state = 'sampling' AND pid IS NOT NULL FROM folio_perf_sampler_status())}),
	'worker runs and stores samples');
is( $node->safe_psql('postgres',
		q{SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'folio_perf sampler'}),
	'1', 'one worker in pg_stat_activity');

# ---- exact counts: K idle connections held for the whole window
$node->safe_psql('postgres', q{
CREATE ROLE fs01_mod_users LOGIN;
CREATE ROLE folio_shared LOGIN;
CREATE SCHEMA fs01_mod_search AUTHORIZATION folio_shared;
CREATE SCHEMA fs02_mod_search AUTHORIZATION folio_shared;
CREATE TABLE fs01_mod_search.instances (id int);
CREATE TABLE fs02_mod_search.instances (id int);
GRANT ALL ON ALL TABLES IN SCHEMA fs01_mod_search, fs02_mod_search TO folio_shared;
});
my @sessions;
for (1 .. 3)
{
	my $s = $node->background_psql('postgres',
		extra_params => [ '-U', 'fs01_mod_users' ]);
	$s->query_safe(q{SET application_name = 'mod-users-19.2.0'});
	push @sessions, $s;
}
# a Spring module: one shared login, a search_path per tenant, unqualified SQL
for my $t ('fs01', 'fs02')
{
	my $s = $node->background_psql('postgres',
		extra_params => [ '-U', 'folio_shared' ]);
	$s->query_safe("SET application_name = 'mod-search'");
	$s->query_safe("SET search_path = ${t}_mod_search");
	$s->query_safe('SELECT count(*) FROM instances');
	push @sessions, $s;
}
{
	my $s = $node->background_psql('postgres',
		extra_params => [ '-U', 'folio_shared' ]);
	$s->query_safe("SET application_name = 'vertx-pg-client'");
	push @sessions, $s;
}
# the sampler has seen all six before the window begins
ok( $node->poll_query_until('postgres', q{
	SELECT count(*) = 6 FROM folio_perf_samples()
	 WHERE sampled_at = (SELECT max(sampled_at) FROM folio_perf_samples())
	   AND userid IN ('fs01_mod_users'::regrole, 'folio_shared'::regrole)
	   AND application_name <> ''}),
	'sampler sees the six sessions');

my $w = take_window(2);
my $rows = $node->safe_psql('postgres', qq{
SELECT dimension, key, coalesce(tenant, '-'), coalesce(module, '-'),
       coalesce(attributed_by, '-'), avg, p95, max
  FROM folio_perf_connections($w)
 WHERE key IN ('fs01_mod_users', 'folio_shared', 'fs01', 'fs02', 'mod_users', 'mod_search',
               'mod-users-19.2.0', 'mod-search', 'vertx-pg-client')
 ORDER BY dimension, key});
is( $rows, join("\n",
		'application_name|mod-search|-|mod_search|application_name|2.00|2|2',
		'application_name|mod-users-19.2.0|-|mod_users|application_name|3.00|3|3',
		'application_name|vertx-pg-client|-|-|-|1.00|1|1',
		'module|mod_search|-|mod_search|-|2.00|2|2',
		'module|mod_users|-|mod_users|-|3.00|3|3',
		'role|folio_shared|-|-|-|3.00|3|3',
		'role|fs01_mod_users|fs01|mod_users|role|3.00|3|3',
		# from 18 the shared login's one statement of both tenants is one
		# query id, which the parse hook cannot vouch for: no tenant
		$node->pg_version >= 18
		? ('tenant|fs01|fs01|-|-|3.00|3|3')
		: ('tenant|fs01|fs01|-|-|4.00|4|4', 'tenant|fs02|fs02|-|-|1.00|1|1')),
	'connections held for the whole window: avg = p95 = max = K, '
	  . 'tenants of shared-login sessions from their statements\' relations');

ok( $node->safe_psql('postgres', qq{
	SELECT avg >= 6 AND max >= 6 AND samples >= 10 FROM folio_perf_connections($w)
	 WHERE dimension = 'total'}) eq 't',
	'total counts all sessions');

# ---- samples reach the window's end (flush at snapshot, flush_interval 60 s)
is( $node->safe_psql('postgres', qq{
	SELECT max(i.ended_at) >= e.taken_at - interval '300 ms'
	  FROM folio_perf_data.window w
	  JOIN folio_perf_data.snapshot b ON b.snap_id = w.begin_snap
	  JOIN folio_perf_data.snapshot e ON e.snap_id = w.end_snap
	  JOIN folio_perf_data.sample_interval i
	    ON i.ended_at > b.taken_at AND i.ended_at <= e.taken_at
	 WHERE w.window_id = $w GROUP BY e.taken_at}),
	't', 'last sample of the window is within 300 ms of its end');

# ---- CPU per role is the backends' own CPU time, also for statements that
# run entirely between two samples (the sampler reads /proc/<pid>/stat of an
# idle backend again only when it has run something since)
SKIP:
{
	skip 'no /proc', 3 unless -r "/proc/$$/stat";
	$node->safe_psql('postgres',
		q{ALTER SYSTEM SET folio_perf.sample_interval = '1s'; SELECT pg_reload_conf()});
	$node->poll_query_until('postgres',
		q{SELECT sample_interval_ms = 1000 FROM folio_perf_sampler_status()})
	  or die 'sample_interval not reloaded';
	my $busy = $sessions[0];
	my $bpid = $busy->query_safe('SELECT pg_backend_pid()');
	$bpid =~ s/\s+//g;
	my $clk = POSIX::sysconf(POSIX::_SC_CLK_TCK());
	my $cpu_of = sub {
		open(my $fh, '<', "/proc/$bpid/stat") or die "/proc/$bpid/stat: $!";
		my $line = <$fh>;
		close $fh;
		$line =~ s/^.*\)\s+//;
		my @f = split /\s+/, $line;
		return $f[11] + $f[12];    # utime + stime (fields 14, 15)
	};
	# two idle ticks, so that the sampler has read the idle backend
	my $ticks_after = sub {
		my $t = $node->safe_psql('postgres', 'SELECT now()');
		$node->poll_query_until('postgres', qq{
			SELECT count(DISTINCT sampled_at) >= 2 FROM folio_perf_samples()
			 WHERE sampled_at > '$t'}) or die 'the sampler does not sample';
	};
	$ticks_after->();
	my $j0 = $cpu_of->();
	my $s0 = $node->safe_psql('postgres', 'SELECT folio_perf_snapshot()');
	for (1 .. 4)
	{
		# ~0.1 s of CPU at no particular point of the second: most of these
		# run entirely between two samples
		$busy->query_safe('SELECT count(*) FROM generate_series(1, 1000000)');
		select(undef, undef, undef, 1.1);
	}
	$ticks_after->();
	my $j1 = $cpu_of->();
	my $s1 = $node->safe_psql('postgres', 'SELECT folio_perf_snapshot()');
	my $cw = $node->safe_psql('postgres', "SELECT folio_perf_window($s0, $s1)");
	my $measured = ($j1 - $j0) / $clk;
	my $got = $node->safe_psql('postgres', qq{
		SELECT cpu_seconds FROM folio_perf_cpu($cw)
		 WHERE dimension = 'role' AND key = 'fs01_mod_users'});
	ok($measured >= 0.1, "the busy backend used CPU ($measured s)");
	ok(length($got) && abs($got - $measured) <= 2.0 / $clk + 0.01,
		"CPU of role fs01_mod_users = the backend's own ($got s vs $measured s)");
	is( $node->safe_psql('postgres', qq{
		SELECT count(*) FROM folio_perf_cpu($cw)
		 WHERE dimension = 'role' AND key = 'folio_shared' AND cpu_seconds > 0.05}),
		'0', 'idle sessions of another role are charged nothing');
	$node->safe_psql('postgres',
		q{ALTER SYSTEM SET folio_perf.sample_interval = '100ms'; SELECT pg_reload_conf()});
	$node->poll_query_until('postgres',
		q{SELECT sample_interval_ms = 100 FROM folio_perf_sampler_status()})
	  or die 'sample_interval not reloaded';
}
$_->quit for @sessions;

# ---- the sampler splits role names by folio_perf.schema_pattern when set
$node->safe_psql('postgres', q{
CREATE ROLE t05__billing LOGIN;
ALTER SYSTEM SET folio_perf.schema_pattern = '^(t[0-9]+)__([a-z]+)$';
SELECT pg_reload_conf();
});
{
	my $s = $node->background_psql('postgres', extra_params => [ '-U', 't05__billing' ]);
	$node->poll_query_until('postgres', q{
		SELECT count(*) = 1 FROM folio_perf_samples()
		 WHERE sampled_at = (SELECT max(sampled_at) FROM folio_perf_samples())
		   AND userid = 't05__billing'::regrole})
	  or die 'sampler does not see the t05__billing session';
	my $pw = take_window(1);
	is( $node->safe_psql('postgres', qq{
		SELECT tenant || '|' || module || '|' || attributed_by || '|' || max
		  FROM folio_perf_connections($pw)
		 WHERE dimension = 'role' AND key = 't05__billing'}),
		't05|billing|role|1',
		'the sampler attributes a role by folio_perf.schema_pattern');
	$s->quit;
}
$node->safe_psql('postgres', q{
ALTER SYSTEM RESET folio_perf.schema_pattern;
SELECT pg_reload_conf();
});

# ---- a failed flush is logged, counted, and retried without loss
# Every flush fails from the constraint's commit on.  The one asked for
# fails only if the sampler has a tick to write when it serves it (with
# nothing to write it opens no transaction: a snapshot's flush, or the
# timer's, may just have written everything), and folio_perf_sampler_flush()
# gives up waiting after 10 s (with a WARNING to the caller) while the
# worker may still be busy on a loaded machine: so there is a tick taken
# since the constraint first, and the flush is asked for again until the
# failure is counted (each a failed flush; the log is written once a
# minute, so the first one's WARNING is the one looked for).
my $log_offset = -s $node->logfile;
$node->safe_psql('postgres', q{
	ALTER TABLE folio_perf_data.sample_interval
	  ADD CONSTRAINT test_refuse CHECK (n_ticks < 0) NOT VALID});
$node->poll_query_until('postgres',
	q{SELECT buffer_unflushed > 0 FROM folio_perf_sampler_status()})
  or die 'no tick taken after the constraint';
my $ticks_before = status('ticks');
my $errors_before = status('flush_errors');
$node->poll_query_until('postgres', qq{
	SELECT folio_perf_sampler_flush() IS NOT NULL
	   AND (SELECT flush_errors > $errors_before FROM folio_perf_sampler_status())})
  or diag('no failed flush seen: ' . status('flush_errors, last_error, ticks, ticks_flushed'));
is(status("flush_errors > $errors_before AND last_error LIKE '%test_refuse%'"), 't',
	'failed flush counted with its error');
# (counted before it is logged, so the log is waited for)
my $logged = 0;
for (1 .. 100)
{
	last if $logged = $node->log_contains(qr/WARNING:  sampler could not complete "flush"/, $log_offset);
	select(undef, undef, undef, 0.1);
}
ok($logged, 'failed flush logged as a warning');
is(status("buffer_unflushed > 0 AND ticks_flushed < $ticks_before"), 't',
	'samples kept in shared memory after a failed flush');
$node->safe_psql('postgres', q{
	ALTER TABLE folio_perf_data.sample_interval DROP CONSTRAINT test_refuse});
# (again until served: a flush that waited 10 s in vain returns 0)
$node->poll_query_until('postgres', qq{
	SELECT folio_perf_sampler_flush() IS NOT NULL
	   AND (SELECT ticks_flushed >= $ticks_before FROM folio_perf_sampler_status())})
  or diag('the retained samples not written: ' . status('flush_errors, last_error, ticks_flushed'));
is(status("ticks_flushed >= $ticks_before AND ticks_dropped = 0"), 't',
	'next flush writes the retained samples');

# ---- SIGHUP changes the interval
$node->safe_psql('postgres',
	q{ALTER SYSTEM SET folio_perf.sample_interval = '250ms'; SELECT pg_reload_conf()});
ok($node->poll_query_until('postgres',
	q{SELECT sample_interval_ms = 250 FROM folio_perf_sampler_status()}),
	'reload changes the sampling interval');
$node->safe_psql('postgres', 'SELECT pg_sleep(1.2); SELECT folio_perf_sampler_flush()');
is( $node->safe_psql('postgres', q{
	SELECT max(ended_at) FILTER (WHERE sample_interval_ms = 100)
	         < min(started_at) FILTER (WHERE sample_interval_ms = 250)
	   AND bool_and(n_ticks < 2 OR (tick_ms[n_ticks] - tick_ms[1]) / (n_ticks - 1)
	                >= sample_interval_ms * 0.8)
	   AND bool_or(sample_interval_ms = 250 AND n_ticks >= 3)
	  FROM folio_perf_data.sample_interval}),
	't', 'ticks at the new interval, never mixed with the old in one interval'
	  . ' (no interval\'s ticks closer than its interval; a busy machine only spreads them)');

# ---- timed snapshots
$node->safe_psql('postgres',
	q{ALTER SYSTEM SET folio_perf.snapshot_interval = 1; SELECT pg_reload_conf()});
ok( $node->poll_query_until('postgres', q{
	SELECT snapshots >= 2 FROM folio_perf_sampler_status()}),
	'worker takes timed snapshots');
$node->safe_psql('postgres',
	q{ALTER SYSTEM RESET folio_perf.snapshot_interval; SELECT pg_reload_conf()});
is( $node->safe_psql('postgres', q{
	SELECT count(*) >= 2 FROM folio_perf_data.snapshot WHERE kind = 'timed' OR label = 'timed'}),
	't', 'timed snapshots stored');
is( $node->safe_psql('postgres', q{
	SELECT count(*) > 0 FROM folio_perf_data.sample_interval WHERE cut = 'snapshot'}),
	't', 'timed snapshots cut intervals');
is(status('snapshot_errors'), '0', 'no snapshot errors');

# ---- the worker comes back after being terminated
my $pid = status('pid');
$node->safe_psql('postgres', "SELECT pg_terminate_backend($pid)");
ok( $node->poll_query_until('postgres', qq{
	SELECT pid IS NOT NULL AND pid <> $pid AND state = 'sampling'
	  FROM folio_perf_sampler_status()}),
	'worker restarts after pg_terminate_backend');
is(status('starts'), '2', 'second start counted');

# ---- ... and after kill -9 (the server restarts its processes)
$pid = status('pid');
$log_offset = -s $node->logfile;
kill 'KILL', $pid;
ok( $node->poll_query_until('postgres', qq{
	SELECT pid IS NOT NULL AND pid <> $pid FROM folio_perf_sampler_status()}),
	'worker back after kill -9');
ok( $node->log_contains(qr/folio_perf sampler.*was terminated by signal 9/, $log_offset),
	'crash of the worker logged');
ok( $node->poll_query_until('postgres', q{
	SELECT folio_perf_sampler_flush() >= 0
	   AND (SELECT state = 'sampling' AND ticks_flushed > 0 FROM folio_perf_sampler_status())}),
	'worker samples and stores again');

# ---- sampler off: reports say so in one line
$node->safe_psql('postgres',
	q{ALTER SYSTEM SET folio_perf.sample_interval = 0; SELECT pg_reload_conf()});
ok($node->poll_query_until('postgres',
	q{SELECT state = 'off' FROM folio_perf_sampler_status()}),
	'sample_interval = 0 turns sampling off');
$w = take_window(1);
is( $node->safe_psql('postgres', "SELECT dimension, key FROM folio_perf_connections($w)"),
	'sampler|off: no samples in this window (folio_perf.sample_interval is 0)',
	'connections: one line when the sampler is off');
is( $node->safe_psql('postgres', "SELECT count(*) FROM folio_perf_db_load($w)"),
	'1', 'db load: one line when the sampler is off');
$node->safe_psql('postgres',
	q{ALTER SYSTEM RESET folio_perf.sample_interval; SELECT pg_reload_conf()});

# ---- a clean stop writes what the ring holds
ok( $node->poll_query_until('postgres', q{
	SELECT state = 'sampling' AND buffer_unflushed > 0 FROM folio_perf_sampler_status()}),
	'sampling again, samples waiting to be flushed');

# ---- without preloading
$node->append_conf('postgresql.conf',
	"shared_preload_libraries = 'pg_stat_statements'");
$node->restart;
is( $node->safe_psql('postgres',
		q{SELECT count(*) > 0 FROM folio_perf_data.sample_interval WHERE cut = 'shutdown'}),
	't', 'samples taken before the stop were flushed at shutdown');
is(status('preloaded, state'), 'f|not preloaded', 'status without preload');
is($node->safe_psql('postgres', 'SELECT folio_perf_sampler_flush()'),
	'0', 'flush is a no-op without preload');
$w = take_window(0.5);
is( $node->safe_psql('postgres', "SELECT key FROM folio_perf_connections($w)"),
	'off: no samples in this window (folio_perf is not in shared_preload_libraries)',
	'reports say the sampler is not preloaded');

$node->stop;
done_testing();
