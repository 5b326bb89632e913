# test/t/031_remote_security.pl - remote targets under attack, against a
# fake server (test/fakepg/fake_pg_server.pl) that asks for a cleartext
# password and logs what it receives, or answers with results of the wrong
# shape:
#   - a non-superuser cannot make the repository server send a password of
#     its .pgpass or service file, or use its files (the rules apply at
#     every connection, the worker's and the capture's, not only at add);
#   - a server that stops asking for the password is refused;
#   - results of the wrong shape fail the tick or the snapshot, never crash;
#   - errors shown to non-superusers do not say which hosts and ports exist;
#   - folio_perf.remote_timeout is for superusers;
#   - pg_dump output holds no password, and a restored target is refused
#     until it gets its password again.
# Each attack has its control: the same plant shown to work where it is
# allowed (a superuser's target reads .pgpass) or to reach folio_perf.
# Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)
use strict;
use warnings;
use Cwd qw(abs_path);
use File::Basename qw(dirname);
use IPC::Run ();
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $testdir =
  ($ENV{TESTDIR} && -d "$ENV{TESTDIR}/test/fakepg")
  ? "$ENV{TESTDIR}/test"
  : abs_path(dirname(__FILE__) . '/..');
my $tmp  = PostgreSQL::Test::Utils::tempdir();
my $flog = "$tmp/fake.log";

# ---- the repository server's own secrets: a .pgpass and a service file
my $stolen   = 'stolen-from-pgpass';
my $passfile = "$tmp/pgpass";
open(my $fh, '>', $passfile) or die;
print $fh "*:*:*:*:$stolen\n";
close $fh;
chmod 0600, $passfile;

# ---- the fake server
my $fport = PostgreSQL::Test::Cluster::get_free_port();
my $fake = IPC::Run::start(
	[ 'perl', "$testdir/fakepg/fake_pg_server.pl", '--port', $fport, '--log', $flog ],
	'>', "$tmp/fake.out", '2>', "$tmp/fake.err");
my $fake_bad_port = PostgreSQL::Test::Cluster::get_free_port();
my $fake_bad = IPC::Run::start(
	[ 'perl', "$testdir/fakepg/fake_pg_server.pl", '--port', $fake_bad_port,
	  '--log', "$tmp/fake_bad.log", '--bad-check' ],
	'>', "$tmp/fake_bad.out", '2>', "$tmp/fake_bad.err");
# the fake servers go with the test, however it ends
END { local $?; $_->kill_kill for grep { defined } ($fake, $fake_bad); }

my $svcfile = "$tmp/pg_service.conf";
open($fh, '>', $svcfile) or die;
print $fh "[fake_svc]\nhost=127.0.0.1\nport=$fport\ndbname=folio\nuser=collector\n";
close $fh;

# the fake server's log without its per-line session tags
sub fake_log
{
	my $l = -f $flog ? slurp_file($flog) : '';
	$l =~ s/ \[pid=\d+\]$//mg;
	return $l;
}
# the lines of the sessions whose startup line matches $re
sub fake_log_of_sessions
{
	my ($re) = @_;
	my $l = -f $flog ? slurp_file($flog) : '';
	my %pick = map { /\[pid=(\d+)\]$/ ? ($1 => 1) : () } grep { /^STARTUP / && /$re/ } split /\n/, $l;
	return join("\n", grep { /\[pid=(\d+)\]$/ && $pick{$1} } split /\n/, $l);
}
sub fake_reset { unlink $flog; }
sub fake_auth
{
	open(my $f, '>', "$flog.auth") or die;
	print $f "$_[0]\n";
	close $f;
}

# wait until the fake server listens
for my $p ($fport, $fake_bad_port)
{
	my $ok = 0;
	for (1 .. 100)
	{
		if (IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $p)) { $ok = 1; last; }
		select(undef, undef, undef, 0.1);
	}
	die "fake server on $p did not start" unless $ok;
}
fake_reset();

# ---- the repository
my $repo = PostgreSQL::Test::Cluster->new('repository');
$repo->init;
$repo->append_conf('postgresql.conf', q{
shared_preload_libraries = 'pg_stat_statements,folio_perf'
folio_perf.sample_interval = 100
folio_perf.flush_interval = 1
folio_perf.database = 'postgres'
folio_perf.remote_timeout = 3000
restart_after_crash = on
});
{
	local $ENV{PGPASSFILE}    = $passfile;
	local $ENV{PGSERVICEFILE} = $svcfile;
	$repo->start;
}
$repo->safe_psql('postgres', q{
CREATE EXTENSION pg_stat_statements; CREATE EXTENSION folio_perf;
CREATE ROLE regress_writer LOGIN IN ROLE folio_perf_writer;
});
my $pm_start = $repo->safe_psql('postgres', 'SELECT pg_postmaster_start_time()');

sub q1 { return $repo->safe_psql('postgres', $_[0]); }

sub try_sql
{
	my ($sql, $user) = @_;
	my @extra = $user ? (extra_params => [ '-U', $user ]) : ();
	my ($ret, $o, $e) = $repo->psql('postgres', "\\set VERBOSITY verbose\n$sql", @extra);
	return ($ret, $o, $e);
}

my $fake_ci = "host=127.0.0.1 port=$fport dbname=folio user=collector";

# ---- H3: .pgpass and service files of the server
my ($ret, $o, $e);
# control: a superuser's target does read the server's .pgpass
is(q1(qq{SELECT folio_perf_target_add('su_pgpass', '$fake_ci')}), '1',
	'control: a superuser adds the fake target without a password');
like(fake_log(), qr/^PASSWORD \Q$stolen\E$/m,
	'control: the fake server received the password of the server\'s .pgpass');
q1(q{SELECT folio_perf_target_drop('su_pgpass')});
# the sampler lets go of it at its next flush
my $dropped_at = q1('SELECT clock_timestamp()');
ok($repo->poll_query_until('postgres', "SELECT last_flush_at > '$dropped_at' FROM folio_perf_sampler_status()"),
	'the sampler forgot the dropped target');

for my $case (
	[ 'no password (the .pgpass would answer)', $fake_ci, qr/2F003: password is required/ ],
	[ 'passfile=', "$fake_ci passfile=$passfile", qr/2F003: connection option "passfile" is not allowed/ ],
	[ 'service=', 'service=fake_svc', qr/2F003: connection option "service" is not allowed/ ],
	[ 'a service with a password', 'service=fake_svc password=x', qr/2F003: connection option "service" is not allowed/ ],
	[ 'sslkey=', "$fake_ci password=x sslkey=$tmp/key sslcert=$tmp/crt", qr/2F003: connection option "ssl(key|cert)" is not allowed/ ],
	[ 'sslrootcert=', "$fake_ci password=x sslrootcert=$tmp/root.crt", qr/2F003: connection option "sslrootcert" is not allowed/ ],
	[ 'options=', "$fake_ci password=x options='-c work_mem=1MB'", qr/2F003: connection option "options" is not allowed/ ],
	[ 'a URI without a password', "postgresql://collector\@127.0.0.1:$fport/folio", qr/2F003: password is required/ ])
{
	fake_reset();
	($ret, $o, $e) = try_sql("SELECT folio_perf_target_add('w_attack', \$\$$case->[1]\$\$)", 'regress_writer');
	like($e, $case->[2], "a writer's target with $case->[0] is refused");
	is(fake_log(), '', "  and nothing at all was sent to the fake server ($case->[0])");
}
is(q1(q{SELECT count(*) FROM folio_perf_data.target WHERE name = 'w_attack'}), '0', 'none of them stored');
# control of each: a superuser's target with the same string does reach the
# fake server (with the .pgpass password through passfile=, at the address
# of the service file through service=; the ssl files are not read as the
# fake server declines SSL)
for my $case (
	[ 'passfile=', "$fake_ci passfile=$passfile", qr/^PASSWORD \Q$stolen\E$/m ],
	[ 'service=', 'service=fake_svc', qr/^PASSWORD \Q$stolen\E$/m ],
	[ 'a service with a password', 'service=fake_svc password=x', qr/^PASSWORD x$/m ],
	[ 'sslkey=', "$fake_ci password=x sslkey=$tmp/key sslcert=$tmp/crt", qr/^PASSWORD x$/m ],
	[ 'sslrootcert=', "$fake_ci password=x sslrootcert=$tmp/root.crt", qr/^PASSWORD x$/m ],
	[ 'options=', "$fake_ci password=x options='-c work_mem=1MB'", qr/^PASSWORD x$/m ])
{
	fake_reset();
	($ret, $o, $e) = try_sql("SELECT folio_perf_target_add('su_control', \$\$$case->[1]\$\$)");
	like(fake_log(), $case->[2], "control: a superuser's target with $case->[0] reaches the fake server")
	  or diag($e);
	q1(q{SELECT folio_perf_target_drop(name) FROM folio_perf_data.target WHERE name = 'su_control' AND conninfo IS NOT NULL});
}
# the sampler lets go of them at its next flush
$dropped_at = q1('SELECT clock_timestamp()');
ok($repo->poll_query_until('postgres', "SELECT last_flush_at > '$dropped_at' FROM folio_perf_sampler_status()"),
	'the sampler forgot the dropped control targets');
# a writer calling the storing function directly gets the same rules
($ret, $o, $e) = try_sql("SELECT folio_perf_data.target_store('w_direct', '$fake_ci')", 'regress_writer');
like($e, qr/2F003: password is required/, 'target_store() applies the rules to a writer too');

# a writer's target with the password in the string
fake_reset();
like( $repo->safe_psql('postgres', qq{SELECT folio_perf_target_add('w_ok', '$fake_ci password=writerpw')},
		extra_params => [ '-U', 'regress_writer' ]),
	qr/^\d+$/, 'a writer adds a target whose string holds the password');
my $log = fake_log();
like($log, qr/^PASSWORD writerpw$/m, 'the target got the password of the string');
unlike($log, qr/\Q$stolen\E/, 'and never the one of .pgpass');
like($log, qr/^STARTUP .*application_name=folio_perf auth/m, 'application_name is folio_perf\'s marker');
is(q1(q{SELECT restricted FROM folio_perf_data.target WHERE name = 'w_ok'}), 't', 'the target is restricted');

# ---- H4: the fake server answers the sampler's tick with one column
ok( $repo->poll_query_until('postgres', q{
	SELECT sampler_last_error LIKE 'query: unexpected answer: 1 columns, expected 12%'
	  FROM folio_perf_targets WHERE name = 'w_ok'}),
	'the sampler fails the tick of a result of the wrong shape');
$log = fake_log();
like($log, qr/^STARTUP .*application_name=folio_perf sampler/m, 'the sampler connected (control: it got the answer)');
like($log, qr/^PASSWORD writerpw$/m, 'with the target\'s password');
like($log, qr/^QUERY .*set_config\('statement_timeout'/m, 'and set the target\'s statement_timeout');
like($log, qr/^QUERY .*pg_stat_activity/m, 'and asked for the tick');
like(slurp_file($repo->logfile), qr/sampler lost remote target "w_ok", retrying with backoff\n.*DETAIL:  query: unexpected answer: 1 columns, expected 12/,
	'one LOG line saying why');
# the sampler backs off and retries
ok( $repo->poll_query_until('postgres', q{
	SELECT sampler_failures >= 2 AND sampler_next_attempt_at IS NOT NULL FROM folio_perf_targets WHERE name = 'w_ok'}),
	'and retries with backoff');
my $ticks = q1('SELECT ticks FROM folio_perf_sampler_status()');
ok($repo->poll_query_until('postgres', "SELECT ticks > $ticks + 10 FROM folio_perf_sampler_status()"),
	'local sampling goes on');
is(q1('SELECT pg_postmaster_start_time()'), $pm_start, 'the server never restarted');
unlike(slurp_file($repo->logfile), qr/terminated by signal|server process .* was terminated/,
	'no process was terminated by a signal');

# the capture's remote queries: the wrong shape is an error
($ret, $o, $e) = try_sql(q{SELECT folio_perf_snapshot('bad shape', 'w_ok')}, 'regress_writer');
like($e, qr/42804: the result from remote target "w_ok" has 1 columns, expected \d+/,
	'a snapshot of a target answering with the wrong shape fails');
is(q1(q{SELECT count(*) FROM folio_perf_snapshots WHERE label = 'bad shape'}), '0', 'and stores nothing');
# the check of target_add: one column instead of six
($ret, $o, $e) = try_sql(
	qq{SELECT folio_perf_target_add('bad_check', 'host=127.0.0.1 port=$fake_bad_port dbname=folio user=u password=p')});
like($e, qr/08P01: unexpected answer from new remote target "bad_check"\n.*DETAIL:  1 columns, expected 6/,
	'target_add of a target answering the check with the wrong shape fails');
like(slurp_file("$tmp/fake_bad.log"), qr/^QUERY .*current_database\(\) AS datname/m,
	'control: the check reached the fake server');
is(q1('SELECT pg_postmaster_start_time()'), $pm_start, 'the server still never restarted');

# ---- H3 at every connection: the server stops asking for the password
fake_reset();
fake_auth('trust');
ok( $repo->poll_query_until('postgres', q{
	SELECT sampler_last_error LIKE 'connect: password is required%' FROM folio_perf_targets WHERE name = 'w_ok'}),
	'the sampler refuses a restricted target that no longer asks for the password');
($ret, $o, $e) = try_sql(q{SELECT folio_perf_snapshot('trust', 'w_ok')}, 'regress_writer');
like($e, qr/2F003: password is required/, 'so does the capture');
$log = fake_log();
like($log, qr/^STARTUP .*auth=trust/m, 'control: the sessions did reach the trusting server');
# (a sampler connection made before the switch may still send its ticks)
unlike(fake_log_of_sessions(qr/auth=trust/), qr/^QUERY/m,
	'and sent it nothing after authentication');
fake_auth('password');

# ---- the stored string changed after the add: checked again
q1(qq{UPDATE folio_perf_data.target SET conninfo = conninfo || ' passfile=$passfile' WHERE name = 'w_ok'});
ok( $repo->poll_query_until('postgres', q{
	SELECT sampler_last_error LIKE 'connect: connection option "passfile" is not allowed%'
	  FROM folio_perf_targets WHERE name = 'w_ok'}),
	'a restricted target whose stored string got a passfile is refused by the sampler');
q1(qq{UPDATE folio_perf_data.target SET conninfo = '$fake_ci' WHERE name = 'w_ok'});

# ---- L3: what a writer learns from errors
my $closed = PostgreSQL::Test::Cluster::get_free_port();
($ret, $o, $e) = try_sql(
	qq{SELECT folio_perf_target_add('probe', 'host=127.0.0.1 port=$closed dbname=x user=u password=p')},
	'regress_writer');
like($e, qr/08001: could not connect to new remote target "probe"\n.*DETAIL:  the connection failed \(the reason is in the server log\)/,
	'a writer probing a closed port gets a generic error');
unlike($e, qr/refused|$closed/i, 'that says nothing about the host or port');
($ret, $o, $e) = try_sql(
	qq{SELECT folio_perf_target_add('probe', 'host=/nonexistent/dir port=5432 dbname=x user=u password=p')},
	'regress_writer');
like($e, qr/08001: could not connect to new remote target "probe"\n.*DETAIL:  the connection failed \(the reason is in the server log\)/,
	'a writer probing a socket directory gets the generic error');
unlike($e, qr/No such file|nonexistent/i, 'nor about files');
($ret, $o, $e) = try_sql(
	qq{SELECT folio_perf_target_add('probe', 'host=/nonexistent/dir port=5432 dbname=x user=u password=p')});
like($e, qr/DETAIL: .*nonexistent.*No such file/i, 'control: a superuser sees that the directory does not exist');
like(slurp_file($repo->logfile), qr/could not connect to new remote target "probe"\n.*DETAIL: .*refused/i,
	'the reason is in the server log');
($ret, $o, $e) = try_sql(
	qq{SELECT folio_perf_target_add('probe', 'host=127.0.0.1 port=$closed dbname=x user=u password=p')});
like($e, qr/DETAIL: .*refused/i, 'control: a superuser sees libpq\'s reason');

($ret, $o, $e) = try_sql('SET folio_perf.remote_timeout = 3600000', 'regress_writer');
like($e, qr/42501: permission denied to set parameter "folio_perf.remote_timeout"/,
	'a writer cannot lengthen folio_perf.remote_timeout');
($ret, $o, $e) = try_sql('SET folio_perf.remote_timeout = 600000');
is($ret, 0, 'control: a superuser can');

# ---- H5: pg_dump
q1(qq{SELECT folio_perf_target_add('su_pw', 'host=127.0.0.1 port=$fport dbname=folio user=collector password=superpw')});
is( q1(q{SELECT string_agg(password, ',' ORDER BY target_id) FROM folio_perf_data.target_secret}),
	'writerpw,superpw', 'control: the passwords are stored');
my $dumpfile = "$tmp/dump.sql";
$repo->command_ok([ 'pg_dump', '-d', $repo->connstr('postgres'), '-f', $dumpfile ], 'pg_dump');
my $dump = slurp_file($dumpfile);
like($dump, qr/w_ok/, 'the dump has the targets');
unlike($dump, qr/writerpw|superpw/, 'and none of their passwords');
unlike($dump, qr/COPY folio_perf_data\.target_status/, 'nor the running sampler\'s state');
like($dump, qr/COPY folio_perf_data\.sample_interval/, 'the sampler\'s history is in it');
$repo->command_ok(
	[ 'pg_dump', '-d', $repo->connstr('postgres'), '-f', "$tmp/small.sql",
	  '--exclude-table-data=folio_perf_data.sample_*' ],
	'pg_dump without the sampler\'s history');
unlike(slurp_file("$tmp/small.sql"), qr/COPY folio_perf_data\.sample_interval/,
	'--exclude-table-data leaves it out');

# restore into another database: the targets are there, without passwords
q1('CREATE DATABASE restored');
$repo->command_ok([ 'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', $repo->connstr('restored'), '-f', $dumpfile ],
	'restore');
is( $repo->safe_psql('restored', q{SELECT string_agg(name || ':' || restricted, ',' ORDER BY target_id)
	FROM folio_perf_data.target WHERE dropped_at IS NULL}),
	'w_ok:true,su_pw:false', 'the restored targets keep their names and whether restricted');
is($repo->safe_psql('restored', 'SELECT count(*) FROM folio_perf_data.target_secret'), '0',
	'without passwords');
fake_reset();
($ret, $o, $e) = $repo->psql('restored', "\\set VERBOSITY verbose\nSELECT folio_perf_snapshot('restored', 'w_ok')");
like($e, qr/2F003: password is required/, 'a restored restricted target is refused until it gets its password');
unlike(fake_log(), qr/\Q$stolen\E/, 'and no password of .pgpass was sent meanwhile');

$repo->stop;
done_testing();
