import path from 'node:path';
import type { Config } from '../config';
import { TemplateError, type Renderer } from '../mail';
import { sampleDeliveryView, sampleInsightViews } from './sample';

/**
 * Renders the sample report with every template set and with every route's set and subject, so a
 * missing set, a syntax error or an unknown variable (templates are strict) fails at boot with the
 * file and line, not at the first delivery. Throws {@link TemplateError}.
 */
export function verifyRouteTemplates(renderer: Renderer, config: Pick<Config, 'mail' | 'netbox' | 'routing'>): void {
  // The plain sample and the samples with enrichment and trend sections filled (every branch of the templates).
  const views = [sampleDeliveryView(config), ...sampleInsightViews(config)];
  for (const set of renderer.sets)
    for (const view of views) renderer.render({ ...view, route: { name: 'sample', reminder: false, reason: 'sample' } }, set);
  for (const route of config.routing.routes) {
    if (route.template !== undefined && !renderer.sets.includes(route.template)) {
      throw new TemplateError(
        path.join(renderer.dir, route.template),
        new Error(
          `route ${route.name} uses template set "${route.template}", which is not a folder with subject.hbs, html.hbs and text.hbs (found: ${renderer.sets.join(', ')})`,
        ),
      );
    }
    try {
      for (const view of views)
        renderer.render(
          { ...view, route: { name: route.name, reminder: false, reason: 'sample' } },
          route.template,
          route.subject === undefined ? {} : { subject: route.subject },
        );
    } catch (error) {
      if (error instanceof TemplateError && route.subject !== undefined && error.file.startsWith('subject')) {
        throw new TemplateError(`${config.routing.file ?? 'ROUTES_FILE'} route ${route.name} subject`, error.cause);
      }
      throw error;
    }
  }
}
