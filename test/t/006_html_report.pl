# test/t/006_html_report.pl - the HTML report drawn by headless Chromium:
# the page renders, the screenshot is not blank, the charts are present.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Compress::Zlib qw(uncompress);

my $chromium = (grep { -x $_ } qw(/usr/bin/chromium /usr/bin/chromium-browser))[0];
plan skip_all => 'chromium is not installed (test/setup.sh installs it)'
  if !$chromium && $ENV{FOLIO_PERF_NO_BROWSER};
ok($chromium, 'chromium is installed') or BAIL_OUT('no chromium; run test/setup.sh');

my $node = PostgreSQL::Test::Cluster->new('html');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'pg_stat_statements,folio_perf'
compute_query_id = on
folio_perf.sample_interval = 100
folio_perf.database = 'postgres'
});
$node->start;
$node->safe_psql('postgres', q{
CREATE EXTENSION pg_stat_statements;
CREATE EXTENSION folio_perf;
CREATE SCHEMA fs01_mod_inventory_storage;
CREATE TABLE fs01_mod_inventory_storage.item (id int PRIMARY KEY, jsonb jsonb);
INSERT INTO fs01_mod_inventory_storage.item SELECT g, '{}' FROM generate_series(1, 1000) g;
});
my $w = $node->safe_psql('postgres', q{SELECT folio_perf_begin('html report', '{"release":"test"}')});
# some load: two sessions sleeping, one querying, for about two seconds
my @bg;
for my $i (1 .. 2)
{
	my $h = $node->background_psql('postgres');
	$h->query_until(qr/^$/, "SELECT pg_sleep(2);\n");
	push @bg, $h;
}
$node->safe_psql('postgres', join('', map {
	"SELECT count(*) FROM fs01_mod_inventory_storage.item WHERE jsonb->>'x' = '$_';\n" } 1 .. 200));
$node->safe_psql('postgres', 'SELECT pg_sleep(2.2)');
$_->quit for @bg;
$node->safe_psql('postgres', 'SELECT folio_perf_end()');

my $dir = $node->basedir;
my $html = $node->safe_psql('postgres', "SELECT folio_perf_report($w, 'html')");
open my $fh, '>', "$dir/report.html" or die $!;
print $fh $html;
close $fh;
like($html, qr/<svg[^>]*class="chart"/, 'the document has inline SVG charts');
unlike($html, qr/(src|href)\s*=\s*"?https?:/, 'no external URLs');

my @flags = ('--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
	'--disable-component-update', '--disable-sync', '--no-first-run',
	"--user-data-dir=$dir/chromium", '--window-size=1200,1600');
local $ENV{HOME} = $dir;
my ($out, $err) = run_command([ $chromium, @flags, '--dump-dom', "file://$dir/report.html" ]);
my $charts = () = $out =~ /<svg[^>]*class="chart"/g;
my $lines = () = $out =~ /<(polyline|polygon|rect) [^>]*(points|width)=/g;
ok($charts >= 3, "the rendered page has $charts charts (connections, DB load, top statements)");
ok($lines >= 3, "the charts have drawn shapes ($lines)");
like($out, qr/Connections over time/, 'connections chart is there');
like($out, qr/DB load by wait class/, 'DB load chart is there');

run_command([ $chromium, @flags, "--screenshot=$dir/report.png", "file://$dir/report.html" ]);
ok(-s "$dir/report.png" > 20000, 'a screenshot was written');

# decode the PNG (8-bit RGB/RGBA, no interlace) and count distinct colours
sub png_colours
{
	my ($file) = @_;
	open my $p, '<:raw', $file or die $!;
	local $/;
	my $data = <$p>;
	close $p;
	my ($w, $h, $depth, $ctype);
	my $idat = '';
	my $pos = 8;
	while ($pos < length $data)
	{
		my ($len, $type) = unpack('N a4', substr($data, $pos, 8));
		my $body = substr($data, $pos + 8, $len);
		($w, $h, $depth, $ctype) = unpack('N N C C', $body) if $type eq 'IHDR';
		$idat .= $body if $type eq 'IDAT';
		$pos += 12 + $len;
	}
	my $raw = uncompress($idat) // die 'bad PNG';
	my $bpp = $ctype == 6 ? 4 : 3;
	my %seen;
	my $stride = $w * $bpp + 1;
	# sample every 7th pixel of every 5th row (filter bytes make raw values
	# differ from pixels, but a blank page stays uniform either way)
	for (my $y = 0; $y < $h; $y += 5)
	{
		my $row = substr($raw, $y * $stride + 1, $w * $bpp);
		for (my $x = 0; $x < $w; $x += 7)
		{
			$seen{ substr($row, $x * $bpp, 3) } = 1;
		}
	}
	return scalar keys %seen;
}
my $colours = png_colours("$dir/report.png");
ok($colours > 20, "the screenshot is drawn, not blank ($colours distinct values)");

$node->stop;
done_testing();
