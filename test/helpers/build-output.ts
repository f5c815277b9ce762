import fs from 'node:fs';
import path from 'node:path';

/** A file `npm run build` writes (it is not in git): its text, or one clear line saying to build first. */
export function readBuildOutput(file: string): string {
  if (!fs.existsSync(file)) throw new Error(`${path.basename(file)} is written by \`npm run build\`: run it first`);
  return fs.readFileSync(file, 'utf8');
}
