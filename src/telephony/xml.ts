/** Minimal XML writing for TwiML and Plivo XML: escaped text and attributes, elements in the order given. */

export function escapeText(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

export function escapeAttribute(value: string): string {
  return value
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/"/g, '&quot;')
    .replace(/\t/g, '&#x9;')
    .replace(/\n/g, '&#xA;')
    .replace(/\r/g, '&#xD;');
}

/** One element: `attributes` in insertion order (undefined ones left out), `children` already XML. */
export function element(name: string, attributes: Readonly<Record<string, string | undefined>>, children?: string): string {
  let open = `<${name}`;
  for (const [key, value] of Object.entries(attributes)) {
    if (value !== undefined) open += ` ${key}="${escapeAttribute(value)}"`;
  }
  return children === undefined || children === '' ? `${open}/>` : `${open}>${children}</${name}>`;
}
