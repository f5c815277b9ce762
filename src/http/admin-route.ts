import express, { type Request, type Response, type Router } from 'express';
import { z } from 'zod';
import { buildDeliveriesJson, buildSentMailsJson, sendKeptMail } from './build-delivery-json';
import { createAdminGuard } from './admin-guard';
import type { AppDeps } from './app-deps';
import { optional, parseListFilters, parseQuery, wholeNumber } from './parse-list-filters';
import { createSecretMask, RelayError } from '../shared';
import { buildWaiverJson, WAIVER_NAME_MAX, WAIVER_STATUSES } from '../waivers';

/** The admin API (docs/admin-api.md) behind one guard: `/api/deliveries` and `/api/waivers` (docs/waivers.md). */
export function createAdminRouter(options: AppDeps): Router {
  const router = express.Router();
  const { store } = options;
  const mask = createSecretMask(options.config.secretValues);
  const show = async (record: Parameters<typeof buildDeliveriesJson>[1][number]) => (await buildDeliveriesJson(store, [record], mask))[0];

  router.use(['/api/deliveries', '/api/waivers'], createAdminGuard(options));

  router.get('/api/deliveries', async (req: Request, res: Response) => {
    // The dashboard's filters; `from` and `to` are UTC days, as the answer's times are UTC.
    const filters = parseListFilters(req.query, 'UTC');
    if (!filters.ok) throw new RelayError('INVALID_REQUEST', { issues: filters.issues });
    const limit = filters.options.limit ?? 100;
    const [records, { counts }] = await Promise.all([store.listDeliveries({ ...filters.options, limit }), store.readQueue()]);
    res.json({
      deliveries: await buildDeliveriesJson(store, records, mask),
      counts,
      nextBefore: records.length === limit ? records[records.length - 1].id : null,
    });
  });

  router.post('/api/deliveries/retry-dead', async (_req: Request, res: Response) => {
    const requeued = await store.requeue(options.clock.now());
    options.logger.info({ requeued }, `admin API: requeued ${requeued} dead deliveries`);
    if (requeued > 0) options.worker.kick();
    res.json({ requeued });
  });

  // The fix is in (a password, a certificate): the queue probes with its oldest delivery now, not at the pause's end.
  router.post('/api/deliveries/resume', async (_req: Request, res: Response) => {
    const result = await options.worker.tryNow();
    // The key stays `smtp` whatever the transport: operators' scripts read this answer (and this log line) as 1.0 wrote them.
    options.logger.info({ smtp: result }, 'admin API: resume asked');
    res.json({ smtp: result });
  });

  router.get('/api/deliveries/:id', async (req: Request, res: Response) => {
    const record = await store.getDelivery(parseQuery(DeliveryIdSchema, req.params).id);
    if (!record) throw new RelayError('NOT_FOUND', { message: `No delivery ${String(req.params.id)}.` });
    const mails = buildSentMailsJson(record.id, await store.listSentMessages(record.id), mask);
    res.json({ delivery: { ...(await show(record)), mails } });
  });

  // One route's kept mail, byte for byte (`route` as listed in `mails`; `""` for a copy kept before routes were recorded).
  router.get('/api/deliveries/:id/message.eml', async (req: Request, res: Response) => {
    const { id } = parseQuery(DeliveryIdSchema, req.params);
    const { route } = parseQuery(RouteSchema, req.query);
    const sent = await store.getSentMessage(id, route);
    if (!sent) throw new RelayError('NOT_FOUND', { message: `Delivery ${id} has no kept mail for route "${route}".` });
    sendKeptMail(res, id, sent);
  });

  router.post('/api/deliveries/:id/retry', async (req: Request, res: Response) => {
    const { id } = parseQuery(DeliveryIdSchema, req.params);
    const requeued = await store.requeue(options.clock.now(), id);
    const record = await store.getDelivery(id);
    if (!record) throw new RelayError('NOT_FOUND', { message: `No delivery ${id}.` });
    if (requeued === 0)
      throw new RelayError('CONFLICT', { message: `Delivery ${id} is ${record.state}: only dead or sent deliveries can be requeued.` });
    options.logger.info({ deliveryId: id }, 'admin API: delivery requeued');
    options.worker.kick();
    res.json({ delivery: await show(record) });
  });

  // A WAIVERS_FILE entry is listed but cannot be expired here (409 CONFLICT).
  const book = options.waivers;
  const showWaiver = (waiver: Parameters<typeof buildWaiverJson>[0]) => buildWaiverJson(waiver, options.clock.now());
  router.use('/api/waivers', express.json({ limit: '16kb', strict: true }));

  router.get('/api/waivers', async (req: Request, res: Response) => {
    res.json({ waivers: (await book.list(parseQuery(WaiverQuerySchema, req.query))).map(showWaiver) });
  });

  router.post('/api/waivers', async (req: Request, res: Response) => {
    const waiver = await book.add(req.body);
    res.status(201).json({ waiver: showWaiver(waiver) });
  });

  router.get('/api/waivers/:id', async (req: Request, res: Response) => {
    const waiver = await book.get(String(req.params.id));
    if (!waiver) throw new RelayError('NOT_FOUND', { message: `No waiver ${String(req.params.id)}.` });
    res.json({ waiver: showWaiver(waiver) });
  });

  router.post('/api/waivers/:id/expire', async (req: Request, res: Response) => {
    const author = (req.body as { author?: unknown } | undefined)?.author;
    const waiver = await book.expire(String(req.params.id), typeof author === 'string' ? author : '');
    res.json({ waiver: showWaiver(waiver) });
  });
  return router;
}

const DeliveryIdSchema = z.object({ id: wholeNumber('a delivery id') });

const routeError = 'must be one route name (at most 200 characters)';
const RouteSchema = z.object({ route: z.string({ error: routeError }).max(200, routeError) });

const nameError = `must be one name (at most ${WAIVER_NAME_MAX} characters)`;
const name = optional(z.string({ error: nameError }).max(WAIVER_NAME_MAX, nameError));

/** `?status=&source=&test=&device=&limit=` as a filter; anything malformed is a 400 naming the parameter. */
const WaiverQuerySchema = z.object({
  source: name,
  test: name,
  device: name,
  status: optional(z.enum(WAIVER_STATUSES, { error: `must be one of ${WAIVER_STATUSES.join(', ')}` })),
  limit: optional(wholeNumber('a number of waivers', 1000)),
});
