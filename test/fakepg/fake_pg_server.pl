# test/fakepg/fake_pg_server.pl - a fake PostgreSQL server for the remote
# target tests: speaks enough of protocol v3 for libpq (startup, SSL and GSS
# refusal, cleartext password or no authentication, simple and extended
# query) and answers by what it is asked:
#   - the connection set-up (set_config): the two columns libpq's caller
#     expects, so that a connection gets ready;
#   - the check of folio_perf_target_add (current_database): a healthy row,
#     or with --bad-check a row of one column;
#   - anything else (the sampler's tick, the capture's queries): one column
#     "datid" of type oid with one row (the wrong shape for every caller);
#     with --good-tick the tick gets its ten columns.
# Every startup, password and statement is appended to --log, one line each.
#
#   perl fake_pg_server.pl --port N --log FILE [--auth password|trust]
#        [--bad-check] [--good-tick] [--pidfile FILE]
#
# --auth can be changed while it runs: the file FILE.auth, when present,
# holds the mode for new connections.
# Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)
use strict;
use warnings;
use IO::Socket::INET;
use IO::Handle;
use POSIX ();
use Getopt::Long;

my ($port, $log, $auth, $bad_check, $good_tick, $pidfile) = (0, '', 'password', 0, 0, '');
GetOptions(
	'port=i'    => \$port,
	'log=s'     => \$log,
	'auth=s'    => \$auth,
	'bad-check' => \$bad_check,
	'good-tick' => \$good_tick,
	'pidfile=s' => \$pidfile) or die "bad options";
die "--port and --log are needed" unless $port && $log;

my $srv = IO::Socket::INET->new(
	LocalAddr => '127.0.0.1',
	LocalPort => $port,
	Listen    => 64,
	ReuseAddr => 1) or die "listen on $port: $!";
if ($pidfile)
{
	open(my $p, '>', $pidfile) or die;
	print $p "$$\n";
	close $p;
}
$SIG{CHLD} = 'IGNORE';

sub logline
{
	my ($line) = @_;
	open(my $f, '>>', $log) or return;
	$line =~ s/\n/ /g;
	# the connection's process, so that a test can tell sessions apart
	print $f "$line [pid=$$]\n";
	close $f;
}

sub readn
{
	my ($c, $n) = @_;
	my $buf = '';
	while (length($buf) < $n)
	{
		my $r = sysread($c, $buf, $n - length($buf), length($buf));
		return undef unless $r;
	}
	return $buf;
}

sub msg { my ($type, $body) = @_; return $type . pack('N', 4 + length($body)) . $body; }

sub rowdesc
{
	my @cols = @_;    # [name, typeoid]
	my $b = pack('n', scalar @cols);
	$b .= $_->[0] . "\0" . pack('NnNnNn', 0, 0, $_->[1], -1 & 0xffff, 0xffffffff, 0) for @cols;
	return msg('T', $b);
}

sub datarow
{
	my @vals = @_;
	my $b = pack('n', scalar @vals);
	for my $v (@vals)
	{
		if (!defined $v) { $b .= pack('N', 0xffffffff); }
		else { $b .= pack('N', length($v)) . $v; }
	}
	return msg('D', $b);
}

# The answer to a statement: (RowDescription, DataRows..., CommandComplete)
sub answer
{
	my ($sql) = @_;
	if ($sql =~ /set_config\('statement_timeout'/)
	{
		return (rowdesc([ 'statement_timeout', 25 ], [ 'search_path', 25 ]),
			datarow('10s', 'pg_catalog'), msg('C', "SELECT 1\0"));
	}
	if ($sql =~ /current_database\(\) AS datname/ && !$bad_check)
	{
		return (rowdesc([ 'datname', 19 ], [ 'rolname', 19 ], [ 'server_version_num', 23 ],
				[ 'in_recovery', 16 ], [ 'pgss_schema', 19 ], [ 'read_all_stats', 16 ]),
			datarow('folio', 'collector', '150000', 'f', 'public', 't'), msg('C', "SELECT 1\0"));
	}
	if ($sql =~ /pg_stat_activity/ && $good_tick)
	{
		return (rowdesc([ 'datid', 26 ], [ 'datname', 19 ], [ 'usesysid', 26 ], [ 'usename', 19 ],
				[ 'application_name', 25 ], [ 'state', 25 ], [ 'wait_event_type', 25 ],
				[ 'wait_event', 25 ], [ 'backend_type', 25 ], [ 'query_id', 20 ]),
			datarow('1', 'folio', '10', 'u', 'app', 'active', undef, undef, 'client backend', '7'),
			msg('C', "SELECT 1\0"));
	}
	return (rowdesc([ 'datid', 26 ]), datarow('1'), msg('C', "SELECT 1\0"));
}

sub serve
{
	my ($c) = @_;
	binmode $c;
	$c->autoflush(1);
	my $mode = $auth;
	if (-f "$log.auth")
	{
		open(my $f, '<', "$log.auth");
		$mode = <$f>;
		chomp $mode;
		close $f;
	}
	my %params;
	for (;;)
	{
		my $hdr = readn($c, 8) // return;
		my ($len, $code) = unpack('NN', $hdr);
		if ($code == 80877103 || $code == 80877104)    # SSL / GSS encryption request
		{
			syswrite($c, 'N');
			next;
		}
		return if $code != 196608;
		my $body = readn($c, $len - 8) // return;
		my @kv = split /\0/, $body;
		while (@kv >= 2) { my $k = shift @kv; my $v = shift @kv; $params{$k} = $v; }
		last;
	}
	logline("STARTUP user=" . ($params{user} // '') . " database=" . ($params{database} // '')
		  . " application_name=" . ($params{application_name} // '') . " auth=$mode");
	if ($mode eq 'password')
	{
		syswrite($c, msg('R', pack('N', 3)));
		my $t = readn($c, 1) // return;
		my $len = unpack('N', readn($c, 4) // return);
		my $pw = readn($c, $len - 4) // return;
		$pw =~ s/\0$//;
		logline("PASSWORD $pw");
	}
	syswrite($c, msg('R', pack('N', 0))
		  . msg('S', "server_version\00015.0\0")
		  . msg('S', "server_encoding\0UTF8\0")
		  . msg('S', "client_encoding\0UTF8\0")
		  . msg('S', "integer_datetimes\0on\0")
		  . msg('S', "standard_conforming_strings\0on\0")
		  . msg('S', "DateStyle\0ISO, MDY\0")
		  . msg('K', pack('NN', $$, 4711))
		  . msg('Z', 'I'));
	my $stmt = '';
	for (;;)
	{
		my $t = readn($c, 1) // return;
		my $len = unpack('N', readn($c, 4) // return);
		my $body = $len > 4 ? (readn($c, $len - 4) // return) : '';
		if ($t eq 'X') { return; }
		elsif ($t eq 'Q')
		{
			(my $sql = $body) =~ s/\0$//;
			logline("QUERY $sql");
			syswrite($c, join('', answer($sql)) . msg('Z', 'I'));
		}
		elsif ($t eq 'P')
		{
			my (undef, $sql) = split /\0/, $body, 3;
			$stmt = $sql;
			logline("QUERY $sql");
			syswrite($c, msg('1', ''));
		}
		elsif ($t eq 'B') { syswrite($c, msg('2', '')); }
		elsif ($t eq 'D') { my @a = answer($stmt); syswrite($c, $a[0]); }
		elsif ($t eq 'E') { my @a = answer($stmt); shift @a; syswrite($c, join('', @a)); }
		elsif ($t eq 'S') { syswrite($c, msg('Z', 'I')); }
		elsif ($t eq 'H') { }
		else { return; }
	}
}

for (;;)
{
	my $c = $srv->accept or next;
	my $pid = fork();
	if (!defined $pid) { close $c; next; }
	if ($pid == 0)
	{
		close $srv;
		serve($c);
		close $c;
		POSIX::_exit(0);
	}
	close $c;
}
