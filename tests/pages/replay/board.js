// The board: marks loaded by fetch; a click on the canvas marks that spot and saves it (a POST).
async function load() {
  const marks = await (await fetch('/api/marks')).json();
  document.getElementById('marks').replaceChildren(...marks.map((m) => {
    const li = document.createElement('li');
    li.textContent = `${m.x},${m.y}`;
    return li;
  }));
}
load();

const board = document.getElementById('board');
board.addEventListener('click', async (e) => {
  const ctx = board.getContext('2d');
  ctx.fillStyle = '#8e44ad';
  ctx.fillRect(e.offsetX - 5, e.offsetY - 5, 10, 10);
  document.getElementById('mark').textContent = `mark at ${e.offsetX},${e.offsetY}`;
  await fetch('/api/marks', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ x: e.offsetX, y: e.offsetY }),
  });
  await load();
});
