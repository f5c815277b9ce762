import express, { type Request, type Response, type Router } from 'express';
import { buildDeliveriesJson, buildEmlFileName, buildSentMailsJson } from './build-delivery-json';
import { createAdminGuard, type AdminGuardOptions } from './admin-guard';
import { parseListFilters } from './parse-list-filters';
import { createSecretMask, RelayError } from '../shared';
import type { Store } from '../store';
import type { Worker } from '../delivery';

export interface AdminRouteOptions extends AdminGuardOptions {
  store: Store;
  /** Secret values to mask in error texts shown to the operator. */
  secrets?: readonly string[];
  /** Kicked after a requeue; its try-now is an operator's resume (a paused or held queue probes now). */
  worker?: Pick<Worker, 'kick' | 'tryNow'>;
}

/** The admin API under `/api/deliveries` (docs/admin-api.md): list, show, requeue one, requeue every dead delivery. */
export function createAdminRouter(options: AdminRouteOptions): Router {
  const router = express.Router();
  const mask = createSecretMask(options.secrets ?? []);
  const show = async (record: Parameters<typeof buildDeliveriesJson>[1][number]) =>
    (await buildDeliveriesJson(options.store, [record], mask))[0];

  router.use('/api/deliveries', createAdminGuard(options));

  router.get('/api/deliveries', async (req: Request, res: Response) => {
    // The dashboard's filters; `from` and `to` are UTC days, as the answer's times are UTC.
    const filters = parseListFilters(req.query, 'UTC');
    if (!filters.ok) throw new RelayError('INVALID_REQUEST', { issues: filters.issues });
    const limit = filters.options.limit ?? 100;
    const [records, { counts }] = await Promise.all([
      options.store.listDeliveries({ ...filters.options, limit }),
      options.store.readQueue(),
    ]);
    res.json({
      deliveries: await buildDeliveriesJson(options.store, records, mask),
      counts,
      nextBefore: records.length === limit ? records[records.length - 1].id : null,
    });
  });

  router.post('/api/deliveries/retry-dead', async (_req: Request, res: Response) => {
    const requeued = await options.store.requeue(options.clock.now());
    options.logger.info({ requeued }, `admin API: requeued ${requeued} dead deliveries`);
    if (requeued > 0) options.worker?.kick();
    res.json({ requeued });
  });

  // The fix is in (a password, a certificate): the queue probes with its oldest delivery now, not at the pause's end.
  router.post('/api/deliveries/resume', async (_req: Request, res: Response) => {
    const smtp = (await options.worker?.tryNow()) ?? 'not-paused';
    options.logger.info({ smtp }, 'admin API: resume asked');
    res.json({ smtp });
  });

  router.get('/api/deliveries/:id', async (req: Request, res: Response) => {
    const record = await options.store.getDelivery(parseId(req.params.id));
    if (!record) throw new RelayError('NOT_FOUND', { message: `No delivery ${String(req.params.id)}.` });
    const mails = buildSentMailsJson(record.id, await options.store.listSentMessages(record.id), mask);
    res.json({ delivery: { ...(await show(record)), mails } });
  });

  // One route's kept mail, byte for byte (`route` as listed in `mails`; `""` for a copy kept before routes were recorded).
  router.get('/api/deliveries/:id/message.eml', async (req: Request, res: Response) => {
    const id = parseId(req.params.id);
    const route = parseRoute(req.query.route);
    const sent = await options.store.getSentMessage(id, route);
    if (!sent) throw new RelayError('NOT_FOUND', { message: `Delivery ${id} has no kept mail for route "${route}".` });
    res
      .set('Content-Disposition', `attachment; filename="${buildEmlFileName(id, route)}"`)
      .type('message/rfc822')
      .send(sent.raw);
  });

  router.post('/api/deliveries/:id/retry', async (req: Request, res: Response) => {
    const id = parseId(req.params.id);
    const requeued = await options.store.requeue(options.clock.now(), id);
    const record = await options.store.getDelivery(id);
    if (!record) throw new RelayError('NOT_FOUND', { message: `No delivery ${id}.` });
    if (requeued === 0)
      throw new RelayError('CONFLICT', { message: `Delivery ${id} is ${record.state}: only dead or sent deliveries can be requeued.` });
    options.logger.info({ deliveryId: id }, 'admin API: delivery requeued');
    options.worker?.kick();
    res.json({ delivery: await show(record) });
  });

  return router;
}

function parseRoute(value: unknown): string {
  if (typeof value === 'string' && value.length <= 200) return value;
  throw new RelayError('INVALID_REQUEST', { issues: [{ path: 'route', message: 'must be one route name (at most 200 characters)' }] });
}

function parseId(value: unknown): number {
  const n = typeof value === 'string' && /^\d{1,16}$/.test(value) ? Number(value) : 0;
  if (n >= 1 && Number.isSafeInteger(n)) return n;
  throw new RelayError('INVALID_REQUEST', { issues: [{ path: 'id', message: `must be an integer from 1 to ${Number.MAX_SAFE_INTEGER}` }] });
}
