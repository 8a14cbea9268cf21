// A virtualised list: only the rows in view (and a few around) are in the DOM, so tens of
// thousands of entries scroll and filter as fast as a few. Rows have one fixed height.

const ROW = 22;
const OVERSCAN = 10;

export class VirtualList {
  /**
   * @param {HTMLElement} container a scrollable element of fixed height
   * @param {(item) => string} text the row's text
   * @param {(item) => string} className extra classes of the row
   * @param {(item) => void} onSelect called with the chosen item
   */
  constructor(container, text, className, onSelect) {
    this.container = container;
    this.text = text;
    this.className = className;
    this.onSelect = onSelect;
    this.items = [];
    // The chosen item itself: a filter changes the indexes, not the choice.
    this.selected = undefined;
    this.follow = true;
    this.spacer = document.createElement('div');
    this.rows = document.createElement('div');
    this.rows.className = 'rows';
    container.append(this.spacer, this.rows);
    container.setAttribute('role', 'listbox');
    let queued = false;
    container.addEventListener('scroll', () => {
      const bottom = container.scrollHeight - container.clientHeight - container.scrollTop;
      this.follow = bottom < ROW;
      if (!queued) {
        queued = true;
        requestAnimationFrame(() => {
          queued = false;
          this.draw();
        });
      }
    });
    container.addEventListener('click', (event) => {
      const row = event.target.closest('.row');
      if (row) this.select(Number(row.dataset.index));
    });
    container.addEventListener('keydown', (event) => {
      const step = { ArrowDown: 1, ArrowUp: -1, PageDown: 20, PageUp: -20 }[event.key];
      if (step === undefined || this.items.length === 0) return;
      event.preventDefault();
      const current = this.items.indexOf(this.selected);
      const next = Math.max(0, Math.min(this.items.length - 1, (current < 0 ? 0 : current) + step));
      this.select(next);
      const top = next * ROW;
      if (top < container.scrollTop) container.scrollTop = top;
      else if (top + ROW > container.scrollTop + container.clientHeight) container.scrollTop = top + ROW - container.clientHeight;
    });
  }

  /** Show these items (the list keeps the array; it is not copied). */
  setItems(items) {
    this.items = items;
    this.spacer.style.height = `${items.length * ROW}px`;
    if (this.follow) this.container.scrollTop = this.container.scrollHeight;
    this.draw();
  }

  select(index) {
    this.selected = this.items[index];
    this.draw();
    if (this.selected !== undefined) this.onSelect(this.selected);
  }

  draw() {
    const { container, items } = this;
    const first = Math.max(0, Math.floor(container.scrollTop / ROW) - OVERSCAN);
    const count = Math.ceil(container.clientHeight / ROW) + 2 * OVERSCAN;
    const last = Math.min(items.length, first + count);
    const rows = [];
    for (let i = first; i < last; i += 1) {
      const row = document.createElement('div');
      const chosen = items[i] === this.selected;
      row.className = `row ${this.className(items[i])}${chosen ? ' selected' : ''}`;
      row.dataset.index = i;
      row.setAttribute('role', 'option');
      row.setAttribute('aria-selected', chosen ? 'true' : 'false');
      row.textContent = this.text(items[i]);
      rows.push(row);
    }
    this.rows.style.top = `${first * ROW}px`;
    this.rows.replaceChildren(...rows);
  }
}
