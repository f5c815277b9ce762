import fs from 'node:fs';
import path from 'node:path';
import { EXIT_CONFIG, EXIT_USAGE, runCli } from '../../src/cli';
import { SqliteStore } from '../../src/store';
import { parseDelivery, type ReportDelivery } from '../../src/webhook';
import { captureIo } from '../helpers/cli-io';
import { startNetboxDouble as startSetupDouble, type NetboxDouble as SetupDouble } from '../helpers/netbox-double';
import { buildBody, buildReportData } from '../helpers/netbox-json';
import { makeTempDir } from '../helpers/relay-harness';
import { buildResults, startNetboxDouble, type NetboxDouble } from '../helpers/validity-results-double';

const PROD_TOKEN = '0123456789abcdef0123456789abcdef01234567';
const LAB_TOKEN = 'fedcba9876543210fedcba9876543210fedcba98';

describe('the command line understands NetBox sources', () => {
  let dir: string;
  beforeEach(() => {
    dir = makeTempDir('sources-cli-');
  });
  afterEach(() => {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** SOURCES_FILE with `prod` and `lab`, tokens in files, and the environment of a relay that uses it. */
  function sourcesEnv(prodUrl: string, labUrl: string): Record<string, string> {
    fs.writeFileSync(path.join(dir, 'prod-token'), PROD_TOKEN);
    fs.writeFileSync(path.join(dir, 'lab-token'), LAB_TOKEN);
    fs.writeFileSync(path.join(dir, 'lab-secret'), 'lab-webhook-secret');
    fs.writeFileSync(
      path.join(dir, 'sources.yaml'),
      `sources:\n  - name: prod\n    netbox_url: ${prodUrl}\n    token_file: prod-token\n` +
        `  - name: lab\n    netbox_url: ${labUrl}\n    token_file: lab-token\n    webhook_secret_file: lab-secret\n`,
    );
    return { SOURCES_FILE: 'sources.yaml', DATA_DIR: path.join(dir, 'data') };
  }

  async function cli(args: string[], env: Record<string, string>) {
    const io = captureIo(env, dir);
    const code = await runCli(['node', 'compliance-relay', ...args], io);
    return { code, out: io.out(), err: io.err() };
  }

  describe('check-config --online', () => {
    let prod: NetboxDouble;
    let lab: NetboxDouble;
    beforeEach(async () => {
      prod = await startNetboxDouble({ authorization: `Token ${PROD_TOKEN}` });
      lab = await startNetboxDouble({ authorization: `Token ${LAB_TOKEN}` });
      prod.reports.set(1, { id: 1, created: '2026-03-06T15:11:18Z', results: buildResults(2, { fails: () => false }) });
    });
    afterEach(async () => {
      await prod.close();
      await lab.close();
    });

    it("asks each source's NetBox with that source's token only, and says what it found", async () => {
      const result = await cli(['check-config', '--online'], sourcesEnv(prod.url, lab.url));
      expect(result.err).toBe('');
      expect(result.code).toBe(0);
      expect(result.out).toContain('NetBox source default: no NetBox URL, nothing to check');
      expect(result.out).toContain(`NetBox source prod (${prod.url}): NetBox 4.6.2, validity 3.5.2; the token reads test results`);
      expect(result.out).toContain(`NetBox source lab (${lab.url}): NetBox 4.6.2, validity 3.5.2; the token reads test results`);
      // The status, then what the configuration reads: test results, and the reports list for the catch-up.
      expect(prod.requests.map((r) => r.path.split('?')[0])).toEqual([
        '/api/status/',
        '/api/plugins/validity/test-results/',
        '/api/plugins/validity/reports/',
      ]);
      expect(prod.requests.every((r) => r.authorization === `Token ${PROD_TOKEN}`)).toBe(true);
      expect(lab.requests.length).toBe(3);
      expect(lab.requests.every((r) => r.authorization === `Token ${LAB_TOKEN}`)).toBe(true);
      // The printed configuration names no token.
      expect(result.out).not.toContain(PROD_TOKEN);
      expect(result.out).not.toContain(LAB_TOKEN);
    });

    it('a token NetBox refuses is a configuration error naming the source; an unreachable NetBox is an outage', async () => {
      const env = sourcesEnv(prod.url, lab.url);
      fs.writeFileSync(path.join(dir, 'lab-token'), 'not-the-lab-token');
      const refused = await cli(['check-config', '--online'], env);
      expect(refused.code).toBe(EXIT_CONFIG);
      expect(refused.out).toMatch(new RegExp(`NetBox source lab \\(${lab.url}\\): AUTH: NetBox refused the token \\(HTTP 403\\)`));
      expect(refused.out).toContain(`NetBox source prod (${prod.url}): NetBox 4.6.2`);

      fs.writeFileSync(path.join(dir, 'lab-token'), LAB_TOKEN);
      await lab.close();
      const down = await cli(['check-config', '--online'], env);
      expect(down.code).toBe(69);
      expect(down.out).toMatch(/NetBox source lab \(.*\): UNREACHABLE/);
    });

    it('without --online no NetBox is asked', async () => {
      expect((await cli(['check-config'], sourcesEnv(prod.url, lab.url))).code).toBe(0);
      expect(prod.requests).toEqual([]);
      expect(lab.requests).toEqual([]);
    });
  });

  describe('netbox-setup --source', () => {
    let prod: SetupDouble;
    let lab: SetupDouble;
    beforeEach(async () => {
      prod = await startSetupDouble({ version: '4.6', tokens: [{ token: PROD_TOKEN, write: true }] });
      lab = await startSetupDouble({ version: '4.0', tokens: [{ token: LAB_TOKEN, write: true }] });
    });
    afterEach(async () => {
      await prod.close();
      await lab.close();
    });

    it("sets up the named source's NetBox with its token, its path and its webhook secret; no other NetBox is touched", async () => {
      const env = sourcesEnv(prod.url, lab.url);
      const result = await cli(['netbox-setup', '--source', 'lab', '--payload-url', 'https://relay.example.com/webhook/lab'], env);
      expect(result.err).toBe('');
      expect(result.code).toBe(0);
      expect(prod.requests).toEqual([]);
      expect(lab.requests.every((r) => r.authorization === `Token ${LAB_TOKEN}`)).toBe(true);
      expect([...lab.webhooks.values()]).toEqual([
        expect.objectContaining({ payload_url: 'https://relay.example.com/webhook/lab', secret: 'lab-webhook-secret' }),
      ]);
      expect(lab.eventRules.size).toBe(1);
    });

    it("a named source without a secret: the secret written is given to that source's webhook_secret_file, not to WEBHOOK_SECRET_FILE", async () => {
      const env = sourcesEnv(prod.url, lab.url);
      const file = path.join(dir, 'prod-secret');
      const result = await cli(
        ['netbox-setup', '--source', 'prod', '--payload-url', 'https://relay.example.com/webhook/prod', '--secret-file', file],
        env,
      );
      expect(result.code).toBe(0);
      expect(result.out).toContain(`Give it to the relay: webhook_secret_file: ${file} in source prod of SOURCES_FILE`);
      expect(result.out).not.toContain('WEBHOOK_SECRET_FILE');
      expect([...prod.webhooks.values()]).toEqual([expect.objectContaining({ secret: fs.readFileSync(file, 'utf8').trim() })]);
    });

    it('an unknown source is a usage error listing the configured ones; a source without a token says which field', async () => {
      const env = sourcesEnv(prod.url, lab.url);
      const unknown = await cli(['netbox-setup', '--source', 'qa', '--payload-url', 'https://relay.example.com/webhook/qa'], env);
      expect(unknown.code).toBe(EXIT_USAGE);
      expect(unknown.err).toContain('--source must be one of default, prod, lab');
      fs.writeFileSync(path.join(dir, 'sources.yaml'), `sources:\n  - name: lab\n    netbox_url: ${lab.url}\n`);
      const noToken = await cli(['netbox-setup', '--source', 'lab', '--payload-url', 'https://relay.example.com/webhook/lab'], env);
      expect(noToken.code).toBe(EXIT_CONFIG);
      expect(noToken.err).toContain('source lab needs token_file or token_env in SOURCES_FILE');
      expect(lab.requests).toEqual([]);
    });
  });

  it('deliveries names the source of each delivery and lists one source with --source', async () => {
    const env = sourcesEnv('http://prod.invalid', 'http://lab.invalid');
    const store = SqliteStore.open({ dataDir: env.DATA_DIR });
    const body = buildBody({ data: buildReportData({ id: 29 }) });
    for (const source of ['default', 'lab']) {
      const report = parseDelivery(body, source) as ReportDelivery;
      await store.insertDelivery({ ...report, sender: '192.0.2.10', body, receivedAt: Date.now() });
    }
    await store.close();
    const table = await cli(['deliveries'], env);
    expect(table.code).toBe(0);
    const rows = table.out.trim().split('\n').slice(1, 3);
    expect(rows.map((l) => l.split(/\s+/).slice(0, 3))).toEqual([
      ['2', '29', 'lab@192.0.2.10'],
      ['1', '29', '192.0.2.10'],
    ]);
    const json = JSON.parse((await cli(['deliveries', '--json', '--source', 'lab'], env)).out) as {
      deliveries: { netboxSource: string }[];
    };
    expect(json.deliveries.map((d) => d.netboxSource)).toEqual(['lab']);
    expect((await cli(['deliveries', '--source', 'qa'], env)).code).toBe(EXIT_USAGE);
  });
});
