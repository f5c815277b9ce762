import { z } from 'zod';
import { describeZodIssue, type ConfigIssue, type ZodIssueFacts } from '../shared';
import { EnvSchema, listSecretVariables, type Env, type SettingsSchema } from './schema';

/** Replaces each `<NAME>_FILE` by the secret it holds (in `env`); returns what went wrong. */
export function readSecretFiles(env: Record<string, string>, readFile: (file: string) => string, schema: SettingsSchema): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  for (const name of listSecretVariables(schema)) {
    const fileVar = `${name}_FILE`;
    if (env[name] !== undefined && env[fileVar] !== undefined) {
      issues.push({ variable: name, message: `set either ${name} or ${fileVar}, not both` });
      continue;
    }
    if (env[fileVar] !== undefined) {
      try {
        // A trailing newline is almost always an editor's, not part of the secret.
        const value = readFile(env[fileVar]).replace(/\r?\n$/, '');
        if (value === '') issues.push({ variable: fileVar, message: `file ${env[fileVar]} is empty` });
        else env[name] = value;
      } catch (error) {
        issues.push({ variable: fileVar, message: `cannot read ${env[fileVar]}: ${(error as NodeJS.ErrnoException).code ?? 'error'}` });
      }
    }
  }
  return issues;
}

/** The environment is parsed once per process: zod's eval fast path compiles a parser per object schema and pays only over many parses. */
const ONE_PARSE = { jitless: true } as const;

/**
 * The schema stage. Variables the schema refuses are reported and left out (`broken`), and the rest is
 * parsed again without them, so the semantic stage still sees every value that is valid.
 */
export function parseEnvironment(
  env: Record<string, string>,
  schema: SettingsSchema = EnvSchema,
): { values: Env; broken: ReadonlySet<string>; issues: ConfigIssue[] } {
  const first = schema.safeParse(env, ONE_PARSE);
  if (first.success) return { values: first.data as Env, broken: new Set(), issues: [] };
  const issues = first.error.issues.map((issue) => ({
    variable: String(issue.path[0] ?? '(environment)'),
    message: describeIssue(issue, env, schema),
  }));
  const broken = new Set(issues.map((i) => i.variable));
  const rest = Object.fromEntries(Object.entries(env).filter(([key]) => !broken.has(key)));
  // Every field has a default or is optional, so what is left always parses.
  return { values: schema.parse(rest, ONE_PARSE) as Env, broken, issues };
}

function describeIssue(issue: ZodIssueFacts & { path: PropertyKey[] }, env: Record<string, string>, schema: SettingsSchema): string {
  const name = String(issue.path[0] ?? '');
  const shown = name in env && !/SECRET|PASSWORD|TOKEN|DATABASE_URL/.test(name) ? ` (got "${env[name]}")` : '';
  return `${describeNumberRange(name, issue, schema) ?? describeZodIssue(issue)}${shown}`;
}

/** A numeric variable's whole allowed range, whichever bound or type the value missed ("must be a whole number from 0 to 65535"). */
function describeNumberRange(name: string, issue: ZodIssueFacts, schema: SettingsSchema): string | undefined {
  if (!['invalid_type', 'too_big', 'too_small'].includes(issue.code ?? '')) return undefined;
  let field: unknown = schema.shape[name];
  while (field instanceof z.ZodDefault || field instanceof z.ZodOptional) field = field.unwrap();
  if (!(field instanceof z.ZodNumber)) return undefined;
  const kind = field.isInt ? 'a whole number' : 'a number';
  const { minValue: min, maxValue: max } = field;
  const upper = max !== null && max < Number.MAX_SAFE_INTEGER ? max : undefined;
  if (min !== null && upper !== undefined) return `must be ${kind} from ${min} to ${upper}`;
  return min !== null ? `must be ${kind}, at least ${min}` : `must be ${kind}`;
}
