import fs from 'node:fs';
import { runCliCaptured } from '../helpers/run-cli';
import { makeTempDir } from '../helpers/relay-harness';

/** `check-config` speaks the variables the user set, not the relay's internal keys; `--json` keeps the whole dump. */
describe('check-config shows each variable as set or defaulted', () => {
  const env = () => ({
    DATA_DIR: makeTempDir('relay-check-config-'),
    SMTP_URL: 'smtp://relay:Pa55-in-url@mail.example.com:587',
    SMTP_PASSWORD_FILE: '/run/secrets/smtp',
    MAIL_TO: 'ops@example.com',
    WEBHOOK_SECRET: 'a-webhook-secret-value',
    MAIL_TIMEZONE: 'Europe/Berlin',
  });

  it('lists what the user set by name, then the defaults in force, with secrets redacted', async () => {
    const e = { ...env(), SMTP_PASSWORD_FILE: undefined, SMTP_USER: undefined };
    const r = await runCliCaptured(['check-config'], e);
    expect(r.code).toBe(0);
    const [setPart, defaultPart] = r.stdout.split('Defaults in force:');
    expect(setPart).toContain('MAIL_TO=ops@example.com');
    expect(setPart).toContain('MAIL_TIMEZONE=Europe/Berlin');
    expect(setPart).toContain('SMTP_URL=smtp://relay:REDACTED@mail.example.com:587');
    expect(setPart).toContain('WEBHOOK_SECRET=[REDACTED]');
    expect(defaultPart).toContain('PORT=8080');
    expect(defaultPart).toContain('HOST=0.0.0.0 (all interfaces: WEBHOOK_SECRET is set)');
    expect(defaultPart).toContain('SMTP_POOL_SIZE=5');
    // Limits and timings rarely right to change come apart, after the rest.
    const [, advancedPart] = defaultPart.split('Advanced defaults in force');
    expect(advancedPart).toContain('SHUTDOWN_TIMEOUT_MS=10000');
    expect(defaultPart.split('Advanced defaults in force')[0]).not.toContain('SHUTDOWN_TIMEOUT_MS');
    // Graph's settings mean nothing with SMTP: not shown as if in force.
    expect(r.stdout).not.toContain('GRAPH_TIMEOUT_MS');
    // Nor are OAuth2's unset settings listed as if one might be missing.
    expect(r.stdout).not.toContain('OAUTH2_TENANT_ID');
    // The internal keys of the JSON dump are not what a user reads.
    expect(r.stdout).not.toMatch(/\btimezone\b|pauseAfter4xx|"smtp"/);
    expect(r.stdout).not.toContain('Pa55-in-url');
    expect(r.stdout).not.toContain('a-webhook-secret-value');
    expect(r.stdout).toContain('The configuration is valid.');
  });

  it("lists CATCH_UP_EVERY's default only when a source's catch-up runs (NetBox's URL and token)", async () => {
    const defaults = (stdout: string) => stdout.split('Defaults in force:')[1].split('Not set (optional)')[0];
    const bare = await runCliCaptured(['check-config'], { DATA_DIR: makeTempDir('relay-check-config-bare-') });
    expect(bare.code).toBe(0);
    expect(defaults(bare.stdout)).not.toContain('CATCH_UP');
    // Mails go to files here: their To: is MAIL_TO's default, in force, not an unset option.
    expect(defaults(bare.stdout)).toContain('  MAIL_TO=compliance-reports@localhost (mails go to files)\n');
    expect(bare.stdout.split('Not set (optional)')[1]).not.toContain('MAIL_TO');
    expect(bare.stdout).toContain('Catch-up of missed reports: off: NETBOX_URL is not set');
    const withNetbox = await runCliCaptured(['check-config'], {
      ...env(),
      SMTP_PASSWORD_FILE: undefined,
      NETBOX_URL: 'https://netbox.example.com',
      NETBOX_TOKEN: 'nbt_abc.def',
    });
    expect(withNetbox.code).toBe(0);
    expect(defaults(withNetbox.stdout)).toContain('  CATCH_UP_EVERY=5m\n');
  });

  it('names a secret given as a file by its _FILE variable', async () => {
    const dir = makeTempDir('relay-check-config-secret-');
    fs.writeFileSync(`${dir}/smtp`, 'from-a-file\n');
    const r = await runCliCaptured(['check-config'], {
      ...env(),
      SMTP_URL: 'smtp://mail.example.com:587',
      SMTP_USER: 'relay',
      SMTP_PASSWORD_FILE: `${dir}/smtp`,
    });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`SMTP_PASSWORD_FILE=${dir}/smtp`);
    expect(r.stdout).not.toContain('from-a-file');
  });

  it('warns about a variable it no longer reads, naming the fixed value that replaced it', async () => {
    const r = await runCliCaptured(['check-config'], { ...env(), SMTP_PASSWORD_FILE: undefined, SMTP_PAUSE_AFTER_4XX: '2' });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(
      'warning: SMTP_PAUSE_AFTER_4XX is no longer read: 3 different deliveries answered 4xx in a row pause the queue',
    );
    expect(r.stdout).not.toContain('SMTP_PAUSE_AFTER_4XX');
  });

  it('--json prints the whole configuration in force, redacted', async () => {
    const r = await runCliCaptured(['check-config', '--json'], { ...env(), SMTP_PASSWORD_FILE: undefined });
    expect(r.code).toBe(0);
    const shown = JSON.parse(r.stdout.slice(0, r.stdout.lastIndexOf('}') + 1)) as { mail: { timezone: string }; smtp: { url: string } };
    expect(shown.mail.timezone).toBe('Europe/Berlin');
    expect(shown.smtp.url).toBe('smtp://relay:REDACTED@mail.example.com:587');
    expect(r.stdout).not.toContain('a-webhook-secret-value');
  });

  it("--json with Microsoft Graph in force shows Graph's settings, its timeout included", async () => {
    const graph = { DATA_DIR: makeTempDir('relay-check-config-'), MAIL_TO: 'ops@example.com', MAIL_FROM: 'reports@contoso.example' };
    const oauth2 = { OAUTH2_TENANT_ID: 'contoso', OAUTH2_CLIENT_ID: 'app', OAUTH2_CLIENT_SECRET: 'an-oauth2-client-secret' };
    const r = await runCliCaptured(['check-config', '--json'], { ...graph, ...oauth2, MAIL_TRANSPORT: 'graph' });
    expect(r.code).toBe(0);
    const shown = JSON.parse(r.stdout.slice(0, r.stdout.lastIndexOf('}') + 1)) as { graph: { timeoutMs: number } };
    expect(shown.graph.timeoutMs).toBe(30_000);
    expect(r.stdout).not.toContain('an-oauth2-client-secret');
  });
});
