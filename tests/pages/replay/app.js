// The replay test app: a list loaded by fetch (filtered with Enter, which also saves the search),
// a form submitted with Enter or its button (a POST), a canvas whose clicks land where they are
// made, a button that throws while BUG is on, and a Like button far down the page (a POST).
const BUG = true;

const post = (path, body) => fetch(path, {
  method: 'POST',
  headers: { 'Content-Type': 'application/json' },
  body: JSON.stringify(body),
});

let filter = '';
async function load() {
  const res = await fetch('/api/items');
  const items = await res.json();
  const shown = items.filter((it) => it.title.toLowerCase().includes(filter));
  document.getElementById('items').replaceChildren(...shown.map((it) => {
    const li = document.createElement('li');
    li.textContent = it.title;
    return li;
  }));
  document.getElementById('shown').textContent = `${shown.length} of ${items.length} shown`;
}
load();

document.getElementById('filter').addEventListener('keydown', async (e) => {
  if (e.key !== 'Enter') return;
  filter = e.target.value.trim().toLowerCase();
  await post('/api/searches', { q: filter });
  await load();
});

document.getElementById('add-form').addEventListener('submit', async (e) => {
  e.preventDefault();
  const input = document.getElementById('title');
  await post('/api/items', { title: input.value });
  input.value = '';
  await load();
});

const pad = document.getElementById('pad');
pad.addEventListener('click', (e) => {
  const ctx = pad.getContext('2d');
  ctx.fillStyle = '#c0392b';
  ctx.fillRect(e.offsetX - 4, e.offsetY - 4, 8, 8);
  document.getElementById('dot').textContent = `dot at ${e.offsetX},${e.offsetY}`;
});

document.getElementById('break').addEventListener('click', () => {
  if (BUG) throw new Error('stock check failed: widget missing');
  document.getElementById('stock').textContent = 'in stock';
});

document.getElementById('like').addEventListener('click', async () => {
  const res = await post('/api/likes', { item: 'Alpha' });
  const like = await res.json();
  document.getElementById('likes').textContent = `liked ${like.item}`;
});
