import { formatRoutesIssue, parseRoutesFile, RoutesFileError, type Route } from '../routing';
import type { ConfigIssue } from './config-issue';

/** The routes file, parsed; its problems (each with route, field and line) are pushed onto `issues`. */
export function readRoutes(routesFile: string, readFile: (file: string) => string, issues: ConfigIssue[]): Route[] | undefined {
  try {
    return parseRoutesFile(readFile(routesFile), routesFile);
  } catch (error) {
    if (error instanceof RoutesFileError) {
      for (const issue of error.issues) issues.push({ variable: 'ROUTES_FILE', message: `${routesFile} ${formatRoutesIssue(issue)}` });
    } else {
      issues.push({
        variable: 'ROUTES_FILE',
        message: `cannot read ${routesFile}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
      });
    }
    return undefined;
  }
}
