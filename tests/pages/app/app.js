// Test app: a form posting JSON to /api/notes, a live clock (dynamic content), and a button that
// logs a console error and throws (the bug the generated test must catch).
const clock = document.getElementById('clock');
const tick = () => { clock.textContent = new Date().toLocaleTimeString('en-GB'); };
tick();
setInterval(tick, 250);

document.getElementById('note-form').addEventListener('submit', async (e) => {
  e.preventDefault();
  const body = {
    title: document.getElementById('title').value,
    email: document.getElementById('email').value,
    password: document.getElementById('password').value,
    tags: ['work', 'home', 'misc'],
  };
  const res = await fetch('/api/notes', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  const note = await res.json();
  const li = document.createElement('li');
  li.textContent = `${note.title} (${note.id})`;
  document.getElementById('notes').append(li);
});

document.getElementById('break').addEventListener('click', () => {
  console.error('Saving failed: quota exceeded');
  setTimeout(() => { null.boom(); }, 0);
});
