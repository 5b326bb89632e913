# test/t/016_attacks.pl - every attack on folio_perf so far, in one table:
# each entry plants something that would run a hostile role's code (or
# hide or leak something) when folio_perf does what it does, shows with a
# control that the plant fires when it is reached, then makes folio_perf
# do it and checks that nothing of the plant ran.  Plants record every
# run in attack.ran (the attack's name, the role it ran as, whether that
# role is a superuser), so "nothing ran" is one count.
#
# In the table (@attacks): the race of di_jobs_read (ALTER COLUMN TYPE;
# a _RETURN rule, read committed and repeatable read), the module role's
# cast of its enum to text and job_execution replaced by a view (earlier:
# TAP 040), a planted work table of the capture with a trigger (earlier:
# regress privileges), a reader's CHECK constraint, domain and generated
# column on its own report cache, and a function that is not folio_perf's
# running inside a capture.  After it: operation definitions of another
# writer, passwords in statement texts (a corpus of 27, pg_dump), a flood
# of folio_perf's own query-id set, floods of the relation store and the
# metrics keys, and functions planted in the extension's schema.  Still
# only in their own files: the worker's planted public functions and
# operator (TAP 061), the planted function for every argument of every
# function and the texts' visibility (regress privileges), restricted
# remote targets (TAP 031), a function of nobody's taken for folio_perf's
# when another session changed pg_proc during its lookup (TAP 019).
# Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)
use strict;
use warnings;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

my $node = PostgreSQL::Test::Cluster->new('attacks');
$node->init;
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'pg_stat_statements,folio_perf'
pg_stat_statements.track = all
# the flood below is about folio_perf's set, not pg_stat_statements' own
pg_stat_statements.max = 40000
# small stores, for the floods of the relation store and the metrics keys
folio_perf.max_queries = 200
folio_perf.metrics_keys = 64
compute_query_id = on
folio_perf.sample_interval = 100
folio_perf.flush_interval = 1
folio_perf.database = 'folio'
});
$node->start;
$node->safe_psql('postgres', 'CREATE DATABASE folio');

sub q1 { return $node->safe_psql('folio', @_); }

# psql as a role; (ret, stdout, stderr)
sub as_role
{
	my ($role, $sql) = @_;
	my ($ret, $out, $err) = $node->psql('folio', $sql, extra_params => [ '-U', $role ]);
	return ($ret, $out, $err);
}

# a psql that runs in the background until finish()
sub start_psql
{
	my ($role, $sql) = @_;
	my %h = (out => '', err => '');
	$h{h} = IPC::Run::start(
		[ 'psql', '-X', '-A', '-t', '-v', 'ON_ERROR_STOP=1', '-h', $node->host, '-p', $node->port,
		  '-U', $role, '-d', 'folio', '-c', $sql ],
		'>', \$h{out}, '2>', \$h{err});
	return \%h;
}

sub finish_psql
{
	my ($h) = @_;
	$h->{h}->finish;
	$h->{ret} = $h->{h}->result;
	chomp $h->{out};
	return $h;
}

sub ran
{
	my ($attack) = @_;
	return q1(qq{SELECT (count(*) > 0)::int || ':' || coalesce(bool_or(su), false) FROM attack.ran WHERE attack = '$attack'});
}

sub clear_ran { q1(q{DELETE FROM attack.ran}); }

q1(q{
CREATE EXTENSION pg_stat_statements;
CREATE EXTENSION folio_perf;
CREATE ROLE rdr LOGIN;
GRANT folio_perf_reader TO rdr;
CREATE ROLE wrt LOGIN;
GRANT folio_perf_writer TO wrt;
-- where plants record that they ran
CREATE SCHEMA attack;
CREATE TABLE attack.ran (attack text, who name, su boolean, at timestamptz DEFAULT clock_timestamp());
GRANT USAGE ON SCHEMA attack TO PUBLIC;
GRANT SELECT, INSERT ON attack.ran TO PUBLIC;
CREATE FUNCTION attack.mark(p_attack text) RETURNS boolean
LANGUAGE sql VOLATILE SET search_path = pg_catalog AS $$
    INSERT INTO attack.ran (attack, who, su)
    SELECT p_attack, current_user, r.rolsuper FROM pg_roles r WHERE r.rolname = current_user
    RETURNING true
$$;
GRANT EXECUTE ON FUNCTION attack.mark(text) TO PUBLIC;
});

# ---- tenants whose data-import module role attacks di_jobs_read -------
# ta01: job_execution as the module has it, with a split file (a
# COMPOSITE_PARENT whose parts' progress_total the reader sums);
# tb01..tb02: an empty job_execution without indexes (a table PostgreSQL
# 15 lets its owner turn into a view with a _RETURN rule) and the jobs in
# a table beside it.
my $jobcols = q{id uuid, hrid bigint, parent_job_id uuid, subordination_type text, file_name text,
	progress_current int, progress_total int, started_date timestamptz, completed_date timestamptz,
	status text, job_profile_name text, is_deleted boolean NOT NULL DEFAULT false};
for my $t (qw(ta01 tb01 tb02))
{
	my $s = "${t}_mod_source_record_manager";
	q1(qq{
CREATE ROLE $s LOGIN;
CREATE SCHEMA $s AUTHORIZATION $s;
SET ROLE $s;
CREATE TABLE $s.job_execution ($jobcols);
CREATE TABLE $s.jobs_beside ($jobcols);
});
}
my $wa = q1(q{SELECT folio_perf_begin('attacks')});
for my $t (qw(ta01 tb01 tb02))
{
	my $s = "${t}_mod_source_record_manager";
	my $into = $t =~ /^ta/ ? 'job_execution' : 'jobs_beside';
	q1(qq{
INSERT INTO $s.$into (id, hrid, parent_job_id, subordination_type, file_name, progress_current,
	progress_total, started_date, completed_date, status, job_profile_name)
VALUES ('00000001-0000-4000-8000-000000000001', 1, '00000001-0000-4000-8000-000000000001',
        'COMPOSITE_PARENT', 'split.mrc', 10, 10, clock_timestamp(), clock_timestamp(), 'COMMITTED', 'p'),
       ('00000001-0000-4000-8000-000000000002', 2, '00000001-0000-4000-8000-000000000001',
        'COMPOSITE_CHILD', 'split_1.mrc', 10, 10, clock_timestamp(), clock_timestamp(), 'COMMITTED', 'p');
});
}
is(q1("SELECT folio_perf_end($wa)"), $wa, 'a window over the tenants\' jobs');
is( q1(qq{SELECT string_agg(tenant || ':' || records, ',' ORDER BY tenant) FROM folio_perf_data_import_jobs($wa)}),
	'ta01:10', 'the jobs of ta01 are read (tb01, tb02 keep theirs beside job_execution)');

# ---- windows for the reports' cache, and a victim statement ---------
# attack.victim_N: a statement an application runs, which a reader wants
# to hide from every report by getting its query id recorded as
# folio_perf's own.
q1(q{CREATE ROLE app LOGIN;});
for my $n (1 .. 4)
{
	q1(qq{CREATE TABLE attack.victim_$n (x int); GRANT SELECT ON attack.victim_$n TO PUBLIC;});
}
my @w = map { my $b = q1("SELECT folio_perf_begin('cache $_')"); q1("SELECT folio_perf_end($b)") } 1 .. 2;
my $rdr_oid = q1(q{SELECT oid FROM pg_roles WHERE rolname = 'rdr'});

# The reader's own cache tables (they are its own, so "created by the
# current role" holds) get a plant attached within one transaction:
# the first report creates them, the plant is added, the second report
# (another window) inserts into them.  Then the victim runs in a new
# window: the report must show it.
sub cache_poison
{
	my ($name, $victim, $plant) = @_;
	# (the reports compute through the cache only without stored window
	# facts: folio_perf.window_facts = off, which any user may set)
	my ($ret, $o, $e) = as_role('rdr', qq{
BEGIN;
SET LOCAL folio_perf.window_facts = off;
SELECT count(*) >= 0 FROM folio_perf_top_statements($w[0]);
CREATE FUNCTION pg_temp.f(bigint) RETURNS boolean LANGUAGE plpgsql IMMUTABLE AS \$\$
BEGIN
    IF current_setting('attack.armed', true) = 'on' THEN
        PERFORM attack.mark('$name'); PERFORM count(*) FROM attack.$victim;
    END IF;
    RETURN true;
END\$\$;
$plant
-- armed after the plant (adding it checks the rows already there)
SET LOCAL attack.armed = 'on';
SELECT count(*) >= 0 FROM folio_perf_top_statements($w[1]);
COMMIT;});
	my $wv = q1("SELECT folio_perf_begin('victim of $name')");
	$node->safe_psql('folio', "SELECT count(*) FROM attack.$victim", extra_params => [ '-U', 'app' ]);
	q1("SELECT folio_perf_end($wv)");
	my $shown = q1(qq{SELECT count(*) FROM folio_perf_top_statements($wv, 1000)
		WHERE query = 'SELECT count(*) FROM attack.$victim'});
	my $own = q1(qq{SELECT bool_or(folio_perf_data.own_queryid(queryid)) FROM pg_stat_statements
		WHERE query = 'SELECT count(*) FROM attack.$victim'});
	is($ret, 0, "$name: the reader's cache tables took the plant (the path is reached)") or diag($e);
	return "reader exit $ret $e; the victim's statement in the next window's top statements: $shown, "
	  . "recorded as folio_perf's: $own";
}

# ---- the attacks ------------------------------------------------------
#
# Each: name; plant (SQL as role); control (code that reaches the plant,
# as the extension's owner, and must record a run as a superuser); attack
# (makes folio_perf do its part; returns a description of what it saw);
# then attack.ran must hold nothing for it.

# The race of di_jobs_read: the module role holds an uncommitted change of
# its job_execution that keeps the table's oid, waits until a reader's
# folio_perf function asks for the table's lock, and commits; the reader
# must then check what it holds, not what it checked before.  (ALTER
# COLUMN TYPE rewrites the table, whose rows a repeatable read snapshot
# taken before the commit then does not see: that variant runs nothing
# even unfixed, so only the view is tried in both isolation levels.)
sub di_race
{
	my ($name, $schema, $change, $isolation) = @_;
	my $att = $node->background_psql('folio', extra_params => [ '-U', $schema ]);
	$att->query_safe("BEGIN; $change");
	my $rel = q1(qq{SELECT '$schema.job_execution'::regclass::oid});
	my $sql = $isolation eq 'read committed'
	  ? "SELECT count(*) FROM folio_perf_data_import_jobs($wa)"
	  : "BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT 1; SELECT count(*) FROM folio_perf_data_import_jobs($wa); COMMIT";
	my $reader = start_psql('rdr', $sql);
	my $waited = $node->poll_query_until('folio', qq{
		SELECT EXISTS (SELECT FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
		               WHERE l.relation = $rel AND NOT l.granted AND a.usename = 'rdr')});
	# the race is run only if the reader asked for the lock while the change
	# was uncommitted (#37: this was only described, never asserted).
	# Mutation run: the COMMIT below moved before start_psql (the reader
	# then never waits) fails this.
	ok($waited, "$name: the reader waited for the table's lock while the change was uncommitted");
	$att->query_safe('COMMIT');
	$att->quit;
	finish_psql($reader);
	return ($waited ? 'the reader waited for the lock while the change was uncommitted' : 'the reader never waited')
	  . "; reader exit $reader->{ret}: $reader->{out} $reader->{err}";
}

my @attacks = (
	{
		name => 'di_jobs_alter_type_rc',
		race => 1,
		what => 'job_execution.progress_total changed (same oid) to an enum with an implicit cast to int8 that runs the module role\'s function, while a reader (read committed) waits for the lock',
		plant => [ 'ta01_mod_source_record_manager', q{
CREATE TYPE ta01_mod_source_record_manager.n AS ENUM ('10');
CREATE FUNCTION ta01_mod_source_record_manager.n_int8(ta01_mod_source_record_manager.n) RETURNS int8
	LANGUAGE plpgsql VOLATILE AS $$BEGIN PERFORM attack.mark('di_jobs_alter_type_rc'); RETURN 10; END$$;
CREATE CAST (ta01_mod_source_record_manager.n AS int8) WITH FUNCTION ta01_mod_source_record_manager.n_int8 AS IMPLICIT;} ],
		attack => sub {
			return di_race('di_jobs_alter_type_rc', 'ta01_mod_source_record_manager',
				q{ALTER TABLE ta01_mod_source_record_manager.job_execution ALTER COLUMN progress_total
				  TYPE ta01_mod_source_record_manager.n USING '10';}, 'read committed');
		},
		control => q{SELECT sum(progress_total) FROM ta01_mod_source_record_manager.job_execution},
	},
	{
		name => 'di_jobs_return_rule_rc',
		race => 1,
		# PostgreSQL 16 removed turning a table into a view by a rule
		before_version => 160000,
		what => 'job_execution turned into a view (same oid, relkind v) by a _RETURN rule whose list runs the module role\'s function, while a reader waits for the lock',
		plant => [ 'tb01_mod_source_record_manager', q{
CREATE FUNCTION tb01_mod_source_record_manager.f(int) RETURNS int
	LANGUAGE plpgsql VOLATILE AS $$BEGIN PERFORM attack.mark('di_jobs_return_rule_rc'); RETURN $1; END$$;} ],
		attack => sub {
			return di_race('di_jobs_return_rule_rc', 'tb01_mod_source_record_manager', q{
CREATE RULE "_RETURN" AS ON SELECT TO tb01_mod_source_record_manager.job_execution DO INSTEAD
	SELECT b.id, b.hrid, b.parent_job_id, b.subordination_type, b.file_name, b.progress_current,
	       tb01_mod_source_record_manager.f(b.progress_total) AS progress_total, b.started_date,
	       b.completed_date, b.status, b.job_profile_name, b.is_deleted
	FROM tb01_mod_source_record_manager.jobs_beside b;}, 'read committed');
		},
		control => q{SELECT count(progress_total) FROM tb01_mod_source_record_manager.job_execution},
	},
	{
		name => 'di_jobs_return_rule_rr',
		race => 1,
		# PostgreSQL 16 removed turning a table into a view by a rule
		before_version => 160000,
		what => 'the same view while a reader in a repeatable read transaction waits for the lock',
		plant => [ 'tb02_mod_source_record_manager', q{
CREATE FUNCTION tb02_mod_source_record_manager.f(int) RETURNS int
	LANGUAGE plpgsql VOLATILE AS $$BEGIN PERFORM attack.mark('di_jobs_return_rule_rr'); RETURN $1; END$$;} ],
		attack => sub {
			return di_race('di_jobs_return_rule_rr', 'tb02_mod_source_record_manager', q{
CREATE RULE "_RETURN" AS ON SELECT TO tb02_mod_source_record_manager.job_execution DO INSTEAD
	SELECT b.id, b.hrid, b.parent_job_id, b.subordination_type, b.file_name, b.progress_current,
	       tb02_mod_source_record_manager.f(b.progress_total) AS progress_total, b.started_date,
	       b.completed_date, b.status, b.job_profile_name, b.is_deleted
	FROM tb02_mod_source_record_manager.jobs_beside b;}, 'repeatable read');
		},
		control => q{SELECT count(progress_total) FROM tb02_mod_source_record_manager.job_execution},
	},
);

# Earlier attacks (TAP 040, regress privileges), in this table too: the
# module role's own cast of its enum to text, job_execution replaced by a
# view after the window, and a temporary table planted under the name of
# a capture's work table, with a trigger.
for my $t (qw(tc01 td01))
{
	my $s = "${t}_mod_source_record_manager";
	q1(qq{
CREATE ROLE $s LOGIN;
CREATE SCHEMA $s AUTHORIZATION $s;
SET ROLE $s;
CREATE TYPE $s.job_status AS ENUM ('COMMITTED', 'ERROR');
CREATE TABLE $s.job_execution (id uuid, hrid bigint, parent_job_id uuid, subordination_type text,
	file_name text, progress_current int, progress_total int, started_date timestamptz,
	completed_date timestamptz, status $s.job_status, job_profile_name text);
});
}
my $wc = q1(q{SELECT folio_perf_begin('earlier attacks')});
for my $t (qw(tc01 td01))
{
	q1(qq{INSERT INTO ${t}_mod_source_record_manager.job_execution
		VALUES (gen_random_uuid(), 1, NULL, 'PARENT_SINGLE', 'f.mrc', 5, 5, clock_timestamp(), clock_timestamp(), 'COMMITTED', 'p')});
}
q1("SELECT folio_perf_end($wc)");
push @attacks, (
	{
		name => 'di_jobs_enum_cast_to_text',
		what => 'the module role casts its status enum to text with its own function (TAP 040)',
		plant => [ 'tc01_mod_source_record_manager', q{
CREATE FUNCTION tc01_mod_source_record_manager.st_text(tc01_mod_source_record_manager.job_status) RETURNS text
	LANGUAGE plpgsql AS $$BEGIN PERFORM attack.mark('di_jobs_enum_cast_to_text'); RETURN 'x'; END$$;
CREATE CAST (tc01_mod_source_record_manager.job_status AS text)
	WITH FUNCTION tc01_mod_source_record_manager.st_text(tc01_mod_source_record_manager.job_status) AS IMPLICIT;} ],
		attack => sub {
			my ($ret, $o, $e) = as_role('rdr', qq{SELECT string_agg(tenant || ':' || status, ',') FROM folio_perf_data_import_jobs($wc) WHERE tenant = 'tc01'});
			is($o, 'tc01:COMMITTED', 'di_jobs_enum_cast_to_text: the job is read, its status by the type\'s output function') or diag($e);
			return "reader got $o";
		},
		control => q{SELECT status::text FROM tc01_mod_source_record_manager.job_execution},
	},
	{
		name => 'di_jobs_view_after_window',
		what => 'job_execution renamed and replaced by a view that runs the module role\'s function, after the window (TAP 040)',
		plant => [ 'td01_mod_source_record_manager', q{
CREATE FUNCTION td01_mod_source_record_manager.f() RETURNS int
	LANGUAGE plpgsql AS $$BEGIN PERFORM attack.mark('di_jobs_view_after_window'); RETURN 1; END$$;
ALTER TABLE td01_mod_source_record_manager.job_execution RENAME TO job_execution_was;
CREATE VIEW td01_mod_source_record_manager.job_execution AS
	SELECT j.*, td01_mod_source_record_manager.f() AS x FROM td01_mod_source_record_manager.job_execution_was j;} ],
		attack => sub {
			my ($ret, $o, $e) = as_role('rdr', qq{SELECT count(*) FROM folio_perf_data_import_jobs($wc) WHERE tenant = 'td01'});
			is("$ret $o", '0 0', 'di_jobs_view_after_window: a job_execution that is a view is not read') or diag($e);
			return "reader got $o";
		},
		control => q{SELECT count(x) FROM td01_mod_source_record_manager.job_execution},
	},
	{
		name => 'capture_work_table_trigger',
		what => 'a writer plants a temporary table fperf_cur_stmt with a trigger before its first snapshot (regress privileges)',
		attack => sub {
			my ($ret, $o, $e) = as_role('wrt', q{
CREATE FUNCTION pg_temp.f() RETURNS trigger LANGUAGE plpgsql AS $$BEGIN PERFORM attack.mark('capture_work_table_trigger'); RETURN NULL; END$$;
CREATE TEMP TABLE fperf_cur_stmt (x int);
CREATE TRIGGER t AFTER INSERT OR UPDATE OR DELETE ON fperf_cur_stmt FOR EACH STATEMENT EXECUTE FUNCTION pg_temp.f();
SELECT folio_perf_snapshot('planted work table');});
			like($e, qr/temporary table "fperf_cur_stmt" was not created by folio_perf/,
				'capture_work_table_trigger: the snapshot refuses the planted table');
			return 'snapshot refused';
		},
		control => sub {
			return as_role('wrt', q{
CREATE FUNCTION pg_temp.f() RETURNS trigger LANGUAGE plpgsql AS $$BEGIN PERFORM attack.mark('capture_work_table_trigger'); RETURN NULL; END$$;
CREATE TEMP TABLE fperf_cur_stmt (x int);
CREATE TRIGGER t AFTER INSERT ON fperf_cur_stmt FOR EACH STATEMENT EXECUTE FUNCTION pg_temp.f();
INSERT INTO fperf_cur_stmt VALUES (1);});
		},
		control_ran => '1:false',
	},
	{
		name => 'window_cache_check',
		what => 'a reader adds CHECK (pg_temp.f(b)) to its own window_cache table; f runs a victim statement',
		attack => sub {
			my $saw = cache_poison('window_cache_check', 'victim_1',
				"ALTER TABLE pg_temp.fperf_stmt_delta_$rdr_oid ADD CHECK (pg_temp.f(b));");
			like($saw, qr/top statements: 1, recorded as folio_perf's: f$/,
				'window_cache_check: the victim statement is shown in a later window, not recorded as folio_perf\'s');
			return $saw;
		},
		# the same plant reached by an insert of the reader's own
		control => sub {
			return as_role('rdr', qq{BEGIN;
CREATE FUNCTION pg_temp.f(bigint) RETURNS boolean LANGUAGE plpgsql AS \$\$
BEGIN PERFORM attack.mark('window_cache_check'); RETURN true; END\$\$;
CREATE TEMP TABLE fperf_stmt_delta_$rdr_oid (b bigint CHECK (pg_temp.f(b)));
INSERT INTO fperf_stmt_delta_$rdr_oid VALUES (1); COMMIT;});
		},
		control_ran => '1:false',
	},
	{
		name => 'window_cache_domain',
		what => 'a reader changes column b of its own window_cache table to a domain whose CHECK calls pg_temp.f',
		attack => sub {
			my $saw = cache_poison('window_cache_domain', 'victim_2', qq{
CREATE DOMAIN pg_temp.d AS bigint CHECK (pg_temp.f(VALUE));
ALTER TABLE pg_temp.fperf_stmt_delta_$rdr_oid ALTER COLUMN b TYPE pg_temp.d;});
			like($saw, qr/top statements: 1, recorded as folio_perf's: f$/,
				'window_cache_domain: the victim statement is shown in a later window, not recorded as folio_perf\'s');
			return $saw;
		},
		control => sub {
			return as_role('rdr', qq{BEGIN;
CREATE FUNCTION pg_temp.f(bigint) RETURNS boolean LANGUAGE plpgsql AS \$\$
BEGIN PERFORM attack.mark('window_cache_domain'); RETURN true; END\$\$;
CREATE DOMAIN pg_temp.d AS bigint CHECK (pg_temp.f(VALUE));
SELECT 1::pg_temp.d; COMMIT;});
		},
		control_ran => '1:false',
	},
	{
		name => 'window_cache_generated',
		what => 'a reader adds a generated column computed by pg_temp.f to its own window_cache table',
		attack => sub {
			my $saw = cache_poison('window_cache_generated', 'victim_3',
				"ALTER TABLE pg_temp.fperf_stmt_delta_$rdr_oid ADD COLUMN g boolean GENERATED ALWAYS AS (pg_temp.f(b)) STORED;");
			like($saw, qr/top statements: 1, recorded as folio_perf's: f$/,
				'window_cache_generated: the victim statement is shown in a later window, not recorded as folio_perf\'s');
			return $saw;
		},
		control => sub {
			return as_role('rdr', qq{BEGIN;
CREATE FUNCTION pg_temp.f(bigint) RETURNS boolean LANGUAGE plpgsql IMMUTABLE AS \$\$
BEGIN PERFORM attack.mark('window_cache_generated'); RETURN true; END\$\$;
CREATE TEMP TABLE g (b bigint, g boolean GENERATED ALWAYS AS (pg_temp.f(b)) STORED);
INSERT INTO g (b) VALUES (1); COMMIT;});
		},
		control_ran => '1:false',
	},
	{
		# defence in depth for the query-id set: code that is not
		# folio_perf's, reached while folio_perf's function runs, records
		# nothing.  A superuser's trigger on folio_perf's own table stands
		# in for any such path (no role but the owner can attach one).
		name => 'own_set_foreign_function',
		what => 'a trigger function on folio_perf_data.snapshot runs a victim statement during every capture',
		plant => [ 'postgres', q{
CREATE FUNCTION attack.on_snapshot() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF current_setting('attack.armed', true) = 'on' THEN
        PERFORM attack.mark('own_set_foreign_function');
        PERFORM count(*) FROM attack.victim_4;
    END IF;
    RETURN NULL;
END$$;
CREATE TRIGGER on_snapshot AFTER INSERT ON folio_perf_data.snapshot
    FOR EACH ROW EXECUTE FUNCTION attack.on_snapshot();} ],
		attack => sub {
			my ($ret, $o, $e) = $node->psql('folio', q{SET attack.armed = 'on'; SELECT folio_perf_snapshot('armed') > 0;});
			my $victim = q1(q{SELECT bool_or(folio_perf_data.own_queryid(queryid)) FROM pg_stat_statements
				WHERE query = 'SELECT count(*) FROM attack.victim_4'});
			my $capture = q1(q{SELECT bool_or(folio_perf_data.own_queryid(queryid)) FROM pg_stat_statements
				WHERE query LIKE 'INSERT INTO folio_perf_data.snapshot%'});
			is("$victim,$capture", 'f,t',
				'own_set_foreign_function: the trigger\'s statement is not recorded as folio_perf\'s; the capture\'s own INSERT is (control)');
			# the trigger ran (it is the owner's: that is allowed); what
			# matters is what was recorded
			q1(q{DELETE FROM attack.ran});
			return "snapshot exit $ret $e; the victim recorded: $victim";
		},
		control => q{SET attack.armed = 'on'; SELECT folio_perf_snapshot('control') > 0},
		after => sub { q1(q{DROP TRIGGER on_snapshot ON folio_perf_data.snapshot}); },
	},
);

my $server_num = $node->safe_psql('folio', 'SHOW server_version_num');
for my $a (@attacks)
{
	if ($a->{before_version} && $server_num >= $a->{before_version})
	{
	  SKIP:
		{
			skip("version: PostgreSQL $server_num cannot turn a table into a view with a _RETURN rule (removed in 16): $a->{name} cannot be planted",
				3 + ($a->{race} ? 1 : 0));
		}
		next;
	}
	clear_ran();
	if ($a->{plant})
	{
		my ($role, $sql) = @{ $a->{plant} };
		my ($ret, $o, $e) = as_role($role, $sql);
		is($ret, 0, "$a->{name}: planted ($a->{what})") or diag($e);
	}
	my $saw = $a->{attack}->();
	is(ran($a->{name}), '0:false', "$a->{name}: nothing of the plant ran ($saw)");
	# the control: the same objects, reached as the extension's owner
	my $expect = $a->{control_ran} // '1:true';
	my ($ret, $o, $e) = ref $a->{control} ? $a->{control}->() : $node->psql('folio', $a->{control});
	is(ran($a->{name}), $expect,
		"$a->{name}: control: reaching the plant runs it"
		  . ($expect eq '1:true' ? ' as a superuser (the extension\'s owner)' : ' (as the role itself)'))
	  or diag("$o $e");
	$a->{after}->() if $a->{after};
}

# ---- operation definitions belong to their writer -------------------
# wrt adds a definition; wrt2, another writer, tries to change and delete
# it.  Control: wrt itself changes it.
q1(q{CREATE ROLE wrt2 LOGIN; GRANT folio_perf_writer TO wrt2;});
{
	my ($ret, $o, $e) = as_role('wrt', q{INSERT INTO folio_perf_operation_definitions
		(operation, module, relation, description, owner)
		VALUES ('loan_renewed', 'mod_circulation_storage', 'loan', 'mine', 'wrt2')});
	is($ret, 0, 'operations: a writer adds a definition') or diag($e);
	is(q1(q{SELECT owner FROM folio_perf_operation_definitions WHERE operation = 'loan_renewed'}), 'wrt',
		'operations: it is the writer\'s, whatever owner the INSERT gave');
	for my $change (
		[ 'UPDATE folio_perf_operation_definitions', q{UPDATE folio_perf_operation_definitions SET relation = 'request' WHERE operation = 'loan_renewed'} ],
		[ 'UPDATE folio_perf_data.operation', q{UPDATE folio_perf_data.operation SET description = 'theirs' WHERE operation = 'loan_renewed'} ],
		[ 'UPDATE ... SET owner', q{UPDATE folio_perf_data.operation SET owner = 'wrt2' WHERE operation = 'loan_renewed'} ],
		[ 'DELETE', q{DELETE FROM folio_perf_operation_definitions WHERE operation = 'loan_renewed'} ])
	{
		($ret, $o, $e) = as_role('wrt2', $change->[1]);
		like($e, qr/operation "loan_renewed" belongs to role "wrt"/, "operations: another writer's $change->[0] is refused");
	}
	is( q1(q{SELECT relation || ',' || description || ',' || owner FROM folio_perf_operation_definitions
		WHERE operation = 'loan_renewed'}), 'loan,mine,wrt', 'operations: the definition is unchanged');
	($ret, $o, $e) = as_role('wrt', q{UPDATE folio_perf_operation_definitions SET owner = 'wrt2', description = 'changed'
		WHERE operation = 'loan_renewed' RETURNING description || ',' || owner});
	is($o, 'changed,wrt', 'operations: control: its writer changes it (but not its owner)') or diag($e);
	($ret, $o, $e) = as_role('wrt', q{DELETE FROM folio_perf_operation_definitions WHERE operation = 'loan_renewed' RETURNING operation});
	is($o, 'loan_renewed', 'operations: control: its writer deletes it') or diag($e);
}

# ---- passwords in statement texts --------------------------------------
# pg_stat_statements keeps utility statements and comments as typed: each
# of these puts one password (sekretNN) into a text that a snapshot stores
# and pg_dump dumps.  Control: each is in pg_stat_statements.
q1(q{CREATE EXTENSION dblink; CREATE ROLE c1; CREATE FOREIGN DATA WRAPPER w; CREATE SERVER s FOREIGN DATA WRAPPER w;});
my @corpus = (
	q{CREATE ROLE c2 LOGIN PASSWORD 'sekret01' VALID UNTIL 'infinity'},
	q{ALTER ROLE c1 WITH ENCRYPTED PASSWORD 'sekret02'},
	q{alter user c1 password $p$sekret03$p$},
	q{ALTER ROLE c1 PASSWORD E'sek\'ret04'},
	q{ALTER ROLE c1 PASSWORD /* a comment */ 'sekret05'},
	q{DO $$ BEGIN EXECUTE 'ALTER ROLE c1 PASSWORD ''sekret06'''; END $$},
	q{DO $do$ BEGIN PERFORM 1 WHERE 'host=h password=sekret07' IS NULL; END $do$},
	q{DO $$ BEGIN PERFORM folio_perf_target_add('t8', 'host=127.0.0.1 port=1 connect_timeout=1 password=sekret08');
	  EXCEPTION WHEN OTHERS THEN NULL; END $$},
	q{DO $$ BEGIN PERFORM dblink_connect('c9', 'host=127.0.0.1 port=1 connect_timeout=1 user=u password=''sekret09''');
	  EXCEPTION WHEN OTHERS THEN NULL; END $$},
	q{DO $$ BEGIN PERFORM 1 WHERE 'postgresql://u:sekret10@h:5432/db' IS NULL; END $$},
	q{DO $$ BEGIN PERFORM 1 WHERE 'postgres://h/db?user=u&password=sekret11' IS NULL; END $$},
	q{ALTER SERVER s OPTIONS (ADD host 'h', ADD password 'sekret12')},
	q{ALTER SERVER s OPTIONS (SET password 'sekret13')},
	q{CREATE USER MAPPING FOR c1 SERVER s OPTIONS (user 'u', password 'sekret14')},
	q{ALTER USER MAPPING FOR c1 SERVER s OPTIONS (SET password 'sekret15')},
	q{DO $$ BEGIN PERFORM '{"user": "u", "password": "sekret16"}'::jsonb; END $$},
	q{DO $$ BEGIN PERFORM 1 WHERE 'host=h PassWord = sekret17' IS NULL; END $$},
	q{DO $$ BEGIN PERFORM 1 WHERE 'PGPASSWORD=sekret18 psql -h h' IS NULL; END $$},
	q{DO $$ BEGIN PERFORM 1 WHERE 'host=h sslpassword=sekret19 sslkey=k' IS NULL; END $$},
	q{DO $$ BEGIN PERFORM 1 WHERE '"password"=>"sekret20"' IS NULL; END $$},
	qq{ALTER ROLE c1 PASSWORD 'sek\nret21'},
	q{ALTER SYSTEM SET primary_conninfo = 'host=h user=u password=sekret22'},
	qq{DO \$\$ BEGIN PERFORM 1 WHERE 'host=h password\t=\n''sekret23''' IS NULL; END \$\$},
	q{/* deployed from postgresql://ci:sekret24@ci.example/db */ SELECT count(*) FROM pg_class WHERE relname = 'x'},
	q{/* password=sekret27 */ SELECT count(*) FROM pg_namespace},
	q{DO $$ BEGIN EXECUTE format('CREATE USER MAPPING FOR %I SERVER s OPTIONS (password %L)', 'c2', 'sekret25'); END $$},
	q{DO $$ BEGIN PERFORM 1 WHERE 'mysql://u:sekret26@h/db' IS NULL; END $$},
);
my $wr = q1(q{SELECT folio_perf_begin('redaction')});
for my $c (@corpus)
{
	my ($ret, $o, $e) = $node->psql('folio', $c);
	is($ret, 0, 'redaction corpus: ran ' . substr($c =~ s/\s+/ /gr, 0, 60)) or diag($e);
}
q1(q{ALTER SYSTEM RESET primary_conninfo});
q1("SELECT folio_perf_end($wr)");
my @n = map { sprintf('%02d', $_) } 1 .. scalar(@corpus);
# PostgreSQL 18's pg_stat_statements does not keep three of them as typed
# (22, ALTER SYSTEM's value, which 18 normalizes; 24 and 27, the two
# commented SELECTs, for a reason not established here): nothing of theirs
# to redact there, which the next test checks all the same
my %not_kept = $server_num >= 180000 ? map { $_ => 1 } qw(22 24 27) : ();
my @kept = grep { !$not_kept{$_} } @n;
is( q1(q{SELECT string_agg(n, ',' ORDER BY n) FROM (SELECT DISTINCT (regexp_matches(query, 'sek.{0,2}ret(\d\d)', 'g'))[1] AS n
	FROM pg_stat_statements WHERE query ~ 'sek.{0,2}ret\d\d') x}),
	join(',', @kept), 'control: pg_stat_statements holds every password of the corpus as typed'
	  . (%not_kept ? ' but ' . join(', ', sort keys %not_kept) . ' (PostgreSQL 18 does not keep them)' : ''));
is( q1(q{SELECT count(*) FROM folio_perf_data.query_text WHERE query ~ 'sek.{0,2}ret\d\d'}), '0',
	'no stored statement text holds a password of the corpus');
ok( q1(q{SELECT count(*) FROM folio_perf_data.query_text WHERE query ~ '<redacted>'}) >= scalar(@kept),
	'the corpus\'s statements are stored, redacted');
{
	# the server and its user mapping keep their options (pg_dump dumps
	# those as they are): not folio_perf's to redact
	q1(q{DROP SERVER s CASCADE});
	my ($dump) = run_command([ 'pg_dump', '-h', $node->host, '-p', $node->port, '-d', 'folio' ]);
	ok(length($dump) > 10000 && $dump =~ /<redacted>/, 'pg_dump dumped the stored texts');
	my @found = $dump =~ /(sek.{0,2}ret\d\d)/gs;
	is("@found", '', 'pg_dump after the corpus contains none of its passwords');
}
is( q1(q{SELECT folio_perf_data.text_redact('INSERT INTO diku_mod_login.password_reset_action (id, jsonb) VALUES ($1, $2)')}),
	'INSERT INTO diku_mod_login.password_reset_action (id, jsonb) VALUES ($1, $2)',
	'a table named password_reset_action is left alone');

# ---- a flood of folio_perf's query-id set ------------------------------
# A writer's top-level statements that call a folio_perf function are
# recorded as folio_perf's: 24,000 distinct ones (the operators of
# 1+1-1+... spell a number in binary, so each has its own query id) are
# more than the set holds.  Afterwards folio_perf's own statements must
# still find room: a window in which a compare runs for the first time
# (nested statements never recorded before) and an application runs a
# victim statement shows the victim and none of folio_perf's statements.
q1(q{CREATE TABLE attack.victim_5 (x int); GRANT SELECT ON attack.victim_5 TO PUBLIC;});
my $before = q1(q{SELECT recorded || ',' || rotations FROM folio_perf_data.own_status()});
{
	my $flood = join '', map {
		my $i = $_;
		"SELECT folio_perf_appname_module('x'), 1" . join('', map { (($i >> $_) & 1 ? ' + 1' : ' - 1') } 0 .. 14) . ";\n"
	} 0 .. 23999;
	my ($ret, $o, $e) = $node->psql('folio', $flood, extra_params => [ '-U', 'wrt', '-q' ]);
	is($ret, 0, 'the writer\'s flood of 24,000 distinct statements ran') or diag(substr($e, 0, 500));
}
my ($rec, $rot) = split /,/, q1(q{SELECT recorded || ',' || rotations FROM folio_perf_data.own_status()});
ok($rot >= 1, "the flood rotated the set ($before recorded,rotations before; $rec,$rot after)");
my $wf = q1("SELECT folio_perf_begin('after the flood')");
q1("SELECT length(folio_perf_compare($w[0], $w[1], 'text')) > 0");
$node->safe_psql('folio', 'SELECT count(*) FROM attack.victim_5', extra_params => [ '-U', 'app' ]);
q1("SELECT folio_perf_end($wf)");
is( q1(qq{SELECT count(*) FILTER (WHERE query = 'SELECT count(*) FROM attack.victim_5') || ','
	|| count(*) FILTER (WHERE query ~ 'folio_perf')
	FROM folio_perf_top_statements($wf, 10000, only_toplevel => NULL)}),
	'1,0', 'after the flood: the victim statement is shown, none of folio_perf\'s (nested) statements');
ok( q1(qq{SELECT count(*) FROM folio_perf_top_statements($wf, 10000, only_toplevel => NULL, include_housekeeping => true)
	WHERE query ~ 'folio_perf'}) > 0,
	'control: folio_perf\'s statements of that window are there with include_housekeeping');

# ---- floods of the relation store and the metrics keys ------------------
# mallory, a login with no folio_perf role, parses 600 distinct statements
# (each is a new relation-store entry: more than its 200) and cycles
# through 150 application_names while the sampler samples (each a new
# metrics key: more than its 64).  Then a new tenant's module logs in as a
# shared login (so that only its statement's relations can attribute it,
# as for FOLIO's Spring modules) and runs a statement: after one flush its
# statement's schemas are in the relation store, its connection is
# attributed to it in the stored samples and in the live metrics.
q1(q{CREATE ROLE mallory LOGIN; CREATE ROLE shared_app LOGIN;
CREATE SCHEMA tn01_mod_users; CREATE TABLE tn01_mod_users.users (id int);
GRANT USAGE ON SCHEMA tn01_mod_users TO shared_app; GRANT SELECT ON tn01_mod_users.users TO shared_app;});
my $evicted_before = q1(q{SELECT evicted FROM folio_perf_relations_status});
{
	my $flood = "CREATE TEMP TABLE t (a int);\n" . join '', map {
		my $i = $_;
		"SELECT a" . join('', map { (($i >> $_) & 1 ? ' + 1' : ' - 1') } 0 .. 9) . " FROM t;\n"
	} 0 .. 599;
	my ($ret, $o, $e) = $node->psql('folio', $flood, extra_params => [ '-U', 'mallory', '-q' ]);
	is($ret, 0, 'relation-store flood: 600 distinct statements by a login without privileges') or diag(substr($e, 0, 300));
	# the application_names at a 10 ms sample interval, each held 20 ms,
	# until the keys were evicted 64 times (at most 600 names; #37: it took
	# 150 names of 120 ms at the node's 100 ms, 18 s)
	q1(q{ALTER SYSTEM SET folio_perf.sample_interval = 10; SELECT pg_reload_conf();});
	$node->poll_query_until('folio', 'SELECT sample_interval_ms = 10 FROM folio_perf_sampler_status')
	  or die 'the sampler did not take the 10 ms interval';
	my $mal = $node->background_psql('folio', extra_params => [ '-U', 'mallory' ]);
	my $names = 0;
	while ($names < 600)
	{
		$names++;
		$mal->query_safe("SET application_name = 'flood-$names'; SELECT pg_sleep(0.02)");
		last if $names % 10 == 0
		  && q1(q{SELECT value >= 64 FROM folio_perf_metrics WHERE metric = 'metrics_keys_evicted_total'}) eq 't';
	}
	$mal->quit;
	q1(q{ALTER SYSTEM RESET folio_perf.sample_interval; SELECT pg_reload_conf();});
	$node->poll_query_until('folio', 'SELECT sample_interval_ms = 100 FROM folio_perf_sampler_status')
	  or die 'the sampler did not take its 100 ms interval again';
	note("metrics-key flood: $names application_names");
}
my ($entries, $max, $evicted) = split /\|/, q1(q{SELECT entries || '|' || max_queries || '|' || evicted FROM folio_perf_relations_status});
ok($entries >= $max * 0.9 && $evicted - $evicted_before >= 400,
	"control: the flood filled the relation store ($entries of $max entries, "
	  . ($evicted - $evicted_before) . " evicted by it)");
my $mevicted = q1(q{SELECT value FROM folio_perf_metrics WHERE metric = 'metrics_keys_evicted_total'});
cmp_ok($mevicted, '>=', 64, "control: the flood filled the metrics keys ($mevicted evicted)");
{
	my $tenant = $node->background_psql('folio', extra_params => [ '-U', 'shared_app' ]);
	my $tpid = $tenant->query_safe('SELECT pg_backend_pid()');
	chomp $tpid;
	$tenant->query_safe(q{SET application_name = 'new-tenant-pool'});
	$tenant->query_safe(q{SELECT count(*) FROM tn01_mod_users.users});
	my $qid = q1(q{SELECT queryid FROM pg_stat_statements WHERE query = 'SELECT count(*) FROM tn01_mod_users.users'});
	# the session now idles with that statement as its last: wait for a
	# tick to see it (#37: a fixed 300 ms sleep before), then one flush
	my $after = q1('SELECT clock_timestamp()');
	$node->poll_query_until('folio', qq{SELECT EXISTS (SELECT FROM folio_perf_samples
		WHERE pid = $tpid AND sampled_at > '$after')})
	  or die 'no tick saw the new tenant\'s session';
	q1(q{SELECT folio_perf_sampler_flush()});
	is( q1(qq{SELECT string_agg(n.nspname, ',') FROM folio_perf_query_relations() r, unnest(r.nsps) x
		JOIN pg_namespace n ON n.oid = x WHERE r.queryid = $qid}),
		'tn01_mod_users', 'after the floods: the new tenant\'s statement is in the relation store');
	is( q1(q{SELECT count(*) > 0 FROM folio_perf_data.sample_series
		WHERE kind = 'connections' AND tenant = 'tn01' AND module = 'mod_users' AND attributed_by = 'relations'}),
		't', 'after the floods and one flush: the new tenant\'s connection is attributed in the stored samples');
	is( q1(q{SELECT sum(value) FROM folio_perf_metrics WHERE metric = 'connections' AND tenant = 'tn01' AND module = 'mod_users'}),
		'1', 'after the floods: and in the live metrics');
	$tenant->quit;
}

# ---- planted functions in the extension's schema (item 6 of #26) --------
# Decision: the default install stays where CREATE EXTENSION puts it, and
# warns when roles other than superusers may create objects there; the
# reference recommends a schema of its own.  dbowner owns two databases
# (so public is its to create in): folio_perf in public in one, in a
# schema of its own in the other.  dbowner plants a
# folio_perf_sampler_flush(int DEFAULT 0) and a
# folio_perf_data_import_jobs(int) in public of both.
$node->safe_psql('postgres', q{CREATE ROLE dbowner LOGIN;
CREATE DATABASE in_public OWNER dbowner; CREATE DATABASE in_own OWNER dbowner;});
{
	my ($ret, $o, $e) = $node->psql('in_public', 'CREATE EXTENSION pg_stat_statements; CREATE EXTENSION folio_perf');
	like($e, qr/WARNING:  roles other than superusers may create objects in schema "public" of extension folio_perf: dbowner\b/,
		'installed in public of a database a non-superuser owns: CREATE EXTENSION warns, naming the role');
	($ret, $o, $e) = $node->psql('in_own', 'CREATE EXTENSION pg_stat_statements; CREATE SCHEMA folio_perf;
		CREATE EXTENSION folio_perf SCHEMA folio_perf;
		GRANT USAGE ON SCHEMA folio_perf TO folio_perf_reader, pg_read_all_stats');
	is("$ret $e", '0 ', 'installed in a schema of its own: no warning');
	for my $db (qw(in_public in_own))
	{
		($ret, $o, $e) = $node->psql($db, q{
CREATE TABLE public.ran (who name);
GRANT INSERT, SELECT ON public.ran TO PUBLIC;
CREATE FUNCTION public.folio_perf_sampler_flush(n int DEFAULT 0) RETURNS void
	LANGUAGE sql AS $$INSERT INTO public.ran VALUES (current_user)$$;
CREATE FUNCTION public.folio_perf_data_import_jobs(w int) RETURNS SETOF int
	LANGUAGE sql AS $$INSERT INTO public.ran VALUES (current_user) RETURNING 1$$;},
			extra_params => [ '-U', 'dbowner' ]);
		is($ret, 0, "$db: dbowner planted its functions in public") or diag($e);
	}
	# folio_perf's own call of folio_perf_sampler_flush() (every snapshot)
	($ret, $o, $e) = $node->psql('in_public', q{SELECT folio_perf_snapshot('planted') > 0});
	like($e, qr/function public.folio_perf_sampler_flush\(\) is not unique/,
		'control: in public, the plant makes every snapshot fail (folio_perf\'s own call is ambiguous)');
	($ret, $o, $e) = $node->psql('in_own', q{SELECT folio_perf.folio_perf_snapshot('planted') > 0});
	is("$ret $o", '0 t', 'in a schema of its own, snapshots work whatever is planted in public') or diag($e);
	my $wo = $node->safe_psql('in_own', q{SELECT folio_perf.folio_perf_end(folio_perf.folio_perf_begin('own'))});
	# a reader's own unqualified call with an integer literal
	for my $path ([ 'folio_perf', 0 ], [ 'folio_perf, public', 1 ])
	{
		($ret, $o, $e) = $node->psql('in_own', "SET search_path = $path->[0]; SELECT count(*) FROM folio_perf_data_import_jobs($wo)",
			extra_params => [ '-U', 'rdr' ]);
		is("$ret $o", $path->[1] ? '0 1' : '0 0', "search_path $path->[0]: the call returns") or diag($e);
		is( $node->safe_psql('in_own', q{SELECT count(*) FROM public.ran WHERE who = 'rdr'}), $path->[1],
			$path->[1] ? "control: with search_path $path->[0], the reader's folio_perf_data_import_jobs(1) runs the plant"
			  : "with search_path $path->[0] (the reference's), the reader's folio_perf_data_import_jobs(1) is the extension's");
	}
}

# ---- window_facts' owner path through window_cache ---------------------
# window_facts (SECURITY DEFINER) computes a window's derived facts as the
# extension's owner.  When the pair's relation differences cannot be stored
# right then (another session holds their lock), table_rows_compute reads
# them through window_cache, whose temporary table is named for the current
# role: the owner.  A reader plants a table of that name, with a forged
# row, in its own session before asking; the stored rows must be computed.
{
	my $owner_oid = q1(q{SELECT p.proowner FROM pg_proc p
		WHERE p.oid = 'folio_perf_data.window_facts(text,bigint,bigint)'::regprocedure});
	q1(q{CREATE SCHEMA tf01_mod_inventory_storage; CREATE TABLE tf01_mod_inventory_storage.item (id int);});
	my $wf = q1(q{SELECT folio_perf_begin('owner cache')});
	q1(q{INSERT INTO tf01_mod_inventory_storage.item SELECT generate_series(1, 10)});
	q1(q{SELECT pg_stat_force_next_flush()});
	q1("SELECT folio_perf_end($wf)");
	my ($b, $e) = split /\|/, q1("SELECT begin_snap || '|' || end_snap FROM folio_perf_windows WHERE window_id = $wf");
	my $key = q1(q{SELECT rel_key_id FROM folio_perf_data.rel_key
		WHERE nspname = 'tf01_mod_inventory_storage' AND relname = 'item'});
	# the cache table's columns: rel_delta_compute's
	my $cols = q1(q{CREATE TEMP TABLE c AS SELECT * FROM folio_perf_data.rel_delta_compute(NULL, NULL) WITH NO DATA;
SELECT string_agg(quote_ident(attname) || ' ' || format_type(atttypid, atttypmod), ', ' ORDER BY attnum)
FROM pg_attribute WHERE attrelid = 'c'::regclass AND attnum > 0;});
	my $plant = sub {
		my ($oid) = @_;
		return qq{CREATE TEMP TABLE fperf_rel_delta_$oid (b bigint, e bigint, $cols);
CREATE TEMP TABLE fperf_rel_delta_${oid}_done (b bigint, e bigint);
INSERT INTO fperf_rel_delta_$oid (b, e, rel_key_id, status, n_tup_ins) VALUES ($b, $e, $key, 'ok', 999999999);
INSERT INTO fperf_rel_delta_${oid}_done VALUES ($b, $e);};
	};
	my $shown = qq{SELECT coalesce(max(inserts), 0) FROM folio_perf_table_activity($wf, 100)
		WHERE schema = 'tf01_mod_inventory_storage' AND relname = 'item'};
	# control: the same plant named for the reader is read by the reader's
	# own cache (facts not stored: window_facts = off)
	my ($ret, $o, $err) = as_role('rdr', 'BEGIN; SET LOCAL folio_perf.window_facts = off; '
		  . $plant->($rdr_oid) . " $shown; COMMIT;");
	is("$ret $o", '0 999999999', 'control: the forged relation row named for the reader is read by its own cache')
	  or diag($err);
	# the attack: another session holds the lock of the pair's relation
	# differences, so window_facts computes table_rows as the owner with
	# rel_delta through window_cache
	my $holder = $node->background_psql('folio');
	$holder->query_safe(qq{BEGIN; SELECT pg_advisory_xact_lock(hashtext('folio_perf_window_facts'), hashtext('rel_delta:$b:$e'))});
	($ret, $o, $err) = as_role('rdr', 'BEGIN; ' . $plant->($owner_oid) . " $shown; COMMIT;");
	$holder->query_safe('COMMIT');
	$holder->quit;
	is("$ret $o", '0 10', 'window_facts as the owner does not read a cache table a reader planted under the owner\'s name')
	  or diag($err);
	is( q1(qq{SELECT string_agg(kind, ',' ORDER BY kind) FROM folio_perf_data.fact_pair
		WHERE begin_snap = $b AND end_snap = $e AND kind IN ('rel_delta', 'table_rows')}),
		'table_rows', 'the path was taken: table_rows stored while the relation differences were not');
	is(q1(qq{SELECT max(inserts) FROM folio_perf_data.fact_table_rows WHERE begin_snap = $b AND end_snap = $e}),
		'10', 'the stored table rows are the computed ones');
}

is( q1(q{SELECT string_agg(rolname, ',') FROM pg_roles WHERE rolsuper AND rolname <> current_user}),
	'', 'no role became a superuser');

$node->stop;
done_testing();
