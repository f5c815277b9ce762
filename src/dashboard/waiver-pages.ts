import express, { type Request, type RequestHandler, type Response, type Router } from 'express';
import { RelayError, type ErrorIssue } from '../shared';
import { WAIVER_STATUSES, type WaiverBook, type WaiverStatus } from '../waivers';
import { pickText, readFlash } from './delivery-pages';
import { buildPageContext, sendPage, type DashboardDeps } from './render-page';
import { buildWaiverFormView, buildWaiverListView, type WaiverFormValues, type WaiverListQuery } from './build-waiver-views';

/** The waivers pages: the list, and the add form pre-filled from `?source=&test=&device=` (the session is the authority). */
export function registerWaiverPages(router: Router, deps: DashboardDeps & { book: WaiverBook }, requireCsrf: RequestHandler): void {
  const { book, options } = deps;
  // A reason of 2,000 characters, percent-encoded, is more than the dashboard's 4 kB forms allow.
  const form = express.urlencoded({ extended: false, limit: '32kb', parameterLimit: 10 });
  const sendForm = (req: Request, res: Response, status: number, view: { values: WaiverFormValues; issues?: ErrorIssue[] }) => {
    const body = buildWaiverFormView({ ...view, sources: book.sources });
    sendPage(res, status, 'Add a waiver', 'waiver-form', body, buildPageContext(deps, req));
  };

  router.get('/waivers', async (req, res) => {
    const raw = req.query as Record<string, unknown>;
    const query: WaiverListQuery = pickText(raw, ['source', 'test', 'device']);
    if (typeof raw.status === 'string' && (WAIVER_STATUSES as readonly string[]).includes(raw.status))
      query.status = raw.status as WaiverStatus;
    const waivers = await book.list({ ...query, limit: 500 });
    const page = buildPageContext(deps, req);
    const body = buildWaiverListView({ page, waivers, query, sources: book.sources, now: options.clock.now(), flash: readFlash(raw) });
    sendPage(res, 200, 'Waivers', 'waivers', body, page);
  });

  router.get('/waivers/new', (req, res) => {
    const values = pickText(req.query as Record<string, unknown>, ['source', 'test', 'device']);
    sendForm(req, res, 200, { values: { source: values.source ?? book.sources[0], ...values } });
  });

  // Stores the waiver and goes to the list, or shows the form again with every problem.
  router.post('/waivers', form, requireCsrf, async (req, res) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const values: WaiverFormValues = {
      ...pickText(body, ['source', 'test', 'device', 'until', 'author']),
      ...pickText(body, ['reason'], 4000),
      allDevices: body.all_devices === 'on',
    };
    try {
      const waiver = await book.add(values);
      options.logger.info({ ip: req.ip, waiverId: waiver.id }, 'dashboard: waiver added');
      res.redirect(303, `/ui/waivers?added=${encodeURIComponent(waiver.id)}`);
    } catch (error) {
      if (!(error instanceof RelayError) || error.code !== 'INVALID_REQUEST') throw error;
      sendForm(req, res, 400, { values, issues: error.issues });
    }
  });

  // Ends a stored waiver now; a file's, an ended or an unknown one is refused on the page.
  router.post('/waivers/:id/expire', form, requireCsrf, async (req, res) => {
    const id = String(req.params.id);
    const author = (req.body as Record<string, unknown> | undefined)?.author;
    try {
      await book.expire(id, typeof author === 'string' ? author : '');
      res.redirect(303, `/ui/waivers?expired=${encodeURIComponent(id)}`);
    } catch (error) {
      if (!(error instanceof RelayError)) throw error;
      const text = error.issues?.map((i) => `${i.path} ${i.message}`).join('; ') ?? error.message;
      sendPage(res, error.status, 'Not expired', 'not-expired', { text }, buildPageContext(deps, req));
    }
  });
}
