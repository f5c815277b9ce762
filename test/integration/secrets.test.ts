import { execFile } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { MAIN_JS, startChildRelay, type ChildRelay } from '../helpers/child-relay';
import { buildBody, buildReportData, netboxSignature } from '../helpers/netbox-json';
import { makeTempDir, postWebhook, waitUntil } from '../helpers/relay-harness';
import { startSmtpPeer, type SmtpPeer } from '../helpers/smtp-peer';

/** Distinctive values, so that any leak (whole, URL-encoded or base64) is found by a plain search. */
const SECRETS = {
  WEBHOOK_SECRET: 'whsec-current-Q7mZ2pX9vLk4',
  WEBHOOK_SECRET_PREVIOUS: 'whsec-previous-R8nA3qY0wMj5',
  SMTP_PASSWORD: 'smtp-pass-S9oB4rZ1xNh6/+=',
  NETBOX_TOKEN: 'nbtok-T0pC5sA2yOg7d8e9f0a1b2c3d4e5f6a7b8c9',
  ADMIN_TOKEN: 'admtok-U1qD6tB3zPf8u9v0w1x2',
  METRICS_TOKEN: 'mettok-V2rE7uC4aQe9y8z7',
};

function forms(value: string): string[] {
  return [value, encodeURIComponent(value), Buffer.from(value).toString('base64'), Buffer.from(`\0relay\0${value}`).toString('base64')];
}

function runCommand(args: string[], env: Record<string, string>, cwd: string): Promise<string> {
  return new Promise((resolve) => {
    execFile(process.execPath, [MAIN_JS, ...args], { env: { PATH: process.env.PATH ?? '', ...env }, cwd }, (_error, stdout, stderr) =>
      resolve(`${stdout}\n${stderr}`),
    );
  });
}

/**
 * Guarantee 10: with every secret set, and errors provoked on every path that could echo one (bad
 * signatures, SMTP login refused, NetBox refusing the token, wrong admin and metrics tokens,
 * invalid bodies), no secret appears in the process's logs, in any HTTP answer, or in the output of
 * `deliveries` and `check-config`.
 */
describe('secrets never appear in logs, answers or command output', () => {
  let dir: string;
  let smtp: SmtpPeer;
  let netbox: http.Server;
  let child: ChildRelay | undefined;

  beforeAll(async () => {
    dir = makeTempDir('relay-secrets-');
    smtp = await startSmtpPeer({
      server: {
        authOptional: false,
        allowInsecureAuth: true,
        // A server that echoes what it was sent: the password, and AUTH PLAIN's base64 of it.
        onAuth: (auth, _session, callback) => {
          const plain = Buffer.from(`\0${auth.username}\0${auth.password}`).toString('base64');
          callback(new Error(`Invalid username or password ${auth.password} (${plain})`));
        },
      },
    });
    // A NetBox (or a proxy before it) that echoes the Authorization header in its 403.
    netbox = http.createServer((req, res) => {
      res.writeHead(403, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ detail: `Invalid token: ${req.headers.authorization}` }));
    });
    await new Promise<void>((resolve) => netbox.listen(0, '127.0.0.1', () => resolve()));
  });
  afterAll(async () => {
    await child?.kill();
    await smtp.close();
    netbox.closeAllConnections();
    await new Promise((resolve) => netbox.close(resolve));
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('greps everything the relay wrote or answered for each secret', async () => {
    fs.writeFileSync(`${dir}/smtp-password`, `${SECRETS.SMTP_PASSWORD}\n`);
    fs.writeFileSync(`${dir}/admin-token`, SECRETS.ADMIN_TOKEN);
    const env = {
      DATA_DIR: `${dir}/data`,
      LOG_LEVEL: 'trace',
      SMTP_URL: smtp.url,
      SMTP_USER: 'relay',
      SMTP_PASSWORD_FILE: `${dir}/smtp-password`,
      // The peer offers no STARTTLS: the opt-out lets the password reach it, so that its echo can be checked.
      SMTP_REQUIRE_TLS: 'false',
      MAIL_TO: 'oncall@example.com',
      WEBHOOK_SECRET: SECRETS.WEBHOOK_SECRET,
      WEBHOOK_SECRET_PREVIOUS: SECRETS.WEBHOOK_SECRET_PREVIOUS,
      NETBOX_URL: `http://127.0.0.1:${(netbox.address() as AddressInfo).port}`,
      NETBOX_TOKEN: SECRETS.NETBOX_TOKEN,
      ADMIN_TOKEN_FILE: `${dir}/admin-token`,
      METRICS_TOKEN: SECRETS.METRICS_TOKEN,
    };
    child = await startChildRelay(env, { cwd: dir });
    const answers: string[] = [];
    const keep = async (res: Response | Promise<Response>) => {
      const r = await res;
      const text = await r.text();
      answers.push(`${r.status} ${JSON.stringify([...r.headers])} ${text}`);
      return { status: r.status, text };
    };
    const webhook = `${child.url}/webhook`;
    const body = buildBody({ data: buildReportData({ id: 77 }) });

    // Wrong, missing and truncated signatures; a signature made with a secret as the body; invalid bodies.
    answers.push(JSON.stringify(await postWebhook(webhook, body, { 'X-Hook-Signature': 'ab'.repeat(64) })));
    answers.push(JSON.stringify(await postWebhook(webhook, body)));
    answers.push(
      JSON.stringify(await postWebhook(webhook, body, { 'X-Hook-Signature': netboxSignature(body, SECRETS.WEBHOOK_SECRET).slice(0, 40) })),
    );
    answers.push(
      JSON.stringify(
        await postWebhook(webhook, SECRETS.WEBHOOK_SECRET, {
          'X-Hook-Signature': netboxSignature(SECRETS.WEBHOOK_SECRET, SECRETS.WEBHOOK_SECRET),
        }),
      ),
    );
    const bad = Buffer.from(`{"event": "created", "data": {"id": "${SECRETS.WEBHOOK_SECRET_PREVIOUS}"}}`);
    answers.push(JSON.stringify(await postWebhook(webhook, bad, { 'X-Hook-Signature': netboxSignature(bad, SECRETS.WEBHOOK_SECRET) })));
    // A valid delivery signed with the previous secret: SMTP refuses the login (held, EAUTH); NetBox refuses the token.
    const accepted = await postWebhook(webhook, body, { 'X-Hook-Signature': netboxSignature(body, SECRETS.WEBHOOK_SECRET_PREVIOUS) });
    expect(accepted.status).toBe(202);

    const admin = (path: string, token: string, init: RequestInit = {}) =>
      keep(fetch(`${child!.url}${path}`, { ...init, headers: { Authorization: `Bearer ${token}` } }));
    await waitUntil(
      async () => {
        const { text } = await admin('/api/deliveries?state=retrying', SECRETS.ADMIN_TOKEN);
        return text.includes('"EAUTH"') || undefined;
      },
      20_000,
      'the delivery to be held on the refused login',
    );
    expect((await admin('/api/deliveries', SECRETS.METRICS_TOKEN)).status).toBe(401);
    expect((await admin('/api/deliveries', `${SECRETS.ADMIN_TOKEN}0`)).status).toBe(401);
    await admin(`/api/deliveries/${accepted.json.id}`, SECRETS.ADMIN_TOKEN);
    await admin(`/api/deliveries/${accepted.json.id}/retry`, SECRETS.ADMIN_TOKEN, { method: 'POST' });
    expect((await admin('/metrics', SECRETS.ADMIN_TOKEN)).status).toBe(401);
    expect((await admin('/metrics', SECRETS.METRICS_TOKEN)).status).toBe(200);
    await keep(fetch(`${child.url}/readyz`));
    await waitUntil(
      () => child!.output.some((l) => l.includes('CONFIGURATION PROBLEM')) || undefined,
      20_000,
      'the requeued delivery to fail the login again',
    );

    const commands = await Promise.all([
      runCommand(['deliveries'], env, dir),
      runCommand(['deliveries', '--json'], env, dir),
      runCommand(['deliveries', '--state', 'dead'], env, dir),
      runCommand(['check-config'], env, dir),
      runCommand(['verify-smtp'], env, dir),
    ]);
    expect(commands[0]).toContain('EAUTH');
    await child.kill('SIGTERM');

    const everything = { logs: child.output.join('\n'), answers: answers.join('\n'), commands: commands.join('\n') };
    // The relay did log the refused login and the refused token, so there was something to leak.
    expect(everything.logs).toMatch(/Invalid login|EAUTH/);
    expect(everything.logs.length).toBeGreaterThan(5_000);
    for (const [name, value] of Object.entries(SECRETS)) {
      for (const [where, text] of Object.entries(everything)) {
        for (const form of forms(value)) {
          if (text.includes(form)) throw new Error(`${name} appears in ${where} (as ${JSON.stringify(form)})`);
        }
      }
    }
    process.stdout.write(
      `secrets: searched ${Object.keys(SECRETS).length} secrets × 4 encodings in ${child.output.length} log lines, ${answers.length} answers, ${commands.length} command outputs\n`,
    );
  }, 90_000);
});
