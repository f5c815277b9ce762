import { createNetboxClient, NetboxError } from '../netbox';
import type { ProxySettings } from '../shared';
import { buildEventRuleFields, buildWebhookFields, describeSetupForm, diffFields, parseNetboxVersion, selectSetupForm } from './plan-setup';

export interface NetboxSetupOptions {
  netboxUrl: string;
  token: string;
  /** Where NetBox will POST: the relay's public webhook URL. */
  payloadUrl: string;
  /** Name of the webhook and of its event rule (found by it, so a second run updates instead of adding). */
  name: string;
  /** Where the secret is kept (read when it exists, written with mode 0600 when it does not). */
  secretFile?: string;
  /** WEBHOOK_SECRET from the relay's configuration, when it has one. */
  configuredSecret?: string;
  /** The named source being set up (SOURCES_FILE); absent for the default one (the WEBHOOK_SECRET variables). */
  sourceName?: string;
  dryRun: boolean;
  showSecret: boolean;
  /** NETBOX_CA_FILE's contents, and the environment's proxies: reached as the relay's own NetBox client reaches it. */
  ca?: string | Buffer;
  proxy?: ProxySettings;
}

export interface NetboxSetupIo {
  print: (line: string) => void;
  /** The secret file's content, or undefined when it does not exist. */
  readSecretFile: (file: string) => string | undefined;
  /** Creates the file with mode 0600; fails if it exists. */
  writeSecretFile: (file: string, secret: string) => void;
  generateSecret: () => string;
}

/** What a run did to one NetBox object (`id` null: a dry run that would create it). */
interface Applied {
  id: number | null;
  action: 'created' | 'updated' | 'unchanged';
}

/** Why the setup stopped: `kind` picks the exit code (config: fix something; unavailable: try again). */
export class NetboxSetupError extends Error {
  readonly kind: 'config' | 'unavailable';
  constructor(kind: 'config' | 'unavailable', message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'NetboxSetupError';
    this.kind = kind;
  }
}

interface NamedObject {
  id: number;
  [field: string]: unknown;
}

/** One NetBox API call; a failure becomes a NetboxSetupError naming the call. */
type NetboxApi = <T>(method: 'GET' | 'POST' | 'PATCH', path: string, body?: object) => Promise<T>;

/** How long one call to NetBox may take. */
const CALL_TIMEOUT_MS = 15_000;

/**
 * `compliance-relay netbox-setup`: reads NetBox's and validity's versions from /api/status/, then
 * creates or updates (found by name) the webhook and what triggers it, in the form that version
 * needs. A second run with the same inputs sends no write and says so. `--dry-run` still reads
 * NetBox (to know what would change) but prints the writes instead of sending them.
 */
export async function runNetboxSetup(options: NetboxSetupOptions, io: NetboxSetupIo): Promise<void> {
  const { netboxUrl: url, token, ca, proxy } = options;
  const client = createNetboxClient({ url, token, ca, proxy, timeoutMs: CALL_TIMEOUT_MS });
  const api: NetboxApi = async <T>(method: 'GET' | 'POST' | 'PATCH', path: string, body?: object) => {
    const budget = { deadline: Date.now() + CALL_TIMEOUT_MS };
    try {
      return (await (method === 'GET' ? client.getJson(path, budget) : client.sendJson(method, path, body ?? {}, budget))) as T;
    } catch (error) {
      throw error instanceof NetboxError ? toSetupError(`${method} ${path}`, error) : error;
    }
  };
  const print = io.print;
  try {
    const status = await api<Record<string, unknown>>('GET', '/api/status/');
    const version = parseNetboxVersion(status?.['netbox-version']);
    if (!version)
      throw new NetboxSetupError(
        'config',
        `${options.netboxUrl}/api/status/ does not name a NetBox version: is NETBOX_URL the NetBox address (with its base path)?`,
      );
    const plugins = (status['plugins'] ?? {}) as Record<string, unknown>;
    const validity = plugins['validity'];
    if (typeof validity !== 'string') {
      const installed = Object.keys(plugins);
      throw new NetboxSetupError(
        'config',
        `the validity plugin is not installed in NetBox ${version.text} (installed plugins: ${installed.length ? installed.join(', ') : 'none'}). Install and enable validity first: the relay mails its compliance reports.`,
      );
    }
    const form = selectSetupForm(version);
    print(`NetBox ${version.text} with validity ${validity}: ${describeSetupForm(form)}.`);

    const existingWebhook = await findByName(api, '/api/extras/webhooks/', options.name);
    const secret = resolveSecret(options, io, existingWebhook);

    // The file first: if NetBox then fails, a rerun finds the same secret there and finishes the job.
    const secretWritten = secret.writeTo !== undefined && !options.dryRun;
    if (secretWritten) {
      io.writeSecretFile(secret.writeTo!, secret.value);
      print(`Secret written to ${secret.writeTo} (mode 0600). Give it to the relay: ${describeSecretSetting(secret.writeTo!, options)}`);
    } else if (secret.writeTo) {
      print(`Would write the secret to ${secret.writeTo} (mode 0600).`);
    } else if (secret.source === 'config') {
      print("The webhook uses the relay's configured secret: the relay needs nothing more.");
    } else if (secret.source === 'file') {
      print(
        `The webhook uses the secret in ${options.secretFile}. Give it to the relay: ${describeSecretSetting(options.secretFile!, options)}`,
      );
    }

    const webhookFields = buildWebhookFields(form, { name: options.name, payloadUrl: options.payloadUrl, secret: secret.value });
    const webhook = await applyObject(api, io, options, 'Webhook', '/api/extras/webhooks/', existingWebhook, webhookFields);

    let eventRule: Applied | undefined;
    const ruleFields = buildEventRuleFields(form, { name: options.name, webhookId: webhook.id ?? -1 });
    if (ruleFields) {
      const existingRule = await findByName(api, '/api/extras/event-rules/', options.name);
      eventRule = await applyObject(api, io, options, 'Event rule', '/api/extras/event-rules/', existingRule, ruleFields);
    }

    if (options.showSecret) print(`Secret: ${secret.value}`);

    const changed = webhook.action !== 'unchanged' || (eventRule !== undefined && eventRule.action !== 'unchanged') || secretWritten;
    if (options.dryRun) print('Dry run: nothing was changed.');
    else if (!changed) print('Nothing changed: NetBox is already set up.');
    else print(`Done. Run "Run Compliance Tests" in NetBox: the relay at ${options.payloadUrl} will receive the report.`);
  } finally {
    client.close();
  }
}

/** The object named `name` at `listPath`, if NetBox has one (names are unique). */
async function findByName(api: NetboxApi, listPath: string, name: string): Promise<NamedObject | undefined> {
  const page = await api<{ results?: NamedObject[] }>('GET', `${listPath}?name=${encodeURIComponent(name)}&limit=10`);
  // The filter is exact in every version; the comparison guards against a NetBox that ignores it.
  return (page?.results ?? []).find((o) => o.name === name);
}

/**
 * Which secret the webhook gets, in order: the relay's configured secret (WEBHOOK_SECRET or
 * WEBHOOK_SECRET_FILE: the relay takes one of the two, so nothing is written then), the
 * --secret-file's content, the secret the existing webhook already has (so a rerun keeps working
 * deliveries working), or a new one. A secret that is not in a file yet is written to --secret-file
 * (default: none, then it must be shown).
 */
function resolveSecret(
  options: NetboxSetupOptions,
  io: NetboxSetupIo,
  existing: NamedObject | undefined,
): { value: string; source: 'file' | 'config' | 'netbox' | 'generated'; writeTo?: string } {
  const fromFile = options.secretFile ? io.readSecretFile(options.secretFile)?.replace(/\r?\n$/, '') : undefined;
  if (options.configuredSecret) {
    if (fromFile && fromFile !== options.configuredSecret)
      throw new NetboxSetupError(
        'config',
        `${options.secretFile} holds another secret than the relay's configured one: NetBox and the relay must share one. Drop --secret-file to use the relay's`,
      );
    return { value: options.configuredSecret, source: 'config' };
  }
  if (fromFile) return { value: fromFile, source: 'file' };
  const current = typeof existing?.secret === 'string' && existing.secret !== '' ? existing.secret : undefined;
  const found = current ? { value: current, source: 'netbox' as const } : { value: io.generateSecret(), source: 'generated' as const };
  if (!options.secretFile && !options.showSecret) {
    throw new NetboxSetupError(
      'config',
      'the webhook needs a secret the relay also knows: set WEBHOOK_SECRET (or WEBHOOK_SECRET_FILE), give --secret-file FILE (written there, mode 0600, for WEBHOOK_SECRET_FILE), or pass --show-secret',
    );
  }
  return { ...found, writeTo: options.secretFile };
}

async function applyObject(
  api: NetboxApi,
  io: NetboxSetupIo,
  options: NetboxSetupOptions,
  what: 'Webhook' | 'Event rule',
  listPath: string,
  existing: NamedObject | undefined,
  desired: Record<string, unknown>,
): Promise<Applied> {
  const shown = (body: Record<string, unknown>) => JSON.stringify(redactSecret(body, options.showSecret));
  if (!existing) {
    if (options.dryRun) {
      io.print(`Would send: POST ${options.netboxUrl}${listPath} ${shown(desired)}`);
      return { id: null, action: 'created' };
    }
    const created = await api<NamedObject>('POST', listPath, desired);
    io.print(`${what} "${options.name}": created (id ${created.id}).`);
    return { id: created.id, action: 'created' };
  }
  const changes = diffFields(existing, desired);
  const fields = Object.keys(changes);
  if (fields.length === 0) {
    io.print(`${what} "${options.name}": unchanged (id ${existing.id}).`);
    return { id: existing.id, action: 'unchanged' };
  }
  const path = `${listPath}${existing.id}/`;
  if (options.dryRun) {
    io.print(`Would send: PATCH ${options.netboxUrl}${path} ${shown(changes)}`);
  } else {
    await api('PATCH', path, changes);
    io.print(`${what} "${options.name}": updated ${fields.join(', ')} (id ${existing.id}).`);
  }
  return { id: existing.id, action: 'updated' };
}

function redactSecret(body: Record<string, unknown>, show: boolean): Record<string, unknown> {
  if (show || typeof body.secret !== 'string') return body;
  return { ...body, secret: `[${body.secret.length} characters, not shown]` };
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

/** How the relay is told to read the secret from `file`: a variable for the default source, a SOURCES_FILE field for a named one. */
function describeSecretSetting(file: string, options: NetboxSetupOptions): string {
  return options.sourceName
    ? `webhook_secret_file: ${file} in source ${options.sourceName} of SOURCES_FILE`
    : `WEBHOOK_SECRET_FILE=${file}`;
}
