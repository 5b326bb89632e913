#!/usr/bin/env python3
# Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)
"""bench/lib/summarize.py - turn bench/run.sh's raw results into the table.

Input: results.tsv with columns
    section  tenants  scenario  contender  rep  ms  bytes  info
(one row per timed run; bytes may be empty).  Output (stdout): one markdown
document with the snapshot table (median [min..max] of the time, mean bytes
per snapshot, and the ratios folio_perf / naive copy computed per repetition,
i.e. from runs taken side by side, then summarised), the growth curve, the
reports, the hook and the goals with met/missed.

With --against REV the contender "rev" (snapshots) and the info "rev"
(reports, window readers) are REV's figures from the same repetitions; the
section "Against REV" gives working tree / REV per scenario, median of the
per-repetition ratios, and names every one more than 20 % worse.  A report
call cancelled by bench/run.sh's --report-timeout has ms "T" (recorded as
timed out), one that failed "F".

Usage: summarize.py results.tsv [machine.txt]
"""
import collections
import statistics
import sys

GOALS = {
    # scenario: (time ratio goal vs naive3, bytes goal vs naive3, absolute bytes cap)
    'steady': (0.10, 0.05, None),
    'idle': (0.05, None, 100 * 1000),
    'worst': (1.00, 0.50, None),
    'worst_write': (1.00, 0.50, None),
}
SCENARIOS = ['first', 'idle', 'steady', 'worst', 'worst_write', 'churn']
LABEL = {'first': 'first (stores all)', 'idle': 'idle', 'steady': 'steady', 'worst': 'worst',
         'worst_write': 'worst, every table written',
         'churn': 'statements all new (churn)'}
CONTENDERS = ['folio_perf', 'naive3', 'naive4', 'powa']
WORSE = 1.20        # a ratio to REV above this is named as a step backwards
# (window reader, window kind): goal in ms at 40 tenants
READER_GOALS = {('report(*)', 'day'): 1000, ('compare(text)', 'day'): 1500,
                ('trend', 'day'): 1000, ('report(html)', 'two'): 250}
FLOORS = ['floor_class', 'floor_stats', 'floor_walk', 'floor_pgss']


def med(xs):
    return statistics.median(xs) if xs else None


def fmt_ms(x):
    if x is None:
        return '-'
    if x >= 100:
        return '%.0f' % x
    if x >= 10:
        return '%.1f' % x
    return '%.2f' % x


def fmt_bytes(x):
    if x is None:
        return '-'
    for unit, div in (('MB', 1e6), ('kB', 1e3)):
        if abs(x) >= div:
            return '%.1f %s' % (x / div, unit) if abs(x) < 100 * div else '%.0f %s' % (x / div, unit)
    return '%.0f B' % x


def fmt_ratio(x):
    if x is None:
        return '-'
    return '%.3f' % x if x < 1 else '%.2f' % x


def spread(xs, f):
    if not xs:
        return '-'
    if len(xs) == 1:
        return f(xs[0])
    return '%s [%s..%s]' % (f(med(xs)), f(min(xs)), f(max(xs)))


def load(path):
    rows = []
    with open(path) as fh:
        for line in fh:
            if not line.strip() or line.startswith('#'):
                continue
            p = line.rstrip('\n').split('\t')
            while len(p) < 9:
                p.append('')
            sec, ten, scen, cont, rep, ms, by, info, cpu = p[:9]
            rows.append(dict(section=sec, tenants=int(ten) if ten else 0, scenario=scen,
                             contender=cont, rep=int(rep) if rep else 0,
                             ms=float(ms) if ms and ms not in ('T', 'F') else None,
                             timeout=(ms == 'T'), failed=(ms == 'F'),
                             bytes=float(by) if by else None, info=info,
                             cpu=float(cpu) if cpu else None))
    return rows


def main():
    rows = load(sys.argv[1])
    machine = open(sys.argv[2]).read().strip() if len(sys.argv) > 2 else ''
    out = []
    w = out.append

    snap = [r for r in rows if r['section'] == 'snapshot']
    by = collections.defaultdict(dict)      # (tenants, scenario, rep) -> contender -> row
    for r in snap:
        by[(r['tenants'], r['scenario'], r['rep'])][r['contender']] = r
    tenants = sorted({r['tenants'] for r in snap})
    meta = {r['tenants']: r['info'] for r in rows if r['section'] == 'fixture'}

    verdicts = []
    if snap:
        w('## Snapshot: time and bytes per snapshot (pg_stat_statements: ~5,000 entries)')
        w('')
        w('Time: median [min..max] over the repetitions, ms.  Bytes: mean growth of the '
          'destination tables per snapshot (pg_total_relation_size).  Ratios: folio_perf '
          'divided by the naive copy of the same repetition (run side by side), '
          'median [min..max].  naive3 = pg_stat_statements + pg_stat_user_tables + '
          'pg_statio_user_tables; naive4 = naive3 + pg_stat_user_indexes.')
        w('')
        w('| tenants | relations | scenario | folio_perf ms | naive3 ms | naive4 ms | PoWA ms '
          '| folio/naive3 time | folio/naive4 time | folio bytes | naive3 bytes | naive4 bytes '
          '| PoWA bytes | folio/naive3 bytes | stored rows (stmt/rel) '
          '| floor: pg_class scan ms | floor: statistics snapshot ms | floor: one walk of the shared statistics ms '
          '| floor: pg_stat_statements once ms | folio x floor (walk + statements) |')
        w('|' + '---|' * 20)
        for t in tenants:
            for s in SCENARIOS:
                reps = sorted(rep for (tt, ss, rep) in by if tt == t and ss == s)
                if not reps:
                    continue
                cell = {}
                for c in CONTENDERS + FLOORS:
                    cell[c] = [by[(t, s, rep)][c] for rep in reps if c in by[(t, s, rep)]]
                ratio_t3, ratio_t4, ratio_floor = [], [], []
                for rep in reps:
                    d = by[(t, s, rep)]
                    if 'folio_perf' in d and 'naive3' in d and d['naive3']['ms']:
                        ratio_t3.append(d['folio_perf']['ms'] / d['naive3']['ms'])
                    if 'folio_perf' in d and 'naive4' in d and d['naive4']['ms']:
                        ratio_t4.append(d['folio_perf']['ms'] / d['naive4']['ms'])
                    if 'folio_perf' in d and 'floor_walk' in d and 'floor_pgss' in d and \
                            d['floor_walk']['ms'] is not None and d['floor_pgss']['ms'] is not None:
                        ratio_floor.append(d['folio_perf']['ms'] / (d['floor_walk']['ms'] + d['floor_pgss']['ms']))

                def mean_bytes(c):
                    xs = [r['bytes'] for r in cell[c] if r['bytes'] is not None]
                    return statistics.mean(xs) if xs else None
                fb, nb3, nb4, pb = (mean_bytes(c) for c in CONTENDERS)
                floors = ' | '.join(spread([r['ms'] for r in cell[c]], fmt_ms) for c in FLOORS)
                rb = fb / nb3 if fb is not None and nb3 else None
                stored = sorted({r['info'] for r in cell['folio_perf'] if r['info']})
                stored_s = stored[len(stored) // 2] if stored else ''
                w('| %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |' % (
                    t, meta.get(t, ''), LABEL[s],
                    spread([r['ms'] for r in cell['folio_perf']], fmt_ms),
                    spread([r['ms'] for r in cell['naive3']], fmt_ms),
                    spread([r['ms'] for r in cell['naive4']], fmt_ms),
                    spread([r['ms'] for r in cell['powa']], fmt_ms),
                    spread(ratio_t3, fmt_ratio), spread(ratio_t4, fmt_ratio),
                    fmt_bytes(fb), fmt_bytes(nb3), fmt_bytes(nb4), fmt_bytes(pb),
                    fmt_ratio(rb), stored_s, floors, spread(ratio_floor, fmt_ratio)))
                if s in GOALS:
                    gt, gb, cap = GOALS[s]
                    mt = med(ratio_t3)
                    if mt is not None:
                        verdicts.append(('%s time, %d tenants' % (s, t), '<= %.2fx naive copy' % gt,
                                         '%.3fx' % mt, mt <= gt,
                                         '' if mt <= gt else 'missed by %.1fx' % (mt / gt)))
                    if gb is not None and rb is not None:
                        verdicts.append(('%s bytes, %d tenants' % (s, t), '<= %.2fx naive copy' % gb,
                                         '%.4fx (%s)' % (rb, fmt_bytes(fb)), rb <= gb,
                                         '' if rb <= gb else 'missed by %.1fx' % (rb / gb)))
                    if cap is not None and fb is not None:
                        verdicts.append(('%s bytes, %d tenants' % (s, t), '< %s' % fmt_bytes(cap),
                                         fmt_bytes(fb), fb < cap,
                                         '' if fb < cap else 'missed by %.1fx' % (fb / cap)))
        w('')

        # growth curve: folio_perf steady/idle time and bytes per tenant count
        w('## Growth from 1 to %d tenants (folio_perf, medians)' % max(tenants))
        w('')
        w('| tenants | relations | idle ms | steady ms | worst ms | idle bytes | steady bytes '
          '| worst bytes | naive3 ms (idle) | naive3 bytes |')
        w('|' + '---|' * 10)
        for t in tenants:
            def m(s, c, key):
                xs = [by[k][c][key] for k in by if k[0] == t and k[1] == s and c in by[k]
                      and by[k][c][key] is not None]
                if not xs:
                    return None
                return med(xs) if key == 'ms' else statistics.mean(xs)
            w('| %d | %s | %s | %s | %s | %s | %s | %s | %s | %s |' % (
                t, meta.get(t, ''),
                fmt_ms(m('idle', 'folio_perf', 'ms')), fmt_ms(m('steady', 'folio_perf', 'ms')),
                fmt_ms(m('worst', 'folio_perf', 'ms')),
                fmt_bytes(m('idle', 'folio_perf', 'bytes')), fmt_bytes(m('steady', 'folio_perf', 'bytes')),
                fmt_bytes(m('worst', 'folio_perf', 'bytes')),
                fmt_ms(m('idle', 'naive3', 'ms')), fmt_bytes(m('idle', 'naive3', 'bytes'))))
        w('')

    def cell_ms(rs, timeout_s=None):
        xs = [r['ms'] for r in rs if r['ms'] is not None]
        nt = sum(1 for r in rs if r['timeout'])
        nf = sum(1 for r in rs if r['failed'])
        c = spread(xs, fmt_ms) if xs else ''
        if nt:
            c += (' ' if c else '') + 'timed out x%d' % nt
        if nf:
            c += (' ' if c else '') + 'FAILED x%d' % nf
        return c or '-'

    def side_ratio(rs):
        """working tree / rev per repetition (rows with info work / rev), median."""
        d = collections.defaultdict(dict)
        for r in rs:
            d[r['rep']][r['info']] = r
        rat, worse_timeout = [], False
        for rp, x in d.items():
            if 'work' in x and 'rev' in x:
                a, b = x['work'], x['rev']
                if a['ms'] is not None and b['ms']:
                    rat.append(a['ms'] / b['ms'])
                elif a['timeout'] and not b['timeout']:
                    worse_timeout = True
        return rat, worse_timeout

    backwards = []
    rep = [r for r in rows if r['section'] == 'report']
    if rep:
        sides = sorted({r['info'] for r in rep if r['info'] in ('work', 'rev')}) or ['']
        w('## Reports over a 24-hour window (288 timed snapshots per window)')
        w('')
        w('computed: folio_perf.window_facts = off; first: the stored facts deleted '
          'just before; stored: the facts read.  Sampled data: only what the run stored '
          '(a full day: bench/sampler_day.sql).')
        w('')
        w('| call | tenants | ' + ' | '.join('%s ms median [min..max]' % (sd or 'folio_perf') for sd in sides)
          + (' | working tree / rev |' if 'rev' in sides else ' |'))
        w('|---|---|' + '---|' * len(sides) + ('---|' if 'rev' in sides else ''))
        calls = []
        for r in rep:
            if r['contender'] not in calls:
                calls.append(r['contender'])
        t = rep[0]['tenants']
        for c in calls:
            rc = [r for r in rep if r['contender'] == c]
            line = '| %s | %d | ' % (c, t) + ' | '.join(
                cell_ms([r for r in rc if r['info'] == sd or not sd]) for sd in sides)
            if 'rev' in sides:
                rat, wt = side_ratio(rc)
                line += ' | %s%s' % (spread(rat, fmt_ratio), ' (rev timed out)' if not rat and not wt else '')
                if (rat and med(rat) > WORSE) or wt:
                    backwards.append(('report ' + c, med(rat) if rat else None))
            w(line + ' |')
        w('')

    rd = [r for r in rows if r['section'] == 'readers']
    if rd:
        sides = sorted({r['info'] for r in rd if r['info'] in ('work', 'rev')})
        t = rd[0]['tenants']
        w('## Every function that reads a window, %d tenants' % t)
        w('')
        w('Windows of 2, 22 and 288 timed snapshots (300 statements and 100 tables changed '
          'between two); the functions of two windows compare two such windows, the 24-hour '
          'one its halves.  Facts stored; each call in a fresh connection; median [min..max] ms.')
        w('')
        kinds = [k for k in ('two', 'w22', 'day') if any(r['scenario'] == k for r in rd)]
        kl = {'two': '2 snapshots', 'w22': '22 snapshots', 'day': '288 snapshots (24 h)'}
        head = '| function |'
        for k in kinds:
            for sd in sides:
                head += ' %s, %s |' % (kl[k], sd)
            if 'rev' in sides:
                head += ' %s: work / rev |' % kl[k]
        w(head)
        w('|---|' + '---|' * (len(kinds) * (len(sides) + (1 if 'rev' in sides else 0))))
        fns = []
        for r in rd:
            if r['contender'] not in fns:
                fns.append(r['contender'])
        for f in fns:
            line = '| %s |' % f
            for k in kinds:
                rk = [r for r in rd if r['contender'] == f and r['scenario'] == k]
                for sd in sides:
                    line += ' %s |' % cell_ms([r for r in rk if r['info'] == sd])
                goal = READER_GOALS.get((f, k)) or (READER_GOALS.get(('report(*)', k)) if f.startswith('report(') else None)
                if goal:
                    rw = [r for r in rk if r['info'] == 'work']
                    xs = [r['ms'] for r in rw if r['ms'] is not None]
                    ok = bool(xs) and not any(r['timeout'] or r['failed'] for r in rw) and med(xs) <= goal
                    verdicts.append(('%s, %s, %d tenants' % (f, kl[k], t), '<= %s ms' % fmt_ms(goal),
                                     cell_ms(rw), ok, '' if ok or not xs else 'missed by %.1fx' % (med(xs) / goal)))
                if 'rev' in sides:
                    rat, wt = side_ratio(rk)
                    line += ' %s |' % (spread(rat, fmt_ratio) if rat else ('worse: timed out' if wt else '-'))
                    if (rat and med(rat) > WORSE) or wt:
                        backwards.append(('%s, %s' % (f, kl[k]), med(rat) if rat else None))
            w(line)
        w('')

    against = [r for r in snap if r['contender'] == 'rev']
    if against:
        rev_id = ''
        for line in machine.splitlines():
            if line.startswith('against: '):
                rev_id = line[len('against: '):]
        w('## Against %s (snapshots: working tree / %s, per repetition, median [min..max])' % (rev_id or 'REV', rev_id or 'REV'))
        w('')
        w('Time is the wall clock (psql\'s \\timing); CPU the backend\'s own user + system '
          'time for the statement (/proc), which other load on the machine disturbs far less.')
        w('')
        w('| tenants | scenario | working tree ms | %s ms | time ratio | working tree CPU ms | %s CPU ms | CPU ratio | working tree bytes | %s bytes | bytes ratio |' % (rev_id, rev_id, rev_id))
        w('|---|---|---|---|---|---|---|---|---|---|---|')
        for t in tenants:
            for sc in SCENARIOS:
                reps = sorted(rp for (tt, ss, rp) in by if tt == t and ss == sc)
                pairs = [(by[(t, sc, rp)].get('folio_perf'), by[(t, sc, rp)].get('rev')) for rp in reps]
                pairs = [(a, b) for a, b in pairs if a and b and a['ms'] is not None and b['ms']]
                if not pairs:
                    continue
                rat = [a['ms'] / b['ms'] for a, b in pairs]
                cp = [(a['cpu'], b['cpu']) for a, b in pairs if a['cpu'] is not None and b['cpu']]
                crat = [x / y for x, y in cp]
                ab = [a['bytes'] for a, b in pairs if a['bytes'] is not None]
                bb = [b['bytes'] for a, b in pairs if b['bytes'] is not None]
                mab = statistics.mean(ab) if ab else None
                mbb = statistics.mean(bb) if bb else None
                w('| %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |' % (
                    t, LABEL[sc], spread([a['ms'] for a, b in pairs], fmt_ms),
                    spread([b['ms'] for a, b in pairs], fmt_ms), spread(rat, fmt_ratio),
                    spread([x for x, y in cp], fmt_ms) if cp else '-',
                    spread([y for x, y in cp], fmt_ms) if cp else '-',
                    spread(crat, fmt_ratio) if crat else '-',
                    fmt_bytes(mab), fmt_bytes(mbb), fmt_ratio(mab / mbb) if mab is not None and mbb else '-'))
                if med(rat) > WORSE:
                    backwards.append(('snapshot %s, %d tenants (wall clock)' % (sc, t), med(rat)))
                if crat and med(crat) > WORSE:
                    backwards.append(('snapshot %s, %d tenants (backend CPU)' % (sc, t), med(crat)))
                if mab is not None and mbb and mab / mbb > WORSE:
                    backwards.append(('snapshot %s bytes, %d tenants' % (sc, t), mab / mbb))
        w('')
    if against or any(r['info'] == 'rev' for r in rep + rd):
        w('## Steps backwards (more than %d %% worse than REV)' % round(100 * (WORSE - 1)))
        w('')
        if backwards:
            for name, x in backwards:
                w('- **WORSE**: %s: %s' % (name, ('%.2fx' % x) if x else 'timed out where REV did not'))
        else:
            w('none')
        w('')

    hook = [r for r in rows if r['section'] == 'hook']
    if hook:
        w('## Attribution hook (post_parse_analyze), per statement')
        w('')
        w('| measure | pg_stat_statements only | + folio_perf | overhead | goal | met |')
        w('|---|---|---|---|---|---|')
        ir = {r['contender']: r for r in hook if r['scenario'] == 'callgrind'}
        if 'pgss' in ir and 'pgss+folio_perf' in ir:
            a, b = ir['pgss']['ms'], ir['pgss+folio_perf']['ms']
            ov = (b - a) / a
            w('| instructions per `SELECT abalance ... WHERE aid = $1` (callgrind, single-user, '
              'difference of two loop lengths) | %.0f | %.0f | %+.0f instr = %+.2f%% | <= 1%% | %s |' % (
                  a, b, b - a, 100 * ov, 'yes' if ov <= 0.01 else 'NO'))
            verdicts.append(('hook instructions per statement', '<= 1%', '%+.2f%%' % (100 * ov),
                             ov <= 0.01, ''))
        tps = collections.defaultdict(list)
        for r in hook:
            if r['scenario'] == 'pgbench':
                tps[r['contender']].append(r['ms'])
        if tps.get('pgss') and tps.get('pgss+folio_perf'):
            pr = []
            reps = sorted({r['rep'] for r in hook if r['scenario'] == 'pgbench'})
            d = {(r['contender'], r['rep']): r['ms'] for r in hook if r['scenario'] == 'pgbench'}
            for rp in reps:
                if ('pgss', rp) in d and ('pgss+folio_perf', rp) in d:
                    pr.append(d[('pgss+folio_perf', rp)] / d[('pgss', rp)] - 1)
            ma, mb = med(tps['pgss']), med(tps['pgss+folio_perf'])
            pm = med(pr)
            w('| pgbench -S TPS, %d alternating pairs: median [min..max] | %s | %s | paired: %s; medians: %+.2f%% | TPS >= -1%% | %s |' % (
                len(pr), spread(tps['pgss'], lambda x: '%.0f' % x), spread(tps['pgss+folio_perf'], lambda x: '%.0f' % x),
                spread(pr, lambda x: '%+.2f%%' % (100 * x)), 100 * (mb / ma - 1),
                'yes' if pm >= -0.01 else 'NO (see note)'))
            verdicts.append(('pgbench -S TPS (paired runs)', '>= -1%', '%+.2f%% [%+.1f%%..%+.1f%%]' % (
                100 * pm, 100 * min(pr), 100 * max(pr)),
                pm >= -0.01, 'single runs vary by more than 1% on this shared machine; the instruction count is the precise measure'))
        w('')

    if verdicts:
        w('## Goals')
        w('')
        w('| goal | target | measured | met | note |')
        w('|---|---|---|---|---|')
        for name, target, got, ok, note in verdicts:
            w('| %s | %s | %s | %s | %s |' % (name, target, got, 'yes' if ok else 'NO', note))
        w('')
    if machine:
        w('## Machine')
        w('')
        w('```')
        w(machine)
        w('```')
    print('\n'.join(out))


if __name__ == '__main__':
    main()
