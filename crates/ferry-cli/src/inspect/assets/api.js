// The inspector's API: JSON POSTs to /api/{op} and the event stream. Both carry the
// session's cookie (HttpOnly, set when the launch URL was opened): the page never sees it.

/** A refused or failed API call: its HTTP status and the server's message. */
export class ApiError extends Error {
  constructor(status, message, detail) {
    super(message);
    this.status = status;
    this.detail = detail;
  }
}

async function answer(response) {
  let body;
  try {
    body = await response.json();
  } catch {
    body = { error: { message: `HTTP ${response.status}` } };
  }
  if (!response.ok) {
    const error = body.error || {};
    throw new ApiError(response.status, error.message || `HTTP ${response.status}`, error);
  }
  return body;
}

export async function get(path) {
  return answer(await fetch(path));
}

export async function post(op, body) {
  const response = await fetch(`/api/${op}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return answer(response);
}

/**
 * Receive every event, in order, from the first kept one on. A page that fell behind is
 * told so (`lagged`) and reopens the stream after the last event it saw.
 */
export function listen(onEvent, onState) {
  let last = 0;
  let source;
  const open = () => {
    source = new EventSource(`/api/events?after=${last}`);
    source.onopen = () => onState(true);
    source.onerror = () => onState(false);
    source.onmessage = (message) => {
      let event;
      try {
        event = JSON.parse(message.data);
      } catch {
        return;
      }
      if (event.type === 'lagged') {
        source.close();
        open();
        return;
      }
      last = event.seq;
      onEvent(event);
    };
  };
  open();
}
