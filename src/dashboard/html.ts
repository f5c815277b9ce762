import { neutralizeText } from '../shared';

/** Markup that is already safe (built by {@link html}); anything else interpolated is escaped. */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

/**
 * Escapes text for HTML content and double-quoted attributes, and makes bidi overrides and control
 * characters visible: everything a page shows from a report, a mail or an error is untrusted.
 */
export function escapeHtml(value: unknown): string {
  // Anything may be interpolated: String() is the conversion meant, null and undefined show as nothing.
  const shown: unknown = value ?? '';
  return neutralizeText(String(shown)).replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!,
  );
}

/**
 * A tagged template for pages: every interpolated value is escaped unless it is {@link SafeHtml}
 * (another `html` result); arrays are joined. So a report field or an SMTP error can never inject markup.
 */
export function html(strings: TemplateStringsArray, ...values: unknown[]): SafeHtml {
  let out = strings[0];
  values.forEach((value, i) => {
    out += render(value) + strings[i + 1];
  });
  return new SafeHtml(out);
}

function render(value: unknown): string {
  if (value instanceof SafeHtml) return value.value;
  if (Array.isArray(value)) return value.map(render).join('');
  if (value === null || value === undefined || value === false) return '';
  return escapeHtml(value);
}
