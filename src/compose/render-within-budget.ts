import type { RenderedMail } from '../mail';
import type { EnrichmentView } from './build-enrichment-view';
import type { ReportView } from './build-report-view';

/**
 * The most HTML a mail carries. Gmail clips a message whose HTML exceeds about 102 KB ("[Message clipped]
 * View entire message"), hiding whatever comes after the cut, and the links to NetBox come last. The failing
 * results left out are in the CSV attachment and behind the "and N more failing tests" link.
 */
export const MAIL_HTML_MAX_BYTES = 100_000;

/**
 * Renders the view; while its HTML is over {@link MAIL_HTML_MAX_BYTES}, renders it again with half the
 * failing tests listed (the others counted in `moreTests`), down to none.
 */
export function renderWithinBudget<V extends ReportView>(view: V, render: (view: V) => RenderedMail): RenderedMail {
  let rendered = render(view);
  let current = view;
  while (Buffer.byteLength(rendered.html) > MAIL_HTML_MAX_BYTES) {
    const enrichment = current.enrichment;
    const listed = enrichment ? enrichment.groups.reduce((n, g) => n + g.tests.length, 0) : 0;
    if (!enrichment || (listed === 0 && enrichment.topDevices.length === 0)) break;
    current = { ...current, enrichment: keepTests(enrichment, Math.floor(listed / 2)) };
    rendered = render(current);
  }
  return rendered;
}

/** The enrichment with only its first `keep` tests listed; with none, without the top devices either. */
function keepTests(enrichment: EnrichmentView, keep: number): EnrichmentView {
  let left = keep;
  const groups = enrichment.groups
    .map((group) => {
      const tests = group.tests.slice(0, Math.max(0, left));
      left -= tests.length;
      return { ...group, tests };
    })
    .filter((group) => group.tests.length > 0);
  return {
    ...enrichment,
    groups,
    moreTests: enrichment.failingTests - keep,
    topDevices: keep === 0 ? [] : enrichment.topDevices,
  };
}
