import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { loadConfig } from '../../src/config';
import { COMPOSE_FILE, interpolate, loadComposeFile, ROOT, validateComposeDocument } from '../helpers/compose-file';

/**
 * No Docker engine runs here, and none is needed: the compose file is read as Compose reads it (interpolation,
 * anchors), validated against the Compose Specification's JSON schema, and then asserted on.
 */
function composeConfig(env: Record<string, string> = {}): any {
  return loadComposeFile(env);
}

describe('the compose file check itself', () => {
  it('refuses a file that breaks the Compose Specification, naming the place', () => {
    const doc = YAML.parse(fs.readFileSync(COMPOSE_FILE, 'utf8'), { merge: true });
    doc.services.relay.enviroment = { LOG_LEVEL: 'debug' }; // a typo Compose would refuse
    doc.services.mailcatcher.ports = [{ target: 'eighty' }];
    expect(() => validateComposeDocument(doc)).toThrow(
      /\/services\/relay must NOT have additional properties \(enviroment\)[\s\S]*\/services\/mailcatcher\/ports\/0/,
    );
  });

  it('interpolates as Compose does: ":-" also replaces an empty value, "-" only an unset one, "$$" is a dollar', () => {
    expect(interpolate('${A:-d} ${A-d} ${B:-d} ${B-d} $$A ${C:+on}', { A: '', C: 'x' })).toBe('d  d d $A on');
    expect(() => interpolate('${NEEDED:?set it}', {})).toThrow(/NEEDED.*set it/);
  });
});

describe('docker-compose.yml', () => {
  it('is valid and runs the relay against the mail catcher, with data on a named volume', () => {
    const config = composeConfig();
    const relay = config.services.relay;
    expect(relay.build.context).toBe(ROOT);
    expect(relay.environment.SMTP_URL).toBe('smtp://mailcatcher:1025');
    expect(relay.environment.DATA_DIR).toBe('/data');
    expect(relay.volumes).toEqual([expect.stringMatching(/^relay-data:\/data/)]);
    expect(relay.ports[0]).toMatchObject({ target: 8080, published: 8080, host_ip: '127.0.0.1' });
    // The relay listens beyond loopback in its container, so it needs a secret: the documented demo one.
    expect(relay.environment.WEBHOOK_SECRET).toBe('compose-demo-secret-change-me');
    expect(Object.keys(config.volumes)).toContain('relay-data');
    expect(config.services.mailcatcher.image).toBe('mailhog/mailhog:v1.0.1');
    // The catcher's UI shows every mail: published on loopback only, as the README's localhost link says.
    expect(config.services.mailcatcher.ports[0]).toMatchObject({ target: 8025, published: 8025, host_ip: '127.0.0.1' });
  });

  it('lets Mailpit replace MailHog and the operator set the recipients and secret', () => {
    const config = composeConfig({
      MAIL_CATCHER_IMAGE: 'axllent/mailpit:latest',
      MAIL_TO: 'ops@example.org',
      WEBHOOK_SECRET: 'operator-webhook-secret',
      RELAY_PORT: '18080',
      RELAY_PUBLISH_ADDRESS: '0.0.0.0',
    });
    expect(config.services.mailcatcher.image).toBe('axllent/mailpit:latest');
    expect(config.services.relay.environment.MAIL_TO).toBe('ops@example.org');
    expect(config.services.relay.environment.WEBHOOK_SECRET).toBe('operator-webhook-secret');
    // Unset optional settings reach the relay as empty values, which it treats as unset.
    expect(config.services.relay.environment.ADMIN_TOKEN).toBe('');
    expect(config.services.relay.ports[0]).toMatchObject({ published: 18080, host_ip: '0.0.0.0' });
    expect(config.services.mailcatcher.ports[0]).toMatchObject({ host_ip: '127.0.0.1' });
  });
});

describe('Dockerfile', () => {
  const dockerfile = fs.readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8');
  it('is multi-stage, runs as a non-root user, has a HEALTHCHECK on /healthz and starts the server', () => {
    expect(dockerfile.match(/^FROM /gm)).toHaveLength(2);
    expect(dockerfile).toMatch(/^USER node$/m);
    expect(dockerfile).toMatch(/^HEALTHCHECK [\s\S]*\/healthz/m);
    expect(dockerfile).toMatch(/^CMD \["node", (?:"--[a-z-]+=[0-9]+", )*"dist\/src\/main\.js", "serve"\]$/m);
  });

  it('builds offline with the builder Docker ships: no `# syntax=` frontend to pull, no feature that needs one', () => {
    expect(dockerfile).not.toMatch(/^#\s*syntax\s*=/im);
    // RUN --mount, COPY --link/--chmod/--exclude and heredocs need a recent BuildKit frontend (not the legacy builder's).
    expect(dockerfile).not.toMatch(/^(RUN|COPY|ADD)\s+[^\n]*--(mount|link|chmod|exclude|parents)\b/m);
    expect(dockerfile).not.toMatch(/<<-?["']?[A-Z]+/);
  });

  it("starts node with the same flags as `npm start`, and compose's relays keep that command", () => {
    const cmd = JSON.parse(/^CMD (\[.*\])$/m.exec(dockerfile)![1]) as string[];
    const start = (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start;
    expect(cmd.join(' ')).toBe(start);
    const services = composeConfig({}).services as Record<string, { image?: string; command?: unknown; entrypoint?: unknown }>;
    const relays = Object.values(services).filter((s) => s.image === 'compliance-relay:local');
    expect(relays).toHaveLength(3);
    for (const relay of relays) expect([relay.command, relay.entrypoint]).toEqual([undefined, undefined]);
  });

  it('copies everything the runtime reads (templates, compiled sources, package.json, the sample report in examples/)', () => {
    for (const needed of ['templates', 'dist/src', 'package.json', 'node_modules']) expect(dockerfile).toContain(needed);
    // The boot check and `send-test` read examples/delivery-netbox-3.6.json from the package root.
    const runtime = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
    expect(runtime).toMatch(/^COPY examples \.\/examples$/m);
    // The build stage compiles the sources the image ships, and the script that compiles the templates ahead.
    const build = JSON.parse(fs.readFileSync(path.join(ROOT, 'tsconfig.build.json'), 'utf8'));
    expect(build.include).toEqual(['src', 'scripts/build-templates.ts']);
  });

  it('ships the templates with their compiled forms, built as `npm run build` builds them (they are not in git)', () => {
    const { scripts } = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: { build: string } };
    const step = 'node dist/scripts/build-templates.js';
    expect(scripts.build).toContain(step);
    expect(dockerfile).toMatch(new RegExp(`^RUN npx tsc -p tsconfig\\.build\\.json && ${step.replace(/\./g, '\\.')} `, 'm'));
    // The runtime stage takes the templates from the build stage, not from the build context (which lacks them after a clone).
    const runtime = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
    expect(runtime).toMatch(/^COPY --from=build \/app\/templates \.\/templates$/m);
    expect(runtime).not.toMatch(/^COPY templates /m);
  });
});

describe('docker-compose.yml, profile ha', () => {
  it('leaves the default `docker compose up` as the single relay and the mail catcher', () => {
    // Every service is listed; `up` starts only those without a profile unless one is enabled.
    const services = Object.entries(composeConfig().services as Record<string, { profiles?: string[] }>);
    expect(
      services
        .filter(([, s]) => !s.profiles)
        .map(([name]) => name)
        .sort(),
    ).toEqual(['mailcatcher', 'relay']);
    expect(services.filter(([, s]) => s.profiles).map(([name, s]) => [name, s.profiles])).toEqual(
      ['postgres', 'proxy', 'relay-a', 'relay-b'].map((name) => [name, ['ha']]),
    );
  });

  it('runs PostgreSQL and two relays on DATABASE_URL behind an nginx proxy whose config names them', () => {
    const config = composeConfig({ POSTGRES_PASSWORD: 's3cret', HA_PORT: '18088' });
    const { postgres, proxy } = config.services;
    expect(postgres.image).toMatch(/^postgres:/);
    expect(postgres.environment).toMatchObject({ POSTGRES_USER: 'relay', POSTGRES_PASSWORD: 's3cret', POSTGRES_DB: 'compliance_relay' });
    expect(postgres.healthcheck.test.join(' ')).toContain('pg_isready');

    for (const name of ['relay-a', 'relay-b']) {
      const relay = config.services[name];
      expect(relay.environment.DATABASE_URL).toBe('postgres://relay:s3cret@postgres:5432/compliance_relay');
      expect(relay.environment.SMTP_URL).toBe('smtp://mailcatcher:1025');
      expect(relay.environment.WEBHOOK_SECRET).toBe('compose-demo-secret-change-me');
      expect(relay.depends_on.postgres.condition).toBe('service_healthy');
      // Only the proxy is published: NetBox must not bypass it.
      expect(relay.ports).toBeUndefined();
    }

    expect(proxy.image).toMatch(/^nginx:/);
    expect(proxy.ports[0]).toMatchObject({ target: 8080, published: 18088, host_ip: '127.0.0.1' });
    const mount = proxy.volumes.find((v: string) => v.endsWith(':/etc/nginx/nginx.conf:ro')) as string;
    const nginxConf = fs.readFileSync(path.resolve(ROOT, mount.split(':')[0]), 'utf8');
    expect(nginxConf).toMatch(/server relay-a:8080/);
    expect(nginxConf).toMatch(/server relay-b:8080/);
    expect(nginxConf).toMatch(/listen 8080;/);
    // A POST is retried on the other relay only because deliveries are idempotent.
    expect(nginxConf).toMatch(/proxy_next_upstream [^;]*non_idempotent/);
  });
});

describe('docker-compose.yml, profile ha: two NetBox sources', () => {
  it('gives both relays the same SOURCES_FILE, which the relay accepts as prod and lab, each on its own path and secret', () => {
    const config = composeConfig({ PROD_WEBHOOK_SECRET: 'prod-webhook-s3cret' });
    const [a, b] = ['relay-a', 'relay-b'].map((name) => config.services[name]);
    expect(a.environment).toEqual(b.environment);
    expect(a.volumes).toEqual(b.volumes);
    const mount = (a.volumes as string[]).find((v) => v.endsWith(`:${a.environment.SOURCES_FILE}:ro`))!;
    const sourcesFile = path.resolve(ROOT, mount.split(':')[0]);
    // The relay's own loader reads the mounted file with the service's environment, as the container would.
    const relayConfig = loadConfig(
      { ...a.environment, HOST: '0.0.0.0' },
      {
        readFile: (file) => {
          if (file !== a.environment.SOURCES_FILE) throw Object.assign(new Error('ENOENT'), { code: 'ENOENT' });
          return fs.readFileSync(sourcesFile, 'utf8');
        },
      },
    );
    expect(relayConfig.sources.map((s) => [s.name, s.path, s.secrets, s.tags])).toEqual([
      ['default', '/webhook', ['compose-demo-secret-change-me'], {}],
      ['prod', '/webhook/prod', ['prod-webhook-s3cret'], { env: 'prod' }],
      ['lab', '/webhook/lab', ['compose-demo-lab-secret-change-me'], { env: 'lab' }],
    ]);
  });
});
