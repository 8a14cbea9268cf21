// The inspector page: connections, tools, resources, prompts, roots, the server's
// requests, the log, the wire and the conformance check. State lives here; the process
// behind /api does the MCP work and streams every event to `onEvent`.

import { ApiError, get, listen, post } from './api.js';
import { bytes, clear, clock, h, uid } from './dom.js';
import { schemaForm } from './form.js';
import * as render from './render.js';
import { VirtualList } from './vlist.js';

const LEVELS = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'];
const $ = (id) => document.getElementById(id);

const state = {
  allowSpawn: false,
  conns: new Map(), // id -> {info, closed, lists: {tools, resources, templates, prompts}, updates: Map(uri -> [times])}
  current: null,
  view: 'server',
  pending: new Map(), // request id -> request event
  log: [],
  wire: [],
  // Where each connection (and each reconnection) began, in the order of the wire: the
  // export's connection lines. {seq, conn, time, target, info}
  marks: [],
  version: null,
  requestsInFlight: new Map(), // `${conn} ${direction} ${id}` -> sent time, for latency
  call: null, // {id, progress, message, cancel}
};

/** What a test (or a curious person) can read: timings and counts. */
const inspector = {
  ready: null,
  lastFilterMs: null,
  logCount: () => state.log.length,
  schemaWarnings: (tool) => schemaWarnings(tool),
  wireCount: () => state.wire.length,
};
window.ferryInspector = inspector;

// The status corner: a lasting state (the event stream's) and, over it for a few seconds,
// what just happened, so an old message ("Log level set to debug") never stays as news.
const STATUS_MS = 8000;
let lastingStatus = '';
let statusTimer = null;

function status(text, { lasting = false } = {}) {
  clearTimeout(statusTimer);
  $('status').textContent = text;
  if (lasting) lastingStatus = text;
  else statusTimer = setTimeout(() => { $('status').textContent = lastingStatus; }, STATUS_MS);
}

function conn() {
  return state.conns.get(state.current);
}

function connLabel(c) {
  const info = c.info;
  const name = info.serverInfo?.title || info.serverInfo?.name || 'server';
  const t = info.target;
  const where = t.kind === 'stdio' ? t.command.join(' ') : t.kind === 'http' ? t.url : t.kind === 'named' ? `@${t.name}` : 'in-process';
  return `${name} · ${where}`;
}

/** Run `action`, showing a failure in `place` (or the status line). */
async function attempt(place, action) {
  try {
    return await action();
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    if (place) place.append(render.failure(error));
    else status(error.message);
    return undefined;
  }
}

// ----- connections -----

function setConn(info) {
  const known = state.conns.get(info.id);
  if (known && known.info.protocolVersion === info.protocolVersion && !known.closed && known.info.connected === info.connected) {
    known.info = info;
  } else {
    state.conns.set(info.id, { info, closed: null, lists: {}, updates: new Map() });
  }
  if (state.current === null) state.current = info.id;
}

function renderConns() {
  const bar = $('conns');
  clear(bar, [...state.conns.values()].map((c) => h('button', {
    type: 'button', role: 'tab', 'aria-selected': c.info.id === state.current ? 'true' : 'false',
    class: c.closed ? 'closed' : '',
    onclick: () => { state.current = c.info.id; renderConns(); showView(state.view, true); },
  }, connLabel(c), c.closed ? ' (closed)' : '')));
}

function renderServer() {
  const view = $('view-server');
  const c = conn();
  if (!c) {
    clear(view, h('p', { class: 'hint' }, 'No connection.'), spawnForm());
    return;
  }
  const info = c.info;
  const target = info.target;
  const where = target.kind === 'stdio' ? `stdio: ${target.command.join(' ')}` : target.kind === 'http' ? `HTTP: ${target.url}` : target.kind === 'named' ? `@${target.name}` : 'the reference server, in this process';
  const result = h('div', { id: 'server-result' });
  clear(view,
    h('div', { class: 'bar' },
      h('h2', {}, info.serverInfo?.title || info.serverInfo?.name || 'Server'),
      h('button', { type: 'button', onclick: () => ping(result) }, 'Ping'),
      h('button', { type: 'button', onclick: () => reconnect(result) }, 'Reconnect'),
      h('button', { type: 'button', class: 'danger', onclick: () => disconnect(result) }, 'Disconnect')),
    c.closed ? h('div', { class: 'card error', role: 'alert' }, `Closed: ${c.closed}`) : null,
    result,
    h('dl', { class: 'facts' },
      h('dt', {}, 'Target'), h('dd', {}, where),
      h('dt', {}, 'Protocol revision'), h('dd', { id: 'protocol-version' }, info.protocolVersion),
      h('dt', {}, 'Era'), h('dd', { id: 'era' }, info.era === 'stateless' ? 'stateless (server/discover, per-request _meta)' : 'session (initialize)'),
      h('dt', {}, 'Server'), h('dd', { id: 'server-info' }, info.serverInfo ? `${info.serverInfo.name} ${info.serverInfo.version}` : '(not given)'),
      info.serverInfo?.websiteUrl ? [h('dt', {}, 'Website'), h('dd', {}, info.serverInfo.websiteUrl)] : null),
    target.kind === 'stdio' ? stderrBox(c) : null,
    h('h3', {}, 'Instructions'),
    info.instructions ? h('pre', { id: 'instructions' }, info.instructions) : h('p', { class: 'muted' }, '(none)'),
    h('h3', {}, 'Server capabilities'), render.tree(info.capabilities, 2),
    h('h3', {}, 'Client capabilities'), render.tree(info.clientCapabilities, 1),
    spawnForm());
}

/** A stdio server's last stderr lines (its own words, when it fails), open once it died. */
function stderrBox(c) {
  const lines = h('pre', { id: 'stderr-lines', class: 'mono' });
  const load = async () => {
    const answer = await attempt(null, () => post('stderr', { conn: c.info.id }));
    if (answer) lines.textContent = answer.lines.length ? answer.lines.join('\n') : '(nothing yet)';
  };
  load();
  return h('details', { id: 'stderr-box', open: Boolean(c.closed) },
    h('summary', {}, 'Its stderr (the last lines)'),
    h('button', { type: 'button', id: 'stderr-refresh', onclick: load }, 'Refresh'),
    lines);
}

async function ping(place) {
  clear(place);
  const answer = await attempt(place, () => post('ping', { conn: state.current }));
  if (answer) place.append(h('p', {}, `Pong in ${answer.ms.toFixed(1)} ms`));
}

async function reconnect(place) {
  clear(place);
  status('Reconnecting…');
  const info = await attempt(place, () => post('reconnect', { conn: state.current }));
  if (info) {
    state.conns.delete(info.id);
    setConn(info);
    status('Reconnected');
    renderConns();
    showView(state.view, true);
  }
}

async function disconnect(place) {
  clear(place);
  await attempt(place, () => post('disconnect', { conn: state.current }));
}

/** Split a command line as a shell would split words: quotes and backslashes. */
function words(line) {
  const out = [];
  let word = null;
  let quote = null;
  for (let i = 0; i < line.length; i += 1) {
    const ch = line[i];
    if (quote) {
      if (ch === quote) quote = null;
      else if (ch === '\\' && quote === '"' && i + 1 < line.length) word += line[++i];
      else word += ch;
    } else if (ch === '"' || ch === "'") {
      quote = ch;
      word = word ?? '';
    } else if (ch === '\\' && i + 1 < line.length) {
      word = (word ?? '') + line[++i];
    } else if (/\s/.test(ch)) {
      if (word !== null) out.push(word);
      word = null;
    } else {
      word = (word ?? '') + ch;
    }
  }
  if (word !== null) out.push(word);
  return out;
}

function spawnForm() {
  if (!state.allowSpawn) {
    return h('p', { class: 'muted' }, 'Connecting to other servers from this page is off (start ferry inspect with --allow-spawn).');
  }
  const commandId = uid('cmd');
  const urlId = uid('url');
  const headersId = uid('hdr');
  const command = h('input', { id: commandId, placeholder: 'node server.js --flag', class: 'mono' });
  const url = h('input', { id: urlId, placeholder: 'http://127.0.0.1:8080/mcp', class: 'mono' });
  const headers = h('textarea', { id: headersId, rows: 2, placeholder: 'Authorization: Bearer …' });
  const place = h('div');
  const go = async (request, shown) => {
    clear(place);
    // The server prints a code beside the exact command in its terminal; the person types
    // it here. The page alone cannot start anything.
    const asked = await attempt(place, () => post('connect', request));
    if (!asked?.confirm) return;
    const code = await confirmRun(shown);
    if (code === null) return;
    status('Connecting…');
    const info = await attempt(place, () => post('connect', { ...request, code }));
    if (info) {
      setConn(info);
      state.current = info.id;
      status('Connected');
      renderConns();
      showView('server', true);
    }
  };
  return h('div', { class: 'card' },
    h('h3', {}, 'Connect to another server'),
    h('div', { class: 'field' }, h('label', { for: commandId }, 'Command (stdio)'), command,
      h('button', { type: 'button', onclick: () => {
        const argv = words(command.value);
        if (argv.length) go({ command: argv }, argv.map((w) => (/[\s'"\\]/.test(w) ? JSON.stringify(w) : w)).join(' '));
      } }, 'Run…')),
    h('div', { class: 'field' }, h('label', { for: urlId }, 'URL (Streamable HTTP)'), url,
      h('label', { for: headersId }, 'Headers, one per line'), headers,
      h('button', { type: 'button', onclick: () => {
        if (url.value.trim()) go({ url: url.value.trim(), headers: headers.value.split('\n').map((l) => l.trim()).filter(Boolean) }, `connect to ${url.value.trim()}`);
      } }, 'Connect…')),
    place);
}

/** Ask the person to confirm exactly what will run, with the code the terminal shows: the
 * code, or null when they cancel. */
function confirmRun(shown) {
  const dialog = $('confirm');
  $('confirm-text').textContent = 'The inspector will run this command on this machine:';
  $('confirm-command').textContent = shown;
  const code = $('confirm-code');
  code.value = '';
  dialog.returnValue = '';
  dialog.showModal();
  code.focus();
  return new Promise((resolve) => {
    dialog.addEventListener('close', () => resolve(dialog.returnValue === 'yes' ? code.value.trim() : null), { once: true });
  });
}

// ----- lists (tools, resources, templates, prompts) -----

const LISTS = {
  tools: { key: 'tools', list: 'tool-list', more: 'tools-more', capability: 'tools', search: 'tool-search' },
  resources: { key: 'resources', list: 'resource-list', more: 'resources-more', capability: 'resources' },
  templates: { key: 'resourceTemplates', list: 'template-list', more: 'templates-more', capability: 'resources' },
  prompts: { key: 'prompts', list: 'prompt-list', more: 'prompts-more', capability: 'prompts', search: 'prompt-search' },
};

/** Whether `item` matches the search words `query` (all of them, in its name, title or description). */
function matches(item, query) {
  const text = `${item.name} ${item.title || ''} ${item.description || ''}`.toLowerCase();
  return query.split(/\s+/).filter(Boolean).every((word) => text.includes(word));
}

// What hosts are known to handle badly in a tool: said beside it, not refused.
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/** A list item's badge for `warnings`, if any (they show on hover). */
function warningBadge(warnings) {
  return warnings.length ? h('span', { class: 'badge warn', title: warnings.join('\n') }, 'schema warnings') : null;
}

/** The detail pane's list of `warnings`, if any. */
function warningList(warnings) {
  return warnings.length ? h('ul', { class: 'warnings', id: 'schema-warnings' }, warnings.map((w) => h('li', {}, w))) : null;
}

/** Warnings about `tool`'s name and input schema. */
function schemaWarnings(tool) {
  const found = [];
  const schema = tool.inputSchema || {};
  if (!TOOL_NAME.test(tool.name)) found.push(`The name is not 1-64 letters, digits, _ or -: several hosts refuse such a tool.`);
  if (schema.type !== 'object') found.push('The input schema is not of type "object".');
  for (const key of ['oneOf', 'anyOf', 'allOf', 'not']) {
    if (key in schema) found.push(`The input schema has "${key}" at its top: several hosts accept only a plain object schema there.`);
  }
  const text = JSON.stringify(schema);
  if (/"\$ref"/.test(text)) found.push('The input schema uses "$ref": some hosts do not resolve references.');
  if (text.length > 16384) found.push(`The input schema is ${text.length} characters: it takes much of a model's context.`);
  if ((tool.description || '').length > 1024) found.push('The description is over 1,024 characters: some hosts cut it.');
  return found;
}

async function loadList(kind, more = false) {
  const c = conn();
  if (!c) return;
  const spec = LISTS[kind];
  const list = $(spec.list);
  if (!c.info.capabilities?.[spec.capability]) {
    c.lists[kind] = { items: [], cursor: null };
    clear(list, h('li', { class: 'muted' }, `The server offers no ${spec.capability}.`));
    $(spec.more).hidden = true;
    return;
  }
  const known = more ? c.lists[kind] : { items: [], cursor: null };
  const page = await attempt(null, () => post('list', { conn: c.info.id, kind, cursor: more ? known.cursor : undefined }));
  if (!page) return;
  c.lists[kind] = { items: [...known.items, ...(page[spec.key] || [])], cursor: page.nextCursor || null };
  drawList(kind);
}

function drawList(kind) {
  const c = conn();
  const spec = LISTS[kind];
  const entry = c?.lists[kind];
  if (!entry) return;
  const select = { tools: selectTool, resources: selectResource, templates: selectTemplate, prompts: selectPrompt }[kind];
  const query = spec.search ? $(spec.search).value.trim().toLowerCase() : '';
  const items = query ? entry.items.filter((item) => matches(item, query)) : entry.items;
  clear($(spec.list), items.length === 0 ? h('li', { class: 'muted' }, entry.items.length ? '(no match)' : '(none)') : items.map((item) => h('li', {},
    h('button', { type: 'button', dataset: { name: item.name }, onclick: (e) => {
      // One item chosen per view: resources and templates share one detail pane.
      for (const b of $(spec.list).closest('.view').querySelectorAll('.items button[aria-current]')) b.removeAttribute('aria-current');
      e.currentTarget.setAttribute('aria-current', 'true');
      select(item);
    } },
    icon(item), h('span', { class: 'name' }, item.name), item.title && item.title !== item.name ? ` ${item.title}` : '',
    kind === 'tools' ? annotationBadges(item.annotations) : null,
    kind === 'tools' ? warningBadge(schemaWarnings(item)) : null,
    h('span', { class: 'desc' }, item.uri || item.uriTemplate || item.description || '')))));
  $(spec.more).hidden = !entry.cursor;
}

function icon(item) {
  const src = item.icons?.find((i) => typeof i.src === 'string' && i.src.startsWith('data:'))?.src;
  return src ? h('img', { class: 'icon', src, alt: '' }) : null;
}

function annotationBadges(a) {
  if (!a) return null;
  return [
    a.readOnlyHint ? h('span', { class: 'badge ok' }, 'read-only') : null,
    a.destructiveHint === true && !a.readOnlyHint ? h('span', { class: 'badge err' }, 'destructive') : null,
    a.idempotentHint ? h('span', { class: 'badge' }, 'idempotent') : null,
    a.openWorldHint ? h('span', { class: 'badge warn' }, 'open world') : null,
  ];
}

// ----- tools -----

function selectTool(tool) {
  const detail = $('tool-detail');
  const jsonId = uid('json');
  const json = h('textarea', { id: jsonId, class: 'mono', spellcheck: false });
  const jsonError = h('div', { class: 'error-text', role: 'status' });
  const formErrors = h('div', { class: 'error-text', role: 'alert' });
  let source = 'form';
  const form = schemaForm(tool.inputSchema, () => {
    source = 'form';
    json.value = JSON.stringify(form.read().value, null, 2);
    jsonError.textContent = '';
  });
  json.value = JSON.stringify(form.read().value, null, 2);
  json.addEventListener('input', () => {
    source = 'json';
    try {
      const value = JSON.parse(json.value);
      if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new Error('arguments must be a JSON object');
      form.write(value);
      jsonError.textContent = '';
    } catch (error) {
      jsonError.textContent = error.message;
    }
  });
  const progress = h('progress', { id: 'call-progress', max: 1, hidden: true });
  const progressText = h('span', { id: 'call-progress-text', class: 'muted', 'aria-live': 'polite' });
  const callButton = h('button', { type: 'submit', class: 'primary', id: 'call-button' }, 'Call');
  const cancelButton = h('button', { type: 'button', id: 'cancel-button', disabled: true }, 'Cancel');
  const result = h('div', { id: 'call-result', 'aria-live': 'polite' });
  // Tasks (2025-11-25): offered when the tool supports them and the connection speaks it.
  const support = tool.execution?.taskSupport;
  const tasksHere = (support === 'optional' || support === 'required') && conn()?.info.protocolVersion === '2025-11-25';
  const asTask = tasksHere ? h('input', { type: 'checkbox', id: 'task-toggle', checked: support === 'required', disabled: support === 'required' }) : null;
  const taskLine = h('div', { id: 'call-task', class: 'muted', 'aria-live': 'polite', hidden: true });
  const a = tool.annotations || {};
  // The form's own checks (listed under it) rather than the browser's bubbles.
  const formEl = h('form', { novalidate: true, onsubmit: async (event) => {
    event.preventDefault();
    clear(formErrors);
    let args;
    if (source === 'json') {
      try {
        args = JSON.parse(json.value);
      } catch (error) {
        formErrors.textContent = `The JSON arguments do not parse: ${error.message}`;
        return;
      }
    } else {
      const read = form.read();
      if (read.errors.length) {
        formErrors.append(h('ul', {}, read.errors.map((e) => h('li', {}, e))));
        return;
      }
      args = read.value;
    }
    const callId = uid('call');
    const task = Boolean(asTask?.checked);
    state.call = { id: callId, progress, progressText, taskLine };
    taskLine.hidden = !task;
    taskLine.textContent = task ? 'Starting the task…' : '';
    callButton.disabled = true;
    cancelButton.disabled = false;
    progress.hidden = false;
    progress.removeAttribute('value');
    progressText.textContent = 'Calling…';
    clear(result);
    const started = performance.now();
    const cancel = () => post('cancel', { callId }).catch(() => {});
    cancelButton.onclick = cancel;
    const answer = await attempt(result, () => post('call', { conn: state.current, callId, name: tool.name, arguments: args, task }));
    const ms = performance.now() - started;
    state.call = null;
    callButton.disabled = false;
    cancelButton.disabled = true;
    progress.hidden = true;
    if (answer?.cancelled) {
      progressText.textContent = `Cancelled after ${ms.toFixed(0)} ms`;
      result.append(h('div', { class: 'card', dataset: { kind: 'cancelled' } }, task
        ? 'Cancelled: the task was cancelled (tasks/cancel).'
        : 'Cancelled: the server was sent notifications/cancelled.'));
    } else if (answer) {
      progressText.textContent = `Answered in ${ms.toFixed(0)} ms`;
      result.append(render.callResult(answer.result, tool, { openResource }));
    } else {
      progressText.textContent = `Failed after ${ms.toFixed(0)} ms`;
    }
  } },
  h('div', { class: 'editor' },
    h('div', {}, h('h3', {}, 'Arguments'), form.el),
    h('div', {}, h('h3', {}, h('label', { for: jsonId }, 'As JSON')), json, jsonError)),
  formErrors,
  asTask ? h('label', { class: 'task-toggle' }, asTask, ' Run as task (polled with tasks/get, its result from tasks/result)') : null,
  h('div', { class: 'actions' }, callButton, cancelButton, progress, progressText),
  taskLine);
  clear(detail,
    h('h2', {}, icon(tool), tool.name, tool.title && tool.title !== tool.name ? ` — ${tool.title}` : ''),
    tool.description ? h('p', {}, tool.description) : null,
    tool.annotations ? h('dl', { class: 'facts' },
      ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint', 'title'].filter((k) => k in a)
        .map((k) => [h('dt', {}, k), h('dd', {}, String(a[k]))])) : null,
    tool.execution?.taskSupport ? h('p', { class: 'muted' }, `Task support: ${tool.execution.taskSupport}`) : null,
    warningList(schemaWarnings(tool)),
    formEl, result,
    tool.outputSchema ? h('details', {}, h('summary', {}, 'Output schema'), render.tree(tool.outputSchema, 3)) : null);
}

// ----- tasks -----

const TERMINAL = new Set(['completed', 'failed', 'cancelled']);

/** The tasks panel: the connection's tasks (tasks/list), each cancellable while it runs
 * and its result fetched (tasks/result) once it has one. */
async function renderTasks() {
  const view = $('view-tasks');
  const c = conn();
  if (!c) {
    clear(view, h('p', { class: 'hint' }, 'No connection.'));
    return;
  }
  if (c.info.protocolVersion !== '2025-11-25') {
    clear(view, h('p', { class: 'hint', id: 'tasks-none' }, `Tasks are a 2025-11-25 feature; this connection speaks ${c.info.protocolVersion}.`));
    return;
  }
  if (!c.info.capabilities?.tasks?.list) {
    clear(view, h('p', { class: 'hint', id: 'tasks-none' }, 'The server offers no task list (capabilities.tasks.list).'));
    return;
  }
  const place = h('div', { id: 'task-result' });
  const rows = h('tbody');
  clear(view,
    h('div', { class: 'bar' }, h('h2', {}, 'Tasks'), h('button', { type: 'button', id: 'tasks-refresh', onclick: () => renderTasks() }, 'Refresh')),
    h('p', { class: 'hint' }, 'This connection’s tasks (tasks/list), newest last. Run a tool as a task from the Tools view.'),
    h('table', { class: 'tasks' },
      h('thead', {}, h('tr', {}, ['Task', 'Status', 'Message', 'Updated', ''].map((x) => h('th', {}, x)))),
      rows),
    place);
  const answer = await attempt(place, () => post('tasks', { conn: c.info.id }));
  if (!answer) return;
  if (answer.tasks.length === 0) rows.append(h('tr', {}, h('td', { colspan: 5, class: 'muted' }, '(none)')));
  for (const t of answer.tasks) {
    const actions = h('td', { class: 'task-actions' });
    if (!TERMINAL.has(t.status)) {
      actions.append(h('button', { type: 'button', class: 'task-cancel', onclick: async () => {
        clear(place);
        if (await attempt(place, () => post('task-cancel', { conn: c.info.id, taskId: t.taskId }))) renderTasks();
      } }, 'Cancel'));
    }
    if (t.status !== 'cancelled') {
      actions.append(h('button', { type: 'button', class: 'task-result', onclick: async () => {
        clear(place, h('p', { class: 'muted', role: 'status' }, `Waiting for the result of ${t.taskId}…`));
        const got = await attempt(place, () => post('task-result', { conn: c.info.id, taskId: t.taskId }));
        if (got) clear(place, h('h3', {}, `Result of ${t.taskId}`), render.callResult(got.result, null, { openResource }));
      } }, 'Result'));
    }
    rows.append(h('tr', { dataset: { task: t.taskId, status: t.status } },
      h('td', {}, h('code', {}, t.taskId)),
      h('td', {}, h('span', { class: `badge ${t.status === 'completed' ? 'ok' : t.status === 'failed' ? 'err' : ''}` }, t.status)),
      h('td', {}, t.statusMessage || ''),
      h('td', {}, t.lastUpdatedAt ? new Date(t.lastUpdatedAt).toLocaleTimeString() : ''),
      actions));
  }
}

function onTask(event) {
  // A task's state changed: the panel, if shown, follows.
  if (state.view === 'tasks' && event.conn === state.current && TERMINAL.has(event.task?.status)) renderTasks();
  const call = state.call;
  if (!call || call.id !== event.callId) return;
  const t = event.task;
  call.taskLine.hidden = false;
  call.taskLine.dataset.status = t.status;
  call.taskLine.textContent = `Task ${t.taskId}: ${t.status}${t.statusMessage ? ` — ${t.statusMessage}` : ''}`;
}

function onProgress(event) {
  const call = state.call;
  if (!call || call.id !== event.callId) return;
  if (typeof event.total === 'number' && event.total > 0) {
    call.progress.max = event.total;
    call.progress.value = event.progress;
  }
  call.progressText.textContent = event.message || `${event.progress}${event.total ? ` of ${event.total}` : ''}`;
}

// ----- resources and templates -----

function openResource(uri) {
  showView('resources');
  const found = conn()?.lists.resources?.items.find((r) => r.uri === uri);
  selectResource(found || { uri, name: uri });
}

function selectResource(resource) {
  const detail = $('resource-detail');
  const c = conn();
  const result = h('div', { id: 'read-result' });
  const updates = h('ul', { id: 'resource-updates' });
  const subscribed = c.info.subscriptions?.includes(resource.uri) || c.subscribed?.has(resource.uri);
  const canSubscribe = c.info.capabilities?.resources?.subscribe;
  const read = async () => {
    clear(result);
    const answer = await attempt(result, () => post('read', { conn: c.info.id, uri: resource.uri }));
    if (answer) result.append(render.readResult(answer));
  };
  const drawUpdates = () => clear(updates, (c.updates.get(resource.uri) || []).map((t) => h('li', {}, `updated at ${clock(t)}`)));
  const subscribeButton = h('button', { type: 'button', onclick: async () => {
    const on = subscribeButton.dataset.on !== 'true';
    const answer = await attempt(result, () => post('subscribe', { conn: c.info.id, uri: resource.uri, on }));
    if (answer) {
      c.subscribed = c.subscribed || new Set(c.info.subscriptions || []);
      if (on) c.subscribed.add(resource.uri);
      else c.subscribed.delete(resource.uri);
      subscribeButton.dataset.on = String(on);
      subscribeButton.textContent = on ? 'Unsubscribe' : 'Subscribe';
    }
  } }, subscribed ? 'Unsubscribe' : 'Subscribe');
  subscribeButton.dataset.on = String(Boolean(subscribed));
  c.onUpdate = (uri) => { if (uri === resource.uri) drawUpdates(); };
  clear(detail,
    h('h2', {}, resource.title || resource.name),
    h('dl', { class: 'facts' },
      h('dt', {}, 'URI'), h('dd', {}, h('code', {}, resource.uri)),
      resource.mimeType ? [h('dt', {}, 'Type'), h('dd', {}, resource.mimeType)] : null,
      typeof resource.size === 'number' ? [h('dt', {}, 'Size'), h('dd', {}, bytes(resource.size))] : null,
      resource.description ? [h('dt', {}, 'About'), h('dd', {}, resource.description)] : null),
    h('div', { class: 'actions' }, h('button', { type: 'button', class: 'primary', id: 'read-button', onclick: read }, 'Read'), canSubscribe ? subscribeButton : null),
    updates, result);
  drawUpdates();
  read();
}

/** The variables of an RFC 6570 URI template, in order. */
function templateVariables(template) {
  const names = [];
  for (const [, body] of template.matchAll(/\{([^}]*)\}/g)) {
    for (const part of body.replace(/^[+#./;?&]/, '').split(',')) {
      const name = part.replace(/[*]$|:\d+$/, '');
      if (name && !names.includes(name)) names.push(name);
    }
  }
  return names;
}

/** Expand a URI template (levels 1 to 3) with `values`. */
function expand(template, values) {
  return template.replace(/\{([^}]*)\}/g, (_, body) => {
    const operator = /^[+#./;?&]/.test(body) ? body[0] : '';
    const names = body.slice(operator.length).split(',').map((n) => n.replace(/[*]$|:\d+$/, ''));
    const raw = operator === '+' || operator === '#';
    const encode = (v) => (raw ? encodeURI(v) : encodeURIComponent(v));
    const present = names.filter((n) => values[n] !== undefined && values[n] !== '');
    if (present.length === 0) return '';
    const pieces = present.map((n) => (operator === '?' || operator === '&' || operator === ';' ? `${n}=${encode(values[n])}` : encode(values[n])));
    const joiner = { '': ',', '+': ',', '#': ',', '.': '.', '/': '/', ';': ';', '?': '&', '&': '&' }[operator];
    const first = { '': '', '+': '', '#': '#', '.': '.', '/': '/', ';': ';', '?': '?', '&': '&' }[operator];
    return first + pieces.join(joiner);
  });
}

/**
 * Inputs for named arguments, each suggesting completions (`completion/complete`) as it is
 * typed; `reference` is the prompt or template completed.
 */
function completingInputs(args, reference, onChange) {
  const c = conn();
  const canComplete = Boolean(c.info.capabilities?.completions) || c.info.protocolVersion < '2025-03-26';
  const inputs = new Map();
  const values = () => Object.fromEntries([...inputs].map(([n, i]) => [n, i.value]));
  let timer = null;
  const fields = args.map((arg) => {
    const id = uid('arg');
    const listId = `${id}-list`;
    const input = h('input', { id, list: listId, autocomplete: 'off', required: arg.required, dataset: { arg: arg.name } });
    const list = h('datalist', { id: listId });
    const suggestions = h('div', { class: 'suggestions', dataset: { arg: arg.name }, 'aria-label': `Suggestions for ${arg.name}` });
    let asked = 0;
    const complete = async () => {
      if (!canComplete) return;
      // Answers can arrive out of order: only the latest question's is shown.
      asked += 1;
      const mine = asked;
      const context = Object.fromEntries(Object.entries(values()).filter(([n, v]) => n !== arg.name && v !== ''));
      const answer = await post('complete', {
        conn: c.info.id, ref: reference, argument: arg.name, value: input.value,
        context: Object.keys(context).length ? context : undefined,
      }).catch(() => null);
      if (mine !== asked) return;
      const found = answer?.completion?.values || [];
      clear(list, found.map((v) => h('option', { value: v })));
      clear(suggestions, found.map((v) => h('button', { type: 'button', class: 'suggestion', onclick: () => { input.value = v; onChange(values()); complete(); } }, v)));
    };
    input.addEventListener('input', () => {
      onChange(values());
      clearTimeout(timer);
      timer = setTimeout(complete, 120);
    });
    input.addEventListener('focus', complete, { once: true });
    inputs.set(arg.name, input);
    return h('div', { class: 'field' },
      h('label', { for: id }, arg.name, arg.required ? h('span', { class: 'req', 'aria-label': 'required' }, ' *') : null),
      arg.description ? h('small', {}, arg.description) : null, input, list, suggestions);
  });
  return { fields, values };
}

function selectTemplate(template) {
  const detail = $('resource-detail');
  const result = h('div', { id: 'read-result' });
  const uri = h('code', { id: 'template-uri' }, template.uriTemplate);
  const names = templateVariables(template.uriTemplate);
  const { fields, values } = completingInputs(names.map((name) => ({ name, required: true })),
    { type: 'ref/resource', uri: template.uriTemplate }, (v) => { uri.textContent = expand(template.uriTemplate, v); });
  clear(detail,
    h('h2', {}, template.title || template.name),
    h('dl', { class: 'facts' },
      h('dt', {}, 'Template'), h('dd', {}, h('code', {}, template.uriTemplate)),
      template.mimeType ? [h('dt', {}, 'Type'), h('dd', {}, template.mimeType)] : null,
      template.description ? [h('dt', {}, 'About'), h('dd', {}, template.description)] : null),
    h('form', { onsubmit: async (event) => {
      event.preventDefault();
      clear(result);
      const expanded = expand(template.uriTemplate, values());
      const answer = await attempt(result, () => post('read', { conn: state.current, uri: expanded }));
      if (answer) result.append(render.readResult(answer));
    } }, fields, h('p', {}, 'URI: ', uri), h('button', { type: 'submit', class: 'primary', id: 'template-read' }, 'Read')),
    result);
}

// ----- prompts -----

function selectPrompt(prompt) {
  const detail = $('prompt-detail');
  const result = h('div', { id: 'prompt-result' });
  const { fields, values } = completingInputs(prompt.arguments || [], { type: 'ref/prompt', name: prompt.name }, () => {});
  clear(detail,
    h('h2', {}, prompt.title || prompt.name),
    prompt.description ? h('p', {}, prompt.description) : null,
    h('form', { onsubmit: async (event) => {
      event.preventDefault();
      clear(result);
      const args = Object.fromEntries(Object.entries(values()).filter(([, v]) => v !== ''));
      const answer = await attempt(result, () => post('prompt', { conn: state.current, name: prompt.name, arguments: args }));
      if (answer) result.append(render.promptResult(answer, { openResource }));
    } }, fields, h('button', { type: 'submit', class: 'primary', id: 'prompt-get' }, 'Get prompt')),
    result);
}

// ----- roots -----

function renderRoots() {
  const view = $('view-roots');
  const c = conn();
  if (!c) return;
  const rows = h('div', { id: 'roots-rows' });
  const place = h('div');
  const addRow = (root) => {
    const uriId = uid('root');
    const nameId = uid('rootname');
    const row = h('div', { class: 'array-row root-row' },
      h('div', { class: 'field' }, h('label', { for: uriId }, 'URI'), h('input', { id: uriId, value: root.uri || '', class: 'root-uri', placeholder: 'file:///home/me/project' })),
      h('div', { class: 'field' }, h('label', { for: nameId }, 'Name'), h('input', { id: nameId, value: root.name || '', class: 'root-name' })));
    row.append(h('button', { type: 'button', class: 'danger', onclick: () => row.remove() }, 'Remove'));
    rows.append(row);
  };
  (c.info.roots || []).forEach(addRow);
  clear(view,
    h('h2', {}, 'Roots'),
    h('p', { class: 'hint' }, 'What the client offers when the server asks (roots/list). Saving tells the server they changed.'),
    rows,
    h('div', { class: 'actions' },
      h('button', { type: 'button', onclick: () => addRow({}) }, 'Add root'),
      h('button', { type: 'button', class: 'primary', onclick: async () => {
        clear(place);
        const roots = [...rows.querySelectorAll('.root-row')].map((r) => ({
          uri: r.querySelector('.root-uri').value.trim(),
          name: r.querySelector('.root-name').value.trim() || undefined,
        })).filter((r) => r.uri);
        const answer = await attempt(place, () => post('roots', { conn: c.info.id, roots }));
        if (answer) {
          c.info.roots = answer.roots;
          place.append(h('p', { role: 'status' }, `Saved ${answer.roots.length} roots.`));
        }
      } }, 'Save')),
    place);
}

// ----- the server's requests -----

function renderInbox() {
  const inbox = $('inbox');
  inbox.hidden = state.pending.size === 0;
  const keep = new Set();
  for (const request of state.pending.values()) {
    keep.add(String(request.id));
    if (inbox.querySelector(`[data-request="${request.id}"]`)) continue;
    inbox.append(requestCard(request));
  }
  for (const card of inbox.querySelectorAll('[data-request]')) if (!keep.has(card.dataset.request)) card.remove();
}

function requestCard(request) {
  const place = h('div');
  const send = async (body) => {
    clear(place);
    const answer = await attempt(place, () => post('answer', { id: request.id, ...body }));
    if (answer) {
      state.pending.delete(request.id);
      renderInbox();
    }
  };
  const c = state.conns.get(request.conn);
  const who = c ? connLabel(c) : `connection ${request.conn}`;
  const deadline = request.time + request.timeoutMs;
  const head = h('div', { class: 'section-head' },
    h('h2', {}, request.method === 'sampling/createMessage' ? 'The server asks for a completion' : 'The server asks you'),
    h('span', { class: 'muted' }, `${who} · answer by ${clock(deadline)}`));
  const params = request.params || {};
  let body;
  if (request.method === 'sampling/createMessage') {
    const replyId = uid('reply');
    const modelId = uid('model');
    const stopId = uid('stop');
    const reply = h('textarea', { id: replyId, class: 'sampling-reply', rows: 3 });
    const model = h('input', { id: modelId, value: 'ferry-inspector' });
    const stop = h('select', { id: stopId, class: 'sampling-stop' },
      ['endTurn', 'stopSequence', 'maxTokens'].map((r) => h('option', { value: r }, r)));
    body = [
      params.systemPrompt ? h('p', { class: 'muted' }, `System: ${params.systemPrompt}`) : null,
      (params.messages || []).map((m) => h('div', { class: 'message' }, h('h3', {}, m.role),
        (Array.isArray(m.content) ? m.content : [m.content]).map((x) => render.content(x)))),
      h('p', { class: 'muted' }, `At most ${params.maxTokens} tokens`),
      h('div', { class: 'field' }, h('label', { for: replyId }, 'Your reply (as the model)'), reply),
      h('div', { class: 'field' }, h('label', { for: modelId }, 'Model name'), model),
      h('div', { class: 'field' }, h('label', { for: stopId }, 'Stop reason'), stop),
      h('div', { class: 'actions' },
        h('button', { type: 'button', class: 'primary', onclick: () => send({ result: { role: 'assistant', content: { type: 'text', text: reply.value }, model: model.value || 'ferry-inspector', stopReason: stop.value } }) }, 'Send reply'),
        h('button', { type: 'button', onclick: () => send({ decline: 'the person declined the sampling request' }) }, 'Decline')),
    ];
  } else if (params.mode === 'url' || (params.url && !params.requestedSchema)) {
    body = [
      h('p', {}, params.message),
      h('p', {}, h('a', { href: params.url, target: '_blank', rel: 'noopener noreferrer' }, params.url)),
      h('div', { class: 'actions' },
        h('button', { type: 'button', class: 'primary', onclick: () => send({ result: { action: 'accept' } }) }, 'Accept (I opened it)'),
        h('button', { type: 'button', onclick: () => send({ result: { action: 'decline' } }) }, 'Decline'),
        h('button', { type: 'button', onclick: () => send({ result: { action: 'cancel' } }) }, 'Cancel')),
    ];
  } else {
    const form = schemaForm(params.requestedSchema || {});
    const errors = h('div', { class: 'error-text', role: 'alert' });
    // The answer's content as JSON, for values the form cannot express (or to paste one).
    const jsonId = uid('answer-json');
    const json = h('textarea', { id: jsonId, class: 'mono elicitation-json', rows: 4, spellcheck: false }, '{}');
    const jsonErrors = h('div', { class: 'error-text', role: 'alert' });
    const sendJson = () => {
      clear(jsonErrors);
      let content;
      try {
        content = JSON.parse(json.value);
      } catch (error) {
        jsonErrors.append(`Not JSON: ${error.message}`);
        return;
      }
      if (content === null || typeof content !== 'object' || Array.isArray(content)) {
        jsonErrors.append('The content must be a JSON object');
        return;
      }
      send({ result: { action: 'accept', content } });
    };
    body = [
      h('p', {}, params.message),
      h('form', { class: 'elicitation', novalidate: true, onsubmit: (event) => {
        event.preventDefault();
        const read = form.read();
        clear(errors);
        if (read.errors.length) {
          errors.append(h('ul', {}, read.errors.map((e) => h('li', {}, e))));
          return;
        }
        send({ result: { action: 'accept', content: read.value } });
      } }, form.el, errors,
      h('div', { class: 'actions' },
        h('button', { type: 'submit', class: 'primary' }, 'Accept'),
        h('button', { type: 'button', onclick: () => send({ result: { action: 'decline' } }) }, 'Decline'),
        h('button', { type: 'button', onclick: () => send({ result: { action: 'cancel' } }) }, 'Cancel'))),
      h('details', { class: 'elicitation-raw' },
        h('summary', {}, 'Answer as JSON'),
        h('div', { class: 'field' }, h('label', { for: jsonId }, 'Content (a JSON object)'), json),
        jsonErrors,
        h('div', { class: 'actions' }, h('button', { type: 'button', class: 'json-accept', onclick: sendJson }, 'Accept with this JSON'))),
    ];
  }
  return h('div', { class: 'card', role: 'dialog', 'aria-label': request.method, dataset: { request: String(request.id), method: request.method } }, head, body, place);
}

// ----- log and wire -----

const logFilter = { min: 0, kind: 'all', text: '' };
let logShown = [];
let wireShown = [];
const wireFilter = { dir: '', text: '' };
let logList;
let wireList;
let drawQueued = false;

function logPasses(entry) {
  if (logFilter.kind !== 'all' && entry.kind !== logFilter.kind) return false;
  if (entry.kind === 'log' && entry.levelIndex < logFilter.min) return false;
  if (logFilter.text && !entry.line.toLowerCase().includes(logFilter.text)) return false;
  return true;
}

function wirePasses(entry) {
  if (wireFilter.dir && entry.dir !== wireFilter.dir) return false;
  if (wireFilter.text && !entry.text.toLowerCase().includes(wireFilter.text)) return false;
  return true;
}

function refilterLog() {
  const started = performance.now();
  logShown = state.log.filter(logPasses);
  logList.setItems(logShown);
  inspector.lastFilterMs = performance.now() - started;
  $('log-shown').textContent = `${logShown.length} of ${state.log.length} shown`;
}

function refilterWire() {
  wireShown = state.wire.filter(wirePasses);
  wireList.setItems(wireShown);
  $('wire-shown').textContent = `${wireShown.length} of ${state.wire.length} shown`;
}

/** Redraw the counters and the visible list once per frame, however many events came. */
function queueDraw() {
  if (drawQueued) return;
  drawQueued = true;
  requestAnimationFrame(() => {
    drawQueued = false;
    $('log-count').textContent = state.log.length ? `(${state.log.length})` : '';
    $('wire-count').textContent = state.wire.length ? `(${state.wire.length})` : '';
    if (state.view === 'log') {
      logList.setItems(logShown);
      $('log-shown').textContent = `${logShown.length} of ${state.log.length} shown`;
    }
    if (state.view === 'wire') {
      wireList.setItems(wireShown);
      $('wire-shown').textContent = `${wireShown.length} of ${state.wire.length} shown`;
    }
  });
}

function addLog(entry) {
  state.log.push(entry);
  if (logPasses(entry)) logShown.push(entry);
  queueDraw();
}

/** Which connection an entry came from, when there is more than one. */
function tag(connId) {
  return state.conns.size > 1 ? `[${connId}] ` : '';
}

function onNotification(connId, message, time) {
  const params = message.params || {};
  if (message.method === 'notifications/message') {
    const levelIndex = Math.max(0, LEVELS.indexOf(params.level));
    const data = typeof params.data === 'string' ? params.data : JSON.stringify(params.data);
    addLog({
      conn: connId, time, kind: 'log', level: params.level, levelIndex, message,
      line: `${clock(time)} ${tag(connId)}${String(params.level).padEnd(9)} ${params.logger ? `${params.logger}: ` : ''}${data}`,
    });
    return;
  }
  addLog({ conn: connId, time, kind: 'notification', levelIndex: 0, message, line: `${clock(time)} ${tag(connId)}${message.method} ${JSON.stringify(params).slice(0, 200)}` });
  const c = state.conns.get(connId);
  if (!c) return;
  if (message.method === 'notifications/resources/updated') {
    const list = c.updates.get(params.uri) || [];
    list.push(time);
    c.updates.set(params.uri, list);
    c.onUpdate?.(params.uri);
  }
  const changed = {
    'notifications/tools/list_changed': ['tools'],
    'notifications/resources/list_changed': ['resources', 'templates'],
    'notifications/prompts/list_changed': ['prompts'],
  }[message.method];
  if (changed && connId === state.current) for (const kind of changed) if (c.lists[kind]) loadList(kind);
}

function onWire(event) {
  let message = null;
  if (!event.truncated) {
    try {
      message = JSON.parse(event.text);
    } catch {
      message = null;
    }
  }
  const isObject = message && typeof message === 'object' && !Array.isArray(message);
  const method = isObject ? message.method : undefined;
  const id = isObject && 'id' in message ? message.id : undefined;
  let latency = null;
  if (id !== undefined && method) {
    state.requestsInFlight.set(`${event.conn} ${event.dir} ${JSON.stringify(id)}`, event.time);
  } else if (id !== undefined) {
    const asked = event.dir === 'sent' ? 'received' : 'sent';
    const key = `${event.conn} ${asked} ${JSON.stringify(id)}`;
    if (state.requestsInFlight.has(key)) {
      latency = event.time - state.requestsInFlight.get(key);
      state.requestsInFlight.delete(key);
    }
  }
  const what = method ? `${method}${id !== undefined ? ` #${JSON.stringify(id)}` : ''}` : id !== undefined ? `${isObject && message.error ? 'error' : 'result'} #${JSON.stringify(id)}` : '?';
  const entry = {
    ...event, method, id, latency,
    line: `${clock(event.time)} ${tag(event.conn)}${event.dir === 'sent' ? '→' : '←'} ${what}  ${bytes(event.size)}${latency !== null ? `  ${latency.toFixed(1)} ms` : ''}`,
  };
  state.wire.push(entry);
  if (wirePasses(entry)) wireShown.push(entry);
  queueDraw();
  if (event.dir === 'received' && isObject && method && id === undefined) onNotification(event.conn, message, event.time);
}

/** What a connection line of the export says of a connection: enough to replay it. */
function connectionLine(conn, time, target, info) {
  return JSON.stringify({
    time: new Date(time).toISOString(),
    conn,
    connection: {
      target,
      protocolVersion: info?.protocolVersion,
      era: info?.era,
      serverInfo: info?.serverInfo,
      clientCapabilities: info?.clientCapabilities,
    },
  });
}

/**
 * The wire as JSON lines (`ferry replay` plays them again): a header line, then the
 * messages in order, each connection's preceded by a line saying what it was connected to.
 */
function exportWire() {
  const lines = [JSON.stringify({ format: 'ferry-wire', version: 1, exported: new Date().toISOString(), ferry: state.version })];
  const marked = new Set(state.marks.map((m) => m.conn));
  let next = 0;
  for (const e of state.wire) {
    while (next < state.marks.length && state.marks[next].seq < e.seq) {
      const m = state.marks[next];
      lines.push(connectionLine(m.conn, m.time, m.target, m.info));
      next += 1;
    }
    // A connection whose beginning left the inspector's backlog: what the page knows now.
    if (!marked.has(e.conn)) {
      marked.add(e.conn);
      const info = state.conns.get(e.conn)?.info;
      if (info) lines.push(connectionLine(e.conn, e.time, info.target, info));
    }
    let message;
    try {
      message = JSON.parse(e.text);
    } catch {
      message = e.text;
    }
    const line = { time: new Date(e.time).toISOString(), conn: e.conn, direction: e.dir, size: e.size, message };
    if (e.truncated) line.truncated = true;
    lines.push(JSON.stringify(line));
  }
  const blob = new Blob([lines.join('\n') + (lines.length ? '\n' : '')], { type: 'application/x-ndjson' });
  const link = h('a', { href: URL.createObjectURL(blob), download: `ferry-wire-${new Date().toISOString().replace(/[:.]/g, '-')}.jsonl` });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(link.href), 10_000);
}

function pretty(text) {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

/** In the stateless era a server logs only for requests that name a level: say so until one is set. */
function logHint() {
  const c = conn();
  $('log-hint').hidden = !(c && c.info.era === 'stateless' && !c.logLevel);
}

/** For a request the client sent: its params, editable, and a button that sends it again
 * on the same connection (its answer shown beside, and on the wire like any other). */
function resendEditor(entry) {
  const place = $('wire-resend');
  clear(place);
  let message;
  try {
    message = JSON.parse(entry.text);
  } catch {
    return;
  }
  if (entry.dir !== 'sent' || typeof message?.method !== 'string' || message.id === undefined || message.method === 'initialize') return;
  const c = state.conns.get(entry.conn);
  if (!c || c.closed) return;
  const paramsId = uid('resend');
  const params = h('textarea', { id: paramsId, class: 'mono', rows: 6, spellcheck: false }, JSON.stringify(message.params ?? {}, null, 2));
  const answer = h('div', { id: 'resend-answer' });
  const send = async () => {
    clear(answer);
    let value;
    try {
      value = JSON.parse(params.value);
    } catch (error) {
      answer.append(h('p', { class: 'error-text' }, `Not JSON: ${error.message}`));
      return;
    }
    const got = await attempt(answer, () => post('resend', { conn: entry.conn, method: message.method, params: value }));
    if (!got) return;
    answer.append(h('p', { class: 'muted' }, `${got.error ? 'An error' : 'A result'} in ${got.ms.toFixed(1)} ms`),
      got.error ? h('div', { class: 'card error' }, render.tree(got.error, 4)) : h('div', { class: 'card result' }, render.tree(got.result, 4)));
  };
  place.append(h('div', { class: 'card' },
    h('h3', {}, `Send ${message.method} again`),
    h('div', { class: 'field' }, h('label', { for: paramsId }, `params (to ${connLabel(c)})`), params),
    h('div', { class: 'actions' }, h('button', { type: 'button', class: 'primary', id: 'resend-button', onclick: send }, 'Send again')),
    answer));
}

function setUpLogAndWire() {
  logList = new VirtualList($('log-list'), (e) => e.line, (e) => (e.kind === 'log' ? `lvl-${e.level}` : 'note'),
    (e) => { $('log-item').textContent = JSON.stringify(e.message, null, 2); });
  wireList = new VirtualList($('wire-list'), (e) => e.line, (e) => e.dir,
    (e) => {
      $('wire-item').textContent = `${e.dir} at ${clock(e.time)}, ${e.size} bytes${e.latency !== null ? `, ${e.latency.toFixed(1)} ms after its request` : ''}\n\n${pretty(e.text)}`;
      resendEditor(e);
    });
  const level = $('log-level');
  const min = $('log-min');
  for (const l of LEVELS) {
    level.append(h('option', { value: l }, l));
    min.append(h('option', { value: String(LEVELS.indexOf(l)) }, l));
  }
  level.addEventListener('change', async () => {
    if (!level.value) return;
    const c = conn();
    if (!(await attempt(null, () => post('log-level', { conn: state.current, level: level.value })))) return;
    if (c) c.logLevel = level.value;
    logHint();
    status(`Log level set to ${level.value}`);
  });
  min.addEventListener('change', () => { logFilter.min = Number(min.value); refilterLog(); });
  $('log-kind').addEventListener('change', (e) => { logFilter.kind = e.target.value; refilterLog(); });
  $('log-text').addEventListener('input', (e) => { logFilter.text = e.target.value.toLowerCase(); refilterLog(); });
  $('log-clear').addEventListener('click', () => { state.log = []; refilterLog(); queueDraw(); });
  $('wire-dir').addEventListener('change', (e) => { wireFilter.dir = e.target.value; refilterWire(); });
  $('wire-text').addEventListener('input', (e) => { wireFilter.text = e.target.value.toLowerCase(); refilterWire(); });
  $('wire-clear').addEventListener('click', () => {
    state.wire = [];
    // Each connection's last beginning stays: an export after Clear still says what each was.
    state.marks = state.marks.filter((m, i) => !state.marks.slice(i + 1).some((later) => later.conn === m.conn));
    refilterWire();
    queueDraw();
  });
  $('wire-export').addEventListener('click', exportWire);
}

// ----- check -----

async function runCheck() {
  const place = $('check-report');
  const button = $('check-run');
  button.disabled = true;
  clear(place, h('p', { role: 'status' }, 'Checking… (this opens fresh connections; it can take a while)'));
  const answer = await attempt(null, () => post('check', { conn: state.current }));
  button.disabled = false;
  clear(place);
  if (!answer) {
    place.append(h('p', { class: 'error-text' }, 'The check did not run.'));
    return;
  }
  const report = answer.report;
  const s = report.summary || {};
  const sections = new Map();
  for (const r of report.requirements || []) {
    if (!sections.has(r.section)) sections.set(r.section, []);
    sections.get(r.section).push(r);
  }
  place.append(
    h('div', { class: 'card', id: 'check-summary' },
      h('p', {}, `${report.target}: `, h('strong', {}, `${s.passed} passed, ${s.failed} failed (${s.mustFailed} MUST), ${s.skipped} skipped`), ` · ${s.requestsSent} requests`),
      h('p', {}, (report.revisions || []).map((r) => h('span', { class: `badge ${r.checked ? 'ok' : ''}`, title: r.notOffered || '' }, `${r.revision}${r.checked ? '' : ' (not offered)'}`)))),
    ...[...sections].map(([section, requirements]) => {
      const failed = requirements.filter((r) => r.status === 'fail').length;
      return h('details', { class: 'card check-section', open: failed > 0 },
        h('summary', {}, h('strong', {}, section), ` · ${requirements.length} requirement${requirements.length === 1 ? '' : 's'}`, failed ? h('span', { class: 'badge err' }, `${failed} failed`) : h('span', { class: 'badge ok' }, 'ok')),
        requirements.map((r) => h('details', { class: 'req-line', open: r.status === 'fail' },
          h('summary', {}, h('span', { class: `st-${r.status}` }, r.status.toUpperCase()), ` ${r.level} `, h('code', {}, r.id), ` ${r.title}`),
          (r.findings || []).map((f) => h('div', {}, h('span', { class: `st-${f.status}` }, `${f.revision}: ${f.status}`), h('pre', {}, (f.detail || []).join('\n')))))));
    }));
}

// ----- views and start -----

function showView(view, force = false) {
  const changed = state.view !== view;
  state.view = view;
  for (const button of document.querySelectorAll('#views button')) {
    button.setAttribute('aria-selected', button.dataset.view === view ? 'true' : 'false');
  }
  for (const section of document.querySelectorAll('.view')) section.hidden = section.id !== `view-${view}`;
  if (!changed && !force) return;
  const c = conn();
  if (view === 'server') renderServer();
  if (!c) return;
  if (view === 'tools') {
    if (!c.lists.tools || force) loadList('tools');
    else drawList('tools');
  }
  if (view === 'resources') {
    for (const kind of ['resources', 'templates']) {
      if (!c.lists[kind] || force) loadList(kind);
      else drawList(kind);
    }
  }
  if (view === 'prompts') {
    if (!c.lists.prompts || force) loadList('prompts');
    else drawList('prompts');
  }
  if (view === 'roots') renderRoots();
  if (view === 'tasks') renderTasks();
  if (view === 'log') {
    $('log-level').value = c.logLevel || '';
    logHint();
    refilterLog();
  }
  if (view === 'wire') refilterWire();
}

function onEvent(event) {
  switch (event.type) {
    case 'wire': onWire(event); break;
    case 'progress': onProgress(event); break;
    case 'task': onTask(event); break;
    case 'request': state.pending.set(event.id, event); renderInbox(); break;
    case 'request-done': {
      const request = state.pending.get(event.id);
      state.pending.delete(event.id);
      renderInbox();
      // Answered from this page: nothing to say. Otherwise say why the card went.
      if (request && event.outcome === 'cancelled') status(`The server withdrew its request (${request.method}): it was cancelled`);
      if (request && event.outcome === 'timed out') status(`The server's request (${request.method}) was not answered in time`);
      break;
    }
    case 'connecting':
      state.marks.push({ seq: event.seq, conn: event.conn, time: event.time, target: event.target, info: null });
      break;
    case 'connection': {
      const mark = state.marks.findLast((m) => m.conn === event.conn);
      if (mark) mark.info = event.info;
      setConn(event.info);
      renderConns();
      if (event.conn === state.current && state.view === 'server') renderServer();
      break;
    }
    case 'closed': {
      const c = state.conns.get(event.conn);
      if (c) {
        c.closed = event.why || 'closed';
        // A server that died on its own is news wherever the person is in the page.
        if (event.exited) status(`${connLabel(c)}: ${c.closed}`);
        renderConns();
        if (event.conn === state.current && state.view === 'server') renderServer();
      }
      break;
    }
    default: break;
  }
}

// ----- the page's own settings -----

const THEME_KEY = 'ferry-inspect-theme';
const SIDE_KEY = 'ferry-inspect-side';

/** The theme chosen here (or the system's), kept in this browser. */
function setUpTheme() {
  const select = $('theme');
  const apply = (theme) => {
    if (theme) document.documentElement.dataset.theme = theme;
    else delete document.documentElement.dataset.theme;
  };
  select.value = localStorage.getItem(THEME_KEY) || '';
  apply(select.value);
  select.addEventListener('change', () => {
    localStorage.setItem(THEME_KEY, select.value);
    apply(select.value);
  });
}

/** Between each list and its detail, a separator that resizes the list: dragged, or moved
 * with the arrow keys once focused; the width kept in this browser. */
function setUpSplitters() {
  const root = document.documentElement;
  const set = (px) => {
    const width = Math.round(Math.max(160, Math.min(px, window.innerWidth * 0.7)));
    root.style.setProperty('--side', `${width}px`);
    localStorage.setItem(SIDE_KEY, String(width));
    for (const s of document.querySelectorAll('.splitter')) s.setAttribute('aria-valuenow', String(width));
    return width;
  };
  const kept = Number(localStorage.getItem(SIDE_KEY));
  if (kept) set(kept);
  for (const split of document.querySelectorAll('.split')) {
    const side = split.querySelector('.side');
    const bar = h('div', { class: 'splitter', role: 'separator', tabindex: '0', 'aria-orientation': 'vertical', 'aria-label': 'Resize the list', 'aria-valuemin': '160' });
    side.after(bar);
    bar.addEventListener('pointerdown', (event) => {
      bar.setPointerCapture(event.pointerId);
      const move = (e) => set(e.clientX - split.getBoundingClientRect().left);
      bar.addEventListener('pointermove', move);
      bar.addEventListener('pointerup', () => bar.removeEventListener('pointermove', move), { once: true });
    });
    bar.addEventListener('keydown', (event) => {
      const step = { ArrowLeft: -16, ArrowRight: 16 }[event.key];
      if (!step) return;
      event.preventDefault();
      set(side.getBoundingClientRect().width + step);
    });
  }
}

async function start() {
  setUpTheme();
  setUpSplitters();
  for (const [kind, spec] of Object.entries(LISTS)) {
    if (spec.search) $(spec.search).addEventListener('input', () => drawList(kind));
  }
  for (const button of document.querySelectorAll('#views button')) {
    button.addEventListener('click', () => showView(button.dataset.view));
  }
  // Arrow keys move between the view tabs, as in any tab list.
  $('views').addEventListener('keydown', (event) => {
    const buttons = [...document.querySelectorAll('#views button')];
    const index = buttons.indexOf(document.activeElement);
    const step = { ArrowRight: 1, ArrowLeft: -1 }[event.key];
    if (index < 0 || !step) return;
    const next = buttons[(index + step + buttons.length) % buttons.length];
    next.focus();
    showView(next.dataset.view);
  });
  for (const kind of Object.keys(LISTS)) $(LISTS[kind].more).addEventListener('click', () => loadList(kind, true));
  $('tools-refresh').addEventListener('click', () => loadList('tools'));
  $('resources-refresh').addEventListener('click', () => { loadList('resources'); loadList('templates'); });
  $('prompts-refresh').addEventListener('click', () => loadList('prompts'));
  $('check-run').addEventListener('click', runCheck);
  setUpLogAndWire();
  let snapshot;
  try {
    snapshot = await get('/api/state');
  } catch (error) {
    status(error.message);
    clear($('view-server'), h('div', { class: 'card error', role: 'alert' }, error.message));
    return;
  }
  state.allowSpawn = snapshot.allowSpawn;
  state.version = snapshot.version;
  for (const info of snapshot.connections) setConn(info);
  for (const request of snapshot.pending) state.pending.set(request.id, request);
  renderConns();
  renderServer();
  renderInbox();
  listen(onEvent, (open) => status(open ? 'Live' : 'Reconnecting to the inspector…', { lasting: true }));
  if (conn()) await loadList('tools');
  inspector.ready = performance.now();
  document.body.dataset.ready = 'true';
}

start();
