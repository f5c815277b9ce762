import express, { type Request, type RequestHandler, type Response, type Router } from 'express';
import { RelayError, type ErrorIssue } from '../shared';
import { WAIVER_STATUSES, type WaiverBook, type WaiverStatus } from '../waivers';
import { pickText, readFlash } from './delivery-pages';
import { buildPageContext, sendPage, type DashboardDeps } from './render-page';
import { buildWaiverFormView, buildWaiverListView, type WaiverFormValues, type WaiverListQuery } from './build-waiver-views';

type WaiverPagesDeps = DashboardDeps & { book: WaiverBook };

/** The waivers pages: the list, and the add form pre-filled from `?source=&test=&device=` (the session is the authority). */
export function registerWaiverPages(router: Router, deps: WaiverPagesDeps, requireCsrf: RequestHandler): void {
  // A reason of 2,000 characters, percent-encoded, is more than the dashboard's 4 kB forms allow.
  const form = express.urlencoded({ extended: false, limit: '32kb', parameterLimit: 10 });
  router.get('/waivers', (req, res) => showWaivers(deps, req, res));
  router.get('/waivers/new', (req, res) => {
    const values = pickText(req.query as Record<string, unknown>, ['source', 'test', 'device']);
    sendForm(deps, req, res, 200, { values: { source: values.source ?? deps.book.sources[0], ...values } });
  });
  router.post('/waivers', form, requireCsrf, (req, res) => addWaiver(deps, req, res));
  router.post('/waivers/:id/expire', form, requireCsrf, (req, res) => expireWaiver(deps, req, res));
}

async function showWaivers(deps: WaiverPagesDeps, req: Request, res: Response): Promise<void> {
  const raw = req.query as Record<string, unknown>;
  const query: WaiverListQuery = pickText(raw, ['source', 'test', 'device']);
  if (typeof raw.status === 'string' && (WAIVER_STATUSES as readonly string[]).includes(raw.status))
    query.status = raw.status as WaiverStatus;
  const waivers = await deps.book.list({ ...query, limit: 500 });
  const page = buildPageContext(deps, req);
  const body = buildWaiverListView({
    page,
    waivers,
    query,
    sources: deps.book.sources,
    now: deps.options.clock.now(),
    flash: readFlash(raw),
  });
  sendPage(res, 200, 'Waivers', 'waivers', body, page);
}

/** POST /waivers: stores the waiver and goes to the list, or shows the form again with every problem. */
async function addWaiver(deps: WaiverPagesDeps, req: Request, res: Response): Promise<void> {
  const body = (req.body ?? {}) as Record<string, unknown>;
  const values: WaiverFormValues = {
    ...pickText(body, ['source', 'test', 'device', 'until', 'author']),
    ...pickText(body, ['reason'], 4000),
    allDevices: body.all_devices === 'on',
  };
  try {
    const waiver = await deps.book.add(values);
    deps.options.logger.info({ ip: req.ip, waiverId: waiver.id }, 'dashboard: waiver added');
    res.redirect(303, `/ui/waivers?added=${encodeURIComponent(waiver.id)}`);
  } catch (error) {
    if (!(error instanceof RelayError) || error.code !== 'INVALID_REQUEST') throw error;
    sendForm(deps, req, res, 400, { values, issues: error.issues });
  }
}

/** POST /waivers/:id/expire: ends a stored waiver now; a file's, an ended or an unknown one is refused on the page. */
async function expireWaiver(deps: WaiverPagesDeps, req: Request, res: Response): Promise<void> {
  const id = String(req.params.id);
  const author = (req.body as Record<string, unknown> | undefined)?.author;
  try {
    await deps.book.expire(id, typeof author === 'string' ? author : '');
    res.redirect(303, `/ui/waivers?expired=${encodeURIComponent(id)}`);
  } catch (error) {
    if (!(error instanceof RelayError)) throw error;
    const text = error.issues?.map((i) => `${i.path} ${i.message}`).join('; ') ?? error.message;
    sendPage(res, error.status, 'Not expired', 'not-expired', { text }, buildPageContext(deps, req));
  }
}

function sendForm(
  deps: WaiverPagesDeps,
  req: Request,
  res: Response,
  status: number,
  form: { values: WaiverFormValues; issues?: ErrorIssue[] },
): void {
  const body = buildWaiverFormView({ ...form, sources: deps.book.sources });
  sendPage(res, status, 'Add a waiver', 'waiver-form', body, buildPageContext(deps, req));
}
