/** `{variable}` placeholders replaced from `vars`; unknown ones stay as written (and are reported). */
const PLACEHOLDER = /\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

export function substitute(
  text: string,
  vars: Record<string, unknown>,
  missing?: (name: string) => void,
  encode: (value: string) => string = (value) => value,
): string {
  return text.replace(PLACEHOLDER, (whole, name: string) => {
    const v = vars[name];
    if (v === undefined || v === null) {
      missing?.(name);
      return whole;
    }
    return encode(typeof v === 'object' ? JSON.stringify(v) : String(v));
  });
}
