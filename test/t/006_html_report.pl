# test/t/006_html_report.pl - the report and the comparison of two
# demo-like windows (a FOLIO-like fixture, data import and check-in/
# check-out with the sampler on) as a wiki page and as HTML drawn by
# headless Chromium: the page is not wider than the window at two widths
# (measured in the DOM by an inline script), every chart has at least four
# labelled ticks on each axis, every statement of the tables is given in
# full in the SQL appendix, the screenshots are drawn; the markdown has the
# full texts, hh:mm:ss durations, humanised sizes and "Delta, %" columns
# named after the releases.  Nothing here depends on timing.
# Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)
use strict;
use warnings;
use Cwd qw(abs_path);
use File::Basename qw(dirname);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Compress::Zlib qw(uncompress);

my $chromium = (grep { -x $_ } qw(/usr/bin/chromium /usr/bin/chromium-browser))[0];
# without it the file is skipped (test/run_tests.sh lists the skip, and in
# CI counts it as a failure), never a BAIL_OUT that stops every later file
plan skip_all => 'chromium is not installed (test/setup.sh installs it)'
  unless $chromium;

my $testdir =
  ($ENV{TESTDIR} && -d "$ENV{TESTDIR}/test/fixture")
  ? "$ENV{TESTDIR}/test"
  : abs_path(dirname(__FILE__) . '/..');

my $node = PostgreSQL::Test::Cluster->new('html');
$node->init;
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'pg_stat_statements,folio_perf'
pg_stat_statements.track = all
compute_query_id = on
folio_perf.sample_interval = 100
folio_perf.flush_interval = 1
folio_perf.database = 'folio'
folio_perf.plan_min_duration = 0
});
$node->start;
my @conn = ('-h', $node->host, '-p', $node->port);
my ($out, $err) = run_command([ 'bash', "$testdir/fixture/build_fixture.sh",
	'-d', 'folio', '-t', '2', '-r', '30', '-P', '2', @conn ]);
like($out, qr/^fixture folio: 2 tenants/m, 'fixture built') or diag($err);
$node->safe_psql('folio', 'CREATE EXTENSION pg_stat_statements; CREATE EXTENSION folio_perf');

# Two windows, "Poppy" and "Quesnelia": a data import, then check-in/
# check-out, then sessions sleeping so that the sampler sees load.
sub window
{
	my ($release, $records) = @_;
	my $w = $node->safe_psql('folio',
		qq{SELECT folio_perf_begin('DI MARC Bib Create $records + CICO', '{"release": "$release", "scenario": "DI+CICO"}')});
	for my $wl ([ 'di_create', $records, 1 ], [ 'cico', 16, 2 ])
	{
		my ($o, $e) = run_command([ 'bash', "$testdir/workload/run_workload.sh", '-q',
			'-d', 'folio', @conn, '-w', $wl->[0], '-n', $wl->[1], '-c', $wl->[2],
			'-t', 'fs09000000' ]);
		like($o, qr/== $wl->[0] done/, "$release: workload $wl->[0] ran") or diag($e);
	}
	my @bg;
	for my $i (1 .. 2)
	{
		my $h = $node->background_psql('folio');
		$h->query_until(qr/^$/, "SELECT pg_sleep(1.5);\n");
		push @bg, $h;
	}
	$node->safe_psql('folio', 'SELECT pg_sleep(1.6)');
	$_->quit for @bg;
	$node->safe_psql('folio', 'SELECT folio_perf_end()');
	return $w;
}
my $w1 = window('Poppy', 60);
my $w2 = window('Quesnelia', 120);
ok($node->safe_psql('folio', "SELECT count(*) > 0 FROM folio_perf_connections($w2) WHERE dimension = 'total'") eq 't',
	'the sampler saw the second window');

my $dir = $node->basedir;
local $ENV{HOME} = $dir;
sub save { my ($f, $t) = @_; open my $fh, '>', $f or die $!; print $fh $t; close $fh; }
sub doc { return $node->safe_psql('folio', $_[0]); }
my %html = (
	report  => doc("SELECT folio_perf_report($w2, 'html')"),
	compare => doc("SELECT folio_perf_compare($w1, $w2, 'html')"));
my @texts = split /\x1e/, doc("SELECT string_agg(query, chr(30) ORDER BY rank) FROM folio_perf_top_statements($w2, 20)");
ok(@texts >= 8, scalar(@texts) . ' top statements');

sub unescape
{
	my $s = shift;
	$s =~ s/&lt;/</g; $s =~ s/&gt;/>/g; $s =~ s/&quot;/"/g; $s =~ s/&#39;/'/g; $s =~ s/&amp;/&/g;
	return $s;
}

# ---- HTML ----------------------------------------------------------------

# An inline script that writes, after layout, how far the page and every
# table, chart and code block reach beyond the window.
my $measure = q{<script>window.addEventListener('load',function(){var w=document.documentElement.clientWidth,o=[],
e=document.querySelectorAll('table,figure,svg,pre,section,header');for(var i=0;i<e.length;i++){var r=e[i].getBoundingClientRect();
if(r.right>w+1){var s=e[i].closest('section');o.push(e[i].tagName+(e[i].id?'#'+e[i].id:'')+(s&&s!==e[i]?' in '+s.id:'')+':'+Math.round(r.right));}}
var p=document.createElement('pre');p.id='measure';p.textContent='page '+document.documentElement.scrollWidth+' of '+w+'; over: '+(o.join(',')||'none');
document.body.appendChild(p);});</script>};
my @flags = ('--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--disable-background-networking',
	'--disable-component-update', '--disable-sync', '--no-first-run', "--user-data-dir=$dir/chromium");

sub measured
{
	my ($name, $page, $width) = @_;
	my $f = "$dir/$name-measure.html";
	(my $m = $page) =~ s{</body>}{$measure</body>};
	save($f, $m);
	my ($dom) = run_command([ $chromium, @flags, "--window-size=$width,1000", '--dump-dom', "file://$f" ]);
	return $dom =~ m{<pre id="measure">page (\d+) of (\d+); over: ([^<]*)</pre>} ? ($1, $2, $3) : ();
}

# the measurement catches overflow: a page with a 3000 px wide table
my @control = measured('control', '<!DOCTYPE html><html><body><table><tr><td><div style="width:3000px">x</div></td></tr></table></body></html>', 1000);
ok(@control && $control[0] > $control[1] && $control[2] =~ /TABLE/, "a too wide table is measured as too wide (@control)");

for my $name (qw(report compare))
{
	my $page = $html{$name};
	save("$dir/$name.html", $page);
	unlike($page, qr/(src|href)\s*=\s*"?https?:/, "$name: no external URLs");
	like($page, qr{<footer>Generated by folio_perf [0-9.]+ at }, "$name: footer with version and time");
	like($page, qr{<nav class="toc">}, "$name: table of contents");
	for my $width (1400, 1000)
	{
		my ($page_w, $win_w, $over) = measured($name, $page, $width);
		ok(defined $page_w && $page_w <= $win_w && $over eq 'none',
			"$name at $width px: not wider than the window (page " . ($page_w // '?') . " of " . ($win_w // '?') . ", over: " . ($over // '?') . ")");
	}

	# every statement a table refers to is given in full in the appendix
	my %appendix;
	while ($page =~ m{<div class="sql" id="q(\d+)"><p>.*?</p><pre>(.*?)</pre></div>}sg)
	{
		$appendix{$1} = unescape($2);
	}
	my %refs = map { $_ => 1 } ($page =~ m{<td class="q"><a href="#q(\d+)">}g);
	ok(%refs && !grep({ !defined $appendix{$_} } keys %refs),
		"$name: the " . scalar(keys %refs) . " statements of the tables are in the appendix");
	my @missing = grep { my $t = $_; !grep { $_ eq $t } values %appendix } @texts;
	is(scalar(@missing), 0, "$name: every top statement's full text is in the appendix") or diag(join("\n", @missing));

	run_command([ $chromium, @flags, '--window-size=1400,4000', "--screenshot=$dir/$name.png", "file://$dir/$name.html" ]);
	ok(-s "$dir/$name.png" > 20000, "$name: a screenshot was written ($dir/$name.png)");
	my $colours = png_colours("$dir/$name.png");
	ok($colours > 20, "$name: the screenshot is drawn, not blank ($colours distinct values)");
}

# the comparison's tables of 15 columns fit at 1000 px also when both
# releases have long names (column headers "Calls Sunflower", ...)
$node->safe_psql('folio', qq{UPDATE folio_perf_data.window SET tags = tags || '{"release": "Sunflower"}' WHERE window_id = $w1});
my $long = doc("SELECT folio_perf_compare($w1, $w2, 'html')");
$node->safe_psql('folio', qq{UPDATE folio_perf_data.window SET tags = tags || '{"release": "Poppy"}' WHERE window_id = $w1});
like($long, qr/<th class="n">Rows written Sunflower<\/th>/, 'compare: a long release name in the headers');
{
	my ($page_w, $win_w, $over) = measured('compare-long', $long, 1000);
	ok(defined $page_w && $page_w <= $win_w && $over eq 'none',
		"compare of Sunflower and Quesnelia at 1000 px: not wider than the window (page " . ($page_w // '?') . " of " . ($win_w // '?') . ", over: " . ($over // '?') . ")");
}

# the charts: drawn, each with at least four labelled ticks on each axis
my ($dom) = run_command([ $chromium, @flags, '--window-size=1400,1000', '--dump-dom', "file://$dir/report.html" ]);
my @charts = ($dom =~ m{(<svg[^>]*class="chart".*?</svg>)}sg);
ok(@charts >= 4, scalar(@charts) . ' charts (connections, DB load, top statements, load by waits)');
like($dom, qr/Connections per module \(stacked\)/, 'connections per module chart');
like($dom, qr/DB load by wait class/, 'DB load chart');
like($dom, qr/DB load by statement and wait event/, 'load by waits per statement chart');
like($dom, qr{class="hl"[^>]*/><text[^>]*>\d+ CPUs</text>|class="hl".*?\d+ CPUs}s, 'the CPU count is drawn on the DB load chart');
for my $c (@charts)
{
	my ($title) = $c =~ m{class="ct">([^<]*)<};
	my $x = () = $c =~ m{<text[^>]*class="[^"]*\bxt\b[^"]*"[^>]*>[^<]+<}g;
	my $y = () = $c =~ m{<text[^>]*class="[^"]*\byt\b[^"]*"[^>]*>[^<]+<}g;
	my $shapes = () = $c =~ m{<(polygon|polyline|rect) [^>]*(points|width)="[^"0]}g;
	# a bar chart's category axis has one label per bar (its value label
	# has class "ax" alone)
	my $bars = () = $c =~ m{<text[^>]*class="ax">[^<]+<}g;
	my $ywant = $c =~ /class="lg yt"/ ? ($bars >= 1 ? $bars : 1) : 4;
	ok($x >= 4 && $y >= $ywant && $shapes >= 2,
		"chart '$title': $x x ticks, $y y ticks (want $ywant), $shapes shapes");
}
# no two labels of a chart overlap, as Chromium lays them out: time axis
# labels (the demo's windows and spans whose last round tick falls just
# before the end) and legends (long wait event names, four to a row: no
# name runs into the next colour box)
my $overlap = q{<script>window.addEventListener('load',function(){var o=[],n=0;
document.querySelectorAll('svg.chart').forEach(function(s){['text.xt','text.lg,rect[width="12"]'].forEach(function(q){
var b=Array.from(s.querySelectorAll(q)).map(function(t){return t.getBoundingClientRect();});n+=b.length;
for(var i=0;i<b.length;i++)for(var j=i+1;j<b.length;j++){var a=b[i],c=b[j];
if(a.left<c.right&&c.left<a.right&&a.top<c.bottom&&c.top<a.bottom)o.push(q+':'+Math.round(a.left)+'/'+Math.round(c.left));}});});
var p=document.createElement('pre');p.id='overlap';p.textContent=n+' labels; overlapping: '+(o.join(',')||'none');
document.body.appendChild(p);});</script>};
my $synthetic = doc(q{SELECT folio_perf_data.html_head('charts') || string_agg(folio_perf_data.svg_chart('span ' || span,
		(SELECT jsonb_agg(jsonb_build_object('bucket', b, 'series', 'IPC:ProcArrayGroupUpdate ' || (b % 6), 'value', 1,
			'bucket_start', '2026-01-01 10:00:00+00'::timestamptz + b * span / 12 * interval '1 second',
			'bucket_end', '2026-01-01 10:00:00+00'::timestamptz + (b + 1) * span / 12 * interval '1 second'))
		 FROM generate_series(0, 11) b), true, '{"hline": 2, "hline_label": "2 CPUs"}'), '' ORDER BY span)
	|| folio_perf_data.svg_bars('bars', (SELECT jsonb_agg(jsonb_build_object('label', 'Q' || q, 'parts',
		(SELECT jsonb_agg(jsonb_build_object('series', e, 'value', 0.1)) FROM unnest(ARRAY['IPC:ProcArrayGroupUpdate',
			'LWLock:ProcArray', 'IO:DataFileImmediateSync', 'LWLock:BufferContent', 'Lock:transactionid',
			'LWLock:SerializableFinishedList', 'Client:ClientRead', 'CPU']) e))) FROM generate_series(1, 3) q), 'AAS')
	|| '</body></html>'
	FROM unnest(ARRAY[2.35, 10.7, 10.8, 130.5, 3590]) span});
for my $page ([ 'report', $html{report} ], [ 'synthetic', $synthetic ])
{
	(my $m = $page->[1]) =~ s{</body>}{$overlap</body>};
	save("$dir/$page->[0]-overlap.html", $m);
	my ($d) = run_command([ $chromium, @flags, '--window-size=1400,1000', '--dump-dom', "file://$dir/$page->[0]-overlap.html" ]);
	my ($n, $o) = $d =~ m{<pre id="overlap">(\d+) labels; overlapping: ([^<]*)</pre>};
	ok(defined $n && $n >= 20 && $o eq 'none', "$page->[0]: no chart labels overlap (" . ($n // '?') . " labels; overlapping: " . ($o // '?') . ")");
}

like($dom, qr{Time \(HH:MM:SS, [^)]+\)}, 'the time axis names its time zone');
like($dom, qr{>\d\d:\d\d:\d\d(\.\d)?</text>}, 'time ticks as HH:MM:SS (tenths under 3 s)');
like($dom, qr{class="lg yt" text-anchor="end">Q\d+ fs09000000 / mod_[a-z_]+ / }, 'statement bars name tenant and module');

# ---- markdown ------------------------------------------------------------

my $md = doc("SELECT folio_perf_report($w2, 'markdown', detail => 'full')");
my $cmp = doc("SELECT folio_perf_compare($w1, $w2, 'markdown')");
save("$dir/report.md", $md);
save("$dir/compare.md", $cmp);
for my $t (@texts)
{
	ok(index($md, "```sql\n$t\n```") >= 0, 'markdown gives in full: ' . substr($t, 0, 50));
}
like($md, qr/^\| Duration \(hh:mm:ss\) \| \d\d:\d\d:\d\d \|$/m, 'markdown: window duration as hh:mm:ss');
like($md, qr/^\| WAL \| [\d.,]+ (B|kB|MB|GB) \|$/m, 'markdown: WAL humanised');
like($md, qr/^\| DB size at end \| [\d.,]+ (kB|MB|GB) \|$/m, 'markdown: sizes humanised');
unlike($md, qr/^(?!\| statement \|).*\| \d{5,} \|/m, 'markdown: no number without thousands separators (query ids aside)');
like($md, qr/^\| \\# \| Tenant \| Module \| Calls \| Total, ms \| Mean, ms \|/m, 'markdown: headers in words with units');
like($md, qr/\| \\\[Q1\\\] /, 'markdown: tables refer to the SQL appendix');
like($md, qr/^\| Tenant \| Operation \| Count \| Per minute \| Per minute active \| DB time, ms \| DB time per operation, ms \| Tenant DB time per operation, ms \| Statements per operation \| Rows written per operation \| WAL per operation \| Source \|$/m,
	'markdown: the operations\' headers in words with units');
unlike($md, qr/^\|.*\b(Db|Wal) /m, 'markdown: no header spelled from a column name');
unlike($md, qr/&gt;/, 'markdown: ">" as written, not as an entity');
like($md, qr/^\| total \| all \|  \| [\d.]+ \|/m, 'markdown: the DB load total has no module, not "(unattributed)"');
unlike($md, qr/^\| (total|wait_event_type|wait_event|tenant|backend_type|database) \|[^|]*\| \(unattributed\) \|/m,
	'markdown: no "(unattributed)" module on rows of dimensions without one');
like($cmp, qr/^## folio_perf comparison: Poppy vs Quesnelia$/m, 'compare: titled with the releases');
like($cmp, qr/^\| Tenant \| Module \| Calls Poppy \| Calls Quesnelia \| Mean Poppy, ms \| Mean Quesnelia, ms \| Mean Delta, % \| Total Delta, % \| Plan \| Statement \|$/m,
	'compare: columns named after the releases, with "Delta, %" (the ten of a wiki page)');
like($cmp, qr/^\| Label \| DI MARC Bib Create 60 \+ CICO \| DI MARC Bib Create 120 \+ CICO \|$/m, 'compare: window labels at the top');
like($cmp, qr/^\| Tags \| release: Poppy, scenario: DI\+CICO \| release: Quesnelia, scenario: DI\+CICO \|$/m, 'compare: tags at the top');
like($cmp, qr/\| [+-]?[\d.,]+% \|/, 'compare: changes with a sign and %');
like($cmp, qr/^\| Tenant \| What \| Metric \| Poppy \| Quesnelia \| Delta \| Delta, % \|\n\| :--- \| :--- \| :--- \| ---: \| ---: \| ---: \| ---: \|$/m,
	'compare: FOLIO operations under the releases, with Delta and Delta, %, numbers right-aligned');
like($cmp, qr/^\| fs09000000 \| check_out \| DB time per operation, ms \| [\d.,]+ \| [\d.,]+ \| (0|[+-][\d.,]+) \| [+-]?[\d.,]+% \|$/m,
	'compare: DB time per check-out in words, its Delta in ms and its change with a sign and %');
unlike($cmp, qr/\| (count|per_minute|db_time_per_op_ms|records_per_minute|duration \(hh:mm:ss\)) \|/,
	'compare: no metric named by its key');
like($cmp, qr/^\| WAL \| [\d.,]+ (kB|MB) \| [\d.,]+ (kB|MB) \| [+-]?[\d.,]+ (B|kB|MB) \| [+-][\d.,]+% \|$/m, 'compare: WAL and its delta humanised');
like($cmp, qr/^\| Duration \(hh:mm:ss\) \| \d\d:\d\d:\d\d \| \d\d:\d\d:\d\d \|$/m, 'compare: durations as hh:mm:ss');

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

$node->stop;
done_testing();
