# test/t/016_attacks.pl - every attack on folio_perf so far, in one table:
# each entry plants something that would run a hostile role's code (or
# hide or leak something) when folio_perf does what it does, shows with a
# control that the plant fires when it is reached, then makes folio_perf
# do it and checks that nothing of the plant ran.  Plants record every
# run in attack.ran (the attack's name, the role it ran as, whether that
# role is a superuser), so "nothing ran" is one count.
# Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)
use strict;
use warnings;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('attacks');
$node->init;
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'pg_stat_statements,folio_perf'
pg_stat_statements.track = all
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
	$att->query_safe('COMMIT');
	$att->quit;
	finish_psql($reader);
	return ($waited ? 'the reader waited for the lock while the change was uncommitted' : 'the reader never waited')
	  . "; reader exit $reader->{ret}: $reader->{out} $reader->{err}";
}

my @attacks = (
	{
		name => 'di_jobs_alter_type_rc',
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

for my $a (@attacks)
{
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
	my ($ret, $o, $e) = $node->psql('folio', $a->{control});
	is(ran($a->{name}), '1:true', "$a->{name}: control: reaching the plant as the owner runs it as a superuser")
	  or diag("$o $e");
}

is( q1(q{SELECT string_agg(rolname, ',') FROM pg_roles WHERE rolsuper AND rolname <> current_user}),
	'', 'no role became a superuser');

$node->stop;
done_testing();
