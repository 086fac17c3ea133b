// Escaping for report.html: text and attributes from run data (check names, error messages,
// request bodies) must never become markup, and JSON embedded in a <script> must never end it.

export function escapeHtml(text: string): string {
  return text.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** JSON safe inside <script type="application/json">: no `<`, and no JS line separators. */
export function jsonForScript(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}
