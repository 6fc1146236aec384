// The replay test app: a live clock, a list loaded by fetch, a form submitted with Enter (a
// POST), a canvas whose clicks land where they are made, and a button that throws while BUG is on.
const BUG = true;

const clock = document.getElementById('clock');
function tick() { clock.textContent = new Date().toISOString().slice(11, 23); }
tick();
setInterval(tick, 100);

async function load() {
  const res = await fetch('/api/items');
  const items = await res.json();
  const list = document.getElementById('items');
  list.replaceChildren(...items.map((it) => {
    const li = document.createElement('li');
    li.textContent = it.title;
    return li;
  }));
}
load();

document.getElementById('add-form').addEventListener('submit', async (e) => {
  e.preventDefault();
  const input = document.getElementById('title');
  await fetch('/api/items', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ title: input.value }),
  });
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
