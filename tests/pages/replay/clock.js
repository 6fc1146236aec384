// A live clock (10 Hz, so every sampling frame sees it move): what a visual spec must mask.
(() => {
  const clock = document.getElementById('clock');
  const tick = () => { clock.textContent = new Date().toISOString().slice(11, 23); };
  tick();
  setInterval(tick, 100);
})();
