import { neutralizeText } from './neutralize-text';

/** Markup that is already safe (built by {@link html}); anything else interpolated is escaped. */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

/** Escapes text for HTML and double-quoted attributes, bidi overrides and control characters made visible. */
export function escapeHtml(value: unknown): string {
  // Anything may be interpolated: String() is the conversion meant, null and undefined show as nothing.
  const shown: unknown = value ?? '';
  return neutralizeText(String(shown)).replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!,
  );
}

/** A tagged template: every interpolated value is escaped unless it is {@link SafeHtml}; arrays are joined. */
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
