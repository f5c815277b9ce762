import fs from 'node:fs';
import path from 'node:path';
import { loadConfig, ConfigError } from '../../src/config';
import { parseRoutesFile, planRoutes, RoutesFileError, type ReportFacts, type Route } from '../../src/routing';
import { buildTrend, pairKey, type FailingPair, type LeftOutPairs, type ReportSnapshot } from '../../src/trend';

const EXAMPLE = path.join(__dirname, '..', '..', 'examples', 'routes.yaml');

function issuesOf(text: string): RoutesFileError['issues'] {
  try {
    parseRoutesFile(text, 'routes.yaml');
  } catch (error) {
    if (error instanceof RoutesFileError) return error.issues;
    throw error;
  }
  throw new Error('expected the routes file to be rejected');
}

function facts(
  overrides: Partial<Record<'HIGH' | 'MIDDLE' | 'LOW', [passed: number, count: number]>> = {},
  customFields: Record<string, unknown> = {},
  id = 1,
): ReportFacts {
  const line = ([passed, count]: [number, number]) => ({ passed, count });
  const high = overrides.HIGH ?? [10, 10];
  const middle = overrides.MIDDLE ?? [10, 10];
  const low = overrides.LOW ?? [0, 0];
  const total: [number, number] = [high[0] + middle[0] + low[0], high[1] + middle[1] + low[1]];
  return {
    reportId: id,
    completedAt: `2026-03-0${id}T10:00:00.000Z`,
    counts: { HIGH: line(high), MIDDLE: line(middle), LOW: line(low), overall: line(total) },
    customFields,
    source: { name: 'default', tags: {} },
  };
}

/** The report as the trend's history keeps it; `failing` null: its failing pairs unknown (no NetBox). */
function snapshotOf(f: ReportFacts, failing: FailingPair[] | null = null): ReportSnapshot {
  const created = f.completedAt;
  return {
    dedupKey: `${f.reportId}@${created}`,
    series: 's',
    reportId: f.reportId,
    created,
    createdMs: Date.parse(created),
    counts: f.counts,
    failing,
  };
}

/** The trend of `current` after `previous` (none: a first report), as the planner is given it. */
function trendOf(current: ReportFacts, previous?: ReportFacts, pairs?: [FailingPair[], FailingPair[]], leftOut?: LeftOutPairs) {
  const history = previous ? [snapshotOf(previous, pairs?.[1] ?? null)] : [];
  return buildTrend(snapshotOf(current, pairs?.[0] ?? null), history, leftOut ? { leftOut } : {});
}

const high = (device: string): FailingPair => ({ device, test: 'ssh', severity: 'HIGH' });

describe('routes file: validation names the route, the field and the line', () => {
  it('accepts the shipped example', () => {
    const routes = parseRoutesFile(fs.readFileSync(EXAMPLE, 'utf8'), EXAMPLE);
    expect(routes.map((r) => [r.name, r.notify, r.continue])).toEqual([
      ['regressions', 'always', true],
      ['on-call', 'on-change', true],
      ['auditors', 'always', false],
    ]);
    expect(routes[1].repeat_after).toBe(7 * 86_400_000);
    expect(routes[2].bcc).toEqual(['compliance-archive@example.com']);
  });

  it('reports a wrong value with route number, name, field path and line', () => {
    const issues = issuesOf(
      ['routes:', '  - name: ok', '    to: a@example.com', '  - name: on-call', '    to: b@example.com', '    notify: sometimes', ''].join(
        '\n',
      ),
    );
    expect(issues).toEqual([
      { line: 6, where: 'route 2 (on-call) notify', message: expect.stringContaining('always, on-failure, on-change') },
    ]);
  });

  it('lists every problem at once: nested condition, bad address, unknown key, duplicate name, repeat_after misuse', () => {
    const issues = issuesOf(
      [
        'routes:',
        '  - name: a',
        '    to: not-an-address',
        '    reply_to: "NOC <noc@example.com>\\nBcc: x@evil.example"',
        '    match:',
        '      any:',
        '        - failed: { severity: CRITICAL, above: 0 }',
        '  - name: A',
        '    to: x@example.com',
        '    notfy: always',
        '    repeat_after: 7d',
        '',
      ].join('\n'),
    );
    const byWhere = Object.fromEntries(issues.map((i) => [i.where, i]));
    expect(byWhere['route 1 (a) to[0]']).toMatchObject({ line: 3, message: 'is not an e-mail address' });
    // A line break in reply_to would add a header: refused like any address that is not one.
    expect(byWhere['route 1 (a) reply_to']).toMatchObject({ line: 4, message: 'is not an e-mail address' });
    expect(byWhere['route 1 (a) match.any[0].failed.severity']).toMatchObject({ line: 7 });
    expect(issues.find((i) => i.message.includes('notfy'))).toMatchObject({ where: 'route 2 (A)', line: 8 });
    expect(byWhere['route 2 (A) repeat_after']).toMatchObject({ line: 11, message: expect.stringContaining('on-change') });
    expect(byWhere['route 2 (A) name']).toMatchObject({ line: 8, message: expect.stringContaining('route 1') });
  });

  it('refuses a repeat_after without a unit instead of reading it as milliseconds', () => {
    const issues = issuesOf(
      ['routes:', '  - name: a', '    to: a@example.com', '    notify: on-change', '    repeat_after: 12', ''].join('\n'),
    );
    expect(issues).toEqual([
      expect.objectContaining({ where: 'route 1 (a) repeat_after', message: expect.stringContaining('has no unit') }),
    ]);
  });

  it('reports YAML syntax errors with their line', () => {
    const issues = issuesOf('routes:\n  - name: a\n    to: [a@example.com\n');
    expect(issues[0]).toMatchObject({ where: 'YAML', line: expect.any(Number) });
  });

  it('a condition has exactly one key', () => {
    const issues = issuesOf(
      'routes:\n  - name: a\n    to: a@example.com\n    match: { failed: { above: 1 }, pass_percent: { below: 50 } }\n',
    );
    expect(issues[0]).toMatchObject({ where: 'route 1 (a) match', line: 4, message: expect.stringContaining('exactly one') });
  });

  it('through loadConfig: ROUTES_FILE problems are listed under ROUTES_FILE with the file and line, and MAIL_TO is not required', () => {
    const files: Record<string, string> = { '/etc/relay/routes.yaml': 'routes:\n  - name: x\n    to: a@example.com\n    notify: never\n' };
    let error: unknown;
    try {
      loadConfig({ ROUTES_FILE: '/etc/relay/routes.yaml', SMTP_URL: 'smtp://127.0.0.1:25' }, { readFile: (f) => files[f] });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).issues).toEqual([
      { variable: 'ROUTES_FILE', message: expect.stringMatching(/^\/etc\/relay\/routes\.yaml line 4: route 1 \(x\) notify: /) },
    ]);

    const config = loadConfig({ ROUTES_FILE: EXAMPLE, SMTP_URL: 'smtp://127.0.0.1:25' }, { readFile: (f) => fs.readFileSync(f, 'utf8') });
    expect(config.routing.routes).toHaveLength(3);
  });

  it('without ROUTES_FILE there is one implicit default route to MAIL_TO/CC/BCC', () => {
    const config = loadConfig({ MAIL_TO: 'a@example.com, b@example.com', MAIL_BCC: 'c@example.com' }, { readFile: () => '' });
    expect(config.routing).toEqual({
      file: undefined,
      routes: [
        { name: 'default', to: ['a@example.com', 'b@example.com'], cc: [], bcc: ['c@example.com'], notify: 'always', continue: false },
      ],
    });
  });
});

describe('routes: matching, continue and notify policy', () => {
  const routes: Route[] = parseRoutesFile(fs.readFileSync(EXAMPLE, 'utf8'), EXAMPLE);
  const never = () => null;

  it('a clean first report reaches only the auditors (the others do not match)', () => {
    const plan = planRoutes(routes, facts(), null, never);
    expect(plan.map((d) => [d.route, d.outcome])).toEqual([
      ['regressions', 'skipped'],
      ['on-call', 'skipped'],
      ['auditors', 'send'],
    ]);
  });

  it('a route without continue stops the ones after it', () => {
    const stop = routes.map((r) => (r.name === 'on-call' ? { ...r, continue: false } : r));
    const plan = planRoutes(stop, facts({ HIGH: [8, 10] }), null, never);
    expect(plan.map((d) => [d.route, d.outcome])).toEqual([
      ['regressions', 'skipped'],
      ['on-call', 'send'],
      ['auditors', 'skipped'],
    ]);
    expect(plan[2].reason).toBe('not reached: route on-call matched without continue');
  });

  it('on-change without failing pairs compares failed counts per severity, and repeat_after reminds', () => {
    const onCall = routes.filter((r) => r.name === 'on-call');
    const first = facts({ HIGH: [8, 10] }, {}, 1);
    const same = facts({ HIGH: [8, 10] }, {}, 2);
    expect(planRoutes(onCall, same, trendOf(same, first), () => first.completedAt)[0]).toMatchObject({
      outcome: 'suppressed',
      reason: expect.stringContaining('same failed counts per severity as report 1'),
    });
    // Eight days after the last mail on the route: a reminder.
    const later = { ...same, completedAt: '2026-03-09T10:00:00.000Z' };
    expect(planRoutes(onCall, later, trendOf(later, first), () => first.completedAt)[0]).toMatchObject({
      outcome: 'send',
      reminder: true,
    });
    // Known failing pairs win over counts: same counts, different pairs.
    expect(
      planRoutes(
        onCall,
        same,
        trendOf(same, first, [
          [high('a'), high('c')],
          [high('a'), high('b')],
        ]),
        never,
      )[0],
    ).toMatchObject({
      outcome: 'send',
      reason: expect.stringContaining('failing pairs changed'),
    });
  });

  it('regression: a drop above the threshold or a newly failing result; nothing without a previous report', () => {
    const reg = routes.filter((r) => r.name === 'regressions');
    const before = facts({ MIDDLE: [10, 10] }, {}, 1);
    expect(planRoutes(reg, facts({ MIDDLE: [9, 10] }, {}, 2), trendOf(facts({ MIDDLE: [9, 10] }, {}, 2), before), never)[0].outcome).toBe(
      'send',
    );
    expect(planRoutes(reg, facts({ MIDDLE: [9, 10] }, {}, 2), null, never)[0].outcome).toBe('skipped');
    expect(planRoutes(reg, facts({ MIDDLE: [10, 10] }, {}, 2), trendOf(facts({ MIDDLE: [10, 10] }, {}, 2), before), never)[0].outcome).toBe(
      'skipped',
    );
  });

  it("regression's newly_failing counts only its severity's pairs when the failing pairs are known", () => {
    const route = parseRoutesFile(
      'routes:\n  - name: r\n    to: a@example.com\n    match: { regression: { newly_failing: true, severity: HIGH } }\n',
      'r.yaml',
    );
    const low = (device: string): FailingPair => ({ device, test: 'banner', severity: 'LOW' });
    const before = facts({ HIGH: [9, 10], LOW: [10, 10] }, {}, 1);
    const now = facts({ HIGH: [9, 10], LOW: [9, 10] }, {}, 2);
    // The same HIGH pair fails in both; a LOW pair fails anew: not a HIGH regression.
    const lowOnly = trendOf(now, before, [[high('a'), low('b')], [high('a')]]);
    expect(planRoutes(route, now, lowOnly, never)[0].outcome).toBe('skipped');
    const worse = facts({ HIGH: [8, 10], LOW: [10, 10] }, {}, 2);
    const highToo = trendOf(worse, before, [[high('a'), high('c')], [high('a')]]);
    expect(planRoutes(route, worse, highToo, never)[0].outcome).toBe('send');
  });

  it('custom fields match by value, list or presence (select fields by their value)', () => {
    const route = (match: string) => parseRoutesFile(`routes:\n  - name: r\n    to: a@example.com\n    match: ${match}\n`, 'r.yaml');
    const f = facts({}, { site_group: { value: 'dc-east', label: 'DC East' }, owner: 'netops', empty: null });
    const outcome = (m: string) => planRoutes(route(m), f, null, never)[0].outcome;
    expect(outcome('{ custom_field: { name: site_group, equals: dc-east } }')).toBe('send');
    expect(outcome('{ custom_field: { name: owner, in: [secops, netops] } }')).toBe('send');
    expect(outcome('{ custom_field: { name: owner, equals: secops } }')).toBe('skipped');
    expect(outcome('{ custom_field: { name: empty, present: true } }')).toBe('skipped');
    expect(outcome('{ all: [ { custom_field: { name: owner, present: true } }, { pass_percent: { below: 100 } } ] }')).toBe('skipped');
  });

  it('on-failure holds back a clean report and says why', () => {
    const r = parseRoutesFile('routes:\n  - name: r\n    to: a@example.com\n    notify: on-failure\n', 'r.yaml');
    expect(planRoutes(r, facts(), null, never)[0]).toMatchObject({
      outcome: 'suppressed',
      reason: 'every test passed (notify: on-failure)',
    });
  });

  it('on-failure holds back a report whose only failures are accepted exceptions, and mails one with one more', () => {
    const r = parseRoutesFile('routes:\n  - name: r\n    to: a@example.com\n    notify: on-failure\n', 'r.yaml');
    const twoHighFailing = facts({ HIGH: [8, 10] });
    const pairs: [FailingPair[], FailingPair[]] = [[high('a'), high('b')], []];
    const waiving = (...waived: FailingPair[]) =>
      trendOf(twoHighFailing, undefined, pairs, { current: new Set(waived.map(pairKey)), previous: new Set() });
    expect(planRoutes(r, twoHighFailing, waiving(high('a'), high('b')), never)[0]).toMatchObject({
      outcome: 'suppressed',
      reason: 'every failure an accepted exception (notify: on-failure)',
    });
    expect(planRoutes(r, twoHighFailing, waiving(high('a')), never)[0]).toMatchObject({
      outcome: 'send',
      reason: 'matched and something failed (notify: on-failure)',
    });
  });
});
