import path from 'node:path';
import { findPackageRoot } from '../shared';

/** The templates shipped with the package. */
export function defaultTemplatesDir(): string {
  return path.join(findPackageRoot(), 'templates');
}
