import { z } from 'zod';
import { describeZodIssue, readSecretFile, type ConfigIssue } from '../shared';
import type { AnySettingsSchema, SettingLeaf, Settings } from './schema';

/** Replaces each `<NAME>_FILE` by the secret it holds (in `env`); returns what went wrong. */
export function readSecretFiles(env: Record<string, string>, readFile: (file: string) => string, leaves: SettingLeaf[]): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  for (const { name } of leaves.filter((leaf) => leaf.meta.secret)) {
    const fileVar = `${name}_FILE`;
    if (env[name] !== undefined && env[fileVar] !== undefined) {
      issues.push({ variable: name, message: `set either ${name} or ${fileVar}, not both` });
      continue;
    }
    if (env[fileVar] === undefined) continue;
    const value = readSecretFile(readFile, env[fileVar], (message) => issues.push({ variable: fileVar, message }));
    if (value === '') issues.push({ variable: fileVar, message: `file ${env[fileVar]} is empty` });
    else if (value !== undefined) env[name] = value;
  }
  return issues;
}

/** Parsed once per process: zod's compiled fast path pays off only over many parses. */
const ONE_PARSE = { jitless: true } as const;

/** The settings nested (`values`) and by name (`flat`); refused variables (`broken`) are left out and the rest parsed again. */
export function parseSettings(env: Record<string, string>, schema: AnySettingsSchema, leaves: SettingLeaf[]) {
  const done = (values: unknown, broken: ReadonlySet<string>, issues: ConfigIssue[]) => ({
    values: values as Settings,
    flat: Object.fromEntries<unknown>(
      leaves.map((leaf) => [leaf.name, leaf.path.reduce<unknown>((at, key) => (at as Record<string, unknown>)[key], values)]),
    ),
    broken,
    issues,
  });
  const first = schema.safeParse(placeSettings(env, leaves), ONE_PARSE);
  if (first.success) return done(first.data, new Set(), []);
  const issues = first.error.issues.map((issue) => {
    const leaf = leaves.find((l) => l.path.every((key, i) => issue.path[i] === key));
    const name = leaf?.name ?? '';
    const shown = name in env && !leaf?.meta.secret && !/SECRET|PASSWORD|TOKEN/.test(name) ? ` (got "${env[name]}")` : '';
    const message = `${(leaf && describeNumberRange(leaf.schema, issue)) ?? describeZodIssue(issue)}${shown}`;
    return { variable: leaf?.name ?? '(environment)', message };
  });
  const broken = new Set(issues.map((i) => i.variable));
  const rest = Object.fromEntries(Object.entries(env).filter(([key]) => !broken.has(key)));
  // Every field has a default or is optional, so what is left always parses.
  return done(schema.parse(placeSettings(rest, leaves), ONE_PARSE), broken, issues);
}

/** The variables of `env`, each in its field: the nested input the schema parses. */
function placeSettings(env: Record<string, string>, leaves: SettingLeaf[]): Record<string, unknown> {
  type Section = { [key: string]: Section | string };
  const input: Section = {};
  for (const { name, path } of leaves) {
    let at = input;
    for (const key of path.slice(0, -1)) at = (at[key] ??= {}) as Section;
    if (env[name] !== undefined) at[path[path.length - 1]] = env[name];
  }
  return input;
}

/** A numeric variable's whole allowed range, whichever bound or type the value missed ("must be a whole number from 0 to 65535"). */
function describeNumberRange(schema: z.ZodType, issue: z.core.$ZodIssue): string | undefined {
  if (!['invalid_type', 'too_big', 'too_small'].includes(issue.code)) return undefined;
  let field: unknown = schema;
  while (field instanceof z.ZodDefault || field instanceof z.ZodOptional) field = field.unwrap();
  if (!(field instanceof z.ZodNumber)) return undefined;
  const kind = field.isInt ? 'a whole number' : 'a number';
  const { minValue: min, maxValue: max } = field;
  const upper = max !== null && max < Number.MAX_SAFE_INTEGER ? max : undefined;
  if (min !== null && upper !== undefined) return `must be ${kind} from ${min} to ${upper}`;
  return min !== null ? `must be ${kind}, at least ${min}` : `must be ${kind}`;
}
