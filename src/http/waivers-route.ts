import express, { type Request, type Response, type Router } from 'express';
import { RelayError } from '../shared';
import { buildWaiverJson, WAIVER_NAME_MAX, WAIVER_STATUSES, type WaiverBook, type WaiverFilter, type WaiverStatus } from '../waivers';
import { createAdminGuard, type AdminGuardOptions } from './admin-guard';

export interface WaiversRouteOptions extends AdminGuardOptions {
  book: WaiverBook;
}

/**
 * The admin API for accepted exceptions under `/api/waivers` (docs/waivers.md): list, show, add, expire.
 * A WAIVERS_FILE entry is listed but cannot be expired here (409 CONFLICT).
 */
export function createWaiversRouter(options: WaiversRouteOptions): Router {
  const router = express.Router();
  const { book } = options;
  const show = (waiver: Parameters<typeof buildWaiverJson>[0]) => buildWaiverJson(waiver, options.clock.now());
  router.use('/api/waivers', createAdminGuard(options), express.json({ limit: '16kb', strict: true }));

  router.get('/api/waivers', async (req: Request, res: Response) => {
    res.json({ waivers: (await book.list(parseWaiverQuery(req.query))).map(show) });
  });

  router.post('/api/waivers', async (req: Request, res: Response) => {
    const waiver = await book.add(req.body);
    res.status(201).json({ waiver: show(waiver) });
  });

  router.get('/api/waivers/:id', async (req: Request, res: Response) => {
    const waiver = await book.get(String(req.params.id));
    if (!waiver) throw new RelayError('NOT_FOUND', { message: `No waiver ${String(req.params.id)}.` });
    res.json({ waiver: show(waiver) });
  });

  router.post('/api/waivers/:id/expire', async (req: Request, res: Response) => {
    const author = (req.body as { author?: unknown } | undefined)?.author;
    const waiver = await book.expire(String(req.params.id), typeof author === 'string' ? author : '');
    res.json({ waiver: show(waiver) });
  });
  return router;
}

/** `?status=&source=&test=&device=&limit=` as a filter; anything malformed is a 400 naming the parameter. */
function parseWaiverQuery(query: Record<string, unknown>): Omit<WaiverFilter, 'at'> {
  const issues: { path: string; message: string }[] = [];
  const text = (name: 'source' | 'test' | 'device') => {
    const value = query[name];
    if (value === undefined || value === '') return undefined;
    if (typeof value === 'string' && value.length <= WAIVER_NAME_MAX) return value;
    issues.push({ path: name, message: `must be one name (at most ${WAIVER_NAME_MAX} characters)` });
  };
  const filter: Omit<WaiverFilter, 'at'> = { source: text('source'), test: text('test'), device: text('device') };
  const { status, limit } = query;
  if (status !== undefined && status !== '') {
    if ((WAIVER_STATUSES as readonly unknown[]).includes(status)) filter.status = status as WaiverStatus;
    else issues.push({ path: 'status', message: `must be one of ${WAIVER_STATUSES.join(', ')}` });
  }
  if (limit !== undefined && limit !== '') {
    const n = typeof limit === 'string' && /^\d{1,4}$/.test(limit) ? Number(limit) : 0;
    if (n >= 1 && n <= 1000) filter.limit = n;
    else issues.push({ path: 'limit', message: 'must be an integer from 1 to 1000' });
  }
  if (issues.length > 0) throw new RelayError('INVALID_REQUEST', { issues });
  for (const key of Object.keys(filter) as (keyof typeof filter)[]) if (filter[key] === undefined) delete filter[key];
  return filter;
}
