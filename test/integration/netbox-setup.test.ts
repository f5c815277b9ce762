import fs from 'node:fs';
import path from 'node:path';
import { EXIT_CONFIG, EXIT_UNAVAILABLE, runCli } from '../../src/cli';
import { captureIo } from '../helpers/cli-io';
import { startNetboxDouble, type DoubleVersion, type NetboxDouble } from '../helpers/netbox-double';
import { makeTempDir } from '../helpers/relay-harness';
import { REFUSED_PORT } from '../helpers/http-listener';

const TOKEN = '0123456789abcdef0123456789abcdef01234567';
const PAYLOAD_URL = 'https://relay.example.com/webhook';

describe('compliance-relay netbox-setup', () => {
  let netbox: NetboxDouble | undefined;
  let dir: string;
  beforeEach(() => {
    dir = makeTempDir('netbox-setup-');
  });
  afterEach(async () => {
    await netbox?.close();
    netbox = undefined;
    fs.rmSync(dir, { recursive: true, force: true });
  });

  async function setup(args: string[], env: Record<string, string> = {}) {
    const io = captureIo({ NETBOX_URL: netbox!.url, NETBOX_TOKEN: TOKEN, DATA_DIR: path.join(dir, 'data'), ...env }, dir);
    const code = await runCli(['node', 'compliance-relay', 'netbox-setup', ...args], io);
    return { code, out: io.out(), err: io.err() };
  }

  const expectedWebhook = (secret: string) => ({
    name: 'compliance-relay',
    payload_url: PAYLOAD_URL,
    http_method: 'POST',
    http_content_type: 'application/json',
    secret,
    ssl_verification: true,
    body_template: '',
  });

  describe.each<[DoubleVersion, 'webhook' | 'event rule']>([
    ['3.6', 'webhook'],
    ['3.7', 'event rule'],
    ['4.0', 'event rule'],
    ['4.6', 'event rule'],
  ])('NetBox %s', (version) => {
    it('creates the webhook and its trigger in the form this version needs, keeps the secret in a 0600 file, and changes nothing on a second run', async () => {
      netbox = await startNetboxDouble({ version });
      const secretFile = path.join(dir, 'secrets', 'webhook-secret');
      const first = await setup(['--payload-url', PAYLOAD_URL, '--secret-file', secretFile]);
      expect(first.err).toBe('');
      expect(first.code).toBe(0);

      const secret = fs.readFileSync(secretFile, 'utf8').trim();
      expect(secret).toMatch(/^[0-9a-f]{64}$/);
      expect(fs.statSync(secretFile).mode & 0o777).toBe(0o600);
      expect(first.out).not.toContain(secret);
      expect(first.out).toContain(`WEBHOOK_SECRET_FILE=${secretFile}`);

      expect(netbox.webhooks.size).toBe(1);
      const webhook = [...netbox.webhooks.values()][0];
      expect(webhook).toMatchObject(expectedWebhook(secret));
      if (version === '3.6') {
        expect(webhook).toMatchObject({
          type_create: true,
          type_update: false,
          type_delete: false,
          content_types: ['validity.compliancereport'],
          enabled: true,
        });
        expect(netbox.requests.some((r) => r.path.startsWith('/api/extras/event-rules/'))).toBe(false);
      } else {
        expect(netbox.eventRules.size).toBe(1);
        const rule = [...netbox.eventRules.values()][0];
        expect(rule[version === '3.7' ? 'content_types' : 'object_types']).toEqual(['validity.compliancereport']);
        expect(rule).toMatchObject({
          name: 'compliance-relay',
          action_type: 'webhook',
          action_object_type: 'extras.webhook',
          action_object_id: webhook.id,
          enabled: true,
        });
        if (version !== '4.6') expect(rule).toMatchObject({ type_create: true, type_update: false });
        else expect(rule.event_types).toEqual(['object_created']);
      }
      for (const r of netbox.requests) expect(r.authorization).toBe(`Token ${TOKEN}`);

      const writesBefore = netbox.writes().length;
      const second = await setup(['--payload-url', PAYLOAD_URL, '--secret-file', secretFile]);
      expect(second.code).toBe(0);
      expect(netbox.writes()).toHaveLength(writesBefore);
      expect(second.out).toContain('Nothing changed: NetBox is already set up.');
      expect(second.out).toMatch(/Webhook "compliance-relay": unchanged/);
      expect(fs.readFileSync(secretFile, 'utf8').trim()).toBe(secret);
    });
  });

  it('puts back what someone changed by hand, sending only the fields that differ', async () => {
    netbox = await startNetboxDouble({ version: '4.6' });
    const secretFile = path.join(dir, 'secret');
    expect((await setup(['--payload-url', PAYLOAD_URL, '--secret-file', secretFile])).code).toBe(0);
    const webhook = [...netbox.webhooks.values()][0];
    webhook.payload_url = 'http://old-relay:8080/webhook';
    webhook.body_template = '{"report": {{ data.id }}}';
    const rule = [...netbox.eventRules.values()][0];
    rule.event_types = ['object_created', 'object_updated'];
    rule.enabled = false;
    const writes = netbox.writes().length;

    const again = await setup(['--payload-url', PAYLOAD_URL, '--secret-file', secretFile]);
    expect(again.code).toBe(0);
    const patches = netbox.writes().slice(writes);
    expect(patches.map((p) => [p.method, p.path, p.body])).toEqual([
      ['PATCH', `/api/extras/webhooks/${String(webhook.id)}/`, { payload_url: PAYLOAD_URL, body_template: '' }],
      ['PATCH', `/api/extras/event-rules/${String(rule.id)}/`, { event_types: ['object_created'], enabled: true }],
    ]);
    expect(again.out).toContain('updated payload_url, body_template');
  });

  it("uses the relay's WEBHOOK_SECRET when it has one, and shows a secret only when asked", async () => {
    netbox = await startNetboxDouble({ version: '4.0' });
    const secret = 'configured-webhook-secret-value';
    const run = await setup(['--payload-url', PAYLOAD_URL], { WEBHOOK_SECRET: secret });
    expect(run.code).toBe(0);
    expect([...netbox.webhooks.values()][0].secret).toBe(secret);
    expect(run.out).not.toContain(secret);
    const shown = await setup(['--payload-url', PAYLOAD_URL, '--show-secret'], { WEBHOOK_SECRET: secret });
    expect(shown.out).toContain(`Secret: ${secret}`);
  });

  it("with WEBHOOK_SECRET set, as the README's .env sets it, tells the relay nothing new: no file, no WEBHOOK_SECRET_FILE", async () => {
    netbox = await startNetboxDouble({ version: '4.6' });
    const secret = 'configured-webhook-secret-value';
    const secretFile = path.join(dir, 'secrets', 'webhook-secret');
    const run = await setup(['--payload-url', PAYLOAD_URL, '--secret-file', secretFile], { WEBHOOK_SECRET: secret });
    expect(run.code).toBe(0);
    expect([...netbox.webhooks.values()][0].secret).toBe(secret);
    expect(fs.existsSync(secretFile)).toBe(false);
    expect(run.out).not.toContain('WEBHOOK_SECRET_FILE');
    expect(run.out).toContain('the relay needs nothing more');
  });

  it('refuses a --secret-file that holds another secret than the relay has, and writes nothing to NetBox', async () => {
    netbox = await startNetboxDouble({ version: '4.6' });
    const secretFile = path.join(dir, 'secret');
    fs.writeFileSync(secretFile, 'a-secret-netbox-would-get-alone\n');
    const run = await setup(['--payload-url', PAYLOAD_URL, '--secret-file', secretFile], {
      WEBHOOK_SECRET: 'configured-webhook-secret-value',
    });
    expect(run.code).toBe(EXIT_CONFIG);
    expect(run.err).toContain('holds another secret than the relay');
    expect(netbox.webhooks.size).toBe(0);
  });

  it('--dry-run prints the requests it would send and changes nothing', async () => {
    netbox = await startNetboxDouble({ version: '4.6' });
    const secretFile = path.join(dir, 'secret');
    const run = await setup(['--payload-url', PAYLOAD_URL, '--secret-file', secretFile, '--dry-run']);
    expect(run.code).toBe(0);
    expect(netbox.writes()).toHaveLength(0);
    expect(fs.existsSync(secretFile)).toBe(false);
    expect(run.out).toContain(
      `Would send: POST ${netbox.url}/api/extras/webhooks/ {"name":"compliance-relay","payload_url":"${PAYLOAD_URL}","http_method":"POST"`,
    );
    expect(run.out).toContain('"secret":"[64 characters, not shown]"');
    expect(run.out).toContain(
      `Would send: POST ${netbox.url}/api/extras/event-rules/ {"name":"compliance-relay","object_types":["validity.compliancereport"],"event_types":["object_created"]`,
    );
    expect(run.out).toContain('Dry run: nothing was changed.');
  });

  it('stops with a clear error when validity is not installed', async () => {
    netbox = await startNetboxDouble({ version: '4.6', plugins: { netbox_bgp: '0.13.0' } });
    const run = await setup(['--payload-url', PAYLOAD_URL, '--secret-file', path.join(dir, 'secret')]);
    expect(run.code).toBe(EXIT_CONFIG);
    expect(run.err).toContain('the validity plugin is not installed in NetBox 4.6.2 (installed plugins: netbox_bgp)');
    expect(netbox.writes()).toHaveLength(0);
  });

  it('explains a token that may not write, and a NetBox that does not answer', async () => {
    netbox = await startNetboxDouble({ version: '4.6', tokens: [{ token: TOKEN, write: false }] });
    const refused = await setup(['--payload-url', PAYLOAD_URL, '--secret-file', path.join(dir, 'secret')]);
    expect(refused.code).toBe(EXIT_CONFIG);
    expect(refused.err).toContain('POST /api/extras/webhooks/: NetBox answered 403: You do not have permission to perform this action.');
    expect(refused.err).toContain('NETBOX_TOKEN must be valid and allowed to write');
    // Never connected to before, so no kept-alive socket is reused.
    const url = `http://127.0.0.1:${REFUSED_PORT}`;
    const io = captureIo({ NETBOX_URL: url, NETBOX_TOKEN: TOKEN, DATA_DIR: path.join(dir, 'data') }, dir);
    const code = await runCli(
      ['node', 'compliance-relay', 'netbox-setup', '--payload-url', PAYLOAD_URL, '--secret-file', path.join(dir, 's2')],
      io,
    );
    expect(code).toBe(EXIT_UNAVAILABLE);
    expect(io.err()).toContain('GET /api/status/: cannot reach NetBox (ECONNREFUSED');
  });

  it('sends v2 tokens (nbt_…) as Bearer tokens', async () => {
    const v2 = 'nbt_abcdefghijkl.0123456789abcdef0123456789abcdef01234567';
    netbox = await startNetboxDouble({ version: '4.6', tokens: [{ token: v2, write: true }] });
    const run = await setup(['--payload-url', PAYLOAD_URL, '--secret-file', path.join(dir, 'secret')], { NETBOX_TOKEN: v2 });
    expect(run.code).toBe(0);
    expect(netbox.requests.every((r) => r.authorization === `Bearer ${v2}`)).toBe(true);
  });
});

describe('the NetBox double enforces what each version accepts', () => {
  it('rejects the read-only action_object and fields of another version with 400', async () => {
    const netbox = await startNetboxDouble({ version: '4.0' });
    try {
      const headers = { Authorization: `Token ${TOKEN}`, Accept: 'application/json', 'Content-Type': 'application/json' };
      const hook = await fetch(`${netbox.url}/api/extras/webhooks/`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ name: 'h', payload_url: 'https://x/' }),
      });
      const { id } = (await hook.json()) as { id: number };
      const rule = await fetch(`${netbox.url}/api/extras/event-rules/`, {
        method: 'POST',
        headers,
        body: JSON.stringify({
          name: 'r',
          object_types: ['validity.compliancereport'],
          event_types: ['object_created'],
          action_type: 'webhook',
          action_object_type: 'extras.webhook',
          action_object: { id },
        }),
      });
      expect(rule.status).toBe(400);
      expect(await rule.json()).toEqual({
        event_types: ['Unknown field for a event rule in NetBox 4.0.'],
        action_object: ['This field is read-only.'],
        action_object_id: ['This field is required.'],
      });
    } finally {
      await netbox.close();
    }
  });
});
