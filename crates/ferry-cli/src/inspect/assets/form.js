// A form generated from a JSON Schema (a tool's inputSchema, an elicitation's
// requestedSchema): strings, numbers, integers, booleans, enums, arrays and nested objects,
// with required marks, defaults and descriptions. `read()` gives the value and what is
// wrong with it; `write(value)` fills the form in (from the raw JSON editor).

import { h, uid } from './dom.js';

/** Follow local `$ref`s (`#/$defs/X`, `#/definitions/X`) against the root schema. */
function resolve(schema, root, depth = 0) {
  if (!schema || typeof schema !== 'object' || depth > 32) return schema || {};
  if (typeof schema.$ref === 'string' && schema.$ref.startsWith('#/')) {
    let target = root;
    for (const part of schema.$ref.slice(2).split('/')) target = target?.[part.replace(/~1/g, '/').replace(/~0/g, '~')];
    const { $ref, ...rest } = schema;
    return resolve({ ...(target || {}), ...rest }, root, depth + 1);
  }
  // `T | null` (an optional field, as generators write it): the form leaves it empty.
  for (const key of ['anyOf', 'oneOf']) {
    const options = schema[key];
    if (Array.isArray(options) && !options.every((o) => 'const' in o)) {
      const real = options.filter((o) => o.type !== 'null');
      if (real.length === 1) {
        const { [key]: _, ...rest } = schema;
        return resolve({ ...rest, ...real[0] }, root, depth + 1);
      }
    }
  }
  if (Array.isArray(schema.allOf) && schema.allOf.length === 1) {
    const { allOf, ...rest } = schema;
    return resolve({ ...rest, ...allOf[0] }, root, depth + 1);
  }
  return schema;
}

function typeOf(schema) {
  if (Array.isArray(schema.type)) return schema.type.find((t) => t !== 'null') || 'string';
  if (schema.type) return schema.type;
  if (schema.properties) return 'object';
  if (schema.items) return 'array';
  if (Array.isArray(schema.enum)) return 'enum';
  return undefined;
}

/** The choices of an enum: `enum` (with `enumNames`), or `oneOf`/`anyOf` of `const`s. */
function choicesOf(schema) {
  if (Array.isArray(schema.enum)) {
    return schema.enum.map((value, i) => ({ value, label: schema.enumNames?.[i] ?? String(value) }));
  }
  const options = schema.oneOf || schema.anyOf;
  if (Array.isArray(options) && options.length && options.every((o) => 'const' in o)) {
    return options.map((o) => ({ value: o.const, label: o.title ?? String(o.const) }));
  }
  return null;
}

function labelled(name, required, schema, id, control, extra) {
  const title = schema.title && schema.title !== name ? ` (${schema.title})` : '';
  return h('div', { class: 'field' },
    h('label', { for: id }, name, title, required ? h('span', { class: 'req', title: 'required', 'aria-label': 'required' }, ' *') : null),
    schema.description ? h('small', { id: `${id}-d` }, schema.description) : null,
    control, extra);
}

/**
 * A field for `schema`; returns {el, get, set}. `get()` returns undefined for an empty
 * optional field and pushes problems on `errors`.
 */
function field(rawSchema, root, name, required, path) {
  const schema = resolve(rawSchema, root);
  const id = uid('in');
  const describedBy = schema.description ? `${id}-d` : undefined;
  const choices = choicesOf(schema);
  const type = typeOf(schema);
  if (choices) {
    const select = h('select', { id, 'aria-describedby': describedBy, dataset: { path } },
      required ? null : h('option', { value: '' }, '(none)'),
      choices.map((c, i) => h('option', { value: String(i) }, c.label)));
    const set = (value) => {
      const index = choices.findIndex((c) => JSON.stringify(c.value) === JSON.stringify(value));
      select.value = index < 0 ? (required ? '0' : '') : String(index);
    };
    set(schema.default);
    return {
      el: labelled(name, required, schema, id, select),
      get: () => (select.value === '' ? undefined : choices[Number(select.value)].value),
      set,
    };
  }
  if (type === 'boolean') {
    if (required) {
      const box = h('input', { type: 'checkbox', id, 'aria-describedby': describedBy, dataset: { path } });
      box.checked = schema.default === true;
      return {
        el: labelled(name, required, schema, id, box),
        get: () => box.checked,
        set: (value) => { box.checked = value === true; },
      };
    }
    const select = h('select', { id, 'aria-describedby': describedBy, dataset: { path } },
      h('option', { value: '' }, '(none)'), h('option', { value: 'true' }, 'true'), h('option', { value: 'false' }, 'false'));
    const set = (value) => { select.value = value === true ? 'true' : value === false ? 'false' : ''; };
    set(schema.default);
    return {
      el: labelled(name, required, schema, id, select),
      get: () => (select.value === '' ? undefined : select.value === 'true'),
      set,
    };
  }
  if (type === 'number' || type === 'integer') {
    const input = h('input', {
      type: 'number', id, 'aria-describedby': describedBy, step: type === 'integer' ? '1' : 'any',
      min: schema.minimum, max: schema.maximum, required, dataset: { path },
    });
    const set = (value) => { input.value = typeof value === 'number' ? String(value) : ''; };
    set(schema.default);
    return {
      el: labelled(name, required, schema, id, input),
      get: (errors) => {
        if (input.value.trim() === '') {
          if (required) errors.push(`${path} is required`);
          return undefined;
        }
        const number = Number(input.value);
        if (!Number.isFinite(number)) errors.push(`${path} is not a number`);
        else if (type === 'integer' && !Number.isInteger(number)) errors.push(`${path} must be an integer`);
        return number;
      },
      set,
    };
  }
  if (type === 'array') {
    const itemSchema = resolve(schema.items || {}, root);
    const rows = [];
    const list = h('div', { class: 'array', id, role: 'group', 'aria-label': name });
    const add = (value) => {
      const index = rows.length;
      const item = field(itemSchema, root, `${name}[${index}]`, true, `${path}[${index}]`);
      const row = h('div', { class: 'array-row' }, item.el);
      const entry = { item, row };
      row.append(h('button', {
        type: 'button', class: 'danger', 'aria-label': `Remove item ${index + 1} of ${name}`,
        onclick: () => { rows.splice(rows.indexOf(entry), 1); row.remove(); },
      }, 'Remove'));
      rows.push(entry);
      list.append(row);
      if (value !== undefined) item.set(value);
    };
    const set = (value) => {
      rows.splice(0).forEach((r) => r.row.remove());
      if (Array.isArray(value)) value.forEach(add);
    };
    set(schema.default);
    const addButton = h('button', { type: 'button', onclick: () => add(undefined) }, `Add ${name} item`);
    return {
      el: h('div', { class: 'field' },
        h('span', { class: 'label' }, name, required ? h('span', { class: 'req', 'aria-label': 'required' }, ' *') : null),
        schema.description ? h('small', {}, schema.description) : null, list, addButton),
      get: (errors) => {
        if (rows.length === 0) {
          if (required) return [];
          return undefined;
        }
        return rows.map((r) => {
          const value = r.item.get(errors);
          return value === undefined ? null : value;
        });
      },
      set,
    };
  }
  if (type === 'object') {
    const form = objectFields(schema, root, path);
    const box = h('fieldset', {}, h('legend', {}, name, required ? h('span', { class: 'req', 'aria-label': 'required' }, ' *') : null),
      schema.description ? h('small', { class: 'muted' }, schema.description) : null, form.el);
    if (schema.default) form.set(schema.default);
    return {
      el: box,
      get: (errors) => {
        const inner = [];
        const value = form.get(inner);
        const empty = Object.keys(value).length === 0;
        if (!required && empty) return undefined;
        errors.push(...inner);
        return value;
      },
      set: (value) => form.set(value && typeof value === 'object' ? value : {}),
    };
  }
  if (type === 'string') {
    const kind = { email: 'email', uri: 'url', date: 'date', 'date-time': 'datetime-local' }[schema.format] || 'text';
    const long = (schema.maxLength ?? 0) > 200 || /code|text|content|body|script/i.test(name);
    const input = long
      ? h('textarea', { id, 'aria-describedby': describedBy, rows: 4, required, dataset: { path } })
      : h('input', { type: kind, id, 'aria-describedby': describedBy, required, minlength: schema.minLength, maxlength: schema.maxLength, pattern: schema.pattern, dataset: { path } });
    const set = (value) => { input.value = typeof value === 'string' ? value : value === undefined || value === null ? '' : String(value); };
    set(schema.default);
    return {
      el: labelled(name, required, schema, id, input),
      get: (errors) => {
        if (input.value === '') {
          if (required) errors.push(`${path} is required`);
          return undefined;
        }
        return input.value;
      },
      set,
    };
  }
  // Anything else (no type, several types, `any`): JSON typed by hand.
  const area = h('textarea', { id, 'aria-describedby': describedBy, rows: 3, placeholder: 'JSON', dataset: { path } });
  const set = (value) => { area.value = value === undefined ? '' : JSON.stringify(value, null, 2); };
  set(schema.default);
  return {
    el: labelled(name, required, schema, id, area),
    get: (errors) => {
      if (area.value.trim() === '') {
        if (required) errors.push(`${path} is required`);
        return undefined;
      }
      try {
        return JSON.parse(area.value);
      } catch {
        errors.push(`${path} is not valid JSON`);
        return undefined;
      }
    },
    set,
  };
}

function objectFields(schema, root, path) {
  const required = new Set(schema.required || []);
  const fields = Object.entries(schema.properties || {}).map(([name, sub]) => ({
    name,
    field: field(sub, root, name, required.has(name), path ? `${path}.${name}` : name),
  }));
  return {
    el: h('div', { class: 'fields' }, fields.map((f) => f.field.el)),
    get: (errors) => {
      const value = {};
      for (const f of fields) {
        const v = f.field.get(errors);
        if (v !== undefined) value[f.name] = v;
      }
      return value;
    },
    set: (value) => {
      for (const f of fields) f.field.set(value?.[f.name]);
    },
  };
}

/**
 * The form for an object schema. `onInput` is called on every change.
 * @returns {{el: HTMLElement, read: () => {value: object, errors: string[]}, write: (value: object) => void}}
 */
export function schemaForm(schema, onInput) {
  const root = schema || {};
  const fields = objectFields(resolve(root, root), root, '');
  const el = h('div', { class: 'schema-form' }, fields.el);
  if (onInput) {
    el.addEventListener('input', onInput);
    el.addEventListener('change', onInput);
    el.addEventListener('click', (event) => { if (event.target.closest('button')) onInput(); });
  }
  return {
    el,
    read: () => {
      const errors = [];
      const value = fields.get(errors);
      return { value, errors };
    },
    write: (value) => fields.set(value),
  };
}

/** Check `value` against the parts of JSON Schema that results use; the problems found. */
export function validate(value, schema, root = schema, path = '$') {
  const s = resolve(schema, root);
  const problems = [];
  const type = Array.isArray(s.type) ? s.type : s.type ? [s.type] : null;
  const actual = value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value;
  if (type) {
    const ok = type.some((t) => t === actual || (t === 'integer' && Number.isInteger(value)) || (t === 'number' && actual === 'number'));
    if (!ok) return [`${path}: expected ${type.join(' or ')}, got ${actual}`];
  }
  if (Array.isArray(s.enum) && !s.enum.some((e) => JSON.stringify(e) === JSON.stringify(value))) {
    problems.push(`${path}: not one of ${JSON.stringify(s.enum)}`);
  }
  if (actual === 'object') {
    for (const key of s.required || []) if (!(key in value)) problems.push(`${path}.${key}: required`);
    for (const [key, sub] of Object.entries(s.properties || {})) {
      if (key in value) problems.push(...validate(value[key], sub, root, `${path}.${key}`));
    }
    if (s.additionalProperties === false) {
      for (const key of Object.keys(value)) if (!(key in (s.properties || {}))) problems.push(`${path}.${key}: not allowed`);
    }
  }
  if (actual === 'array' && s.items) value.forEach((v, i) => problems.push(...validate(v, s.items, root, `${path}[${i}]`)));
  if (actual === 'number') {
    if (typeof s.minimum === 'number' && value < s.minimum) problems.push(`${path}: below ${s.minimum}`);
    if (typeof s.maximum === 'number' && value > s.maximum) problems.push(`${path}: above ${s.maximum}`);
  }
  return problems;
}
