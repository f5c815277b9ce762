import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { SourceConfig } from '../config';
import { createNetboxClient, NetboxError } from '../netbox';
import type { ProxySettings } from '../shared';
import { DEFAULT_SOURCE_NAME } from '../webhook';

/** The validity report's object type, as NetBox names it in `content_types` / `object_types`. */
const REPORT_OBJECT_TYPE = 'validity.compliancereport';

/**
 * How each NetBox version (major × 100 + minor: 4.1 is 401) wants a webhook triggered (NETBOX.md, "Creating the webhook"):
 * up to 3.6 on the webhook itself, from 3.7 by an event rule.
 */
const SETUP_FORMS = [
  {
    upTo: 306,
    description: 'NetBox ≤ 3.6: the webhook itself is triggered (type_create + content_types)',
    trigger: { content_types: [REPORT_OBJECT_TYPE], type_create: true },
  },
  {
    upTo: 307,
    description: 'NetBox 3.7: an event rule (type_create + content_types) triggers the webhook',
    trigger: { content_types: [REPORT_OBJECT_TYPE], type_create: true },
  },
  {
    upTo: 400,
    description: 'NetBox 4.0: an event rule (type_create + object_types) triggers the webhook',
    trigger: { object_types: [REPORT_OBJECT_TYPE], type_create: true },
  },
  {
    upTo: Infinity,
    description: 'NetBox ≥ 4.1: an event rule (event_types object_created) triggers the webhook',
    trigger: { object_types: [REPORT_OBJECT_TYPE], event_types: ['object_created'] },
  },
];
type SetupForm = (typeof SETUP_FORMS)[number];

export interface NetboxSetupFlags {
  payloadUrl: string;
  secretFile?: string;
  dryRun?: boolean;
  showSecret?: boolean;
  /** Name of the webhook and of its event rule (found by it, so a second run updates instead of adding). */
  name: string;
  source?: string;
}

type Print = (line: string) => void;

/** What a run did to one NetBox object (`id` null: a dry run that would create it; `changed`: created or updated). */
type Applied = { id: number | null; changed: boolean };

/** Why the setup stopped: `kind` picks the exit code (config: fix something; unavailable: try again). */
export class NetboxSetupError extends Error {
  readonly kind: 'config' | 'unavailable';
  constructor(kind: NetboxSetupError['kind'], message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.kind = kind;
  }
}

type NamedObject = { id: number; [field: string]: unknown };
type Fields = Record<string, unknown>;
type Secret = { value: string; source?: 'file' | 'config'; writeTo?: string };

const LIST_PATHS = { Webhook: '/api/extras/webhooks/', 'Event rule': '/api/extras/event-rules/' };
type SetupObject = keyof typeof LIST_PATHS;

type NetboxApi = <T>(method: 'GET' | 'POST' | 'PATCH', path: string, body?: object) => Promise<T>;
type Run = { api: NetboxApi; url: string; flags: NetboxSetupFlags; print: Print };

const CALL_TIMEOUT_MS = 15_000;

/** `netbox-setup`: by NetBox's version, creates or updates (by name) the webhook and its trigger; a rerun writes nothing new. */
export async function runNetboxSetup(
  flags: NetboxSetupFlags,
  target: { source: SourceConfig; ca?: Buffer; proxy: ProxySettings },
  print: Print,
): Promise<void> {
  const { url, token } = target.source.netbox as { url: string; token: string };
  const client = createNetboxClient({ url, token, ca: target.ca, proxy: target.proxy, timeoutMs: CALL_TIMEOUT_MS });
  const api: NetboxApi = async <T>(method: 'GET' | 'POST' | 'PATCH', path: string, body?: object) => {
    const budget = { deadline: Date.now() + CALL_TIMEOUT_MS };
    try {
      return (await (method === 'GET' ? client.getJson(path, budget) : client.sendJson(method, path, body ?? {}, budget))) as T;
    } catch (error) {
      throw error instanceof NetboxError ? toSetupError(`${method} ${path}`, error) : error;
    }
  };
  try {
    const status = await api<Record<string, unknown>>('GET', '/api/status/');
    const version = /^v?(\d+)\.(\d+)/.exec(typeof status?.['netbox-version'] === 'string' ? status['netbox-version'].trim() : '');
    if (!version)
      throw new NetboxSetupError(
        'config',
        `${url}/api/status/ does not name a NetBox version: is NETBOX_URL the NetBox address (with its base path)?`,
      );
    const plugins = (status['plugins'] ?? {}) as Record<string, unknown>;
    const validity = plugins['validity'];
    if (typeof validity !== 'string') {
      const installed = Object.keys(plugins);
      throw new NetboxSetupError(
        'config',
        `the validity plugin is not installed in NetBox ${version.input} (installed plugins: ${installed.length ? installed.join(', ') : 'none'}). Install and enable validity first: the relay mails its compliance reports.`,
      );
    }
    const form = SETUP_FORMS.find((f) => Number(version[1]) * 100 + Number(version[2]) <= f.upTo)!;
    print(`NetBox ${version.input} with validity ${validity}: ${form.description}.`);

    const existingWebhook = await findByName(api, 'Webhook', flags.name);
    const secret = resolveSecret(flags, target.source.secrets[0], existingWebhook);

    // The file first: if NetBox then fails, a rerun finds the same secret there and finishes the job.
    const secretWritten = secret.writeTo !== undefined && !flags.dryRun;
    const giveIt = (file: string) =>
      target.source.name === DEFAULT_SOURCE_NAME
        ? `WEBHOOK_SECRET_FILE=${file}`
        : `webhook_secret_file: ${file} in source ${target.source.name} of SOURCES_FILE`;
    if (secretWritten) {
      fs.mkdirSync(path.dirname(secret.writeTo!), { recursive: true });
      // 'wx': never overwrite a secret someone else wrote; mode 0600: readable by its owner only.
      fs.writeFileSync(secret.writeTo!, `${secret.value}\n`, { mode: 0o600, flag: 'wx' });
      print(`Secret written to ${secret.writeTo} (mode 0600). Give it to the relay: ${giveIt(secret.writeTo!)}`);
    } else if (secret.writeTo) {
      print(`Would write the secret to ${secret.writeTo} (mode 0600).`);
    } else if (secret.source === 'config') {
      print("The webhook uses the relay's configured secret: the relay needs nothing more.");
    } else if (secret.source === 'file') {
      print(`The webhook uses the secret in ${flags.secretFile}. Give it to the relay: ${giveIt(flags.secretFile!)}`);
    }

    const run = { api, url, flags, print };
    const webhookFields = buildWebhookFields(form, flags.name, flags.payloadUrl, secret.value);
    const webhook = await applyObject(run, 'Webhook', existingWebhook, webhookFields);
    let eventRule: Applied | undefined;
    if (form !== SETUP_FORMS[0]) {
      const existingRule = await findByName(api, 'Event rule', flags.name);
      eventRule = await applyObject(run, 'Event rule', existingRule, buildEventRuleFields(form, flags.name, webhook.id ?? -1));
    }

    if (flags.showSecret) print(`Secret: ${secret.value}`);

    const changed = webhook.changed || eventRule?.changed === true || secretWritten;
    if (flags.dryRun) print('Dry run: nothing was changed.');
    else if (!changed) print('Nothing changed: NetBox is already set up.');
    else print(`Done. Run "Run Compliance Tests" in NetBox: the relay at ${flags.payloadUrl} will receive the report.`);
  } finally {
    client.close();
  }
}

/** The webhook's fields: no body template, as the relay verifies and parses NetBox's own JSON; TLS verification on. */
function buildWebhookFields(form: SetupForm, name: string, payloadUrl: string, secret: string): Fields {
  const fields = {
    name,
    payload_url: payloadUrl,
    http_method: 'POST',
    http_content_type: 'application/json',
    body_template: '',
    secret,
    ssl_verification: true,
  };
  return form === SETUP_FORMS[0] ? { ...fields, ...form.trigger, enabled: true } : fields;
}

/** The event rule's fields (NetBox ≥ 3.7), targeted with `action_object_id` (`action_object` is read-only). */
function buildEventRuleFields(form: SetupForm, name: string, webhookId: number): Fields {
  const target = { action_type: 'webhook', action_object_type: 'extras.webhook', action_object_id: webhookId, enabled: true };
  return { name, ...form.trigger, ...target };
}

async function findByName(api: NetboxApi, what: SetupObject, name: string): Promise<NamedObject | undefined> {
  const page = await api<{ results?: NamedObject[] }>('GET', `${LIST_PATHS[what]}?name=${encodeURIComponent(name)}&limit=10`);
  // The filter is exact in every version; the comparison guards against a NetBox that ignores it.
  return (page?.results ?? []).find((o) => o.name === name);
}

/**
 * The webhook's secret: the relay's configured one, --secret-file's, the existing webhook's (a rerun keeps deliveries
 * working), or a new one; one not in a file yet is written to --secret-file.
 */
function resolveSecret(flags: NetboxSetupFlags, configured: string | undefined, existing: NamedObject | undefined): Secret {
  const file = flags.secretFile;
  const fromFile = file && fs.existsSync(file) ? fs.readFileSync(file, 'utf8').replace(/\r?\n$/, '') : undefined;
  if (configured) {
    if (fromFile && fromFile !== configured)
      throw new NetboxSetupError(
        'config',
        `${flags.secretFile} holds another secret than the relay's configured one: NetBox and the relay must share one. Drop --secret-file to use the relay's`,
      );
    return { value: configured, source: 'config' };
  }
  if (fromFile) return { value: fromFile, source: 'file' };
  if (!flags.secretFile && !flags.showSecret) {
    throw new NetboxSetupError(
      'config',
      'the webhook needs a secret the relay also knows: set WEBHOOK_SECRET (or WEBHOOK_SECRET_FILE), give --secret-file FILE (written there, mode 0600, for WEBHOOK_SECRET_FILE), or pass --show-secret',
    );
  }
  const current = typeof existing?.secret === 'string' && existing.secret !== '' ? existing.secret : undefined;
  return { value: current ?? randomBytes(32).toString('hex'), writeTo: flags.secretFile };
}

async function applyObject(run: Run, what: SetupObject, existing: NamedObject | undefined, desired: Fields): Promise<Applied> {
  const { api, url, flags, print } = run;
  const listPath = LIST_PATHS[what];
  const wouldSend = (method: string, path: string, body: Fields) => {
    const shown =
      flags.showSecret || typeof body.secret !== 'string' ? body : { ...body, secret: `[${body.secret.length} characters, not shown]` };
    print(`Would send: ${method} ${url}${path} ${JSON.stringify(shown)}`);
  };
  if (!existing) {
    if (flags.dryRun) {
      wouldSend('POST', listPath, desired);
      return { id: null, changed: true };
    }
    const created = await api<NamedObject>('POST', listPath, desired);
    print(`${what} "${flags.name}": created (id ${created.id}).`);
    return { id: created.id, changed: true };
  }
  const changes = diffFields(existing, desired);
  const fields = Object.keys(changes);
  if (fields.length === 0) {
    print(`${what} "${flags.name}": unchanged (id ${existing.id}).`);
    return { id: existing.id, changed: false };
  }
  const path = `${listPath}${existing.id}/`;
  if (flags.dryRun) {
    wouldSend('PATCH', path, changes);
  } else {
    await api('PATCH', path, changes);
    print(`${what} "${flags.name}": updated ${fields.join(', ')} (id ${existing.id}).`);
  }
  return { id: existing.id, changed: true };
}

/** The fields of `desired` that differ from NetBox's (choices come as `{value, label}`, lists in any order). */
function diffFields(existing: Fields, desired: Fields): Fields {
  const same = (have: unknown, want: unknown) => JSON.stringify(normalise(have)) === JSON.stringify(normalise(want));
  return Object.fromEntries(Object.entries(desired).filter(([key, want]) => !same(existing[key], want)));
}

function normalise(value: unknown): unknown {
  if (value && typeof value === 'object' && !Array.isArray(value) && 'value' in value) return value.value;
  if (Array.isArray(value)) return value.map((v) => JSON.stringify(normalise(v))).sort();
  return value ?? null;
}

/** Turns a failed call into what the operator can do about it: a network failure may pass, a refusal needs a fix. */
function toSetupError(call: string, error: NetboxError): NetboxSetupError {
  const { status, detail } = error;
  const said = status === undefined ? `${call}: ${error.message}` : `${call}: NetBox answered ${status}${detail ? `: ${detail}` : ''}`;
  const fail = (kind: NetboxSetupError['kind'], hint: string) => new NetboxSetupError(kind, `${said}.${hint}`, { cause: error });
  if (status === undefined && error.retryable) return fail('unavailable', ' Check NETBOX_URL and that this host can reach NetBox.');
  if (status === 401 || status === 403)
    return fail(
      'config',
      ' NETBOX_TOKEN must be valid and allowed to write: it needs add/change permission on extras.webhook and extras.eventrule (and the token\'s "write enabled" box).',
    );
  if (status === 404) return fail('config', ' Is NETBOX_URL the NetBox address, with its base path?');
  if (status !== undefined && (status >= 500 || status === 429)) return fail('unavailable', ' Try again later.');
  return fail('config', '');
}
