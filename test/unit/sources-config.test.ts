import { redactConfig } from '../../src/config';
import { parseRoutesFile, planRoutes, type ReportFacts, type SourceFacts } from '../../src/routing';
import { configMessages, loadWithFiles } from '../helpers/config-files';

const load = loadWithFiles;
const messagesOf = configMessages;

const GOOD = `sources:
  - name: prod
    netbox_url: https://netbox.example.com/
    token_file: secrets/prod-token
    webhook_secret_file: /run/secrets/prod-hook
    webhook_secret_previous_env: PROD_OLD_SECRET
    allowed_ips: [10.20.0.0/16, 192.0.2.7]
    tags: { env: prod, region: 1 }
    expect_report_every: 24h
    catch_up_every: 1m
    catch_up_max: 5
  - name: lab
    netbox_url: http://netbox-lab:8000
    token_env: LAB_TOKEN
    webhook_secret_env: LAB_SECRET
    ca_file: lab-ca.pem
`;

describe('SOURCES_FILE: several NetBox sources', () => {
  it('without it there is one source, default, built from the variables of today', () => {
    const config = load(
      {
        NETBOX_URL: 'https://nb.example.com/',
        NETBOX_TOKEN: 'abc',
        WEBHOOK_SECRET: 'default-hook-secret',
        WEBHOOK_ALLOWED_IPS: '10.0.0.0/8',
      },
      {},
    );
    expect(config.sources).toEqual([
      {
        name: 'default',
        path: '/webhook',
        secrets: ['default-hook-secret'],
        allowedIps: ['10.0.0.0/8'],
        netbox: { url: 'https://nb.example.com', token: 'abc', caFile: undefined },
        tags: {},
        catchUp: { everyMs: 300_000, max: 20 },
      },
    ]);
  });

  it('catch-up runs only with a NetBox URL and token and a cadence that is not off, and says why not', () => {
    const catchUpOf = (env: Record<string, string>) =>
      (redactConfig(load(env, {})).sources as { catchUp: string }[]).map((s) => s.catchUp)[0];
    expect(catchUpOf({ NETBOX_URL: 'https://nb.example.com', NETBOX_TOKEN: 'abc' })).toBe(
      'every 5m, at most 20 missed reports mailed per run',
    );
    expect(catchUpOf({ NETBOX_URL: 'https://nb.example.com', NETBOX_TOKEN: 'abc', CATCH_UP_EVERY: 'off' })).toBe(
      'off: CATCH_UP_EVERY is off',
    );
    expect(catchUpOf({ NETBOX_URL: 'https://nb.example.com' })).toBe('off: NETBOX_TOKEN is not set: NetBox lists reports only to a token');
    expect(messagesOf({ CATCH_UP_EVERY: 'often' }, {}).join('\n')).toMatch(
      /CATCH_UP_EVERY.*is not a duration \(examples: 5m, 1h\) nor off/,
    );
  });

  it('reads each source with its secrets by reference, its own path, URL, token, CA and addresses', () => {
    const config = load(
      {
        SOURCES_FILE: 'sources.yaml',
        WEBHOOK_SECRET: 'default-hook-secret',
        LAB_TOKEN: 'nbt_lab.token',
        LAB_SECRET: 'lab-webhook-secret',
        PROD_OLD_SECRET: 'old-hook',
      },
      {
        '/srv/sources.yaml': GOOD,
        '/srv/secrets/prod-token': 'prod-token\n',
        '/run/secrets/prod-hook': 'prod-webhook-secret\n',
        '/srv/lab-ca.pem': '-----BEGIN CERTIFICATE-----\n',
      },
    );
    expect(config.sources.map((s) => [s.name, s.path])).toEqual([
      ['default', '/webhook'],
      ['prod', '/webhook/prod'],
      ['lab', '/webhook/lab'],
    ]);
    expect(config.sources[1]).toMatchObject({
      secrets: ['prod-webhook-secret', 'old-hook'],
      allowedIps: ['10.20.0.0/16', '192.0.2.7/32'],
      netbox: { url: 'https://netbox.example.com', token: 'prod-token' },
      tags: { env: 'prod', region: '1' },
      expectEveryMs: 86_400_000,
    });
    expect(config.sources[2].expectEveryMs).toBeUndefined();
    // A source's own catch-up cadence, or CATCH_UP_EVERY; each says whether it runs and why not.
    expect(config.sources.map((s) => s.catchUp)).toEqual([
      { everyMs: 300_000, max: 20 },
      { everyMs: 60_000, max: 20 },
      { everyMs: 300_000, max: 20 },
    ]);
    expect((redactConfig(config).sources as { catchUp: string }[]).map((s) => s.catchUp)).toEqual([
      'off: NETBOX_URL is not set: there is no NetBox to ask',
      'every 1m, at most 20 missed reports mailed per run',
      'every 5m, at most 20 missed reports mailed per run',
    ]);
    // catch_up_max is no longer read: the file still loads, with a warning naming the source and the key.
    expect(config.warnings).toEqual([
      {
        variable: 'SOURCES_FILE',
        message:
          '/srv/sources.yaml: source 1 (prod) catch_up_max is no longer read: a catch-up mails at most 20 missed reports of a source one by one; remove it',
      },
    ]);
    expect(config.sources[2]).toMatchObject({
      secrets: ['lab-webhook-secret'],
      netbox: { token: 'nbt_lab.token', caFile: '/srv/lab-ca.pem' },
    });
    // Every source's secrets are masked in logs, and the printed configuration shows none of them.
    expect(config.secretValues).toEqual(
      expect.arrayContaining(['prod-webhook-secret', 'old-hook', 'prod-token', 'lab-webhook-secret', 'nbt_lab.token']),
    );
    const printed = JSON.stringify(redactConfig(config));
    for (const secret of ['prod-webhook-secret', 'old-hook', 'prod-token', 'lab-webhook-secret', 'nbt_lab.token'])
      expect(printed).not.toContain(secret);
  });

  it('lists every problem at once, naming the source and the field', () => {
    const file = `sources:
  - name: Prod
    netbox_url: ftp://x
  - name: lab
    token: inline-secret
    webhook_secret_file: /missing
  - name: lab
    token_env: NOT_SET
    token_file: /also
  - name: default
    webhook_secret_env: EMPTY
    expect_report_every: soon
    catch_up_every: sometimes
    colour: blue
`;
    const messages = messagesOf({ SOURCES_FILE: '/etc/sources.yaml', HOST: '127.0.0.1', EMPTY: ' ' }, { '/etc/sources.yaml': file });
    expect(messages.every((m) => m.startsWith('SOURCES_FILE: /etc/sources.yaml'))).toBe(true);
    const text = messages.join('\n');
    expect(text).toContain('line 2: source 1 (Prod) name: must be 1–32 lower-case letters');
    expect(text).toContain('source 1 (Prod) netbox_url:');
    expect(text).toContain('source 2 (lab) token: secrets are never written in SOURCES_FILE');
    expect(text).toContain('source 3 (lab) name: "lab" is already the name of source 2');
    expect(text).toContain('source 4 (default) name: "default" is the source configured from NETBOX_URL and WEBHOOK_*');
    expect(text).toContain('source 4 (default): unknown key colour (check the spelling)');
    expect(text).toContain('source 4 (default) expect_report_every: is not a duration');
    expect(text).toContain('source 4 (default) catch_up_every: is not a duration (examples: 5m, 1h) nor off');
  });

  it('refuses a webhook secret shorter than 16 characters and a duration without a unit, each with its source and field', () => {
    const lines = (...more: string[]) => ['sources:', '  - name: lab', ...more, ''].join('\n');
    const secret = messagesOf(
      { SOURCES_FILE: '/etc/sources.yaml', LAB_SECRET: 'lab' },
      { '/etc/sources.yaml': lines('    webhook_secret_env: LAB_SECRET') },
    ).join('\n');
    expect(secret).toContain('source 1 (lab) webhook_secret_env: is 3 characters; a webhook secret needs at least 16');
    expect(secret).toContain('openssl rand -hex 32');
    const every = messagesOf({ SOURCES_FILE: '/etc/sources.yaml' }, { '/etc/sources.yaml': lines('    expect_report_every: 24') });
    expect(every.join('\n')).toContain('source 1 (lab) expect_report_every: has no unit: write it with one, e.g. 24h');
  });

  it('reports unreadable, unset, blank and doubled secret references, each with its source and field', () => {
    const file = `sources:
  - name: a
    webhook_secret_file: /missing
  - name: b
    webhook_secret_env: NOT_SET
  - name: c
    webhook_secret_env: BLANK
  - name: d
    netbox_url: https://d.example.com
    token_env: D_TOKEN
    token_file: /d-token
    webhook_secret_previous_env: D_OLD
`;
    const messages = messagesOf({ SOURCES_FILE: '/s.yaml', BLANK: '  ', D_TOKEN: 't', D_OLD: 'o' }, { '/s.yaml': file, '/d-token': 't' });
    expect(messages).toEqual([
      'SOURCES_FILE: /s.yaml: source 1 (a) webhook_secret_file: cannot read /missing: ENOENT',
      'SOURCES_FILE: /s.yaml: source 2 (b) webhook_secret_env: the environment variable NOT_SET is not set',
      'SOURCES_FILE: /s.yaml: source 3 (c) webhook_secret_env: is empty or only white space',
      'SOURCES_FILE: /s.yaml: source 4 (d) webhook_secret_previous_file: is only accepted alongside a current webhook secret (during a rotation)',
      'SOURCES_FILE: /s.yaml: source 4 (d) token: give token_file or token_env, not both',
    ]);
  });

  it('a named source needs a secret beyond loopback, and a route may only name configured sources', () => {
    const sources = 'sources:\n  - name: lab\n    netbox_url: http://lab:8000\n';
    const routes = `routes:
  - name: lab-team
    match: { any: [{ source: lab }, { source: [prod, lab] }] }
    to: lab@example.com
  - name: prod-team
    match: { source_tags: { env: prod } }
    to: prod@example.com
`;
    const messages = messagesOf(
      { SOURCES_FILE: '/s.yaml', ROUTES_FILE: '/r.yaml', HOST: '0.0.0.0', WEBHOOK_SECRET: 'default-webhook-secret' },
      { '/s.yaml': sources, '/r.yaml': routes },
    );
    expect(messages).toEqual([
      'SOURCES_FILE: source lab webhook_secret_file: is required to listen on HOST=0.0.0.0, beyond loopback (or webhook_secret_env)',
      'ROUTES_FILE: route lab-team match.source: "prod" is not a configured source (default, lab)',
    ]);
  });
});

describe('routes match on the NetBox source and its tags', () => {
  const routes = parseRoutesFile(
    `routes:
  - name: lab-team
    match: { source: lab }
    to: lab@example.com
  - name: production
    match: { all: [{ source_tags: { env: prod, tier: 1 } }, { failed: { above: 0 } }] }
    to: prod@example.com
  - name: everyone-else
    to: noc@example.com
`,
    'routes.yaml',
  );
  const facts = (source: SourceFacts): ReportFacts => ({
    reportId: 29,
    completedAt: '2026-03-06T15:11:23.503Z',
    counts: {
      HIGH: { passed: 1, count: 2 },
      MIDDLE: { passed: 2, count: 2 },
      LOW: { passed: 0, count: 0 },
      overall: { passed: 3, count: 4 },
    },
    customFields: {},
    source,
  });
  const sentTo = (source: SourceFacts) =>
    planRoutes(routes, facts(source), null, () => null)
      .filter((d) => d.outcome === 'send')
      .map((d) => d.route);

  it('by name, by tags (every tag must match), and the default source (no tags)', () => {
    expect(sentTo({ name: 'lab', tags: { env: 'prod', tier: '1' } })).toEqual(['lab-team']);
    expect(sentTo({ name: 'prod-eu', tags: { env: 'prod', tier: '1' } })).toEqual(['production']);
    expect(sentTo({ name: 'prod-us', tags: { env: 'prod', tier: '2' } })).toEqual(['everyone-else']);
    expect(sentTo({ name: 'default', tags: {} })).toEqual(['everyone-else']);
  });

  it('refuses a malformed source condition with the route and field', () => {
    expect(() => parseRoutesFile('routes:\n  - name: x\n    match: { source: Lab! }\n    to: a@example.com\n', 'r.yaml')).toThrow(
      /route 1 \(x\) match\.source: must be a source name/,
    );
  });
});
