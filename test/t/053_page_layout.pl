# test/t/053_page_layout.pl - what people look at: the markdown report as
# one wiki page and the HTML report at 1000 and 1400 px.
#
# On a window of data import and check-in/check-out with the sampler on:
#   - the default markdown report fits a wiki page (at most 150 lines), has
#     the seeds' sections in their order, five statements in Top SQL with
#     their whole SQL, and renders (cmark-gfm, GitHub's CommonMark with
#     tables, from Debian) without a backslash or stray markup in the text;
#     a label full of markdown and HTML comes out as written; the full
#     report is still there with detail => 'full' (and, as the control,
#     has the backslash escapes the page avoids);
#   - the HTML report in headless Chromium at 1000 and 1400 px: no word of a
#     table header, cell, card or contents entry broken across lines (each
#     word's Range has one line box) and no two contents entries
#     overlapping, with a control page that breaks words; a DB CPU chart
#     (DB CPU % and host busy %, with the 100 % line) and a CPU per module
#     chart with labelled axes; the CPU-count line's colour is none of the
#     series colours; long tables are folded.
# Screenshots are kept under tmp_check for looking at.
# Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)
use strict;
use warnings;
use Cwd qw(abs_path);
use File::Basename qw(dirname);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $chromium = (grep { -x $_ } qw(/usr/bin/chromium /usr/bin/chromium-browser))[0];
my $cmark = '/usr/bin/cmark-gfm';
plan skip_all => "chromium or $cmark not installed (test/setup.sh installs them)"
  unless $chromium && -x $cmark;

my $testdir =
  ($ENV{TESTDIR} && -d "$ENV{TESTDIR}/test/fixture")
  ? "$ENV{TESTDIR}/test"
  : abs_path(dirname(__FILE__) . '/..');
my $dir = "${PostgreSQL::Test::Utils::tmp_check}/page_layout";
mkdir $dir;

sub save
{
	my ($f, $t) = @_;
	open(my $fh, '>:raw', $f) or die "$f: $!";
	print $fh $t;
	close $fh;
}

my $node = PostgreSQL::Test::Cluster->new('page');
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
my @conn = ('-h', $node->host, '-p', $node->port);
my ($out, $err) = run_command([ 'bash', "$testdir/fixture/build_fixture.sh",
	'-d', 'folio', '-t', '3', '-r', '30', '-P', '2', @conn ]);
like($out, qr/^fixture folio: 3 tenants/m, 'fixture built') or diag($err);
$node->safe_psql('folio', 'CREATE EXTENSION pg_stat_statements; CREATE EXTENSION folio_perf');

my $label = q{DI *MARC* Bib _Create_ 25K | [x](http://example.org) <img src=x> `tick` ~~old~~ \\n 50%};
(my $label_sql = $label) =~ s/'/''/g;
my $w = $node->safe_psql('folio',
	qq{SELECT folio_perf_begin('$label_sql', '{"release": "Quesnelia", "scenario": "DI+CICO"}')});
for my $wl ([ 'di_create', 200, 1, 'fs09000000' ], [ 'cico', 24, 2, 'fs09000000' ], [ 'di_create', 100, 1, 'cs00000int_0001' ])
{
	my ($o, $e) = run_command([ 'bash', "$testdir/workload/run_workload.sh", '-q',
		'-d', 'folio', @conn, '-w', $wl->[0], '-n', $wl->[1], '-c', $wl->[2], '-t', $wl->[3] ]);
	like($o, qr/== $wl->[0] done/, "workload $wl->[0] on $wl->[3] ran") or diag($e);
}
# some DB load the sampler sees: a session waiting and, for the CPU per
# module chart, one on CPU for 1.2 s under a module's login (the workloads
# use some tens of ms of CPU each: CI once drew the chart with
# (unattributed) alone, before the CPU of ended sessions was counted)
my @sleepers = map {
	my $s = $node->background_psql('folio', extra_params => [ '-U', 'fs09000000_mod_users' ]);
	$s->query_until(qr/go/, "\\echo go\n" . ($_ == 1 ? "SELECT pg_sleep(1.5);\n"
		: "DO \$\$BEGIN WHILE clock_timestamp() < now() + interval '1.2 s' LOOP PERFORM md5(random()::text); END LOOP; END\$\$;\n"));
	$s
} 1 .. 2;
sleep 2;
$_->quit for @sleepers;
$node->safe_psql('folio', "SELECT folio_perf_end($w)");

sub doc
{
	my ($sql) = @_;
	my ($rc, $o, $e) = $node->psql('folio', $sql);
	diag($e) if $rc != 0;
	return $o;
}

# ---- markdown: one wiki page ------------------------------------------------
my $md = doc("SELECT folio_perf_report($w, 'markdown')");
my $full = doc("SELECT folio_perf_report($w, 'markdown', detail => 'full')");
save("$dir/page.md", $md);
my $lines = () = $md =~ /\n/g;
cmp_ok($lines, '<=', 150, "the markdown page has $lines lines (at most 150)");
cmp_ok(length($full), '>', 2 * length($md), 'detail => full gives the whole report');
my @heads = $md =~ /^### (.+)$/mg;
is( join(' / ', grep { !/^DB CPU by module$/ } @heads),
	'Summary / Verdict / Top SQL / Connections per module / DB load (average active sessions) / FOLIO operations / Record counts',
	'the sections in the seeds\' order');
like($md, qr/^\| DB CPU \| avg [\d.]+%, max [\d.]+% of \d+ CPUs/m, 'DB CPU avg / max in one line');
like($md, qr/^\| Connections \| avg [\d.]+, max \d+ of max_connections \d+ \|$/m, 'connections avg / max in one line');
my @top = $md =~ /^\| (\d) \| [^|]+ \| mod_[a-z_]+ \| /mg;
is(join(',', @top), '1,2,3,4,5', 'Top SQL: five statements with tenant and module');
my $texts = $node->safe_psql('folio', qq{
	SELECT string_agg(query, E'\\x1f' ORDER BY rank) FROM folio_perf_top_statements($w, 5)});
my @missing = grep { index($md, "```sql\n$_\n```") < 0 } split /\x1f/, $texts;
is(scalar(@missing), 0, 'every Top SQL statement in full in a code block') or diag(join("\n", @missing));
like($md, qr/^\| cs00000int_0001 \| PTF - Create 2 \| 100\.mrc \| 1 \| 100 \| \d\d:\d\d:\d\d \|/m,
	'data-import jobs grouped by tenant, profile and file');
unlike($md, qr/\battribution\b.*\|/i, 'no debug dimension in the page');

# rendered as a wiki would: no backslash and no markup that the text did not mean
my ($html_md) = run_command([ $cmark, '-e', 'table', "$dir/page.md" ]);
save("$dir/page.html", $html_md);
(my $visible = $html_md) =~ s{<(pre|code)\b.*?</\1>}{}sg;
$visible =~ s/<[^>]+>//g;
$visible =~ s/&lt;/</g; $visible =~ s/&gt;/>/g; $visible =~ s/&quot;/"/g; $visible =~ s/&amp;/&/g;
my $bs = () = $visible =~ /\\/g;
# the label's own "\n" is the only backslash the text has
is($bs, 1, 'rendered page: no backslash shows but the one the label has');
# (the page's own notes and footer are in italics; the data is in the
# heading, the table cells and the verdict's list items)
my @marks = $html_md =~ m{<(?:h2|td|th|li)\b[^>]*>(?:(?!</(?:h2|td|th|li)>).)*?<(em|del|a|img|strong)\b}sg;
my @strong = $html_md =~ m{<li><strong>(\w+)</strong>}g;
is(scalar(@marks) - scalar(@strong), 0, 'rendered page: no emphasis, strike-through, link or image from the data') or diag("@marks");
like($html_md, qr{<h2>folio_perf report: DI \*MARC\* Bib _Create_ 25K}, 'control: the check reads the heading');
my ($h2) = $html_md =~ m{<h2>(.*?)</h2>}s;
$h2 =~ s/<[^>]+>//g;
$h2 =~ s/&lt;/</g; $h2 =~ s/&gt;/>/g; $h2 =~ s/&amp;/&/g; $h2 =~ s/&quot;/"/g;
is($h2, "folio_perf report: $label", 'the hostile label reads as written');
my @tables = $html_md =~ /<table>/g;
cmp_ok(scalar(@tables), '>=', 6, scalar(@tables) . ' tables rendered as tables');
# control: the full report's escapes, which the page avoids
(my $fsrc = $full) =~ s/^```.*?^```$//msg;
like($fsrc, qr/\\\[Q1\\\]/, 'control: the full report escapes with backslashes');
(my $msrc = $md) =~ s/^```.*?^```$//msg;
$msrc =~ s/^## .*$//m;    # the heading: the label, escaped where it must be
my $mbs = () = $msrc =~ /\\[^|]/g;
is($mbs, 0, 'the page source has no backslash escape outside the label (a wiki that ignores escapes shows it right)');

# the verdict names what it could not check (no snapshot inside this window)
like($node->safe_psql('folio', qq{SELECT f->>'finding' FROM jsonb_array_elements(folio_perf_report($w, 'json')::jsonb->'verdict') f
	WHERE f->>'check' = 'not_checked'}), qr/^Not checked: the trend and the saturation check \(no snapshot inside the window: set folio_perf\.snapshot_interval/,
	'the verdict says the trend and saturation checks were skipped, and why');
like($md, qr/^- Not checked: the trend and the saturation check/m, 'and the page shows it');

# ---- HTML at 1000 and 1400 px -----------------------------------------------
my $html = doc("SELECT folio_perf_report($w, 'html')");
save("$dir/report.html", $html);
# Chromium's own files (~/.pki, crash reports) under this test's directory,
# not the OS user's home, which other runs as that user share (as in 006, 081)
local $ENV{HOME} = $dir;
my @flags = ('--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--disable-background-networking',
	'--disable-component-update', '--disable-sync', '--no-first-run', "--user-data-dir=$dir/chromium");
# every word of headers, cells, cards and contents in one line box; the
# contents entries apart; the page not wider than the window
my $measure = q{<script>window.addEventListener('load',function(){document.querySelectorAll('details').forEach(function(d){d.open=true;});
var broken=[],n=0,ov=[];
document.querySelectorAll('th,td:not(.q),.card .v,.card .d,.card .k,nav.toc li').forEach(function(el){
var w=document.createTreeWalker(el,NodeFilter.SHOW_TEXT);var t;while((t=w.nextNode())){
if(t.parentElement.closest('code,pre,summary'))continue;var re=/[^\s-]+-?/g,m;while((m=re.exec(t.data))){n++;
var r=document.createRange();r.setStart(t,m.index);r.setEnd(t,m.index+m[0].length);
var rs=Array.from(r.getClientRects()).filter(function(x){return x.width>0;});
if(rs.length>1&&broken.length<20)broken.push(m[0]);}}});
var li=Array.from(document.querySelectorAll('nav.toc li')).map(function(x){return x.getBoundingClientRect();});
for(var i=0;i<li.length;i++)for(var j=i+1;j<li.length;j++){var a=li[i],c=li[j];
if(a.left<c.right-1&&c.left<a.right-1&&a.top<c.bottom-1&&c.top<a.bottom-1)ov.push(i+'/'+j);}
var p=document.createElement('pre');p.id='measure';p.textContent=n+' words; broken: '+(broken.join(' ')||'none')+'; toc overlaps: '+(ov.join(',')||'none')
+'; page '+document.documentElement.scrollWidth+' of '+document.documentElement.clientWidth;
document.body.appendChild(p);});</script>};
sub measured
{
	my ($name, $page, $width) = @_;
	(my $m = $page) =~ s{</body>}{$measure</body>};
	save("$dir/$name-$width-measure.html", $m);
	my ($dom) = run_command([ $chromium, @flags, "--window-size=$width,1000", '--dump-dom', "file://$dir/$name-$width-measure.html" ]);
	return $dom =~ m{<pre id="measure">(\d+) words; broken: (.*?); toc overlaps: (.*?); page (\d+) of (\d+)</pre>} ? ($1, $2, $3, $4, $5) : ();
}
my @control = measured('control', '<!DOCTYPE html><html><body><table><tr><th style="width:18px;overflow-wrap:anywhere">Calls Rows</th>'
	. '<td style="width:20px;overflow-wrap:anywhere">0.046&nbsp;ms</td></tr></table></body></html>', 1000);
ok(@control && $control[1] ne 'none', "control: a header broken inside a word is found (broken: " . ($control[1] // '?') . ")");
for my $width (1000, 1400)
{
	my ($n, $broken, $ov, $pw, $ww) = measured('report', $html, $width);
	ok(defined $n && $n > 200 && $broken eq 'none', "report at $width px: no word broken across lines ($n words; broken: " . ($broken // '?') . ')');
	is($ov, 'none', "report at $width px: the contents entries do not overlap");
	ok(defined $pw && $pw <= $ww, "report at $width px: the page is not wider than the window (" . ($pw // '?') . ' of ' . ($ww // '?') . ')');
	run_command([ $chromium, @flags, "--window-size=$width,3000", "--screenshot=$dir/report-$width.png", "file://$dir/report.html" ]);
	ok(-s "$dir/report-$width.png" > 20000, "a screenshot at $width px ($dir/report-$width.png)");
}

# the DB CPU charts
my ($dom) = run_command([ $chromium, @flags, '--window-size=1400,1000', '--dump-dom', "file://$dir/report.html" ]);
my %chart = map { my ($t) = m{class="ct">([^<]*)<}; ($t => $_) } ($dom =~ m{(<svg[^>]*class="chart".*?</svg>)}sg);
my ($cpu) = grep { /^DB CPU utilization/ } keys %chart;
ok($cpu, 'a DB CPU utilization chart') or diag(join(', ', keys %chart));
if ($cpu)
{
	my $c = $chart{$cpu};
	my $x = () = $c =~ m{<text[^>]*class="[^"]*\bxt\b[^"]*"[^>]*>\d\d:\d\d:\d\d}g;
	my @y = $c =~ m{<text[^>]*class="[^"]*\byt\b[^"]*"[^>]*>([\d.,]+)<}g;
	cmp_ok($x, '>=', 4, "DB CPU chart: $x time ticks");
	cmp_ok(scalar(@y), '>=', 4, 'DB CPU chart: ' . scalar(@y) . ' value ticks');
	is($y[-1], '100', 'DB CPU chart: the value axis reaches 100 (%)');
	like($c, qr/CPU, % of \d+ CPUs/, 'DB CPU chart: the axis title names the CPU count');
	like($c, qr/DB CPU, %/, 'DB CPU chart: the DB CPU series');
	like($c, qr/Host busy/, 'DB CPU chart: the host busy series');
	like($c, qr{class="hl".*100% = \d+ CPUs}s, 'DB CPU chart: the 100 % line is every CPU of the host');
}
ok((grep { /^DB CPU per module/ } keys %chart), 'a DB CPU per module chart');
like($chart{ (grep { /^DB CPU per module/ } keys %chart)[0] // '' } // '', qr/mod_[a-z_]+/, 'with the modules in its legend');
# the CPU line is told apart from every series colour
my ($hl) = $html =~ /\.hl\{stroke:(#[0-9a-f]{6})/;
my %series = map { lc($_) => 1 } ($html =~ /fill="(#[0-9a-f]{6})"/g);
ok($hl && !$series{ lc $hl }, "the CPU-count line ($hl) has none of the series' colours");
# long tables folded
like($html, qr{<details class="fold"><summary>\d+ rows</summary>}, 'long tables are folded');
unlike($html, qr{<section id="top"><h2>[^<]*</h2>\n(<p[^>]*>[^<]*</p>\n)?<details class="fold">}, 'the top statements are not');

# the link to the Grafana dashboard over the window's time range
unlike($html, qr{<dt>Grafana</dt>}, 'no Grafana link while folio_perf.grafana_url is empty');
my $linked = doc(qq{SET folio_perf.grafana_url = 'https://grafana.example.org/'; SELECT folio_perf_report($w, 'html')});
my $ms = $node->safe_psql('folio', qq{SELECT floor(extract(epoch FROM begin_at) * 1000) || '&amp;to=' || ceil(extract(epoch FROM end_at) * 1000)
	FROM folio_perf_windows WHERE window_id = $w});
like($linked, qr{<dt>Grafana</dt><dd><a href="https://grafana\.example\.org/d/folio-perf/folio-perf\?var-window=$w&amp;from=\Q$ms\E">},
	'the HTML links the dashboard with the window and its time range');
for my $bad (q{javascript:alert(1)}, q{http://x/"onmouseover=alert(1)}, q{https://x/<script>})
{
	(my $b = $bad) =~ s/'/''/g;
	my ($rc, $o, $e) = $node->psql('folio', "SET folio_perf.grafana_url = '$b'");
	like($e, qr/invalid value for parameter "folio_perf\.grafana_url"/, "folio_perf.grafana_url refuses $bad");
}

$node->stop;
done_testing();
