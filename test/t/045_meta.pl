# test/t/045_meta.pl - META.json (PGXN Meta Spec 1.0.0) has the spec's
# required fields in their forms, names PostgreSQL >= 15 and
# pg_stat_statements as prerequisites, and its version is the control
# file's default_version, as are the Debian changelog's and CHANGELOG.md's
# newest entries; every source, script, test and packaging file names the
# LICENSE's copyright holder in its header.
# Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)
use strict;
use warnings;
use Cwd qw(abs_path);
use File::Basename qw(dirname);
use JSON::PP;
use Test::More;

my $root = abs_path(dirname(__FILE__) . '/../..');
sub slurp
{
	my ($f) = @_;
	open(my $fh, '<', "$root/$f") or die "$root/$f: $!";
	local $/;
	return scalar <$fh>;
}

my $meta = eval { JSON::PP->new->decode(slurp('META.json')) };
ok($meta, 'META.json is valid JSON') or diag($@);
$meta //= {};

my $semver = qr/^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z.-]+)?$/;

# required by the spec: name, abstract, maintainer, license, provides,
# meta-spec, version
like($meta->{name} // '', qr/^[^\/\\\s]+$/, 'name: no slash, backslash or space');
is($meta->{name}, 'folio_perf', 'name is the extension\'s');
like($meta->{abstract} // '', qr/\S/, 'abstract');
like($meta->{version} // '', $semver, 'version is a semantic version');
my @maint = ref $meta->{maintainer} eq 'ARRAY' ? @{ $meta->{maintainer} } : ($meta->{maintainer} // ());
ok(@maint && !grep({ !/\S/ } @maint), 'maintainer: one or more names');
my %licenses = map { $_ => 1 } qw(agpl_3 apache_1_1 apache_2_0 artistic_1 artistic_2 bsd
  freebsd gfdl_1_2 gfdl_1_3 gpl_1 gpl_2 gpl_3 lgpl_2_1 lgpl_3_0 mit mozilla_1_0
  mozilla_1_1 openssl perl_5 postgresql qpl_1_0 ssleay sun zlib open_source
  restricted unrestricted unknown);
ok($licenses{ $meta->{license} // '' }, 'license is one of the spec\'s');
is($meta->{license}, 'postgresql', 'license: the PostgreSQL License, as LICENSE');
like(slurp('LICENSE'), qr/^PostgreSQL License/, 'LICENSE is the PostgreSQL License');
is(ref $meta->{'meta-spec'}, 'HASH', 'meta-spec');
is($meta->{'meta-spec'}{version}, '1.0.0', 'meta-spec version 1.0.0');

my $prov = $meta->{provides};
ok(ref $prov eq 'HASH' && %$prov, 'provides: at least one extension');
for my $ext (sort keys %{ $prov // {} })
{
	my $p = $prov->{$ext};
	ok(defined $p->{file} && -f "$root/$p->{file}", "provides $ext: file exists");
	like($p->{version} // '', $semver, "provides $ext: version is a semantic version");
	is($p->{version}, $meta->{version}, "provides $ext: the distribution's version");
	ok(!defined $p->{docfile} || -f "$root/$p->{docfile}", "provides $ext: docfile exists");
}

# optional fields in their forms
ok(!defined $meta->{release_status} || $meta->{release_status} =~ /^(stable|testing|unstable)$/,
	'release_status');
ok(ref $meta->{tags} eq 'ARRAY' && @{ $meta->{tags} }, 'tags');
is(ref $meta->{resources}, 'HASH', 'resources');

# prerequisites
my $req = $meta->{prereqs}{runtime}{requires} // {};
ok(defined $req->{PostgreSQL}, 'requires PostgreSQL');
my ($maj) = ($req->{PostgreSQL} // '0') =~ /^(\d+)/;
is($maj, 15, 'requires PostgreSQL 15 or later');
ok(exists $req->{pg_stat_statements}, 'requires pg_stat_statements');

# one version everywhere
my ($default) = slurp('folio_perf.control') =~ /^default_version\s*=\s*'([^']*)'/m;
is($meta->{version}, $default, "META.json version is the control file's default_version ($default)");
like(slurp('folio_perf.control'), qr/^requires\s*=\s*'pg_stat_statements'/m,
	'the control file requires pg_stat_statements');
my ($deb) = slurp('debian/changelog') =~ /^folio-perf \(([^)]+)\)/;
is($deb, $default, 'debian/changelog\'s newest version');
my ($cl) = slurp('CHANGELOG.md') =~ /^## (\S+)/m;
is($cl, $default, 'CHANGELOG.md\'s newest entry');

# the copyright line of LICENSE in the header of every source, script,
# test and packaging file
my ($holder) = slurp('LICENSE') =~ /^(Copyright \(c\) \d{4}, .+)$/m;
ok($holder, 'LICENSE names its holder');
my @files = map { s/^\Q$root\E\///r } grep { -f }
  map { glob("$root/$_") } qw(Makefile folio_perf.control src/*.c src/*.h sql/parts/*.sql sql/*.sql
  test/*.sh test/t/*.pl test/sql/*.sql test/fixture/*.sh test/fixture/sql/*.sql
  test/workload/*.sh test/workload/*.pgbench test/fuzz/*.c bench/*.sh
  monitoring/*.yaml debian/rules debian/tests/installcheck);
cmp_ok(scalar(@files), '>', 50, 'the files to check');
sub header { my @l = split /^/, slurp($_[0]); return join('', @l[0 .. ($#l < 59 ? $#l : 59)]); }
my @missing = grep { header($_) !~ /\Q$holder\E/ } @files;
is(join(', ', @missing), '', "every file's header has \"$holder\"");

done_testing();
