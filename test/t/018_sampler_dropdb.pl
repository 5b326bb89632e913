# test/t/018_sampler_dropdb.pl - the sampler steps aside for DROP DATABASE,
# ALTER DATABASE ... RENAME and ... SET TABLESPACE of its database: each
# succeeds while the sampler samples (control: a session of another role
# connected to the database makes the same DROP DATABASE fail, as any
# connection does; a role that does not own the database cannot make the
# sampler step aside); after DROP or RENAME the launcher waits for the
# database as for a missing one, and sampling resumes when it is there
# again; after SET TABLESPACE it resumes at once.
# Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('dropdb');
$node->init;
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'pg_stat_statements,folio_perf'
compute_query_id = on
folio_perf.sample_interval = 100
folio_perf.flush_interval = 1
folio_perf.database = 'fpdb'
});
$node->start;

sub status
{
	my ($col) = @_;
	return $node->safe_psql('postgres', "SELECT $col FROM folio_perf_sampler_status()");
}

sub make_db
{
	$node->safe_psql('postgres', 'CREATE DATABASE fpdb');
	$node->safe_psql('fpdb', 'CREATE EXTENSION pg_stat_statements; CREATE EXTENSION folio_perf');
	# pg_regress's way: the database is there before anything reads it
	return $node->poll_query_until('fpdb', q{
		SELECT state = 'sampling' AND folio_perf_sampler_flush() > 0
		FROM folio_perf_sampler_status()});
}
$node->safe_psql('postgres', 'CREATE EXTENSION pg_stat_statements; CREATE EXTENSION folio_perf');
ok(make_db(), 'the sampler samples in fpdb');

# control: an ordinary connection to the database makes DROP DATABASE fail
$node->safe_psql('postgres', 'CREATE ROLE regress_other LOGIN');
my $other = $node->background_psql('fpdb', extra_params => [ '-U', 'regress_other' ]);
my ($ret, $out, $err) = $node->psql('postgres', 'DROP DATABASE fpdb');
isnt($ret, 0, 'control: DROP DATABASE fails while another session is connected');
like($err, qr/is being accessed by other users/, 'with the usual error');
ok($node->poll_query_until('fpdb', q{
	SELECT state = 'sampling' AND folio_perf_sampler_flush() > 0 FROM folio_perf_sampler_status()}),
	'the sampler, which stepped aside for it, samples again after the failed DROP');
$other->quit;

# control: a role that does not own the database does not stop the sampler
my $pid = status('pid');
($ret, $out, $err) = $node->psql('postgres', 'DROP DATABASE fpdb',
	extra_params => [ '-U', 'regress_other' ]);
like($err, qr/must be owner of database fpdb/, 'control: a non-owner cannot drop it');
is(status('pid'), $pid, 'and the sampler was not stopped');

# DROP DATABASE while sampling
my $log = -s $node->logfile;
($ret, $out, $err) = $node->psql('postgres', 'DROP DATABASE fpdb');
is($ret, 0, 'DROP DATABASE of the sampler\'s database succeeds while sampling') or diag($err);
ok($node->poll_query_until('postgres', q{
	SELECT state = 'waiting for database' FROM folio_perf_sampler_status()}),
	'the sampler waits for the database as for a missing one');
like(slurp_file($node->logfile, $log), qr/sampler steps aside for a change of database "fpdb"/,
	'the server log says why the sampler stopped');
ok(make_db(), 'sampling resumes when the database is created again');
isnt(status('pid'), $pid, 'in a new sampler');

# ALTER DATABASE ... RENAME, and back
($ret, $out, $err) = $node->psql('postgres', 'ALTER DATABASE fpdb RENAME TO fpdb_old');
is($ret, 0, 'ALTER DATABASE RENAME succeeds while sampling') or diag($err);
ok($node->poll_query_until('postgres', q{
	SELECT state = 'waiting for database' FROM folio_perf_sampler_status()}),
	'the sampler waits for a database of its name');
$node->safe_psql('postgres', 'ALTER DATABASE fpdb_old RENAME TO fpdb');
ok($node->poll_query_until('fpdb', q{
	SELECT state = 'sampling' AND folio_perf_sampler_flush() > 0 FROM folio_perf_sampler_status()}),
	'and samples again when it has that name again');

# ALTER DATABASE ... SET TABLESPACE
my $dir = $node->basedir . '/ts';
mkdir $dir or die "mkdir $dir: $!";
$node->safe_psql('postgres', "CREATE TABLESPACE fpts LOCATION '$dir'");
$pid = status('pid');
($ret, $out, $err) = $node->psql('postgres', 'ALTER DATABASE fpdb SET TABLESPACE fpts');
is($ret, 0, 'ALTER DATABASE SET TABLESPACE succeeds while sampling') or diag($err);
ok($node->poll_query_until('fpdb', qq{
	SELECT state = 'sampling' AND pid <> $pid AND folio_perf_sampler_flush() > 0
	FROM folio_perf_sampler_status()}),
	'and sampling resumes in the moved database');
is($node->safe_psql('postgres', q{
	SELECT t.spcname FROM pg_database d JOIN pg_tablespace t ON t.oid = d.dattablespace
	WHERE d.datname = 'fpdb'}), 'fpts', 'which is in the new tablespace');

# a DROP DATABASE of another database leaves the sampler alone
$pid = status('pid');
$node->safe_psql('postgres', 'CREATE DATABASE other_db');
$node->safe_psql('postgres', 'DROP DATABASE other_db');
is(status('pid'), $pid, 'DROP DATABASE of another database does not stop the sampler');

$node->stop;
done_testing();
