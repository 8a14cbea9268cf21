// A small Markdown renderer for what servers write (headings, paragraphs, lists, quotes,
// fenced code, inline code, bold, italics, http(s) links), building elements directly:
// nothing the server wrote is ever parsed as HTML.

import { h } from './dom.js';

// An underscore inside a word (`get_timestamp`) is a letter, not emphasis (CommonMark's
// rule for `_`): it opens only after a non-word character and closes only before one.
const INLINE = /(`[^`]+`)|(\*\*[^*]+\*\*|(?<![\p{L}\p{N}_])__[^_]+__(?![\p{L}\p{N}_]))|(\*[^*\s][^*]*\*|(?<![\p{L}\p{N}_])_[^_\s][^_]*_(?![\p{L}\p{N}_]))|(\[[^\]]+\]\([^)\s]+\))/u;

function inline(text) {
  const out = [];
  let rest = text;
  while (rest) {
    const match = INLINE.exec(rest);
    if (!match) {
      out.push(rest);
      break;
    }
    if (match.index > 0) out.push(rest.slice(0, match.index));
    const [whole, code, strong, em, link] = match;
    if (code) out.push(h('code', {}, code.slice(1, -1)));
    else if (strong) out.push(h('strong', {}, inline(strong.slice(2, -2))));
    else if (em) out.push(h('em', {}, inline(em.slice(1, -1))));
    else if (link) {
      const [, label, href] = /^\[([^\]]+)\]\(([^)\s]+)\)$/.exec(link);
      out.push(/^https?:\/\//i.test(href) ? h('a', { href, target: '_blank', rel: 'noopener noreferrer' }, inline(label)) : `${label} (${href})`);
    }
    rest = rest.slice(match.index + whole.length);
  }
  return out;
}

/** Markdown `text` as an element. */
export function markdown(text) {
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  const root = h('div', { class: 'markdown' });
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (/^```/.test(line)) {
      const body = [];
      i += 1;
      while (i < lines.length && !/^```/.test(lines[i])) body.push(lines[i++]);
      i += 1;
      root.append(h('pre', {}, h('code', {}, body.join('\n'))));
      continue;
    }
    const heading = /^(#{1,6})\s+(.*)$/.exec(line);
    if (heading) {
      root.append(h(`h${Math.min(6, heading[1].length + 2)}`, {}, inline(heading[2])));
      i += 1;
      continue;
    }
    if (/^\s*([-*+]|\d+[.)])\s+/.test(line)) {
      const ordered = /^\s*\d/.test(line);
      const list = h(ordered ? 'ol' : 'ul');
      while (i < lines.length && /^\s*([-*+]|\d+[.)])\s+/.test(lines[i])) {
        list.append(h('li', {}, inline(lines[i].replace(/^\s*([-*+]|\d+[.)])\s+/, ''))));
        i += 1;
      }
      root.append(list);
      continue;
    }
    if (/^>\s?/.test(line)) {
      const quote = [];
      while (i < lines.length && /^>\s?/.test(lines[i])) quote.push(lines[i++].replace(/^>\s?/, ''));
      root.append(h('blockquote', {}, markdown(quote.join('\n'))));
      continue;
    }
    if (line.trim() === '') {
      i += 1;
      continue;
    }
    const paragraph = [];
    while (i < lines.length && lines[i].trim() !== '' && !/^(```|#{1,6}\s|>|\s*([-*+]|\d+[.)])\s+)/.test(lines[i])) paragraph.push(lines[i++]);
    if (paragraph.length === 0) paragraph.push(lines[i++]);
    root.append(h('p', {}, inline(paragraph.join(' '))));
  }
  return root;
}
