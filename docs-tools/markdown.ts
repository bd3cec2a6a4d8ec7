/**
 * The little of Markdown the link test reads: headings (and the anchors GitHub gives them),
 * explicit `<a id>` / `<a name>` anchors, and link targets, with code (fenced blocks and inline
 * spans) left out. Pure: text in, values out.
 */

/** A link target found in a page, with its 1-based line. */
export interface Link {
  target: string;
  line: number;
}

const FENCE = /^ {0,3}(`{3,}|~{3,})/;

/**
 * `text` with fenced code blocks blanked and inline code spans removed; line numbers are kept
 * (a blanked line stays as an empty line).
 */
export function withoutCode(text: string): string {
  return withoutFences(text).split('\n').map(withoutCodeSpans).join('\n');
}

/** A line without its code spans: a run of N backticks up to the next run of exactly N. */
function withoutCodeSpans(line: string): string {
  return line.replace(/(`+)(?!`)[\s\S]*?(?<!`)\1(?!`)/g, '');
}

/** GitHub's anchor for a heading's text: lowercase, punctuation dropped, spaces as '-'. */
export function slugOf(heading: string): string {
  const visible = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // a link or image: its text
    .replace(/<[^>]+>/g, '') // HTML tags
    .replace(/`/g, '');
  return visible
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\p{M}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/**
 * Every anchor a page offers: its headings' slugs (a repeated one gets -1, -2, ... in order) and
 * its explicit `<a id="...">` / `<a name="...">`. Headings inside code blocks are not headings.
 */
export function anchorsOf(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  const addHeading = (heading: string) => {
    const slug = slugOf(heading);
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count ? `${slug}-${count}` : slug);
  };
  // Headings keep their inline code's text (`## The bridge: \`kubectl apply\``): only fences go.
  const lines = withoutFences(text).split('\n');
  lines.forEach((line, i) => {
    const atx = /^ {0,3}#{1,6}(?:\s+(.*?))?(?:\s+#+)?\s*$/.exec(line);
    // A setext heading: one line of text after a blank line, underlined with = or -.
    const underline = lines[i + 1];
    if (atx) addHeading(atx[1] ?? '');
    else if (
      underline !== undefined &&
      /^ {0,3}(=+|-+)\s*$/.test(underline) &&
      line.trim() &&
      !lines[i - 1]?.trim() &&
      !/^ {0,3}([-*+>|]|\d+[.)])/.test(line)
    )
      addHeading(line);
  });
  for (const [, id] of withoutCode(text).matchAll(/<a\s+(?:[^>]*\s)?(?:id|name)\s*=\s*["']([^"']+)["']/gi))
    anchors.add(id);
  return anchors;
}

/** `text` with only its fenced code blocks blanked. */
function withoutFences(text: string): string {
  let fence: string | undefined;
  return text
    .split('\n')
    .map((line) => {
      const opener = FENCE.exec(line)?.[1];
      if (fence) {
        if (opener && opener[0] === fence[0] && opener.length >= fence.length && line.trim() === opener)
          fence = undefined;
        return '';
      }
      if (opener) fence = opener;
      return opener ? '' : line;
    })
    .join('\n');
}

/**
 * Every link target of a page outside code: inline links and images `[text](target "title")`,
 * reference definitions `[name]: target`, and HTML `href` / `src` attributes.
 */
export function linksOf(text: string): Link[] {
  const links: Link[] = [];
  withoutCode(text)
    .split('\n')
    .forEach((line, i) => {
      const add = (target: string) => links.push({ target: target.replace(/^<|>$/g, ''), line: i + 1 });
      for (const [, target] of line.matchAll(/\]\(\s*(<[^>]*>|[^)\s]+)(?:\s+["'(][^)]*)?\)/g)) add(target);
      const definition = /^ {0,3}\[[^\]]+\]:\s*(\S+)/.exec(line);
      if (definition) add(definition[1]);
      for (const [, target] of line.matchAll(/<(?:a|img)\s[^>]*?(?:href|src)\s*=\s*["']([^"']+)["']/gi))
        add(target);
    });
  return links;
}

/** A target split into the file it names (empty: this page) and its anchor, or null when external. */
export function localTarget(target: string): { file: string; anchor?: string } | null {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//')) return null;
  const hash = target.indexOf('#');
  const file = decodeURIComponent(hash < 0 ? target : target.slice(0, hash)).split('?')[0];
  return hash < 0 ? { file } : { file, anchor: decodeURIComponent(target.slice(hash + 1)) };
}
