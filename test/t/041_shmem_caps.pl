# test/t/041_shmem_caps.pl - the shared stores never grow past their
# declared size: a storm of distinct statements from a role without any
# privilege (more statements than folio_perf.max_queries and
# folio_perf.max_plans) leaves the server's free shared memory as it was,
# the relation store at its cap, having evicted to make room (#26), and the
# plan store at most at its cap.  The same for the live metrics' keys (a
# fixed-size table from the start): a login cycling through
# application_names while the sampler runs.
# Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $cap = 100;
my $plans_cap = 10;
my $storm = 3 * $cap;

my $node = PostgreSQL::Test::Cluster->new('shmem_caps');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'pg_stat_statements,folio_perf'
compute_query_id = on
folio_perf.sample_interval = 0
folio_perf.max_queries = $cap
folio_perf.max_plans = $plans_cap
folio_perf.plan_min_duration = 0
max_locks_per_transaction = 10
});
$node->start;

$node->safe_psql('postgres', q{
CREATE EXTENSION pg_stat_statements;
CREATE EXTENSION folio_perf;
CREATE ROLE storm LOGIN;
CREATE SCHEMA storm AUTHORIZATION storm;
});
$node->safe_psql('postgres', 'CREATE TABLE storm.t (a int)', extra_params => [ '-U', 'storm' ]);

# n distinct statements (each a different expression, so a different
# queryid) on a table in a user schema, as the unprivileged role
sub storm
{
	my ($from, $to) = @_;
	$node->safe_psql('postgres', qq{
DO \$\$
BEGIN
    FOR i IN $from..$to LOOP
        EXECUTE 'SELECT a' || repeat(' + 1', i) || ' FROM storm.t';
    END LOOP;
END
\$\$;}, extra_params => [ '-U', 'storm' ]);
}

sub free_shmem
{
	return $node->safe_psql('postgres',
		'SELECT size FROM pg_shmem_allocations WHERE name IS NULL');
}

# warm up: the locks, caches and the plan store's first entries
storm(1, 5);
my $free_before = free_shmem();
note "free shared memory before: $free_before bytes";
my $status_before = $node->safe_psql('postgres',
	'SELECT entries, recorded, dropped FROM folio_perf_relations_status');
note "relation store before: $status_before";

storm(6, $storm);

my $free_after = free_shmem();
is($free_after, $free_before,
	"free shared memory unchanged by $storm distinct statements ($free_after bytes)");

my ($entries, $this_db, $recorded, $dropped, $max, $evicted) = split /\|/,
  $node->safe_psql('postgres',
	'SELECT entries, entries_this_db, recorded, dropped, max_queries, evicted FROM folio_perf_relations_status');
is($max, $cap, 'max_queries as configured');
ok($entries <= $cap && $entries >= $cap * 0.9, "relation store at its cap, less at most the tenth evicted last ($entries)");
is($recorded - $evicted, $entries, "every statement recorded is there or was evicted ($recorded recorded, $evicted evicted)");
cmp_ok($evicted, '>=', $storm - $cap, "the rest made room by evicting ($evicted), dropped $dropped");

my ($pentries, $pdropped, $pevicted) = split /\|/,
  $node->safe_psql('postgres',
	'SELECT entries, dropped, evicted FROM folio_perf_plans_status');
cmp_ok($pentries, '<=', $plans_cap, "plan store within its cap ($pentries)");
cmp_ok($pdropped + $pevicted, '>', 0, "plans beyond the cap dropped or evicted ($pdropped, $pevicted)");

# control: the store was not full by accident before the storm, and a reset
# makes room again (the storm's statements are recorded anew)
my ($entries_before) = split /\|/, $status_before;
cmp_ok($entries_before, '<', $cap, "store below its cap before the storm ($entries_before)");
$node->safe_psql('postgres', 'SELECT folio_perf_relations_reset()');
storm(1, 20);
my $after_reset = $node->safe_psql('postgres',
	'SELECT entries >= 20 AND entries <= ' . $cap . ' FROM folio_perf_relations_status');
is($after_reset, 't', 'after a reset new statements are recorded again');
is(free_shmem(), $free_before, 'free shared memory still unchanged');

# the server still takes many locks in one transaction (the audit's symptom
# of an exhausted pool was "out of shared memory" here): 500 relations
# locked at once, more than the lock table's initial size (half of
# max_locks_per_transaction 10 times the backends, about 110), so that it
# grows into the free shared memory -- which is also the control of the
# checks above: an allocation at run time shows in the free size they read
my ($locks_rc, $locks_out, $locks_err) = $node->psql('postgres', q{
BEGIN;
DO $$ BEGIN FOR i IN 1..500 LOOP EXECUTE format('CREATE TEMP TABLE lk%s (a int)', i); END LOOP; END $$;
SELECT count(*) FROM pg_locks
 WHERE pid = pg_backend_pid() AND locktype = 'relation' AND mode = 'AccessExclusiveLock'
   AND relation IN (SELECT oid FROM pg_class WHERE relname ~ '^lk[0-9]+$');
COMMIT;});
is($locks_rc, 0, 'the transaction locking 500 relations succeeded') or diag $locks_err;
is($locks_out, 500, '500 relations locked in one transaction');
my $free_locks = free_shmem();
cmp_ok($free_locks, '<', $free_before,
	"control: the lock table grown past its initial size took free shared memory ($free_before -> $free_locks bytes)");

$node->stop;

# live metrics: one key per (database, role, statement schemas,
# application_name); a login can make as many application_names as it
# likes
my $mkeys = 64;
my $m = PostgreSQL::Test::Cluster->new('metrics_caps');
$m->init;
$m->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'pg_stat_statements,folio_perf'
compute_query_id = on
folio_perf.sample_interval = 10
folio_perf.database = 'postgres'
folio_perf.metrics_keys = $mkeys
});
$m->start;
$m->safe_psql('postgres', q{
CREATE EXTENSION pg_stat_statements;
CREATE EXTENSION folio_perf;
CREATE ROLE storm LOGIN;
});
ok($m->poll_query_until('postgres',
		q{SELECT value = 1 FROM folio_perf_metrics WHERE metric = 'sampler_up'}),
	'the sampler is sampling');

sub appname_storm
{
	my ($from, $to) = @_;
	$m->safe_psql('postgres', qq{
DO \$\$
BEGIN
    FOR i IN $from..$to LOOP
        PERFORM set_config('application_name', 'storm-' || i, false);
        PERFORM pg_sleep(0.05);
    END LOOP;
END
\$\$;}, extra_params => [ '-U', 'storm' ]);
}
sub metric
{
	return $m->safe_psql('postgres',
		"SELECT coalesce(sum(value), 0) FROM folio_perf_metrics WHERE metric = '$_[0]'");
}

appname_storm(1, 3);
my $mfree_before = $m->safe_psql('postgres',
	'SELECT size FROM pg_shmem_allocations WHERE name IS NULL');
appname_storm(4, 3 * $mkeys);
is($m->safe_psql('postgres', 'SELECT size FROM pg_shmem_allocations WHERE name IS NULL'),
	$mfree_before,
	'free shared memory unchanged by ' . (3 * $mkeys) . ' application_names');
cmp_ok(metric('metrics_keys_overflowed_total') + metric('metrics_keys_evicted_total'), '>', 0,
	'keys beyond metrics_keys evicted (or their amounts counted as overflowed)');
$m->stop;

done_testing();
