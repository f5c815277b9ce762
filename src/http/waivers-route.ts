import express, { type Request, type Response, type Router } from 'express';
import { RelayError } from '../shared';
import { z } from 'zod';
import { buildWaiverJson, WAIVER_NAME_MAX, WAIVER_STATUSES, type WaiverBook } from '../waivers';
import { optional, parseQuery } from './parse-list-filters';
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
    res.json({ waivers: (await book.list(parseQuery(WaiverQuerySchema, req.query))).map(show) });
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

const nameError = `must be one name (at most ${WAIVER_NAME_MAX} characters)`;
const name = optional(z.string({ error: nameError }).max(WAIVER_NAME_MAX, nameError));
const limitError = 'must be an integer from 1 to 1000';

/** `?status=&source=&test=&device=&limit=` as a filter; anything malformed is a 400 naming the parameter. */
const WaiverQuerySchema = z.object({
  source: name,
  test: name,
  device: name,
  status: optional(z.enum(WAIVER_STATUSES, { error: `must be one of ${WAIVER_STATUSES.join(', ')}` })),
  limit: optional(
    z
      .string({ error: limitError })
      .regex(/^\d{1,4}$/, limitError)
      .transform(Number)
      .refine((n) => n >= 1 && n <= 1000, limitError),
  ),
});
