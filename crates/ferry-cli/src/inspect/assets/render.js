// Results rendered by kind: text, images, audio, embedded resources, resource links,
// structured content as a tree (checked against the tool's outputSchema), prompt
// messages, read resources. Everything the server sent is set as text or as a data: URL,
// never as HTML.

import { h, bytes } from './dom.js';
import { validate } from './form.js';
import { markdown } from './markdown.js';

/** A JSON value as a tree of <details>, open to `openDepth` levels. */
export function tree(value, openDepth = 2) {
  return h('div', { class: 'tree' }, node(undefined, value, 0, openDepth));
}

function node(key, value, depth, openDepth) {
  const label = key === undefined ? null : h('span', { class: 'k' }, `${key}: `);
  if (value !== null && typeof value === 'object') {
    const entries = Array.isArray(value) ? value.map((v, i) => [i, v]) : Object.entries(value);
    const summary = Array.isArray(value) ? `[${entries.length}]` : `{${entries.length}}`;
    return h('details', { open: depth < openDepth },
      h('summary', {}, label, summary),
      entries.map(([k, v]) => node(k, v, depth + 1, openDepth)));
  }
  const kind = typeof value === 'string' ? 's' : typeof value === 'number' ? 'n' : '';
  return h('div', { class: 'leaf' }, label, h('span', { class: kind }, JSON.stringify(value)));
}

function dataUrl(mime, base64) {
  return `data:${mime || 'application/octet-stream'};base64,${base64}`;
}

function download(name, mime, base64) {
  return h('a', { href: dataUrl(mime, base64), download: name }, `Download ${name}`);
}

/** Text shown as it is, with a button to see it as Markdown (or back). */
function textOrMarkdown(text, asMarkdown) {
  const box = h('div', { class: 'text-box' });
  const toggle = h('button', { type: 'button', class: 'small', 'aria-pressed': String(asMarkdown) }, 'Markdown');
  const draw = (on) => {
    toggle.setAttribute('aria-pressed', String(on));
    box.replaceChildren(on ? markdown(text) : h('pre', { class: 'text' }, text));
  };
  toggle.addEventListener('click', () => draw(toggle.getAttribute('aria-pressed') !== 'true'));
  draw(asMarkdown);
  return [toggle, box];
}

function block(kind, ...children) {
  return h('div', { class: 'block' }, h('div', { class: 'kind' }, kind), children);
}

/** One content block of a result or a prompt message. */
export function content(item, ctx) {
  switch (item?.type) {
    case 'text':
      return block('text', textOrMarkdown(item.text, false));
    case 'image':
      return block(`image · ${item.mimeType}`, h('img', { src: dataUrl(item.mimeType, item.data), alt: 'image from the server' }));
    case 'audio':
      return block(`audio · ${item.mimeType}`, h('audio', { controls: true, src: dataUrl(item.mimeType, item.data) }));
    case 'resource':
      return block('embedded resource', resourceContents(item.resource));
    case 'resource_link':
      return block('resource link',
        h('div', {}, h('code', {}, item.uri), item.mimeType ? h('span', { class: 'badge' }, item.mimeType) : null),
        item.description ? h('div', { class: 'muted' }, item.description) : null,
        ctx?.openResource ? h('button', { type: 'button', onclick: () => ctx.openResource(item.uri) }, `Open ${item.name || item.uri}`) : null);
    default:
      return block(item?.type || 'unknown', tree(item));
  }
}

/** One entry of a read resource's `contents`. */
export function resourceContents(entry) {
  const head = h('div', {}, h('code', {}, entry.uri), entry.mimeType ? h('span', { class: 'badge' }, entry.mimeType) : null);
  if (typeof entry.text === 'string') {
    let body = textOrMarkdown(entry.text, /markdown/.test(entry.mimeType || ''));
    if (/json/.test(entry.mimeType || '')) {
      try {
        body = tree(JSON.parse(entry.text), 3);
      } catch {
        // Not JSON after all: shown as text.
      }
    }
    return h('div', { class: 'resource' }, head, body);
  }
  if (typeof entry.blob === 'string') {
    const size = Math.floor((entry.blob.length * 3) / 4);
    const name = (entry.uri.split(/[/:]/).filter(Boolean).pop() || 'resource');
    const mime = entry.mimeType || '';
    const view = mime.startsWith('image/')
      ? h('img', { src: dataUrl(mime, entry.blob), alt: entry.uri })
      : mime.startsWith('audio/') ? h('audio', { controls: true, src: dataUrl(mime, entry.blob) }) : null;
    return h('div', { class: 'resource' }, head, view, h('div', {}, `${bytes(size)} · `, download(name, mime, entry.blob)));
  }
  return h('div', { class: 'resource' }, head, tree(entry));
}

/** A `tools/call` result: its blocks, structured content and the outputSchema verdict. */
export function callResult(result, tool, ctx) {
  const parts = [];
  if (result.isError) parts.push(h('div', { class: 'error-text', role: 'alert' }, 'The tool reported an error (isError).'));
  for (const item of result.content || []) parts.push(content(item, ctx));
  if (result.structuredContent !== undefined) {
    let verdict = null;
    if (tool?.outputSchema) {
      const problems = validate(result.structuredContent, tool.outputSchema);
      verdict = problems.length === 0
        ? h('span', { class: 'badge ok' }, 'matches outputSchema')
        : h('div', { class: 'error-text' }, h('span', { class: 'badge err' }, 'does not match outputSchema'), h('ul', {}, problems.map((p) => h('li', {}, p))));
    }
    parts.push(block('structuredContent', verdict, tree(result.structuredContent, 3)));
  } else if (tool?.outputSchema && !result.isError) {
    parts.push(h('div', { class: 'error-text' }, 'The tool has an outputSchema but returned no structuredContent.'));
  }
  return h('div', { class: `result card${result.isError ? ' error' : ''}`, dataset: { kind: 'call-result' } }, parts);
}

/** A `prompts/get` result. */
export function promptResult(result, ctx) {
  return h('div', { class: 'result card' },
    result.description ? h('p', { class: 'muted' }, result.description) : null,
    (result.messages || []).map((m) => h('div', { class: 'message' },
      h('h3', {}, m.role),
      (Array.isArray(m.content) ? m.content : [m.content]).map((c) => content(c, ctx)))));
}

/** A `resources/read` result. */
export function readResult(result) {
  return h('div', { class: 'result card', dataset: { kind: 'read-result' } }, (result.contents || []).map(resourceContents));
}

/** An API failure, with the server's JSON-RPC error when there is one. */
export function failure(error) {
  const rpc = error.detail?.rpc;
  return h('div', { class: 'card error', role: 'alert' },
    h('div', { class: 'error-text' }, error.message),
    rpc ? tree(rpc, 1) : null);
}
