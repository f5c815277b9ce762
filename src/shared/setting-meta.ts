import type { z } from 'zod';

/** Where a setting is documented, in this order: `advanced` holds knobs that are rarely right to change. */
export const SETTING_GROUPS = {
  basics: 'Basics',
  features: 'Optional features',
  provider: 'OAuth2 and Microsoft Graph',
  advanced: 'Advanced',
} as const;

export type SettingGroup = keyof typeof SETTING_GROUPS;

/** What the reference, .env.example and `check-config` say of one setting. */
export interface SettingMeta {
  /** The environment variable, when the field it sets is named otherwise (a section's own settings are named by their keys). */
  env?: string;
  group: SettingGroup;
  /** One line: what it does, with its unit when the name does not carry it. */
  description: string;
  /** The default in words when the schema cannot hold it (derived from other settings). */
  defaultText?: string;
  /** The values accepted, in words, when the schema's type cannot say them (a list of forms checked by a library). */
  allowedText?: string;
  /** A value to show in .env.example when there is no default. */
  example?: string;
  /** Holds a secret: accepted as `<NAME>_FILE` too (never both), masked in logs, redacted wherever shown. */
  secret?: true;
}

/** One setting: its type, default and allowed values (the schema) with its group and description. */
export function setting<T extends z.ZodType>(schema: T, meta: SettingMeta): T {
  return schema.meta({ ...meta });
}

/** One problem with the configuration, named by its variable. */
export type ConfigIssue = { variable: string; message: string };

/** The secret `file` holds (`<NAME>_FILE`, a source's `<field>_file`, OAuth2's key files), or undefined with why it could not be read. */
export function readSecretFile(readFile: (file: string) => string, file: string, report: (message: string) => void): string | undefined {
  try {
    // A trailing newline is almost always an editor's, not part of the secret.
    return readFile(file).replace(/\r?\n$/, '');
  } catch (error) {
    report(`cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`);
    return undefined;
  }
}
