import { z } from 'zod';
import { parseYamlListFile, readYamlListFile } from '../routing';
import { buildWaiverEnd, DAY_MS, isCalendarDay, parseNewWaiver, type Waiver } from '../waivers';

/** Entries one WAIVERS_FILE holds at most: it is configuration, read once at boot. */
const MAX_FILE_WAIVERS = 1000;

/** Reads WAIVERS_FILE: exceptions kept in git beside the stored ones; every problem is reported ("<file> line N: waiver 2 until: why"). */
export function readWaiversFile(
  context: { file: string; readFile: (file: string) => string; sources: readonly string[] },
  report: (message: string) => void,
): Waiver[] {
  // Each entry checked with every waiver's rules ({@link parseNewWaiver}); one whose until has passed stays, as history.
  const entry = z
    .strictObject({
      source: z.string().optional(),
      test: z.string({ error: 'is required (the test name as NetBox shows it)' }),
      device: z.string().optional(),
      all_devices: z.boolean().optional(),
      until: z.string({ error: 'is required (YYYY-MM-DD)' }),
      reason: z.string().optional(),
      author: z.string({ error: 'is required (who accepted the exception)' }),
      created: z
        .string({ error: 'is required (YYYY-MM-DD: the day the exception was accepted)' })
        .refine(isCalendarDay, 'must be a date as YYYY-MM-DD'),
    })
    .transform((entry, ctx) => {
      const createdAt = buildWaiverEnd(entry.created) - DAY_MS;
      const request = { ...entry, allDevices: entry.all_devices, all_devices: undefined, created: undefined };
      const parsed = parseNewWaiver(request, { sources: context.sources, now: createdAt, createdAt, pastAllowed: true });
      if (parsed.ok) return parsed.waiver;
      // Messages name the file's spelling of a field: `all_devices`, not `allDevices`.
      for (const { path, message } of parsed.issues)
        ctx.addIssue({ code: 'custom', path: [path === 'allDevices' ? 'all_devices' : path], message });
      return z.NEVER;
    });
  const schema = z.strictObject({
    waivers: z.array(entry, { error: 'must be a list of waivers' }).max(MAX_FILE_WAIVERS, `may hold at most ${MAX_FILE_WAIVERS} waivers`),
  });
  const parse = (text: string, file: string) => parseYamlListFile(text, file, schema, { listKey: 'waivers', noun: 'waiver' }).waivers;
  const waivers = readYamlListFile(context.file, context.readFile, parse, report) ?? [];
  return waivers.map((waiver, i) => ({ ...waiver, id: `file:${i + 1}`, origin: 'file', expiredAt: null, expiredBy: null }));
}
