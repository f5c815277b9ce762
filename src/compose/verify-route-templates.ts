import path from 'node:path';
import type { Config } from '../config';
import type { Route } from '../routing';
import { TemplateError, type Renderer } from '../mail';
import { sampleDeliveryView, sampleDigestContents, sampleInsightViews, type SampleSettings } from './sample';
import { buildDigestView } from './build-digest-view';
import { DIGEST_TEMPLATE_SET } from './build-digest-mail';

/**
 * Renders the sample report with every template set and with every route's set and subject, so a
 * missing set, a syntax error or an unknown variable (templates are strict) fails at boot with the
 * file and line, not at the first delivery. Throws {@link TemplateError}.
 */
export function verifyRouteTemplates(renderer: Renderer, config: SampleSettings & Pick<Config, 'routing'>): void {
  // The plain sample and the samples with enrichment and trend sections filled (every branch of the templates).
  const views = [sampleDeliveryView(config), ...sampleInsightViews(config)];
  const digestViews = sampleDigestContents(config.mail.timezone).map(buildDigestView);
  const onRoute = (name: string) => views.map((view) => ({ ...view, route: { name, reminder: false, reason: 'sample' } }));
  // The digest set renders digests, not reports: it is checked with the sample digests only.
  for (const set of renderer.sets.filter((s) => s !== DIGEST_TEMPLATE_SET))
    for (const view of onRoute('sample')) renderer.render(view, set);
  if (renderer.sets.includes(DIGEST_TEMPLATE_SET)) for (const view of digestViews) renderer.render(view, DIGEST_TEMPLATE_SET);
  for (const route of config.routing.routes) {
    const set = route.digest ? (route.template ?? DIGEST_TEMPLATE_SET) : route.template;
    if (set !== undefined && !renderer.sets.includes(set)) {
      throw new TemplateError(path.join(renderer.dir, set), new Error(describeMissingSet(route, set, renderer.sets)));
    }
    try {
      for (const view of route.digest ? digestViews : onRoute(route.name))
        renderer.render(view, set, route.subject === undefined ? {} : { subject: route.subject });
    } catch (error) {
      if (error instanceof TemplateError && route.subject !== undefined && error.file.startsWith('subject')) {
        throw new TemplateError(`${config.routing.file ?? 'ROUTES_FILE'} route ${route.name} subject`, error.cause);
      }
      throw error;
    }
  }
}

function describeMissingSet(route: Route, set: string, found: readonly string[]): string {
  return route.digest
    ? `digest route ${route.name} needs the template set "${set}" (subject.hbs, html.hbs, text.hbs); copy templates/${DIGEST_TEMPLATE_SET} from the shipped templates into your TEMPLATES_DIR (found: ${found.join(', ')})`
    : `route ${route.name} uses template set "${set}", which is not a folder with subject.hbs, html.hbs and text.hbs (found: ${found.join(', ')})`;
}
