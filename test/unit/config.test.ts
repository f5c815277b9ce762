import fs from 'node:fs';
import path from 'node:path';
import { ConfigError, describeSettings, loadConfig, redactConfig } from '../../src/config';

/** Variables that hold secrets (flagged `secret`): each may instead be given as `<NAME>_FILE`, never both. */
const SECRET_VARIABLES = describeSettings().flatMap((s) => (s.secret ? [s.name] : []));
import { createTestCertificates } from '../helpers/test-certificates';
import { makeTempDir } from '../helpers/relay-harness';

const read = (files: Record<string, string>) => (file: string) => {
  if (!(file in files)) throw Object.assign(new Error('ENOENT'), { code: 'ENOENT' });
  return files[file];
};

function issuesOf(env: Record<string, string>, files: Record<string, string> = {}) {
  try {
    loadConfig(env, { readFile: read(files), cwd: '/srv' });
  } catch (error) {
    if (error instanceof ConfigError) return error.issues;
    throw error;
  }
  return [];
}

describe('loadConfig', () => {
  it('runs with no configuration at all: 127.0.0.1:8080 (no secret: loopback only), ./data, .eml files', () => {
    const config = loadConfig({}, { readFile: read({}), cwd: '/srv' });
    expect(config.http).toMatchObject({ host: '127.0.0.1', port: 8080 });
    expect(config.webhook.unsignedFromNetwork).toBe(false);
    expect(config.store.dataDir).toBe('/srv/data');
    expect(config.transport.name).toBe('file');
    expect(config.mail.outboxDir).toBe('/srv/data/mail');
    expect(config.webhook).toMatchObject({ maxBytes: 1_048_576 });
    expect(config.sources[0]).toMatchObject({ path: '/webhook', secrets: [] });
  });

  it('lists every problem at once, by variable name', () => {
    const issues = issuesOf({
      PORT: 'eighty',
      SMTP_URL: 'http://mail',
      RETENTION_DAYS: '-1',
      LOG_LEVEL: 'loud',
      MAIL_TIMEZONE: 'Mars/Olympus',
    });
    // Schema problems and the rules about the valid rest, in one pass: SMTP_URL's scheme and the missing MAIL_TO too.
    expect(issues.map((i) => i.variable).sort()).toEqual(['LOG_LEVEL', 'MAIL_TIMEZONE', 'MAIL_TO', 'PORT', 'RETENTION_DAYS', 'SMTP_URL']);
    expect(issues.find((i) => i.variable === 'PORT')?.message).toContain('eighty');
  });

  it('names a bad port, a bad address and a wrong SMTP scheme in the same run', () => {
    const issues = issuesOf({ PORT: 'abc', MAIL_TO: 'bad', SMTP_URL: 'ftp://x' });
    expect(issues.map((i) => i.variable)).toEqual(['PORT', 'MAIL_TO', 'SMTP_URL']);
    expect(issues.find((i) => i.variable === 'SMTP_URL')?.message).toMatch(/smtp:\/\//);
    // MAIL_TO is reported once, for what is wrong with it, not also as "required".
    expect(issues.find((i) => i.variable === 'MAIL_TO')?.message).toMatch(/not an e-mail address/);
  });

  it('checks a rule between two variables only with valid values on both sides', () => {
    // NETBOX_URL is refused; its absence must not make NETBOX_TOKEN look set without it.
    const issues = issuesOf({ NETBOX_URL: 'netbox.example.com', NETBOX_TOKEN: '0123456789abcdef' });
    expect(issues.map((i) => i.variable)).toEqual(['NETBOX_URL']);
  });

  it('composes a mail within its lease: a mail still being composed when its claim lapsed would be sent twice', () => {
    const config = loadConfig({ NETBOX_URL: 'https://netbox.example.com', NETBOX_TOKEN: '0123456789abcdef' }, { readFile: read({}) });
    expect(config.netbox.enrichBudgetMs).toBeLessThan(config.worker.leaseMs);
  });

  it('reports contradictions: SMTP without MAIL_TO, a password without a user, credentials twice', () => {
    const issues = issuesOf({ SMTP_URL: 'smtp://u:p@mail:25', SMTP_USER: 'x', SMTP_PASSWORD: 'y' });
    expect(issues.map((i) => i.variable).sort()).toEqual(['MAIL_TO', 'SMTP_USER']);
    expect(issuesOf({ SMTP_URL: 'smtp://mail', MAIL_TO: 'a@b.c', SMTP_PASSWORD: 'y' }).map((i) => i.variable)).toEqual(['SMTP_PASSWORD']);
    expect(issuesOf({ SMTP_URL: 'ftp://mail', MAIL_TO: 'a@b.c' }).map((i) => i.variable)).toEqual(['SMTP_URL']);
    expect(issuesOf({ MAIL_TO: 'not an address' }).map((i) => i.variable)).toEqual(['MAIL_TO']);
  });

  it('reads <NAME>_FILE secrets (trailing newline dropped), refuses both forms and unreadable files', () => {
    const config = loadConfig(
      { WEBHOOK_SECRET_FILE: '/run/secrets/hook' },
      { readFile: read({ '/run/secrets/hook': 's3cret-webhook-secret\n' }) },
    );
    expect(config.sources[0].secrets).toEqual(['s3cret-webhook-secret']);
    expect(issuesOf({ WEBHOOK_SECRET: 'a', WEBHOOK_SECRET_FILE: '/x' })[0]).toMatchObject({
      variable: 'WEBHOOK_SECRET',
      message: expect.stringContaining('not both'),
    });
    expect(issuesOf({ SMTP_PASSWORD_FILE: '/missing' })[0]).toMatchObject({
      variable: 'SMTP_PASSWORD_FILE',
      message: expect.stringContaining('ENOENT'),
    });
  });

  it('treats empty values as unset (compose passes ${VAR:-} as "")', () => {
    const config = loadConfig({ SMTP_URL: '', PORT: '', MAIL_TO: '' }, { readFile: read({}) });
    expect(config.transport.name).toBe('file');
    expect(config.http.port).toBe(8080);
  });

  it('never shows a secret in issues or in the redacted configuration', () => {
    const issues = issuesOf({ WEBHOOK_SECRET: 'x'.repeat(300) });
    expect(JSON.stringify(issues)).not.toContain('x'.repeat(300));
    const config = loadConfig(
      { SMTP_URL: 'smtps://user:hunter2-pass@mail.example.com', MAIL_TO: 'a@b.c', WEBHOOK_SECRET: 'hook-secret-value' },
      { readFile: read({}) },
    );
    const shown = JSON.stringify(redactConfig(config));
    expect(shown).not.toContain('hunter2-pass');
    expect(shown).not.toContain('hook-secret-value');
    expect(config.secretValues).toEqual(expect.arrayContaining(['hunter2-pass', 'hook-secret-value']));
  });

  it('redacts every setting the schema flags secret, wherever the configuration holds it', () => {
    const secrets: Record<string, string> = {
      WEBHOOK_SECRET: 'hook-secret-current-0001',
      WEBHOOK_SECRET_PREVIOUS: 'hook-secret-previous-0002',
      SMTP_PASSWORD: 'smtp-password-0003',
      METRICS_TOKEN: 'metrics-token-value-0004',
      NETBOX_TOKEN: 'nbt_netbox.token-0005',
      ADMIN_TOKEN: 'admin-token-value-0006',
      DATABASE_URL: 'postgres://relay:db-password-0007@db.example.com/relay',
      OAUTH2_CLIENT_SECRET: 'oauth2-client-secret-0008',
    };
    // Both transports, so that each secret is in force in one of the two.
    const smtp = loadConfig(
      {
        ...secrets,
        OAUTH2_CLIENT_SECRET: undefined,
        SMTP_URL: 'smtp://mail.example.com',
        SMTP_USER: 'relay',
        MAIL_TO: 'a@b.c',
        NETBOX_URL: 'https://netbox.example.com',
      },
      { readFile: read({}) },
    );
    const graph = loadConfig(
      {
        ...secrets,
        SMTP_PASSWORD: undefined,
        MAIL_TRANSPORT: 'graph',
        OAUTH2_TENANT_ID: 'contoso.onmicrosoft.com',
        OAUTH2_CLIENT_ID: 'app',
        MAIL_TO: 'a@b.c',
        NETBOX_URL: 'https://netbox.example.com',
      },
      { readFile: read({}) },
    );
    expect([...SECRET_VARIABLES].sort()).toEqual(Object.keys(secrets).sort());
    const shown = JSON.stringify([redactConfig(smtp), redactConfig(graph)]);
    for (const value of [...Object.values(secrets), 'db-password-0007']) expect(shown).not.toContain(value);
    expect(redactConfig(smtp).admin).toEqual({ token: '[REDACTED]' });
    expect(redactConfig(graph).store).toMatchObject({ databaseUrl: 'postgres://relay:REDACTED@db.example.com/relay' });
  });
});

describe('the redacted configuration with a certificate credential', () => {
  it('shows the private key as [REDACTED] and the certificate only as set', () => {
    const dir = makeTempDir('config-redact-');
    try {
      const certs = createTestCertificates(dir);
      // The usual bundle: the certificate and its private key in one PEM file.
      fs.writeFileSync(path.join(dir, 'bundle.pem'), Buffer.concat([certs.cert, certs.key]));
      const config = loadConfig(
        {
          SMTP_URL: 'smtp://smtp.office365.com:587',
          SMTP_USER: 'relay@contoso.example',
          MAIL_TO: 'a@b.c',
          OAUTH2_TENANT_ID: 'contoso.onmicrosoft.com',
          OAUTH2_CLIENT_ID: 'app',
          OAUTH2_CERTIFICATE_FILE: path.join(dir, 'bundle.pem'),
        },
        { readFile: (file) => fs.readFileSync(file, 'utf8') },
      );
      const shown = redactConfig(config).smtp as { oauth2: Record<string, unknown> };
      expect(shown.oauth2).toMatchObject({ privateKeyPem: '[REDACTED]', certificatePem: 'set (PEM, not shown)', clientId: 'app' });
      const body = (pem: Buffer) => pem.toString().split('\n')[1];
      expect(JSON.stringify(shown)).not.toContain(body(certs.key));
      expect(JSON.stringify(shown)).not.toContain(body(certs.cert));
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('values that look valid but mean something else are refused', () => {
  it('a duration without a unit, naming the variable and an example, instead of reading it as milliseconds', () => {
    const issues = issuesOf({ EXPECT_REPORT_EVERY: '24' });
    expect(issues.map((i) => i.variable)).toEqual(['EXPECT_REPORT_EVERY']);
    for (const issue of issues) expect(issue.message).toContain('has no unit: write it with one, e.g. 24h');
    expect(loadConfig({ EXPECT_REPORT_EVERY: '24h' }, { readFile: read({}) }).sources[0].expectEveryMs).toBe(86_400_000);
    expect(loadConfig({ EXPECT_REPORT_EVERY: '90s' }, { readFile: read({}) }).sources[0].expectEveryMs).toBe(90_000);
  });

  it('a _MS setting takes a whole number of milliseconds, its unit in its name: a unit in the value is refused', () => {
    expect(issuesOf({ SHUTDOWN_TIMEOUT_MS: '5m' }).map((i) => i.variable)).toEqual(['SHUTDOWN_TIMEOUT_MS']);
    expect(loadConfig({ SHUTDOWN_TIMEOUT_MS: '120000' }, { readFile: read({}) }).http.shutdownTimeoutMs).toBe(120_000);
  });

  it('refuses an interval or timeout longer than a timer keeps (24 days), which would fire after 1 ms instead', () => {
    const file = 'sources:\n  - name: lab\n    catch_up_every: 30d\n';
    const issues = issuesOf(
      { CATCH_UP_EVERY: '25d', SHUTDOWN_TIMEOUT_MS: '2147483648', SOURCES_FILE: '/etc/sources.yaml' },
      { '/etc/sources.yaml': file },
    );
    expect(issues.map((i) => i.variable).sort()).toEqual(['CATCH_UP_EVERY', 'SHUTDOWN_TIMEOUT_MS', 'SOURCES_FILE']);
    for (const issue of issues.filter((i) => i.variable !== 'SHUTDOWN_TIMEOUT_MS')) expect(issue.message).toContain('is longer than 24d');
    expect(issues.find((i) => i.variable === 'SHUTDOWN_TIMEOUT_MS')?.message).toContain('from 1 to 2147483647');
    const config = loadConfig({ CATCH_UP_EVERY: '24d', SHUTDOWN_TIMEOUT_MS: '2147483647' }, { readFile: read({}) });
    expect(config.sources[0].catchUp.everyMs).toBe(24 * 86_400_000);
  });

  it('a CA file that cannot be read is named with the rest, not found missing when the relay starts', () => {
    const file = 'sources:\n  - name: lab\n    netbox_url: https://lab.example.com\n    ca_file: lab-ca.pem\n';
    const env = {
      NETBOX_URL: 'https://netbox.example.com',
      NETBOX_CA_FILE: 'ca.pem',
      SMTP_URL: 'smtp://mail.example.com',
      MAIL_TO: 'ops@example.com',
      SMTP_CA_FILE: '/etc/smtp-ca.pem',
      SOURCES_FILE: '/etc/sources.yaml',
    };
    expect(issuesOf(env, { '/etc/sources.yaml': file })).toEqual([
      // The transport checks its own with its other settings, before the sources' files.
      { variable: 'SMTP_CA_FILE', message: 'cannot read /etc/smtp-ca.pem (ENOENT): accepts a readable PEM file' },
      { variable: 'NETBOX_CA_FILE', message: 'cannot read /srv/ca.pem (ENOENT): accepts a readable PEM file' },
      { variable: 'SOURCES_FILE', message: 'source lab ca_file: cannot read /srv/lab-ca.pem (ENOENT): accepts a readable PEM file' },
    ]);
    const pem = '-----BEGIN CERTIFICATE-----\n';
    const files = { '/etc/sources.yaml': file, '/srv/ca.pem': pem, '/etc/smtp-ca.pem': pem, '/srv/lab-ca.pem': pem };
    expect(issuesOf(env, files)).toEqual([]);
  });

  it('a webhook secret shorter than 16 characters, saying how to generate one, in the variable or its file', () => {
    for (const env of [{ WEBHOOK_SECRET: '…' }, { WEBHOOK_SECRET: 'change-me' }]) {
      const issues = issuesOf(env);
      expect(issues).toEqual([{ variable: 'WEBHOOK_SECRET', message: expect.stringContaining('needs at least 16') }]);
      expect(issues[0].message).toContain('openssl rand -hex 32');
      expect(JSON.stringify(issues)).not.toContain('change-me');
    }
    expect(issuesOf({ WEBHOOK_SECRET_FILE: '/run/secrets/hook' }, { '/run/secrets/hook': 'short\n' }).map((i) => i.variable)).toEqual([
      'WEBHOOK_SECRET_FILE',
    ]);
    expect(issuesOf({ WEBHOOK_SECRET: '0123456789abcdef' })).toEqual([]);
    // The secret being retired during a rotation is the old one NetBox still signs with: it is taken as it is.
    expect(issuesOf({ WEBHOOK_SECRET: '0123456789abcdef', WEBHOOK_SECRET_PREVIOUS: 'old' })).toEqual([]);
  });
});

describe('an unsigned webhook is never open to the network by accident (issue 14)', () => {
  it('listens on all interfaces by default only with a webhook secret', () => {
    expect(loadConfig({ WEBHOOK_SECRET: 's3cret-webhook-secret' }, { readFile: read({}) }).http.host).toBe('0.0.0.0');
    expect(
      loadConfig({ WEBHOOK_SECRET_FILE: '/run/secrets/hook' }, { readFile: read({ '/run/secrets/hook': 's3cret-webhook-secret\n' }) }).http
        .host,
    ).toBe('0.0.0.0');
    expect(loadConfig({}, { readFile: read({}) }).http.host).toBe('127.0.0.1');
  });

  it('refuses HOST beyond loopback without a secret, naming WEBHOOK_SECRET and the way out', () => {
    for (const host of ['0.0.0.0', '::', '10.1.2.3', 'relay.example.com']) {
      const issues = issuesOf({ HOST: host });
      expect(issues).toEqual([{ variable: 'WEBHOOK_SECRET', message: expect.stringContaining(`HOST=${host}`) }]);
      expect(issues[0].message).toContain('WEBHOOK_ALLOW_UNSIGNED=true');
    }
    for (const host of ['127.0.0.1', '127.0.0.2', '::1', '::ffff:127.0.0.1', 'localhost', '[::1]'])
      expect(issuesOf({ HOST: host })).toEqual([]);
  });

  it('accepts unsigned deliveries from the network only when WEBHOOK_ALLOW_UNSIGNED=true says so', () => {
    const config = loadConfig({ HOST: '0.0.0.0', WEBHOOK_ALLOW_UNSIGNED: 'true' }, { readFile: read({}) });
    expect(config.http.host).toBe('0.0.0.0');
    expect(config.webhook).toMatchObject({ unsignedFromNetwork: true });
    expect(config.sources[0].secrets).toEqual([]);
    expect(redactConfig(config).webhook).toMatchObject({ signed: false, unsignedFromNetwork: true });
    expect(issuesOf({ WEBHOOK_SECRET: 's3cret-webhook-secret', WEBHOOK_ALLOW_UNSIGNED: 'true' })).toEqual([
      { variable: 'WEBHOOK_ALLOW_UNSIGNED', message: expect.stringContaining('no effect') },
    ]);
  });

  it('refuses a secret that is empty or only white space, in the variable or in its file', () => {
    expect(issuesOf({ WEBHOOK_SECRET: '   ' })).toEqual([
      { variable: 'WEBHOOK_SECRET', message: expect.stringContaining('empty or only white space') },
    ]);
    expect(issuesOf({ WEBHOOK_SECRET: '' }).map((i) => i.variable)).toEqual(['WEBHOOK_SECRET']);
    expect(issuesOf({ WEBHOOK_SECRET: 'ok-webhook-secret', WEBHOOK_SECRET_PREVIOUS: '\t' }).map((i) => i.variable)).toEqual([
      'WEBHOOK_SECRET_PREVIOUS',
    ]);
    expect(issuesOf({ WEBHOOK_SECRET_FILE: '/run/secrets/hook' }, { '/run/secrets/hook': '  \n' }).map((i) => i.variable)).toEqual([
      'WEBHOOK_SECRET_FILE',
    ]);
    // A blank secret beyond loopback is one problem, said once.
    expect(issuesOf({ WEBHOOK_SECRET: ' ', HOST: '0.0.0.0' }).map((i) => i.variable)).toEqual(['WEBHOOK_SECRET']);
  });

  it('lists these problems together with the other semantic ones, in one pass', () => {
    const issues = issuesOf({ HOST: '0.0.0.0', WEBHOOK_SECRET_PREVIOUS: ' ', SMTP_URL: 'smtp://mail', SMTP_PASSWORD: 'p' });
    expect(issues.map((i) => i.variable).sort()).toEqual([
      'MAIL_TO',
      'SMTP_PASSWORD',
      'WEBHOOK_SECRET',
      'WEBHOOK_SECRET_PREVIOUS',
      'WEBHOOK_SECRET_PREVIOUS',
    ]);
  });
});

describe('documentation stays in step with the schema', () => {
  const root = path.join(__dirname, '../..');
  const variables = [...describeSettings().map((s) => s.name), ...SECRET_VARIABLES.map((s) => `${s}_FILE`)];
  const example = fs.readFileSync(path.join(root, '.env.example'), 'utf8');
  const readme = fs.readFileSync(path.join(root, 'docs/configuration.md'), 'utf8');

  it.each(variables)('%s is in .env.example and docs/configuration.md', (name) => {
    expect(example).toMatch(new RegExp(`^#?\\s*${name}=`, 'm'));
    expect(readme).toContain(`\`${name}\``);
  });
});
